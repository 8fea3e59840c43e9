# A board sitting at its Python REPL (issue 10): the bridge recognises the REPL and restarts
# the board's main.py, or leaves it alone (--no-restart); either way it never keeps typing JSON
# at the prompt.
import time

from tests.hostile.conftest import SLOW
from tests.hostile.fakeboard import ReplBoard
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)


def json_typed(board):
    return [line for line in board.typed if line.lstrip().startswith(b"{")]


def test_a_board_at_its_repl_is_restarted_into_main_py(fake_board, stdio_bridge):
    board = ReplBoard(main_serves=True)
    try:
        host = stdio_bridge(board.device, "--timeout", str(SLOW))
        host.initialize()
        end = time.monotonic() + 30
        while "result" not in host.call("echo", x=1, timeout=SLOW + 10):
            assert time.monotonic() < end, host.stderr()[-3000:]
            time.sleep(0.2)
        assert b"\x03" in board.raw and b"\x04" in board.raw
        assert len(json_typed(board)) <= 2, board.typed
        host.wait_stderr("at its Python REPL")
    finally:
        board.close()


def test_a_board_that_stays_at_its_repl_is_not_typed_json_every_second(stdio_bridge):
    board = ReplBoard(main_serves=False)   # no main.py: the soft reset brings the REPL back
    try:
        host = stdio_bridge(board.device, "--timeout", str(SLOW))
        time.sleep(8)
        assert len(json_typed(board)) <= 2, board.typed
        assert board.raw.count(b"\x04") == 1   # one restart; the next is 30 s away
        host.initialize()
        reply = host.call("echo", x=1, timeout=20)   # refused, not held for 60 s
        assert reply["error"]["data"]["bridge"] == "not-serving", reply
        assert "REPL" in reply["error"]["message"]
    finally:
        board.close()


def test_no_restart_leaves_the_repl_alone_and_says_so(stdio_bridge):
    board = ReplBoard(main_serves=True)
    try:
        host = stdio_bridge(board.device, "--timeout", str(SLOW), "--no-restart")
        time.sleep(8)
        assert b"\x03" not in board.raw and b"\x04" not in board.raw
        assert len(json_typed(board)) <= 2, board.typed
        host.initialize()
        reply = host.call("echo", x=1, timeout=20)
        assert reply["error"]["data"]["bridge"] == "not-serving", reply
        assert "--no-restart" in reply["error"]["message"]
    finally:
        board.close()
