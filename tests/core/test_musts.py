# The protocol's MUSTs, one test per requirement, each quoting the specification's words (the
# revision named first). Run on CPython by pytest and on MicroPython by tests/mprun.py.
import json

from tests.core.support import (FakeStream, demo_server, error, frame, initialize, notifications,
                                 reply, result)
from tinymcp import Server
from tinymcp.channel import Channel, Lines

MODERN = "2026-07-28"
VERSION = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
FORM = {"message": "Your name?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}
URL = {"mode": "url", "message": "Sign in", "url": "https://example.com/login",
       "elicitationId": "e1"}


def line(msg):
    return json.dumps(msg).encode()


def batch(*msgs):
    return json.dumps(list(msgs)).encode()


def ping(rid):
    return {"jsonrpc": "2.0", "id": rid, "method": "ping"}


def note(method="notifications/initialized"):
    return {"jsonrpc": "2.0", "method": method}


def batch_session():
    server = demo_server()
    initialize(server, "2025-03-26")
    notifications(server)
    return server


def session(server, version, capabilities, *frames):
    # A whole connection through the serve loop: initialize, then the frames, each a line.
    init = frame("initialize", {"protocolVersion": version, "capabilities": capabilities}, id=0)
    stream = FakeStream([init + b"\n", frame("notifications/initialized", id=None) + b"\n"]
                        + [f + b"\n" if f is not None else None for f in frames],
                        size=1024)  # a frame arrives whole: a cancel is read at the next pump
    Channel(server, Lines(stream)).run()
    return stream


def stamped(params, caps, **meta):
    envelope = {VERSION: MODERN, CAPS: caps}
    for key in meta:
        envelope[key] = meta[key]
    params = dict(params)
    params["_meta"] = envelope
    return params


# -- 2025-03-26 basic: "MCP implementations MAY support sending JSON-RPC batches, but MUST
#    support receiving JSON-RPC batches." --------------------------------------------------

def test_2025_03_26_a_batch_of_requests_and_notifications_gets_one_array_of_answers():
    # JSON-RPC 2.0: "The Server should respond with an Array containing the corresponding
    # Response objects"; a notification in it gets none.
    server = batch_session()
    out = server.handle(batch(ping(2), {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                             note()))
    assert b"\n" not in out  # one frame
    answers = json.loads(out)
    assert type(answers) is list and [a["id"] for a in answers] == [2, 3]
    assert answers[0]["result"] == {}
    assert [t["name"] for t in answers[1]["result"]["tools"]] == ["add", "fail", "echo"]


def test_2025_03_26_a_batch_of_notifications_only_gets_nothing():
    # JSON-RPC 2.0: "If there are no Response objects contained within the Response array as it
    # is to be sent to the client, the server MUST NOT return an empty Array and should return
    # nothing at all."
    server = batch_session()
    assert server.handle(batch(note(), note("notifications/roots/list_changed"))) is None
    assert server.outbox == []


def test_2025_03_26_an_empty_batch_is_one_invalid_request():
    # JSON-RPC 2.0: "If the batch rpc call itself fails to be recognized as an valid JSON or as
    # an Array with at least one value, the response from the Server MUST be a single Response
    # object."
    msg = json.loads(batch_session().handle(b"[]"))
    assert msg["id"] is None and msg["error"]["code"] == -32600


def test_2025_03_26_each_invalid_entry_of_a_batch_gets_its_own_error():
    answers = json.loads(batch_session().handle(b'[1, {"jsonrpc": "2.0", "id": 9}, [], '
                                                b'{"jsonrpc": "2.0", "id": 4, "method": "nope"}]'))
    assert [(a["id"], a["error"]["code"]) for a in answers] == [
        (None, -32600), (9, -32600), (None, -32600), (4, -32601)]


def test_2025_03_26_initialize_is_refused_inside_a_batch():
    # 2025-03-26 lifecycle: "The initialize request MUST NOT be part of a JSON-RPC batch".
    server = batch_session()
    init = {"jsonrpc": "2.0", "id": 5, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}
    answers = json.loads(server.handle(batch(init, ping(6))))
    assert answers[0]["id"] == 5 and answers[0]["error"]["code"] == -32600
    assert answers[1] == {"jsonrpc": "2.0", "id": 6, "result": {}}
    assert server.session.version == "2025-03-26"  # the session is unchanged


def test_every_other_revision_refuses_a_batch_with_invalid_request():
    # 2025-06-18 changelog: "Remove support for JSON-RPC batching".
    for version in ("2024-11-05", "2025-06-18", "2025-11-25"):
        server = demo_server()
        initialize(server, version)
        msg = json.loads(server.handle(batch(ping(1), ping(2))))
        assert msg["id"] is None and msg["error"]["code"] == -32600, version
    msg = json.loads(demo_server().handle(batch(ping(1), ping(2))))  # before initialize
    assert msg["error"]["code"] == -32600
    server = demo_server()
    result(server, "tools/list", stamped({}, {}))  # a 2026-07-28 connection
    assert json.loads(server.handle(batch(ping(1), ping(2))))["error"]["code"] == -32600


def test_2025_03_26_a_batch_streams_out_answer_by_answer_as_one_line():
    server = demo_server()
    calls = [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "echo", "arguments": {"text": "x" * 300}}} for i in range(6)]
    stream = session(server, "2025-03-26", {}, batch(*calls), frame("ping", id=99))
    assert len(stream.lines) == 3  # initialize, the batch, the ping
    answers = json.loads(stream.lines[1])
    assert [a["id"] for a in answers] == list(range(6))
    assert answers[5]["result"]["content"][0]["text"] == "x" * 300
    assert max(stream.writes) < len(stream.lines[1])  # never one block of the whole array


def test_2025_03_26_a_batch_longer_than_the_frame_limit_is_refused_like_any_frame():
    server = demo_server()
    init = frame("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}}, id=0)
    stream = FakeStream([init + b"\n", batch(*[ping(i) for i in range(20)]) + b"\n",
                         frame("ping", id=99) + b"\n"])
    Channel(server, Lines(stream, max_frame=256)).run()
    sent = stream.sent
    assert sent[1]["id"] is None and sent[1]["error"]["code"] == -32600
    assert sent[1]["error"]["data"]["limit"] == 256
    assert sent[2] == {"jsonrpc": "2.0", "id": 99, "result": {}}


def test_2025_03_26_what_a_batch_logs_follows_its_array_and_its_progress_is_not_sent():
    # Nothing may be written inside the array; progress "MAY" not be sent (progress: "Receivers
    # of progress requests MAY: Choose not to send any progress notifications").
    server = Server("b", "0")

    @server.tool("work", "Logs and reports progress", ctx=True)
    def work(ctx):
        ctx.progress(1, 2)
        ctx.log("warning", "halfway")
        return "done"

    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "work", "_meta": {"progressToken": "t"}}}
    stream = session(server, "2025-03-26", {}, batch(call, ping(2)))
    sent = stream.sent
    assert [a["id"] for a in sent[1]] == [1, 2]
    assert sent[2]["method"] == "notifications/message" and sent[2]["params"]["data"] == "halfway"
    assert len(sent) == 3


def test_2025_03_26_a_tool_in_a_batch_cannot_ask_the_client():
    server = Server("b", "0")

    @server.tool("ask", "Asks the client", ctx=True)
    def ask(ctx):
        ctx.request("sampling/createMessage", {"messages": [], "maxTokens": 5})
        return "unreachable"

    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "ask"}}
    stream = session(server, "2025-03-26", {"sampling": {}}, batch(call))
    sent = stream.sent
    assert len(sent) == 2 and sent[1][0]["result"]["isError"] is True
    assert "batch" in sent[1][0]["result"]["content"][0]["text"]


# -- 2025-11-25 client/elicitation: "Servers MUST NOT send elicitation requests with modes that
#    are not supported by the client." ---------------------------------------------------------

def eliciting(params):
    server = Server("e", "0")

    @server.tool("ask", "Elicits", ctx=True)
    def ask(ctx):
        return ctx.request("elicitation/create", params, timeout_ms=2000)["action"]

    return server


ACCEPT = b'{"jsonrpc":"2.0","id":1,"result":{"action":"accept"}}'


def test_a_url_only_client_is_never_sent_a_form_elicitation():
    for params in (FORM, dict(FORM, mode="form")):  # "defaults to "form" if omitted"
        stream = session(eliciting(params), "2025-11-25", {"elicitation": {"url": {}}},
                         frame("tools/call", {"name": "ask"}, id=3))
        sent = stream.sent
        assert [m.get("method") for m in sent] == [None, None]  # nothing was asked
        res = sent[1]["result"]
        assert res["isError"] is True and "mode form" in res["content"][0]["text"]


def test_an_empty_elicitation_capability_means_form_mode_only():
    # "For backwards compatibility, an empty capabilities object is equivalent to declaring
    # support for form mode only"
    stream = session(eliciting(URL), "2025-11-25", {"elicitation": {}},
                     frame("tools/call", {"name": "ask"}, id=3))
    assert [m.get("method") for m in stream.sent] == [None, None]
    assert "mode url" in stream.sent[1]["result"]["content"][0]["text"]
    stream = session(eliciting(FORM), "2025-11-25", {"elicitation": {}},
                     frame("tools/call", {"name": "ask"}, id=3), None, ACCEPT)
    assert stream.sent[1]["method"] == "elicitation/create"
    assert stream.sent[2]["result"]["content"][0]["text"] == "accept"


def test_a_declared_mode_is_asked():
    stream = session(eliciting(URL), "2025-11-25", {"elicitation": {"form": {}, "url": {}}},
                     frame("tools/call", {"name": "ask"}, id=3), None, ACCEPT)
    assert stream.sent[1]["method"] == "elicitation/create"
    assert stream.sent[1]["params"]["mode"] == "url"
    assert stream.sent[2]["result"]["content"][0]["text"] == "accept"


def test_2026_07_28_a_mode_the_client_lacks_is_a_missing_capability_not_an_input_request():
    # 2026-07-28 client/elicitation: the same MUST NOT; the request fails with
    # MissingRequiredClientCapability (-32021) naming what is missing.
    server = eliciting(FORM)
    err = error(server, "tools/call", stamped({"name": "ask"}, {"elicitation": {"url": {}}}))
    assert err["code"] == -32021
    assert err["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    err = error(eliciting(URL), "tools/call", stamped({"name": "ask"}, {"elicitation": {}}))
    assert err["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    asked = result(eliciting(URL), "tools/call",
                   stamped({"name": "ask"}, {"elicitation": {"url": {}}}))
    assert asked["resultType"] == "input_required"
    assert list(asked["inputRequests"].values())[0]["params"]["mode"] == "url"


# -- cancellation: 2025-11-25 progress: "Progress notifications MUST only reference tokens
#    that: Were provided in an active request; Are associated with an in-progress operation";
#    2026-07-28 stdio: "Servers SHOULD stop work on a cancelled request as soon as practical and
#    MUST NOT send any further messages for it." ---------------------------------------------

def stubborn_server():
    # A tool that reports progress and logs, and never looks at ctx.cancelled.
    server = Server("c", "0")

    @server.tool("work", "Works to the end whatever happens", ctx=True)
    def work(ctx):
        for done in (0, 50, 100):
            ctx.log("info", "at " + str(done))
            ctx.progress(done, 100)  # each reads input first: here the cancel arrives
        try:
            ctx.request("sampling/createMessage", {"messages": [], "maxTokens": 5})
        except Exception:
            pass
        return "finished"

    return server


CANCEL = frame("notifications/cancelled", {"requestId": 5}, id=None)


def test_after_a_cancel_no_progress_no_log_no_request_and_no_result_are_sent():
    stream = session(stubborn_server(), "2025-11-25", {"sampling": {}},
                     frame("tools/call", {"name": "work", "_meta": {"progressToken": "p"}},
                           id=5),
                     None, None, CANCEL, frame("ping", id=6))  # quiet while it logs and reports 0
    sent = stream.sent[1:]
    assert [(m.get("method"), m.get("id")) for m in sent] == [
        ("notifications/message", None), ("notifications/progress", None), (None, 6)]
    assert sent[1]["params"]["progress"] == 0


def test_the_silence_ends_with_the_cancelled_request():
    server = stubborn_server()
    stream = session(server, "2025-11-25", {},
                     frame("tools/call", {"name": "work", "_meta": {"progressToken": 1}}, id=5),
                     None, None, CANCEL)
    assert stream.sent[-1]["method"] == "notifications/progress"  # cancelled while it ran
    notifications(server)
    server.ctx.log("warning", "sampler trouble")  # idle work, after the request
    assert [n["params"]["data"] for n in notifications(server)] == ["sampler trouble"]


def test_2026_07_28_after_a_cancel_nothing_more_is_sent_for_the_request():
    server = stubborn_server()
    params = stamped({"name": "work", "_meta": {}}, {"sampling": {}}, **{LOG_LEVEL: "info"})
    params["_meta"]["progressToken"] = "p"
    stream = FakeStream([frame("tools/call", params, id=5) + b"\n", None, None, CANCEL + b"\n",
                         frame("tools/list", stamped({}, {}), id=6) + b"\n"], size=1024)
    Channel(server, Lines(stream)).run()
    sent = stream.sent
    assert [(m.get("method"), m.get("id")) for m in sent] == [
        ("notifications/message", None), ("notifications/progress", None), (None, 6)]


def test_cancellation_of_an_unknown_or_finished_request_is_ignored():
    # 2025-06-18 cancellation: "Receivers MAY ignore cancellation notifications if: The
    # referenced request is unknown; Processing has already completed"
    stream = session(demo_server(), "2025-11-25", {}, CANCEL, frame("ping", id=5), CANCEL,
                     frame("ping", id=6))
    assert [m["id"] for m in stream.sent] == [0, 5, 6]


# -- what passes already: ids, responses, notifications, error codes --------------------------

def test_requests_must_carry_a_string_or_integer_id_never_null():
    # 2025-11-25 basic: "Requests MUST include a string or integer ID." "Unlike base JSON-RPC,
    # the ID MUST NOT be null."
    server = demo_server()
    initialize(server)
    for rid in (None, 1.5, True, [1]):
        msg = json.loads(server.handle(line({"jsonrpc": "2.0", "id": rid, "method": "ping"})))
        assert msg["error"]["code"] == -32600, rid


def test_responses_carry_the_id_of_their_request_and_either_result_or_error():
    # "Result responses MUST include the same ID as the request they correspond to." "Error
    # responses MUST include the same ID as the request they correspond to (except in error
    # cases where the ID could not be read due a malformed request)." "Error responses MUST
    # include an error field with a code and message."
    server = demo_server()
    initialize(server)
    for rid in (0, "0", "é", 2 ** 40):
        assert reply(server, "ping", id=rid) == {"jsonrpc": "2.0", "id": rid, "result": {}}
        msg = reply(server, "tools/nope", id=rid)
        assert msg["id"] == rid and "result" not in msg
        assert sorted(msg["error"]) == ["code", "message"]
    assert json.loads(server.handle(b'{"id": 3, "meth'))["id"] is None


def test_notifications_get_no_response_and_the_boards_carry_no_id():
    # "The receiver MUST NOT send a response." "Notifications MUST NOT include an ID."
    server = demo_server()
    initialize(server)
    for method in ("notifications/initialized", "notifications/cancelled", "tools/list", "x"):
        assert server.handle(line(note(method))) is None
    server.remove("tools", "echo")
    sent = notifications(server)
    assert sent == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}]


def test_error_codes_are_integers_and_the_standard_ones():
    # "Error codes MUST be integers." JSON-RPC 2.0: -32700 parse error, -32600 invalid request,
    # -32601 method not found, -32602 invalid params.
    server = demo_server()
    initialize(server)
    cases = ((b"{nope", -32700), (b'{"jsonrpc": "2.0", "id": 1}', -32600),
             (line({"jsonrpc": "2.0", "id": 1, "method": "nope"}), -32601),
             (line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": [1]}), -32602))
    for data, code in cases:
        err = json.loads(server.handle(data))["error"]
        assert type(err["code"]) is int and err["code"] == code, data


def test_2026_07_28_every_request_carries_its_envelope_and_every_result_its_type():
    # 2026-07-28 basic: "Servers MUST NOT rely on prior requests over the same connection to
    # establish context (e.g., capabilities, protocol version, client identity)." "The result
    # MUST include a resultType field". "Implementations of this protocol version MUST NOT emit
    # these codes: -32002".
    server = demo_server()
    assert result(server, "tools/list", stamped({}, {}))["resultType"] == "complete"
    assert error(server, "tools/list", {})["code"] == -32602  # no envelope: no context kept
    err = error(server, "tools/list", {"_meta": {VERSION: "2030-01-01", CAPS: {}}})
    assert err["code"] == -32022 and MODERN in err["data"]["supported"]
    server.resource("sensor://t", "t")(lambda: "21")
    assert error(server, "resources/read", stamped({"uri": "sensor://nope"}, {}))["code"] == -32602
