# Long tools: a generator tool is stepped in the serve loop's idle time, so the board keeps
# answering; a plain call is answered when the generator returns.
from tests.core.support import FakeStream, frame, initialize, notifications, result
from tinymcp import Server
from tinymcp.channel import Channel
from tinymcp.schema import integer


def board():
    server = Server("long", "0")

    @server.tool("count", "Counts to n, one step a turn.", inputs={"n": integer()},
                 outputs={"counted": integer()})
    def count(n):
        for i in range(n):
            yield i / n
        return {"counted": n}

    @server.tool("broken", "Fails halfway.")
    def broken():
        yield
        raise OSError("sensor gone")

    @server.tool("hello", "Says hello.")
    def hello():
        return "hello"

    return server


def line(method, params=None, id=1):
    return frame(method, params, id) + b"\n"


def init(version="2025-11-25"):
    return line("initialize", {"protocolVersion": version, "capabilities": {}}, id=0)


def serve(server, chunks):
    stream = FakeStream(chunks, size=512)
    Channel(server, stream).run()
    return stream.sent


def by_id(sent, rid):
    return [m for m in sent if m.get("id") == rid]


def test_a_plain_call_to_a_generator_tool_is_answered_when_it_returns():
    sent = serve(board(), [init(), line("tools/call", {"name": "count", "arguments": {"n": 3}}),
                           None, None, None, None])
    assert by_id(sent, 1) == [{"jsonrpc": "2.0", "id": 1, "result": {
        "content": [{"type": "text", "text": '{"counted":3}'}],
        "structuredContent": {"counted": 3}}}]


def test_other_requests_are_answered_while_a_generator_tool_runs():
    sent = serve(board(), [init(), line("tools/call", {"name": "count", "arguments": {"n": 4}}),
                           None, line("ping", id=2), line("tools/call", {"name": "hello"}, id=3),
                           None, None, None, None])
    order = [m.get("id") for m in sent if "id" in m]
    assert order == [0, 2, 3, 1]


def test_each_yielded_fraction_is_progress_when_the_call_has_a_token():
    call = {"name": "count", "arguments": {"n": 2}, "_meta": {"progressToken": "t"}}
    sent = serve(board(), [init(), line("tools/call", call), None, None, None])
    progress = [m["params"] for m in sent if m.get("method") == "notifications/progress"]
    assert progress == [{"progressToken": "t", "progress": 0, "total": 1},
                        {"progressToken": "t", "progress": 0.5, "total": 1}]
    assert by_id(sent, 1)[0]["result"]["structuredContent"] == {"counted": 2}


def test_a_generator_that_raises_answers_with_an_is_error_result():
    sent = serve(board(), [init(), line("tools/call", {"name": "broken"}), None, None])
    res = by_id(sent, 1)[0]["result"]
    assert res["isError"] is True and res["content"][0]["text"] == "broken failed: sensor gone"


def test_a_cancelled_generator_call_sends_nothing_more():
    # 2025-11-25: "Receivers ... SHOULD NOT send a response for the cancelled request";
    # 2026-07-28: nothing more is sent for a cancelled request.
    call = {"name": "count", "arguments": {"n": 5}, "_meta": {"progressToken": "t"}}
    cancel = line("notifications/cancelled", {"requestId": 1}, id=None)
    sent = serve(board(), [init(), line("tools/call", call), None, cancel, None, None, None,
                           None, None, line("ping", id=2)])
    assert by_id(sent, 1) == []
    assert len([m for m in sent if m.get("method") == "notifications/progress"]) == 1
    assert by_id(sent, 2)[0]["result"] == {}


def test_more_open_long_calls_than_the_bound_get_a_clear_is_error():
    server = board()
    calls = [line("tools/call", {"name": "count", "arguments": {"n": 50}}, id=i)
             for i in range(1, 6)]
    sent = serve(server, [init()] + calls + [None])
    refused = by_id(sent, 5)[0]["result"]
    assert refused["isError"] is True and "4 long tool calls are running" in \
        refused["content"][0]["text"]
    assert [by_id(sent, i) for i in range(1, 5)] == [[], [], [], []]  # still running at eof


def test_a_generator_tool_in_a_batch_runs_to_its_end_inside_the_batch():
    server = board()
    initialize(server, "2025-03-26")
    out = server.handle(b'[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":'
                        b'{"name":"count","arguments":{"n":3}}},'
                        b'{"jsonrpc":"2.0","id":2,"method":"ping"}]')
    import json
    answers = json.loads(out)
    assert [a["id"] for a in answers] == [1, 2]
    assert answers[0]["result"]["content"][0]["text"] == '{"counted":3}'


def test_driven_through_handle_the_answer_lands_in_the_outbox():
    server = board()
    initialize(server)
    notifications(server)
    assert server.handle(frame("tools/call", {"name": "count", "arguments": {"n": 1}})) is None
    server.work.step(server)
    server.work.step(server)
    assert [m["id"] for m in notifications(server)] == [1]
    assert result(server, "ping", id=2) == {}


def test_a_stateless_call_is_answered_with_the_revision_fields():
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    call = {"name": "count", "arguments": {"n": 2}, "_meta": meta}
    sent = serve(board(), [line("tools/call", call), None, None, None])
    res = by_id(sent, 1)[0]["result"]
    assert res["resultType"] == "complete" and res["structuredContent"] == {"counted": 2}
