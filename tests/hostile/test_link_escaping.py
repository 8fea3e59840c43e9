# No byte a REPL or a terminal acts on (0x00-0x1F, 0x7F) leaves the bridge for a board, in either
# link mode (issue 26): every control character in every string of a host's tools/call reaches
# the board escaped. JSON lines carry none but their newline; CBOR frames none but that newline and
# the escape 0x10 before a printable byte.
import json

import pytest

from tinymcp import cborlink
from tests.hostile.fakeboard import GOOD_INIT, FakeBoard
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

CONTROL = [chr(c) for c in range(32)] + ["\x7f"]


class CborBoard(FakeBoard):
    # The fake board, offering CBOR link frames and answering each frame in its kind.
    def __init__(self, **kwargs):
        FakeBoard.__init__(self, max_frame=1 << 16, **kwargs)
        self.cbor = False

    def send(self, msg):
        if not self.cbor:
            return FakeBoard.send(self, msg)
        self.write(cborlink.encode({k: v for k, v in msg.items() if k != "jsonrpc"}) + b"\n")

    def _line(self, line):
        self.cbor = bool(line) and 0xA0 <= line[0] <= 0xBF
        if not self.cbor:
            return FakeBoard._line(self, line)
        self.lines.append(line)
        msg = cborlink.decode(line)
        msg["jsonrpc"] = "2.0"
        self.messages.append(msg)
        if "method" in msg and "id" in msg and not self.on_request(self, msg):
            self.default(msg)

    def default(self, msg):
        if msg["method"] != "initialize":
            return FakeBoard.default(self, msg)
        self.inits += 1
        result = json.loads(json.dumps(GOOD_INIT))
        result["capabilities"]["experimental"] = {"tinymcp/link": {"maxFrame": self.max_frame,
                                                                   "cbor": True}}
        self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})


def raw_controls(data, cbor):
    # The control bytes in what the board heard, other than each frame's newline and (CBOR)
    # the escape 0x10 followed by the printable byte it stands for.
    found = []
    i = 0
    while i < len(data):
        b = data[i]
        if cbor and b == 0x10 and i + 1 < len(data) and (0x20 <= data[i + 1] <= 0x3F
                                                         or data[i + 1] == 0x5F):
            i += 2
            continue
        if (b < 0x20 or b == 0x7F) and b != 0x0A:
            found.append((i, hex(b), bytes(data[max(0, i - 20):i + 20])))
        i += 1
    return found


@pytest.mark.parametrize("link", ["json", "cbor"])
def test_no_control_byte_in_any_string_of_a_tools_call_reaches_a_board_raw(stdio_bridge, link):
    board = CborBoard() if link == "cbor" else FakeBoard()
    try:
        host = stdio_bridge(board.device, "--link", link, "--timeout", "20")
        host.initialize()
        if link == "cbor":
            host.wait_stderr("board link: CBOR frames")
        for c in CONTROL:
            text = "a" + c + "\rimport os\r" + c * 3 + "\x1b[A\x01\x05" + c
            args = {"text" + c: text, "long": text * 20,
                    "nested": {"list": [text, {"deep" + c: text}], "k" + c: [c]}}
            reply = host.request("tools/call", {"name": "echo", "arguments": args,
                                                "_meta": {"progressToken": "token" + c}},
                                 timeout=20)
            assert reply["result"]["structuredContent"] == args, (repr(c), reply)
            host.request("tools/call", {"name": "echo" + c, "arguments": {}}, timeout=20)
        heard = bytes(board.raw)
        assert board.received("tools/call"), "the calls never reached the board"
        assert raw_controls(heard, link == "cbor") == []
        if link == "cbor":
            assert all(0xA0 <= line[0] <= 0xBF for line in board.lines[1:]), board.lines[:3]
    finally:
        board.close()
