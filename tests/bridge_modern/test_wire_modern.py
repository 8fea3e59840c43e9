# Raw 2026-07-28 frames to the bridge, on stdio and HTTP: every error code the era defines,
# the result fields, input_required rounds by hand, per-request logging and listen streams.
import json
import time

import httpx2 as httpx
import pytest

from tests.bridge_modern.conftest import MODERN
from tests.bridge_modern.http_tasks import polled, refused_to, start_sample, task_post

P = "io.modelcontextprotocol/"
CAPS = {"elicitation": {}, "sampling": {}}


def envelope(caps=None, version=MODERN, **extra):
    meta = {P + "protocolVersion": version,
            P + "clientCapabilities": CAPS if caps is None else caps}
    meta.update({P + k: v for k, v in extra.items()})
    return meta


def modern(params=None, **meta):
    params = dict(params or {})
    params["_meta"] = envelope(**meta)
    return params


@pytest.fixture
def client(line_client):
    return line_client("--sim", "conformance")


def code(reply):
    return reply["error"]["code"]


def test_envelope_errors_decide_nothing_then_discover_locks_the_era(client):
    assert code(client.request("server/discover", {})) == -32602
    partial = {"_meta": {P + "protocolVersion": MODERN}}
    assert code(client.request("tools/list", partial)) == -32602
    wrong = client.request("tools/list", modern(version="2099-01-01"))
    assert code(wrong) == -32022
    assert MODERN in wrong["error"]["data"]["supported"]
    assert "2025-11-25" in wrong["error"]["data"]["supported"]   # may still fall back
    found = client.request("server/discover", modern())["result"]
    assert found["supportedVersions"] == [MODERN]
    assert "tools" in found["capabilities"] and "conformance" in found["instructions"]
    assert found["resultType"] == "complete"
    assert found["ttlMs"] == 60000 and found["cacheScope"] == "public"
    assert found["_meta"][P + "serverInfo"]["name"] == "tinymcp-conformance"
    # The handshake era's methods are gone for this connection.
    refused = client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "0"}})
    assert code(refused) == -32601 and refused["error"]["data"]["supported"] == [MODERN]
    for method in ("ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"):
        assert code(client.request(method, modern({"level": "info", "uri": "test://x"}))) == -32601
    assert code(client.request("no/such/method", modern())) == -32601
    assert code(client.request("tools/list", modern(version="2099-01-01"))) == -32022
    assert code(client.request("tools/list", modern(logLevel="loud"))) == -32602


def test_results_carry_result_type_cache_hints_and_server_info(client):
    listed = client.request("tools/list", modern())["result"]
    assert listed["resultType"] == "complete"
    assert (listed["ttlMs"], listed["cacheScope"]) == (60000, "public")
    for method in ("prompts/list", "resources/list", "resources/templates/list"):
        result = client.request(method, modern())["result"]
        assert (result["ttlMs"], result["cacheScope"]) == (60000, "public"), method
    read = client.request("resources/read", modern({"uri": "test://static-text"}))["result"]
    assert (read["ttlMs"], read["cacheScope"]) == (0, "private")
    assert read["_meta"][P + "serverInfo"]["version"] == "0.1.0"
    called = client.request("tools/call", modern({"name": "test_simple_text", "arguments": {}}))
    assert called["result"]["resultType"] == "complete" and "ttlMs" not in called["result"]
    missing = client.request("resources/read", modern({"uri": "test://missing"}))
    assert code(missing) == -32602 and missing["error"]["data"]["uri"] == "test://missing"


def test_input_required_rounds_by_hand(client):
    call = {"name": "test_elicitation", "arguments": {"message": "Name?"}}
    lacking = client.request("tools/call", modern(call, caps={}))
    assert code(lacking) == -32021
    assert lacking["error"]["data"]["requiredCapabilities"] == {"elicitation": {}}
    first = client.request("tools/call", modern(call))["result"]
    assert first["resultType"] == "input_required"
    (key, question), = first["inputRequests"].items()
    assert question["method"] == "elicitation/create"
    assert question["params"]["message"] == "Name?"
    state = first["requestState"]
    answer = {key: {"action": "accept", "content": {"username": "ada", "email": "a@b"}}}
    other = {"name": "test_elicitation", "arguments": {"message": "Other?"}}
    assert code(client.request("tools/call", modern(dict(other, inputResponses=answer,
                                                          requestState=state)))) == -32602
    assert code(client.request("tools/call", modern(dict(call, inputResponses=answer,
                                                         requestState="forged")))) == -32602
    done = client.request("tools/call", modern(dict(call, inputResponses=answer,
                                                    requestState=state)))["result"]
    assert done["resultType"] == "complete"
    assert "ada" in done["content"][0]["text"]
    # The state is spent with its call.
    assert code(client.request("tools/call", modern(dict(call, inputResponses=answer,
                                                         requestState=state)))) == -32602


def test_log_messages_only_for_a_request_that_asks(client):
    call = {"name": "test_tool_with_logging", "arguments": {}}
    for level, expected in ((None, 0), ("info", 3), ("error", 0)):
        client.notes.clear()
        extra = {"logLevel": level} if level else {}
        rid = client.start("tools/call", modern(call, **extra))
        assert "result" in client.wait(rid)
        logs = [n for n in client.notes if n["method"] == "notifications/message"]
        assert len(logs) == expected, (level, logs)


def test_listen_acknowledges_streams_updates_and_ends_on_cancel(client):
    wanted = {"toolsListChanged": True, "promptsListChanged": True,
              "resourceSubscriptions": ["test://watched-resource", "test://nope"]}
    client.send({"jsonrpc": "2.0", "id": "L1", "method": "subscriptions/listen",
                 "params": modern({"notifications": wanted})})
    ack = wait_note(client, "notifications/subscriptions/acknowledged")
    assert ack["params"]["_meta"][P + "subscriptionId"] == "L1"
    assert ack["params"]["notifications"] == {
        "toolsListChanged": True, "promptsListChanged": True,
        "resourceSubscriptions": ["test://watched-resource"]}
    update = wait_note(client, "notifications/resources/updated", timeout=30)
    assert update["params"]["uri"] == "test://watched-resource"
    assert update["params"]["_meta"][P + "subscriptionId"] == "L1"
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": "L1"}})
    assert "result" in client.request("tools/list", modern())
    assert "L1" not in client.early   # a cancelled listen gets no response


def wait_note(client, method, timeout=15):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for note in client.notes:
            if note["method"] == method:
                client.notes.remove(note)
                return note
        try:   # a request answered at once: lets the reader deliver what came before it
            client.request("tools/list", modern(), timeout=5)
        except TimeoutError:
            pass
        time.sleep(0.2)
    raise AssertionError("no %s in %gs: %r" % (method, timeout, client.notes))


# -- Streamable HTTP, 2026-07-28: single POSTs with routing headers ---------------------------

def headers(method, name=None, version=MODERN):
    h = {"accept": "application/json, text/event-stream", "content-type": "application/json",
         "mcp-protocol-version": version, "mcp-method": method}
    if name is not None:
        h["mcp-name"] = name
    return h


def post(url, method, params, rid=1, said=None, **kw):
    # said: the Mcp-Method header, when it should differ from the body's method.
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return httpx.post(url, json=body, headers=headers(said or method, **kw), timeout=20)


def test_http_post_only_and_headers_checked_against_the_body(http_bridge):
    url, bridge = http_bridge(board="conformance")
    for verb in ("GET", "DELETE"):
        refused = httpx.request(verb, url, headers={"mcp-protocol-version": MODERN}, timeout=20)
        assert refused.status_code == 405 and refused.headers["allow"] == "POST"
    found = post(url, "server/discover", modern())
    assert found.status_code == 200 and found.json()["result"]["supportedVersions"] == [MODERN]
    call = modern({"name": "test_simple_text", "arguments": {}})
    assert post(url, "tools/call", call, name="test_simple_text").status_code == 200
    for wrong in (post(url, "tools/call", call, said="tools/list",
                       name="test_simple_text"),                                # Mcp-Method
                  post(url, "tools/call", call, name="test_image_content"),     # Mcp-Name
                  post(url, "tools/call", modern({"name": "test_simple_text"},
                                                 version="2025-11-25"),
                       name="test_simple_text")):                               # version
        assert wrong.status_code == 400 and wrong.json()["error"]["code"] == -32020
    read = modern({"uri": "test://static-text"})
    assert post(url, "resources/read", read, name="test://static-text").status_code == 200
    bad = post(url, "resources/read", read, name="test://other")
    assert bad.status_code == 400 and bad.json()["error"]["code"] == -32020
    bare = httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                                 "params": modern()},
                      headers={"accept": "application/json, text/event-stream"}, timeout=20)
    assert bare.status_code == 400 and bare.json()["error"]["code"] == -32020
    no_envelope = post(url, "tools/list", {})
    assert no_envelope.status_code == 400 and no_envelope.json()["error"]["code"] == -32602
    lacking = post(url, "tools/call", modern({"name": "test_sampling", "arguments": {
        "prompt": "x"}}, caps={}), name="test_sampling")
    assert lacking.status_code == 400 and lacking.json()["error"]["code"] == -32021
    unknown = post(url, "no/such/method", modern())
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == -32601
    note = httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/cancelled",
                                 "params": {"requestId": 1}},
                      headers=headers("notifications/cancelled"), timeout=20)
    assert note.status_code == 202
    evil = httpx.post(url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                                 "params": modern()},
                      headers=dict(headers("tools/list"), host="evil.example.com"), timeout=20)
    assert evil.status_code in (403, 421)
    assert "Traceback" not in bridge.stderr(), bridge.stderr()



def routed(url, method, params, **more):
    # A 2026-07-28 POST declaring the tasks extension, with the routing headers (Mcp-Name: the
    # tool's name on tools/call) and more headers (None drops one); -> the httpx response.
    h = headers(method, name=params.get("name"))
    h.update(more)
    h = {k: v for k, v in h.items() if v is not None}
    body = {"jsonrpc": "2.0", "id": 1, "method": method,
            "params": modern(params, caps={"extensions": {P + "tasks": {}}})}
    return httpx.post(url, json=body, headers=h, timeout=20)


def mismatch(reply):
    return reply.status_code == 400 and reply.json()["error"]["code"] == -32020


def test_http_task_requests_mcp_name_checked_against_the_task_id(http_bridge):
    # SEP-2243 with SEP-2663: Mcp-Name on tasks/get, tasks/update, tasks/cancel is the taskId.
    url, bridge = http_bridge(board="conformance")
    started = routed(url, "tools/call", {"name": "slow_compute", "arguments": {"seconds": 60}})
    tid = started.json()["result"]["taskId"]
    got = routed(url, "tasks/get", {"taskId": tid}, **{"mcp-name": tid})
    assert got.status_code == 200 and got.json()["result"]["taskId"] == tid
    # a client that sends no Mcp-Name (the SDK's sends none on tasks/*) is served
    assert routed(url, "tasks/get", {"taskId": tid}).json()["result"]["taskId"] == tid
    for method in ("tasks/get", "tasks/cancel", "tasks/update"):
        params = {"taskId": tid, "inputResponses": {}} if method == "tasks/update" else {
            "taskId": tid}
        assert mismatch(routed(url, method, params, **{"mcp-name": "another-task"})), method
    assert routed(url, "tasks/get", {"taskId": tid}).json()["result"]["status"] == "working"
    cancelled = routed(url, "tasks/cancel", {"taskId": tid}, **{"mcp-name": tid})
    assert cancelled.status_code == 200, cancelled.text


def test_http_mcp_param_headers_checked_against_the_arguments(http_bridge):
    # SEP-2243: a tool's x-mcp-header parameter is mirrored into Mcp-Param-NAME, which must be
    # there when the argument is, say the same value (plain or =?base64?...?=), and nothing else.
    url, bridge = http_bridge(board="conformance")

    def call(region, **more):
        arguments = {} if region is None else {"region": region}
        return routed(url, "tools/call", {"name": "test_custom_header", "arguments": arguments},
                      **more)
    for region, header in (("eu", "eu"), ("Hello", "=?base64?SGVsbG8=?="),
                           ("SGVsbG8=", "SGVsbG8="),               # no wrapper: a literal
                           ("=?base64?SGVsbG8=", "=?base64?SGVsbG8="), (None, None)):
        ok = call(region, **{"mcp-param-region": header})
        assert ok.status_code == 200 and "error" not in ok.json(), (region, ok.text)
        assert ok.json()["result"]["content"][0]["text"] == "Region: %s" % region
    for region, header in (("eu", None),                          # omitted
                           ("eu", "us"),                          # another value
                           ("Hello", "=?base64?SGVsbG8?="),        # bad padding
                           ("Hello", "=?base64?SGVs!!!bG8=?="),    # not base64
                           (None, "eu")):                         # a header without its argument
        assert mismatch(call(region, **{"mcp-param-region": header})), (region, header)
    # a tool that annotates nothing is not checked
    plain = routed(url, "tools/call", {"name": "test_simple_text", "arguments": {}},
                   **{"mcp-param-region": "eu"})
    assert plain.status_code == 200 and "error" not in plain.json()


def test_http_notifications_turn_the_answer_into_an_sse_stream(http_bridge):
    url, bridge = http_bridge(board="conformance")
    params = modern({"name": "test_tool_with_progress", "arguments": {}})
    params["_meta"]["progressToken"] = "tok"
    got = post(url, "tools/call", params, name="test_tool_with_progress")
    seen = "%s\n%s\n%s" % (got.headers, got.text[-2000:], bridge.stderr()[-2000:])
    assert got.headers["content-type"].startswith("text/event-stream"), seen
    events = [json.loads(line[len("data: "):]) for line in got.text.splitlines()
              if line.startswith("data: ")]
    assert [e["params"]["progress"] for e in events[:-1]] == [0, 50, 100], seen
    assert all(e["params"]["progressToken"] == "tok" for e in events[:-1]), seen
    assert events[-1]["id"] == 1 and events[-1]["result"]["resultType"] == "complete", seen
    plain = post(url, "tools/list", modern())
    assert plain.headers["content-type"].startswith("application/json"), plain.text[-2000:]


def test_a_refused_probe_leaves_the_handshake_open(client):
    # The SDK's auto mode falls back to initialize after any error (or a timeout) on its probe.
    assert code(client.request("server/discover", modern(version="2099-01-01"))) == -32022
    assert client.initialize()["protocolVersion"] == "2025-11-25"
    called = client.call("test_simple_text")
    assert called["result"]["content"][0]["text"].startswith("This is a simple text")
    assert "resultType" not in called["result"]


# -- tasks of 2026-07-28 hosts over HTTP: the principal's, not the request's ------------------

def test_http_tasks_are_polled_updated_and_cancelled_by_the_token_that_made_them(http_bridge):
    # Each 2026-07-28 POST is a host session of its own that ends with it: the task belongs to
    # the bearer token it came with (the bridge here takes any: --no-auth), and to no other.
    url, bridge = http_bridge()
    tid = start_sample(url, "alice-token", 1)
    refused_to(url, tid, "bob-token")
    refused_to(url, tid, None)
    done = polled(url, tid, "alice-token", "completed")
    assert done["result"]["structuredContent"]["count"] >= 1, done
    longer = start_sample(url, "alice-token", 60)
    refused_to(url, longer, "bob-token")
    assert polled(url, longer, "alice-token", "working")["taskId"] == longer
    updated = task_post(url, "tasks/update", {"taskId": longer, "inputResponses": {}},
                        "alice-token")   # its owner's, but it asks nothing (test_task_input_http)
    assert updated["error"]["code"] == -32602, updated
    assert "not waiting for input" in updated["error"]["message"], updated
    cancelled = task_post(url, "tasks/cancel", {"taskId": longer}, "alice-token")
    assert "result" in cancelled, cancelled
    assert polled(url, longer, "alice-token", "cancelled")["taskId"] == longer
    assert "Traceback" not in bridge.stderr(), bridge.stderr()
