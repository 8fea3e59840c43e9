# Template parameters through the bridge (issue 26): the conformance board's
# test://template/{id}/data, run under CPython and MicroPython on a pty, never hands its function
# a path: a decoded "/", "\", NUL, "." or ".." is refused with -32602, a bad escape too, and a
# plain value still reads.
import os

import pytest

from tests.board_process import board_env
from tests.bridge.conftest import BoardOnPty
from tests.hostile.conftest import serial_line
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

ATTACKS = ("..%2F..%2Fnetwork.json", "%2Fabs%2Fpath", "a%00b", "%2E%2E", "..", "a%5Cb", "%ff",
           "%zz", "a%")


@pytest.fixture(params=["python", "micropython"])
def conformance_board(request, tmp_path):
    pair, runtime = serial_line(tmp_path, request.param)
    board = BoardOnPty(pair.b, [runtime, os.path.join("boards", "conformance", "main.py")],
                       board_env())
    board.start()
    yield pair.a
    board.kill()
    pair.down()


@pytest.mark.parametrize("link", ["json", "cbor"])
def test_template_values_that_decode_into_paths_are_refused(conformance_board, stdio_bridge,
                                                            link):
    host = stdio_bridge(conformance_board, "--link", link, "--timeout", "20")
    host.initialize()
    read = host.request("resources/read", {"uri": "test://template/abc%20d/data"}, timeout=20)
    assert read["result"]["contents"][0]["text"].count("abc d") >= 1, read
    for raw in ATTACKS:
        uri = "test://template/%s/data" % raw
        reply = host.request("resources/read", {"uri": uri}, timeout=20)
        assert "error" in reply, (raw, reply)
        assert reply["error"]["code"] == -32602, (raw, reply)
        assert reply["error"]["message"].startswith("Invalid params: {id} "), reply
        assert "codec" not in reply["error"]["message"]
    reply = host.request("resources/read", {"uri": "test://template/a/b/data"}, timeout=20)
    assert reply["error"]["code"] == -32002, reply   # no template fits: not found, as before
    assert host.noise == []
