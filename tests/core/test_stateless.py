# The stateless 2026-07-28 revision: per-request _meta, discover, result fields, era lock-in,
# subscriptions/listen and input-required results (the same tool code in both eras).
import json

from tests.core.support import (FakeStream, demo_server, error, frame, initialize, notifications,
                                 result)
from tinymcp import Server
from tinymcp.channel import Channel, Lines
from tinymcp.schema import string
from tinymcp.echo import shown

MODERN = "2026-07-28"
VERSION = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL = "io.modelcontextprotocol/logLevel"
SUB_ID = "io.modelcontextprotocol/subscriptionId"
INFO = "io.modelcontextprotocol/serverInfo"
ELICIT = {"elicitation": {"form": {}}}


def stamped(params=None, caps=None, version=MODERN, **meta):
    # params with the per-request _meta of a 2026-07-28 client
    params = dict(params or {})
    envelope = {VERSION: version, CAPS: caps if caps is not None else {},
                "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"}}
    for key in meta:
        envelope[key] = meta[key]
    params["_meta"] = envelope
    return params


def call(server, method, params=None, id=1, caps=None, **meta):
    return result(server, method, stamped(params, caps, **meta), id)


def fails(server, method, params=None, id=1, caps=None, **meta):
    return error(server, method, stamped(params, caps, **meta), id)


def board():
    # Tools, a watched resource, a template and a prompt with completions.
    server = demo_server()
    state = {"t": 21.5}
    server.resource("sensor://temperature", "temperature", mime="application/json",
                    watch=lambda: state["t"])(lambda: {"celsius": state["t"]})
    server.resource("sensor://humidity", "humidity", mime="application/json",
                    watch=lambda: 40)(lambda: {"rh": 40})
    server.resource("adc://{pin}", "adc", complete={"pin": ("26", "27")})(lambda pin: pin)
    server.prompt("check", "Check a sensor", args={"sensor": "which"},
                  complete={"sensor": ("temperature", "humidity")})(
        lambda sensor: "Check " + sensor)
    server.state = state
    return server


def stateless_board():
    # A board whose era a 2026-07-28 request has decided (server/discover alone decides nothing).
    server = board()
    call(server, "server/discover")
    call(server, "tools/list")
    notifications(server)
    return server


# -- server/discover and the fields of every result ------------------------------------------

def test_discover_names_versions_capabilities_and_instructions():
    res = call(demo_server(), "server/discover")
    assert res["supportedVersions"] == [MODERN]
    assert res["capabilities"] == {"logging": {}, "tools": {"listChanged": True}}
    assert res["instructions"] == "Be nice."
    assert res["resultType"] == "complete"
    assert res["ttlMs"] >= 0 and type(res["ttlMs"]) is int and res["cacheScope"] == "public"
    assert res["_meta"][INFO] == {"name": "demo", "version": "1.2.3", "title": "Demo board"}


def test_discover_declares_what_is_registered():
    caps = call(board(), "server/discover")["capabilities"]
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    assert caps["prompts"] == {"listChanged": True} and caps["completions"] == {}


def every_kind_of_request():
    return (
        ("tools/list", {}), ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
        ("tools/call", {"name": "echo", "arguments": {"text": "hi"}}),
        ("tools/call", {"name": "fail"}), ("tools/call", {"name": "add", "arguments": {}}),
        ("resources/list", {}), ("resources/templates/list", {}),
        ("resources/read", {"uri": "sensor://temperature"}),
        ("resources/read", {"uri": "adc://26"}),
        ("prompts/list", {}), ("prompts/get", {"name": "check", "arguments": {"sensor": "x"}}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "check"},
                                 "argument": {"name": "sensor", "value": "t"}}),
        ("server/discover", {}),
    )


def test_every_result_says_complete_and_names_the_server():
    server = board()
    for method, params in every_kind_of_request():
        res = call(server, method, params)
        assert res["resultType"] == "complete", method
        assert res["_meta"][INFO]["name"] == "demo", method


def test_cacheable_results_carry_ttl_and_scope_and_the_others_do_not():
    server = board()
    cacheable = ("tools/list", "resources/list", "resources/templates/list", "resources/read",
                 "prompts/list", "server/discover")
    for method, params in every_kind_of_request():
        res = call(server, method, params)
        if method in cacheable:
            assert type(res["ttlMs"]) is int and res["ttlMs"] >= 0, method
            assert res["cacheScope"] in ("public", "private"), method
        else:
            assert "ttlMs" not in res and "cacheScope" not in res, method


def test_results_keep_their_content():
    server = board()
    res = call(server, "tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert res["structuredContent"] == {"sum": 5}
    assert res["content"] == [{"type": "text", "text": '{"sum":5}'}]
    res = call(server, "tools/call", {"name": "fail"})
    assert res["isError"] is True and "sensor not responding" in res["content"][0]["text"]
    read = call(server, "resources/read", {"uri": "sensor://temperature"})
    assert read["contents"] == [{"uri": "sensor://temperature", "mimeType": "application/json",
                                 "text": '{"celsius":21.5}'}]
    tools = call(server, "tools/list")["tools"]
    assert [t["name"] for t in tools] == ["add", "fail", "echo"]
    assert tools[0]["outputSchema"]["properties"] == {"sum": {"type": "integer"}}
    prompt = call(server, "prompts/get", {"name": "check", "arguments": {"sensor": "adc"}})
    assert prompt["messages"][0]["content"]["text"] == "Check adc"


def test_pages_and_the_list_answer_are_encoded_once():
    server = board()
    server.page_size = 2
    page = call(server, "tools/list")
    assert len(page["tools"]) == 2 and page["resultType"] == "complete" and page["ttlMs"] >= 0
    rest = call(server, "tools/list", {"cursor": page["nextCursor"]})
    assert [t["name"] for t in rest["tools"]] == ["echo"] and rest["cacheScope"] == "public"
    cached = server.session.cache["tools"]
    assert type(cached) is bytes  # a short page: joined (tinymcp/listing.py)
    assert server.handle(frame("tools/list", stamped(), id=9)).endswith(cached + b"}")


# -- the per-request _meta and its errors ------------------------------------------------------

def test_a_request_without_the_envelope_is_invalid_params():
    server = stateless_board()
    assert error(server, "tools/list")["code"] == -32602
    assert error(server, "tools/list", {"_meta": {VERSION: MODERN}})["code"] == -32602
    assert error(server, "tools/list", {"_meta": {CAPS: {}}})["code"] == -32602
    assert error(server, "tools/list", {"_meta": {VERSION: MODERN, CAPS: []}})["code"] == -32602
    assert error(server, "tools/list", {"_meta": {VERSION: 2026, CAPS: {}}})["code"] == -32602
    assert error(server, "tools/list", {"_meta": "2026-07-28"})["code"] == -32602
    assert call(server, "tools/list")["resultType"] == "complete"  # and the next one is served


def test_an_unsupported_version_is_32022_naming_the_supported_ones():
    server = demo_server()
    err = fails(server, "server/discover", version="2099-01-01")
    assert err["code"] == -32022
    assert err["data"]["requested"] == "2099-01-01"
    # Undecided: the handshake versions are on offer too, so a client may fall back.
    assert MODERN in err["data"]["supported"] and "2025-11-25" in err["data"]["supported"]
    call(server, "server/discover")  # a probe: still undecided
    assert "2025-11-25" in fails(server, "tools/list", version="2099-01-01")["data"]["supported"]
    call(server, "tools/list")  # decided
    err = fails(server, "tools/list", version="2025-11-25")
    assert err["code"] == -32022
    assert err["data"] == {"supported": [MODERN], "requested": "2025-11-25"}


def test_a_bad_log_level_is_invalid_params():
    assert fails(stateless_board(), "tools/list", **{LOG_LEVEL: "loud"})["code"] == -32602


def test_handshake_methods_are_not_part_of_the_era():
    server = stateless_board()
    for method, params in (("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}),
                           ("ping", {}), ("logging/setLevel", {"level": "debug"}),
                           ("resources/subscribe", {"uri": "sensor://temperature"}),
                           ("resources/unsubscribe", {"uri": "sensor://temperature"})):
        assert error(server, method, params)["code"] == -32601, method
        assert fails(server, method, params)["code"] == -32601, method
    err = error(server, "initialize", {"protocolVersion": "2025-11-25"})
    assert err["data"] == {"supported": [MODERN]}
    assert call(server, "tools/list")["resultType"] == "complete"


def test_unknown_things():
    server = stateless_board()
    assert fails(server, "no/such/method")["code"] == -32601
    assert fails(server, "tools/call", {"name": "nope"})["code"] == -32602
    assert fails(server, "prompts/get", {"name": "nope"})["code"] == -32602


def test_a_missing_resource_is_invalid_params_not_32002():
    server = stateless_board()
    for uri in ("sensor://nope", "adc://", "file://../etc/passwd"):
        err = fails(server, "resources/read", {"uri": uri})
        assert err["code"] == -32602, uri
        assert err.get("data") == echoed(uri), uri   # quoted back only when it could be a URI


# -- one board, two eras: the first request decides ------------------------------------------

def test_initialize_first_locks_the_handshake_era():
    server = board()
    initialize(server)
    assert fails(server, "server/discover")["code"] == -32600
    assert fails(server, "tools/list")["code"] == -32600
    assert error(server, "server/discover")["code"] == -32601
    assert "resultType" not in result(server, "tools/list")
    assert result(server, "ping") == {}
    assert result(server, "resources/subscribe", {"uri": "sensor://temperature"}) == {}
    assert error(server, "resources/read", {"uri": "sensor://nope"})["code"] == -32002


def test_a_stateless_request_first_locks_the_stateless_revision_without_discover():
    server = board()
    assert "tools" in call(server, "tools/list")
    assert error(server, "initialize", {"protocolVersion": "2025-11-25"})["code"] == -32601
    assert error(server, "ping")["code"] == -32601
    assert error(server, "tools/list")["code"] == -32602


def test_initialize_after_server_discover_opens_the_handshake_era():
    # Claude Code probes with server/discover, then sends initialize on the same stdio.
    server = board()
    found = call(server, "server/discover")
    assert MODERN in found["supportedVersions"] and found["resultType"] == "complete"
    assert "tools" in found["capabilities"]
    assert initialize(server)["protocolVersion"] == "2025-11-25"
    assert result(server, "ping") == {}
    assert "resultType" not in result(server, "tools/list")
    assert fails(server, "tools/list")["code"] == -32600


def test_server_discover_then_a_stateless_request_locks_the_stateless_era():
    server = board()
    call(server, "server/discover")
    call(server, "server/discover")  # probing again decides nothing either
    assert "tools" in call(server, "tools/list")
    assert error(server, "initialize", {"protocolVersion": "2025-11-25"})["code"] == -32601
    assert call(server, "server/discover")["resultType"] == "complete"


def test_refused_stateless_requests_decide_nothing():
    server = board()
    assert error(server, "server/discover")["code"] == -32602
    assert fails(server, "server/discover", version="2099-01-01")["code"] == -32022
    assert fails(server, "ping")["code"] == -32601
    assert initialize(server)["protocolVersion"] == "2025-11-25"
    assert result(server, "ping") == {}


def test_the_handshake_era_never_loads_the_stateless_module_on_its_own():
    server = board()
    initialize(server)
    result(server, "tools/list")
    result(server, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    from tinymcp.revision import HANDSHAKE
    assert server.session.revision is HANDSHAKE


def test_a_client_that_probes_then_falls_back_leaves_the_stateless_module_unloaded():
    import sys
    server = board()
    assert fails(server, "server/discover", version="2099-01-01")["code"] == -32022
    assert "tinymcp.stateless" in sys.modules  # loaded to answer the probe
    assert initialize(server)["protocolVersion"] == "2025-11-25"
    assert "tinymcp.stateless" not in sys.modules  # released with the fallback
    assert result(server, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 1}})
    # A later connection in the 2026-07-28 era loads it again.
    server.open_session()
    assert MODERN in call(server, "server/discover")["supportedVersions"]


def test_the_asking_code_loads_only_when_a_2026_07_28_tool_asks():
    # Input-required results and the signed requestState live in tinymcp/asking.py: a
    # 2026-07-28 session that never asks, and any handshake-era session, never load it.
    import sys
    sys.modules.pop("tinymcp.asking", None)
    server = asking_server()
    initialize(server)
    result(server, "tools/list")
    server.open_session()
    call(server, "server/discover")
    call(server, "tools/list")
    assert "tinymcp.asking" not in sys.modules
    first = call(server, "tools/call", {"name": "greet"}, caps=ELICIT)
    assert first["resultType"] == "input_required"
    assert "tinymcp.asking" in sys.modules


# -- logging, progress and cancellation per request ------------------------------------------

def chatty():
    server = Server("chatty", "0")

    @server.tool("work", "Logs and reports progress", ctx=True)
    def work(ctx):
        ctx.log("debug", "details")
        ctx.log("info", "working")
        ctx.log("error", "trouble")
        ctx.progress(1, 2, "half")
        return "done"

    call(server, "server/discover")
    notifications(server)
    return server


def test_log_messages_only_for_requests_that_ask_for_a_level():
    server = chatty()
    call(server, "tools/call", {"name": "work"})
    assert notifications(server, "notifications/message") == []
    call(server, "tools/call", {"name": "work"}, **{LOG_LEVEL: "info"})
    sent = notifications(server, "notifications/message")
    assert [n["params"]["data"] for n in sent] == ["working", "trouble"]
    server.log("emergency", "between requests")
    assert notifications(server) == []
    call(server, "tools/call", {"name": "work"}, **{LOG_LEVEL: "error"})
    sent = notifications(server, "notifications/message")
    assert [n["params"]["data"] for n in sent] == ["trouble"]


def test_progress_follows_the_request_token():
    server = chatty()
    call(server, "tools/call", {"name": "work"}, progressToken=7)
    sent = notifications(server, "notifications/progress")
    assert [n["params"] for n in sent] == [{"progressToken": 7, "progress": 1, "total": 2,
                                            "message": "half"}]


def test_a_cancelled_stateless_request_gets_no_response():
    server = Server("s", "0")

    @server.tool("slow", "Works until cancelled", ctx=True)
    def slow(ctx):
        for i in range(50):
            if ctx.cancelled:
                return "cancelled"
        return "finished"

    stream = FakeStream([frame("tools/call", stamped({"name": "slow"}), id=5) + b"\n",
                         frame("notifications/cancelled", {"requestId": 5}, id=None) + b"\n",
                         frame("tools/list", stamped(), id=6) + b"\n"])
    Channel(server, Lines(stream)).run()
    assert [m.get("id") for m in stream.sent] == [6]


# -- subscriptions/listen -----------------------------------------------------------------------

def listen(server, id, **wanted):
    out = server.handle(frame("subscriptions/listen", stamped({"notifications": wanted}), id))
    assert out is None  # the response only ends the stream
    acks = notifications(server, "notifications/subscriptions/acknowledged")
    assert len(acks) == 1
    assert acks[0]["params"]["_meta"] == {SUB_ID: id}
    return acks[0]["params"]["notifications"]


def test_listen_acknowledges_what_the_board_can_send():
    server = demo_server()  # tools only: no prompts, no resources
    granted = listen(server, "l1", toolsListChanged=True, promptsListChanged=True,
                     resourcesListChanged=True, resourceSubscriptions=["sensor://temperature"])
    assert granted == {"toolsListChanged": True}
    server = stateless_board()
    granted = listen(server, 3, resourcesListChanged=True, toolsListChanged=False,
                     resourceSubscriptions=["sensor://temperature", "sensor://nope", "adc://27"])
    assert granted == {"resourcesListChanged": True,
                       "resourceSubscriptions": ["sensor://temperature", "adc://27"]}


def test_listen_streams_resource_updates_tagged_with_its_id():
    server = stateless_board()
    listen(server, "a", resourceSubscriptions=["sensor://temperature"])
    listen(server, "b", resourceSubscriptions=["sensor://humidity"])
    server.poll()
    assert notifications(server) == []  # nothing changed yet
    server.state["t"] = 23.0
    server.poll()
    sent = notifications(server)
    assert [(n["method"], n["params"]) for n in sent] == [
        ("notifications/resources/updated",
         {"uri": "sensor://temperature", "_meta": {SUB_ID: "a"}})]
    server.poll()
    assert notifications(server) == []
    server.resource_updated("sensor://humidity")
    sent = notifications(server)
    assert [n["params"]["_meta"][SUB_ID] for n in sent] == ["b"]


def test_two_streams_on_one_resource_each_get_the_update():
    server = stateless_board()
    listen(server, 1, resourceSubscriptions=["sensor://temperature"])
    listen(server, 2, resourceSubscriptions=["sensor://temperature"])
    server.state["t"] = 30.0
    server.poll()
    ids = [n["params"]["_meta"][SUB_ID] for n in notifications(server)]
    ids.sort()
    assert ids == [1, 2]


def test_list_changed_goes_only_to_streams_that_opted_in():
    server = stateless_board()
    listen(server, "tools", toolsListChanged=True)
    listen(server, "quiet", resourceSubscriptions=["sensor://temperature"])
    server.tool("late", "arrives late")(lambda: "hi")
    sent = notifications(server)
    assert [(n["method"], n["params"]) for n in sent] == [
        ("notifications/tools/list_changed", {"_meta": {SUB_ID: "tools"}})]
    server.prompt("late", "a prompt")(lambda: "hi")
    assert notifications(server) == []
    assert "late" in [t["name"] for t in call(server, "tools/list")["tools"]]


def test_cancelling_a_listen_ends_its_stream_without_a_response():
    server = stateless_board()
    listen(server, "l", resourceSubscriptions=["sensor://temperature"], toolsListChanged=True)
    assert server.handle(frame("notifications/cancelled", {"requestId": "l"}, id=None)) is None
    server.state["t"] = 25.0
    server.poll()
    server.tool("late", "arrives late")(lambda: "hi")
    assert notifications(server) == []
    assert server.session.subscriptions == {}


def test_listen_refuses_bad_filters_and_too_many_streams():
    server = stateless_board()
    assert fails(server, "subscriptions/listen", {"notifications": []})["code"] == -32602
    wrong = {"notifications": {"resourceSubscriptions": "sensor://temperature"}}
    assert fails(server, "subscriptions/listen", wrong)["code"] == -32602
    for i in range(server.session.revision.max_listens):
        listen(server, i, toolsListChanged=True)
    assert fails(server, "subscriptions/listen", {"notifications": {}}, id=99)["code"] == -32603
    assert error(server, "subscriptions/listen", {"notifications": {}})["code"] == -32602


def test_listen_first_also_decides_the_era():
    server = board()
    listen(server, "first", toolsListChanged=True)
    assert error(server, "initialize", {"protocolVersion": "2025-11-25"})["code"] == -32601


# -- input-required results: the same tool code in both eras ---------------------------------

NAME_FORM = {"message": "Your name?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}


def asking_server():
    server = Server("ask", "0")

    @server.tool("greet", "Greets the user by name", inputs={"greeting?": string()}, ctx=True)
    def greet(ctx, greeting="Hello"):
        try:  # a tool's own error handling must not swallow the question
            answer = ctx.request("elicitation/create", NAME_FORM)
        except Exception as e:
            return "failed: " + str(e)
        if answer["action"] != "accept":
            return "no name given"
        return greeting + " " + answer["content"]["name"]

    @server.tool("order", "Asks for a name, then for a confirmation", ctx=True)
    def order(ctx):
        name = ctx.request("elicitation/create", NAME_FORM)["content"]["name"]
        sure = ctx.request("elicitation/create", {"message": "Order for " + name + "?",
                                                  "requestedSchema": {"type": "object",
                                                                      "properties": {}}})
        return ("ordered for " if sure["action"] == "accept" else "cancelled for ") + name

    return server


def accepted(name):
    return {"action": "accept", "content": {"name": name}}


def test_a_tool_that_asks_gets_input_required_then_completes_on_retry():
    server = asking_server()
    first = call(server, "tools/call", {"name": "greet"}, caps=ELICIT)
    assert first["resultType"] == "input_required"
    assert first["_meta"][INFO] == {"name": "ask", "version": "0"}
    keys = list(first["inputRequests"])
    assert len(keys) == 1
    assert first["inputRequests"][keys[0]] == {"method": "elicitation/create", "params": NAME_FORM}
    assert type(first["requestState"]) is str
    assert "content" not in first and "isError" not in first
    retry = {"name": "greet", "inputResponses": {keys[0]: accepted("Ada")},
             "requestState": first["requestState"]}
    done = call(server, "tools/call", retry, id=2, caps=ELICIT)
    assert done["resultType"] == "complete"
    assert done["content"] == [{"type": "text", "text": "Hello Ada"}]


def test_two_questions_in_a_row_ride_on_the_request_state():
    server = asking_server()
    first = call(server, "tools/call", {"name": "order"}, caps=ELICIT)
    key1 = list(first["inputRequests"])[0]
    retry = {"name": "order", "inputResponses": {key1: accepted("Bo")},
             "requestState": first["requestState"]}
    second = call(server, "tools/call", retry, caps=ELICIT)
    assert second["resultType"] == "input_required"
    key2 = list(second["inputRequests"])[0]
    assert key2 != key1
    assert second["inputRequests"][key2]["params"]["message"] == "Order for Bo?"
    retry = {"name": "order", "inputResponses": {key2: {"action": "accept"}},
             "requestState": second["requestState"]}
    done = call(server, "tools/call", retry, caps=ELICIT)
    assert done["content"][0]["text"] == "ordered for Bo"


def test_a_retry_without_the_answer_is_asked_again():
    server = asking_server()
    first = call(server, "tools/call", {"name": "greet"}, caps=ELICIT)
    again = call(server, "tools/call", {"name": "greet", "requestState": first["requestState"],
                                        "inputResponses": {"other": accepted("x")}}, caps=ELICIT)
    assert again["resultType"] == "input_required"
    assert list(again["inputRequests"]) == list(first["inputRequests"])


def test_request_state_from_another_request_is_refused():
    server = asking_server()
    first = call(server, "tools/call", {"name": "greet", "arguments": {"greeting": "Hi"}},
                 caps=ELICIT)
    key = list(first["inputRequests"])[0]
    for params in ({"name": "greet", "arguments": {"greeting": "Bye"}},
                   {"name": "order"}):
        params["requestState"] = first["requestState"]
        params["inputResponses"] = {key: accepted("Eve")}
        assert fails(server, "tools/call", params, caps=ELICIT)["code"] == -32602
    params = {"name": "greet", "arguments": {"greeting": "Hi"}, "requestState": "{not json",
              "inputResponses": {key: accepted("Eve")}}
    assert fails(server, "tools/call", params, caps=ELICIT)["code"] == -32602
    params["inputResponses"] = "yes"
    assert fails(server, "tools/call", params, caps=ELICIT)["code"] == -32602


def test_an_edited_request_state_is_refused():
    # requestState is signed with a per-boot key: a client may echo it, not edit what it says
    # (issue 28: the conformance suite's input-required-result-tampered-state).
    server = asking_server()
    first = call(server, "tools/call", {"name": "order"}, caps=ELICIT)
    key1 = list(first["inputRequests"])[0]
    second = call(server, "tools/call", {"name": "order", "inputResponses": {
        key1: accepted("Bo")}, "requestState": first["requestState"]}, caps=ELICIT)
    state = second["requestState"]
    key2 = list(second["inputRequests"])[0]
    forged = state.replace('"Bo"', '"Mallory"')
    assert forged != state
    for bad in (forged, state + "-TAMPERED", state[:-1], "x" * 64 + state[64:]):
        params = {"name": "order", "inputResponses": {key2: {"action": "accept"}},
                  "requestState": bad}
        assert fails(server, "tools/call", params, caps=ELICIT)["code"] == -32602
    # Another boot's key: a state from before a reset is not this boot's.
    import tinymcp.asking as asking
    saved = list(asking._KEY)
    del asking._KEY[:]
    try:
        params = {"name": "order", "inputResponses": {key2: {"action": "accept"}},
                  "requestState": state}
        assert fails(server, "tools/call", params, caps=ELICIT)["code"] == -32602
    finally:
        asking._KEY[:] = saved
    done = call(server, "tools/call", {"name": "order", "inputResponses": {
        key2: {"action": "accept"}}, "requestState": state}, caps=ELICIT)
    assert done["content"][0]["text"] == "ordered for Bo"


def test_questions_asked_under_keys_and_several_at_once():
    server = Server("ask", "0")
    roots = ("roots/list", None)
    sample = ("sampling/createMessage", {"messages": [], "maxTokens": 5})

    @server.tool("both", "Asks two things at once, named", ctx=True)
    def both(ctx):
        got = ctx.requests({"user_name": ("elicitation/create", NAME_FORM), "where": roots})
        return got["user_name"]["content"]["name"] + " in " + got["where"]["roots"][0]["uri"]

    @server.tool("polite", "Asks only what the client can answer", ctx=True)
    def polite(ctx):
        asks = {"llm": sample}
        if ctx.can("elicitation/create"):
            asks["user_name"] = ("elicitation/create", NAME_FORM)
        return ", ".join(sorted(ctx.requests(asks)))

    caps = {"elicitation": {}, "roots": {}, "sampling": {}}
    first = call(server, "tools/call", {"name": "both"}, caps=caps)
    assert sorted(first["inputRequests"]) == ["user_name", "where"]
    assert first["inputRequests"]["where"] == {"method": "roots/list"}
    answers = {"user_name": accepted("Di"), "where": {"roots": [{"uri": "file:///d"}]}}
    # Only one answered: the other is asked again, under the same binding.
    again = call(server, "tools/call", {"name": "both", "requestState": first["requestState"],
                                        "inputResponses": {"where": answers["where"]}},
                 caps=caps)
    assert list(again["inputRequests"]) == ["user_name"]
    done = call(server, "tools/call", {"name": "both", "requestState": again["requestState"],
                                       "inputResponses": {"user_name": answers["user_name"]}},
                caps=caps)
    assert done["content"][0]["text"] == "Di in file:///d"
    # Answers given up front, with no state, and extra ones, are taken as they are.
    extra = dict(answers, unknown={"action": "accept"})
    done = call(server, "tools/call", {"name": "both", "inputResponses": extra}, caps=caps)
    assert done["content"][0]["text"] == "Di in file:///d"
    # An answer that is no object is refused, not handed to the tool.
    bad = {"name": "both", "inputResponses": dict(answers, user_name=12345)}
    assert fails(server, "tools/call", bad, caps=caps)["code"] == -32602
    # ctx.can() reads the request's own capabilities.
    only = call(server, "tools/call", {"name": "polite"}, caps={"sampling": {}})
    assert list(only["inputRequests"]) == ["llm"]
    assert sorted(call(server, "tools/call", {"name": "polite"}, caps=caps)[
        "inputRequests"]) == ["llm", "user_name"]


def test_asking_requires_the_client_capability():
    err = fails(asking_server(), "tools/call", {"name": "greet"}, caps={"sampling": {}})
    assert err["code"] == -32021
    assert err["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_prompts_and_resources_can_ask_too():
    server = asking_server()
    # Prompts and resources get no ctx argument; they reach the request through server.ctx.
    def ask_name():
        return server.ctx.request("elicitation/create", NAME_FORM)["content"]["name"]

    server.prompt("named", "A prompt for someone")(lambda: "Write to " + ask_name())
    server.resource("user://me", "me")(ask_name)
    for method, params in (("prompts/get", {"name": "named"}),
                           ("resources/read", {"uri": "user://me"})):
        first = call(server, method, params, caps=ELICIT)
        assert first["resultType"] == "input_required", method
        key = list(first["inputRequests"])[0]
        params["inputResponses"] = {key: accepted("Cy")}
        params["requestState"] = first["requestState"]
        done = call(server, method, params, caps=ELICIT)
        assert done["resultType"] == "complete", method
        if method == "prompts/get":
            assert done["messages"][0]["content"]["text"] == "Write to Cy"
        else:
            assert done["contents"][0]["text"] == "Cy"


def test_the_same_tool_sends_a_real_request_on_a_handshake_connection():
    server = asking_server()
    init = frame("initialize", {"protocolVersion": "2025-11-25",
                                "capabilities": {"elicitation": {}}}, id=0)
    answer = {"jsonrpc": "2.0", "id": 1, "result": accepted("Ada")}
    stream = FakeStream([init + b"\n", frame("tools/call", {"name": "greet"}, id="g") + b"\n",
                         None, json.dumps(answer).encode() + b"\n"])
    Channel(server, Lines(stream)).run()
    sent = stream.sent
    assert sent[1]["method"] == "elicitation/create" and sent[1]["params"] == NAME_FORM
    assert sent[2]["id"] == "g" and sent[2]["result"]["content"][0]["text"] == "Hello Ada"
    assert "resultType" not in sent[2]["result"]


def test_a_handshake_connection_after_a_stateless_one_gets_plain_results():
    server = stateless_board()
    called = call(server, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert called["resultType"] == "complete"
    server.open_session()  # the next connection opens with initialize
    initialize(server)
    plain = result(server, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    assert plain["structuredContent"] == {"sum": 3} and "resultType" not in plain
    assert "_meta" not in plain


def test_the_client_capabilities_meta_key_is_one_string_in_both_modules():
    # Stated twice on purpose: a handshake board's ctx.can reads it from tinymcp/context.py
    # without loading tinymcp/stateless.py (and the other way round); this holds the two equal.
    from tinymcp.context import CAPABILITIES_META as in_context
    from tinymcp.stateless import CAPABILITIES_META as in_stateless
    assert in_context == in_stateless == "io.modelcontextprotocol/clientCapabilities"


def echoed(uri):
    # the data of an error about uri: the URI itself when tinymcp/echo.py lets it be quoted back
    return {"uri": uri} if shown(uri) == uri else None
