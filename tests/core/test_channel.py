# The serve loop core: bytes in, frames out, oversize and garbage answered, 0x03 ends serving.
import json

from tests.core.support import FakeStream, frame
from tinymcp import Server
from tinymcp.channel import Channel


def serve(chunks, max_frame=256):
    server = Server("ch", "0")
    server.tool("hello", "Says hello")(lambda: "hello")
    stream = FakeStream(chunks, size=16)
    reason = Channel(server, stream, max_frame).run()
    return reason, stream.sent


def init():
    return frame("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}, id=0) + b"\n"


def test_a_session_through_a_byte_stream():
    call = frame("tools/call", {"name": "hello"}, id=1) + b"\n"
    reason, sent = serve([init() + call])
    assert reason == "eof"
    assert sent[0]["result"]["protocolVersion"] == "2025-06-18"
    assert sent[1]["result"]["content"] == [{"type": "text", "text": "hello"}]


def test_a_server_served_through_its_channel_never_loads_the_direct_driver():
    # tinymcp/direct.py (Server.handle, the outbox) is for tests and hosts: a board never pays.
    server = Server("ch", "0")
    server.tool("hello", "Says hello", ctx=True)(lambda ctx: ctx.log("info", "hi") or "hello")
    stream = FakeStream([init() + frame("tools/call", {"name": "hello"}, id=1) + b"\n"], size=16)
    Channel(server, stream, 256).run()
    assert [m.get("method") for m in stream.sent] == [None, "notifications/message", None]
    assert server.direct is None


def test_oversize_frame_gets_a_null_id_error_and_the_next_request_is_served():
    huge = b'{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"' + b"a" * 5000 + b'"}}\n'
    reason, sent = serve([init(), huge, frame("ping", id=2) + b"\n"])
    assert sent[1]["id"] is None and sent[1]["error"]["code"] == -32600
    assert "256" in sent[1]["error"]["message"]
    assert sent[2] == {"jsonrpc": "2.0", "id": 2, "result": {}}


def test_garbage_and_invalid_utf8_are_answered_and_serving_continues():
    reason, sent = serve([init(), b"\xff\xfe\xfd\n", b"}{\n", frame("ping", id=3) + b"\n"])
    assert [m.get("error", {}).get("code") for m in sent[1:3]] == [-32700, -32700]
    assert sent[3]["id"] == 3


def test_interrupt_byte_ends_serving():
    reason, sent = serve([init(), b"\x03", frame("ping", id=3) + b"\n"])
    assert reason == "interrupt"
    assert len(sent) == 1


def test_quiet_periods_poll_and_keep_serving():
    reason, sent = serve([None, init(), None, None, frame("ping", id=4) + b"\n"])
    assert reason == "eof" and sent[-1]["id"] == 4


def test_every_message_leaves_in_one_write_or_a_few_large_ones():
    from tinymcp.framing import Out
    server = Server("ch", "0")
    for i in range(40):  # a tools/list page of several KiB
        server.tool("tool_%d" % i, "A tool with a long description " + "x" * 80)(lambda: "hi")
    stream = FakeStream([init(), frame("tools/list", id=1) + b"\n",
                         frame("tools/call", {"name": "tool_1"}, id=2) + b"\n"], size=16)
    Channel(server, stream).run()
    lengths = [len(line) + 1 for line in stream.lines]
    assert len(lengths) == 3 and lengths[1] > 4096
    assert sum(stream.writes) == sum(lengths)
    if Out.size == 0:  # CPython: a message is joined whole, then written once
        assert stream.writes == lengths
    else:  # MicroPython: one write per message that fits the output buffer; a longer one
        # leaves in a few large writes (its head, the cached page as it is, its end)
        assert stream.writes[0] == lengths[0] and stream.writes[-1] == lengths[2]
        pieces = stream.writes[1:-1]
        assert sum(pieces) == lengths[1] and len(pieces) <= 2 + lengths[1] // Out.size


def test_a_dict_result_mirrors_its_text_exactly_whatever_its_strings_hold():
    # The text mirror is written escaped from the dumped text in place (MicroPython) or made
    # as a str (CPython, and a text too long for the output buffer): both read back the same.
    server = Server("ch", "0")
    values = [{"q": 'say "hi"', "b": "a\\b", "n": "two\nlines", "u": "é ℃", "x": [1.5, None]},
              {"end": '"', "tail": "\\"},
              {"long": "z\"" * 400}]          # longer than the 512 B output buffer
    server.tool("pick", "One of the values.",
                inputs={"i": {"type": "integer"}})(lambda i: values[i])
    calls = b"".join(frame("tools/call", {"name": "pick", "arguments": {"i": i}}, id=i + 1) + b"\n"
                     for i in range(len(values)))
    for version, full in (("2025-06-18", True), ("2025-03-26", False)):
        stream = FakeStream([frame("initialize", {"protocolVersion": version, "capabilities": {}},
                                   id=0) + b"\n" + calls], size=64)
        Channel(server, stream).run()
        answers = stream.sent[1:]
        assert [a["id"] for a in answers] == [1, 2, 3]
        for value, answer in zip(values, answers):
            res = answer["result"]
            assert json.loads(res["content"][0]["text"]) == value
            assert res.get("structuredContent") == (value if full else None)


def test_a_failure_outside_any_handler_is_answered_and_serving_continues():
    # A board deployed without tinymcp/batch.py gets a 2025-03-26 client's batch: what fails is
    # the import in the dispatch, before any handler runs. The batch is answered with an
    # internal error, and the board serves the next request.
    import sys
    kept = sys.modules.get("tinymcp.batch")
    sys.modules["tinymcp.batch"] = None  # marked missing, as on such a board
    try:
        first = frame("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}}, id=0)
        batch = b'[' + frame("ping", id=5) + b']\n'
        reason, sent = serve([first + b"\n", batch, frame("ping", id=6) + b"\n"])
    finally:
        if kept is None:
            del sys.modules["tinymcp.batch"]
        else:
            sys.modules["tinymcp.batch"] = kept
    assert reason == "eof"
    assert sent[1]["id"] is None and sent[1]["error"]["code"] == -32603
    assert sent[1]["error"]["message"].startswith("Internal error: ")
    assert sent[2] == {"jsonrpc": "2.0", "id": 6, "result": {}}
