# The serve loop core: bytes in, frames out, oversize and garbage answered, 0x03 ends serving.
import json

from tests.core.support import FakeStream, frame
from tinymcp import Server
from tinymcp.channel import Channel, Lines


def serve(chunks, max_frame=256):
    server = Server("ch", "0")
    server.tool("hello", "Says hello")(lambda: "hello")
    stream = FakeStream(chunks, size=16)
    reason = Channel(server, Lines(stream, max_frame)).run()
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
    Channel(server, Lines(stream, 256)).run()
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
    Channel(server, Lines(stream)).run()
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
        Channel(server, Lines(stream)).run()
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


# -- one loop, several clients (as MQTT's adapter has them) ------------------------------------

class Clients:
    # An adapter whose messages come from several clients: a script of (key, frame), one each
    # read (None: a quiet moment); every answer is kept in the order written, with its client.
    def __init__(self, script):
        self.script = list(script)
        self.sent = []  # (key, message)

    def read(self, channel, timeout_ms):
        if not self.script:
            return "eof"
        key, frame = self.script.pop(0)
        if frame is not None:
            channel.deliver(key, frame)
        return None

    def opened(self, channel, key, session):
        from tinymcp.framing import Out
        from tinymcp.jsonrpc import JsonLink
        line = bytearray()
        sent = self.sent

        def write(data, n):
            line.extend(data[:n])
            if line[-1:] == b"\n":
                sent.append((key, json.loads(bytes(line))))
                line[:] = b""
        session.link = JsonLink(Out(write))

    def decode(self, channel, frame):
        return json.loads(frame)


def init_as(version):
    return frame("initialize", {"protocolVersion": version, "capabilities": {}}, id=0)


def test_each_client_of_an_adapter_has_its_own_session():
    server = Server("ch", "0")
    server.tool("hello", "Says hello", title="Hello")(lambda: "hello")
    clients = Clients([("a", init_as("2024-11-05")), ("b", frame("tools/list", id=1)),
                       ("b", init_as("2025-06-18")), ("a", frame("tools/list", id=2)),
                       ("b", frame("tools/list", id=3))])
    assert Channel(server, clients).run() == "eof"
    a = [m for key, m in clients.sent if key == "a"]
    b = [m for key, m in clients.sent if key == "b"]
    assert a[0]["result"]["protocolVersion"] == "2024-11-05"
    assert b[0]["error"]["code"] == -32600  # b has not initialized: a's session is not its
    assert b[1]["result"]["protocolVersion"] == "2025-06-18"
    assert "title" not in a[1]["result"]["tools"][0]  # each keeps the version it chose
    assert b[2]["result"]["tools"][0]["title"] == "Hello"


def test_a_client_waits_while_another_clients_handler_runs_then_is_served():
    server = Server("ch", "0")

    @server.tool("busy", "Reads the input twice while it runs.", ctx=True)
    def busy(ctx):
        ctx.cancelled  # noqa: B018 (reading it reads the input: b's ping and a's ping arrive)
        ctx.cancelled  # noqa: B018
        return "done"

    clients = Clients([("a", init_as("2025-06-18")), ("b", init_as("2025-06-18")),
                       ("a", frame("tools/call", {"name": "busy"}, id=1)),
                       ("b", frame("ping", id=7)), ("a", frame("ping", id=2))])
    Channel(server, clients).run()
    answers = [(key, m["id"]) for key, m in clients.sent]
    # a's ping is answered inside a's call; b's waits until the call has been answered
    assert answers == [("a", 0), ("b", 0), ("a", 2), ("a", 1), ("b", 7)]


def test_long_tools_of_every_client_are_stepped():
    server = Server("ch", "0")

    @server.tool("count", "Counts to three, one step a turn.")
    def count():
        for i in range(3):
            yield i / 3
        return "counted"

    clients = Clients([("a", init_as("2025-06-18")), ("b", init_as("2025-06-18")),
                       ("a", frame("tools/call", {"name": "count"}, id=1)),
                       ("b", frame("tools/call", {"name": "count"}, id=2))]
                      + [("a", None)] * 6)
    Channel(server, clients).run()
    done = [(key, m["id"]) for key, m in clients.sent if m["id"] in (1, 2)]
    assert sorted(done) == [("a", 1), ("b", 2)]
