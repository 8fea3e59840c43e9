# A board that falls to its real Python REPL while it serves over a CBOR link (issue 26): the
# sim board runs under `micropython -i` (or `python -i`) on a pty, a stray 0x03 on the line ends
# its main.py, and a host then sends a string holding CRs and Python. Nothing of it may run at
# the REPL; the host's call is answered with an error, not left to time out.
import os
import subprocess
import time

import pytest

from tests.board_process import board_env
from tests.bridge.conftest import REPO
from tests.hostile.conftest import SLOW, serial_line
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)


@pytest.fixture(params=["micropython", "python"])
def repl_board(request, tmp_path):
    # -> (the bridge's end of the line, an fd onto that same end for line noise, the board).
    pair, runtime = serial_line(tmp_path, request.param)
    env = board_env()
    env["PYTHON_BASIC_REPL"] = "1"   # CPython 3.13+: the plain REPL, as on older versions
    fd = os.open(pair.b, os.O_RDWR | os.O_NOCTTY)
    board = subprocess.Popen([runtime, "-i", os.path.join("boards", "sim", "main.py")],
                             stdin=fd, stdout=fd, stderr=fd, cwd=REPO, env=env,
                             start_new_session=True)
    os.close(fd)
    line = os.open(pair.a, os.O_RDWR | os.O_NOCTTY)   # opened first: never read from
    try:
        yield pair.a, line, board
    finally:
        os.close(line)
        if board.poll() is None:
            board.kill()
        board.wait(10)
        pair.down()


def payload(target):
    # What a hostile host hides in a string: each CR ends a line the REPL runs.
    return "\rimport os\rf=open(%r,'w')\rf.write('ran')\rf.close()\r" % str(target)


def never_runs(target, seconds=5.0):
    # What the REPL was typed has run within a few seconds, if it ran.
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        assert not target.exists(), "the host's string ran at the board's REPL"
        time.sleep(0.1)


@pytest.mark.parametrize("link", ["cbor", "auto"])
def test_a_hosts_string_never_runs_at_the_repl_a_board_fell_to(repl_board, stdio_bridge,
                                                               tmp_path, link):
    device, line, board = repl_board
    host = stdio_bridge(device, "--link", link, "--timeout", str(SLOW))
    host.initialize()
    assert "result" in host.call("read_adc", channel=1, timeout=30)
    host.wait_stderr("board link: CBOR frames")
    os.write(line, b"\x03")      # noise on the line: main.py ends and the REPL comes up
    time.sleep(1.5)              # (the REPL's banner and prompt reach the bridge)
    target = tmp_path / "ran"
    rid = host.start("tools/call", {"name": "set_led",
                                    "arguments": {"on": True, "note": payload(target)}})
    never_runs(target)
    reply = host.wait(rid, timeout=SLOW - 20)   # answered, never left to the 60 s timeout
    assert reply["error"]["data"]["bridge"] == "not-serving", reply
    assert "REPL" in reply["error"]["message"]


def test_a_call_in_flight_when_the_board_falls_is_answered_at_once(repl_board, stdio_bridge,
                                                                   tmp_path):
    device, line, board = repl_board
    host = stdio_bridge(device, "--link", "cbor", "--timeout", str(SLOW))
    host.initialize()
    assert "result" in host.call("read_adc", channel=1, timeout=30)
    host.wait_stderr("board link: CBOR frames")
    target = tmp_path / "ran"
    # The board works on a 20 s sample when the noise ends its main.py: the call is in flight.
    rid = host.start("tools/call", {"name": "sample", "arguments": {"seconds": 20}})
    time.sleep(1.0)
    os.write(line, b"\x03")
    later = host.start("tools/call", {"name": "set_led",
                                      "arguments": {"on": True, "note": payload(target)}})
    never_runs(target)
    first = host.wait(rid, timeout=SLOW - 20)
    second = host.wait(later, timeout=SLOW - 20)
    for reply in (first, second):
        assert "error" in reply or reply["result"].get("isError"), reply
    host.wait_stderr("fell to its Python REPL")
