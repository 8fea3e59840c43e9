# The benchmarks' own pins file: every bridge a benchmark starts pins its boards into a file of
# the run's, never into the user's. The benchmarks' boards are new to the pins on every run (on a
# broker at another port, in another checkout), so they piled up in the user's file by the
# hundred (6 MB after session 10), and the bridge's memory the benchmark reports grew with it.
import atexit
import os
import shutil
import tempfile

from tinymcp.host.bridge.pins import PINS_ENV


def own_pins():
    # -> the run's pins file, in $TINYMCP_PINS for every process the benchmark starts (removed
    # with its folder when the benchmark ends).
    folder = tempfile.mkdtemp(prefix="tinymcp-bench-pins-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ[PINS_ENV] = os.path.join(folder, "pins.json")
    return os.environ[PINS_ENV]
