# Logging, progress, cancellation, completion and server-to-client requests.
from tests.core.support import FakeStream, error, frame, initialize, notifications, result
from tinymcp import Server
from tinymcp.channel import Channel, Lines


def test_log_messages_are_filtered_by_the_client_level():
    server = Server("l", "0")
    initialize(server)
    notifications(server)
    server.log("debug", "noise")
    server.log("info", {"event": "boot"}, logger="board")
    assert [n["params"] for n in notifications(server)] == [
        {"level": "info", "data": {"event": "boot"}, "logger": "board"}]
    assert result(server, "logging/setLevel", {"level": "error"}) == {}
    server.log("warning", "hidden")
    server.log("critical", "shown")
    assert [n["params"]["data"] for n in notifications(server)] == ["shown"]


def test_nothing_is_logged_before_initialize():
    server = Server("l", "0")
    server.log("emergency", "too early")
    assert server.outbox == []


def progress_server():
    server = Server("p", "0")

    @server.tool("count", "Counts to three", ctx=True)
    def count(ctx):
        for i in range(3):
            ctx.progress(i + 1, 3, "step " + str(i + 1))
        return "done"

    initialize(server)
    notifications(server)
    return server


def test_progress_is_reported_when_the_request_carries_a_token():
    server = progress_server()
    res = result(server, "tools/call", {"name": "count", "_meta": {"progressToken": "tok"}})
    assert res["content"][0]["text"] == "done"
    sent = notifications(server, "notifications/progress")
    assert [n["params"] for n in sent] == [
        {"progressToken": "tok", "progress": i, "total": 3, "message": "step " + str(i)}
        for i in (1, 2, 3)]


def test_no_progress_without_a_token():
    server = progress_server()
    result(server, "tools/call", {"name": "count"})
    assert notifications(server) == []


def slow_server(log):
    server = Server("s", "0")

    @server.tool("slow", "Works until cancelled", ctx=True)
    def slow(ctx):
        for i in range(50):
            if ctx.cancelled:
                log.append("stopped at " + str(i))
                return "cancelled"
        log.append("finished")
        return "finished"

    return server


def session_frames(*extra, capabilities=None):
    init = frame("initialize", {"protocolVersion": "2025-11-25",
                                "capabilities": capabilities or {}}, id=0)
    return [init + b"\n", frame("notifications/initialized", id=None) + b"\n"] + list(extra)


def test_cancelled_request_stops_and_gets_no_response():
    log = []
    server = slow_server(log)
    stream = FakeStream(session_frames(
        frame("tools/call", {"name": "slow"}, id=5) + b"\n",
        frame("notifications/cancelled", {"requestId": 5, "reason": "user"}, id=None) + b"\n",
        frame("ping", id=6) + b"\n"))
    assert Channel(server, Lines(stream)).run() == "eof"
    assert log == ["stopped at 0"] or log[0].startswith("stopped at")
    ids = [m.get("id") for m in stream.sent]
    assert 5 not in ids and 6 in ids


def steps_server(log):
    # A tool that reports progress and logs at each of its steps.
    server = Server("c", "0")

    @server.tool("steps", "Reports three steps", ctx=True)
    def steps(ctx):
        for i in range(3):
            ctx.progress(i, 3)
            ctx.log("info", "step " + str(i))
            log.append(i)
        return "done"

    return server


def test_a_cancel_that_came_while_the_tool_ran_stops_its_next_progress():
    # The cancel comes after the first step's output, in pieces smaller than itself (the port's
    # 64-byte buffer, as MicroPython's stdio reads): the next ctx.progress sees it whole, and
    # nothing more is sent for the request, neither progress, nor log, nor its result.
    log = []
    server = steps_server(log)
    call = frame("tools/call", {"name": "steps", "_meta": {"progressToken": "p"}}, id=5)
    cancel = frame("notifications/cancelled", {"requestId": 5, "reason": "the user left"},
                   id=None)
    assert len(cancel) > 64
    stream = FakeStream(session_frames(call + b"\n", None, None, cancel + b"\n",
                                       frame("ping", id=6) + b"\n"))
    assert Channel(server, Lines(stream)).run() == "eof"
    sent = [m for m in stream.sent if m.get("id") != 0]
    assert [m.get("method") for m in sent] == ["notifications/progress", "notifications/message",
                                               None]
    assert sent[0]["params"]["progress"] == 0 and sent[-1]["id"] == 6
    assert log == [0, 1, 2]  # the tool ran on (it never asked), but said nothing more


def test_a_cancel_is_seen_by_the_next_ctx_log_too():
    log = []
    server = Server("c", "0")

    @server.tool("talk", "Logs twice", ctx=True)
    def talk(ctx):
        ctx.log("info", "one")
        ctx.log("info", "two")
        return "done"

    cancel = frame("notifications/cancelled", {"requestId": 5, "reason": "the user left"},
                   id=None)
    stream = FakeStream(session_frames(frame("tools/call", {"name": "talk"}, id=5) + b"\n",
                                       None, cancel + b"\n", frame("ping", id=6) + b"\n"))
    Channel(server, Lines(stream)).run()
    sent = [m for m in stream.sent if m.get("id") != 0]
    assert [m.get("params", {}).get("data") for m in sent] == ["one", None]
    assert sent[-1]["id"] == 6 and log == []


def test_cancelling_an_unknown_request_is_ignored():
    log = []
    server = slow_server(log)
    stream = FakeStream(session_frames(
        frame("notifications/cancelled", {"requestId": 77}, id=None) + b"\n",
        frame("tools/call", {"name": "slow"}, id=5) + b"\n"))
    Channel(server, Lines(stream)).run()
    assert log == ["finished"]
    assert stream.sent[-1]["id"] == 5


def test_requests_arriving_while_a_tool_runs_are_served_after_it_in_order():
    log = []
    server = slow_server(log)
    stream = FakeStream(session_frames(
        frame("tools/call", {"name": "slow"}, id=5) + b"\n" + frame("tools/list", id=6) + b"\n"
        + frame("ping", id=7) + b"\n"))
    Channel(server, Lines(stream)).run()
    ids = [m.get("id") for m in stream.sent]
    assert ids == [0, 7, 5, 6]  # the ping is answered at once, tools/list waits its turn


def test_a_ping_answered_mid_tool_leaves_the_tool_cancellable():
    log = []
    server = slow_server(log)
    stream = FakeStream(session_frames(
        frame("tools/call", {"name": "slow"}, id=5) + b"\n" + frame("ping", id=7) + b"\n"
        + frame("notifications/cancelled", {"requestId": 5}, id=None) + b"\n"
        + frame("tools/list", id=6) + b"\n"))
    Channel(server, Lines(stream)).run()
    assert log[0].startswith("stopped at")
    assert [m.get("id") for m in stream.sent] == [0, 7, 6]


def test_a_tool_can_ask_the_client_and_gets_the_answer_routed_back():
    server = Server("ask", "0")

    @server.tool("ask", "Asks the client's model", ctx=True)
    def ask(ctx):
        answer = ctx.request("sampling/createMessage",
                             {"messages": [], "maxTokens": 10}, timeout_ms=2000)
        return "model said " + answer["content"]["text"]

    reply = b'{"jsonrpc":"2.0","id":1,"result":{"role":"assistant","content":{"type":"text","text":"42"}}}\n'
    stream = FakeStream(session_frames(frame("tools/call", {"name": "ask"}, id="q") + b"\n",
                                       None, reply, capabilities={"sampling": {}}))
    Channel(server, Lines(stream)).run()
    sent = stream.sent
    assert sent[1]["method"] == "sampling/createMessage" and sent[1]["id"] == 1
    assert sent[2]["id"] == "q"
    assert sent[2]["result"]["content"][0]["text"] == "model said 42"


def test_a_client_error_answer_becomes_the_tool_error():
    server = Server("ask", "0")

    @server.tool("ask", "Asks the client", ctx=True)
    def ask(ctx):
        ctx.request("elicitation/create", {"message": "ok?", "requestedSchema": {}})
        return "unreachable"

    reply = b'{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"user declined"}}\n'
    stream = FakeStream(session_frames(frame("tools/call", {"name": "ask"}, id=3) + b"\n", reply,
                                       capabilities={"elicitation": {}}))
    Channel(server, Lines(stream)).run()
    res = stream.sent[-1]["result"]
    assert res["isError"] is True and "user declined" in res["content"][0]["text"]


def test_a_client_that_cannot_be_asked_is_not_asked():
    server = Server("ask", "0")

    @server.tool("ask", "Asks the client's model", ctx=True)
    def ask(ctx):
        ctx.request("sampling/createMessage", {"messages": [], "maxTokens": 10})
        return "unreachable"

    stream = FakeStream(session_frames(frame("tools/call", {"name": "ask"}, id=4) + b"\n",
                                       capabilities={"elicitation": {}}))
    Channel(server, Lines(stream)).run()
    assert [m.get("method") for m in stream.sent] == [None, None]  # no request went out
    res = stream.sent[-1]["result"]
    assert res["isError"] is True and "sampling capability" in res["content"][0]["text"]


def completion_server():
    server = Server("c", "0")
    names = ["sensor" + str(i) for i in range(150)]
    server.prompt("check", args={"sensor": "which", "mode?": "how"},
                  complete={"sensor": lambda prefix, ctx: [n for n in names if n.startswith(prefix)],
                            "mode": ("fast", "full", "slow")})(lambda sensor, mode="fast": sensor)
    server.resource("adc://{pin}", "adc", complete={"pin": (26, 27, 28)})(lambda pin: pin)
    initialize(server)
    return server


def test_completion_for_prompt_arguments_caps_at_100_values():
    server = completion_server()
    res = result(server, "completion/complete", {"ref": {"type": "ref/prompt", "name": "check"},
                                                 "argument": {"name": "sensor", "value": "sensor"}})
    assert len(res["completion"]["values"]) == 100
    assert res["completion"]["total"] == 150 and res["completion"]["hasMore"] is True
    res = result(server, "completion/complete", {"ref": {"type": "ref/prompt", "name": "check"},
                                                 "argument": {"name": "mode", "value": "f"}})
    assert res["completion"] == {"values": ["fast", "full"], "total": 2, "hasMore": False}


def test_completion_for_template_variables():
    server = completion_server()
    res = result(server, "completion/complete", {"ref": {"type": "ref/resource", "uri": "adc://{pin}"},
                                                 "argument": {"name": "pin", "value": "2"}})
    assert res["completion"]["values"] == ["26", "27", "28"]


def test_completion_of_unknown_references_is_invalid_params():
    server = completion_server()
    assert error(server, "completion/complete", {"ref": {"type": "ref/prompt", "name": "nope"},
                                                 "argument": {"name": "x", "value": ""}})["code"] == -32602
    assert error(server, "completion/complete", {"argument": {}})["code"] == -32602
