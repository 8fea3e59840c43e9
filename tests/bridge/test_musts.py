# The protocol's MUSTs through the bridge, one test per requirement, each quoting the
# specification's words (the revision named first): raw frames on stdio and Streamable HTTP, in
# front of tests/bridge/testboard.py. The board's own audit is tests/core/test_musts.py.
import json
import threading
import time

import httpx2 as httpx
import pytest

from tests.bridge.conftest import TESTBOARD
from tests.hostile.conftest import HttpHost
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)
from tests.windows_shim import windows_paths_run_by
from tinymcp.protocol import STATELESS, VERSIONS


# Under the Windows shim (tests/windows_shim), these three take every Windows path this module's
# tests take: stdin read in a thread, the board on pipes, a batch in and its array out, a board's
# request to the host and its answer back, the HTTP front and its GET stream; the tests differ
# otherwise only in the protocol's rules. Tests marked @windows_covered run once, as on POSIX:
# under the shim they would take no path the tests named below do not.
windows_covered = windows_paths_run_by(
    "test_stdio_2025_03_26_a_batch_gets_one_array_of_the_answers_of_its_requests",
    "test_stdio_a_declared_url_mode_reaches_the_host",
    "test_http_2025_03_26_a_batched_call_asks_its_host_on_the_get_stream")

BATCHES = "2025-03-26"
P = "io.modelcontextprotocol/"


def ping(rid):
    return {"jsonrpc": "2.0", "id": rid, "method": "ping"}


def call(rid, name, **arguments):
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


def note(method="notifications/roots/list_changed"):
    return {"jsonrpc": "2.0", "method": method}


def init_params(version, capabilities=None):
    return {"protocolVersion": version, "capabilities": capabilities or {},
            "clientInfo": {"name": "musts", "version": "0"}}


@pytest.fixture
def stdio(line_client):
    # -> fn(version, capabilities) -> a line client on a bridge, initialized in that revision.
    def start(version=BATCHES, capabilities=None):
        client = line_client("--sim", TESTBOARD)
        reply = client.request("initialize", init_params(version, capabilities))
        assert reply["result"]["protocolVersion"] == version
        client.notify("notifications/initialized")
        return client
    return start


def frame(client, value):
    # Write one line holding `value` -> the next line the bridge writes, decoded (an array too).
    client.write(json.dumps(value).encode() + b"\n")
    return json.loads(client.line())


def by_id(answers):
    assert type(answers) is list, answers
    return {a["id"]: a for a in answers}


# -- 2025-03-26 basic: "MCP implementations MAY support sending JSON-RPC batches, but MUST
#    support receiving JSON-RPC batches." The bridge's own session with the board stays
#    2025-11-25: it splits the batch into requests toward the board and gathers the answers. --

def test_stdio_2025_03_26_a_batch_gets_one_array_of_the_answers_of_its_requests(stdio):
    # JSON-RPC 2.0: "The Server should respond with an Array containing the corresponding
    # Response objects"; a notification in it gets none.
    client = stdio()
    answers = by_id(frame(client, [ping("a"), {"jsonrpc": "2.0", "id": "b", "method": "tools/list"},
                                   call("c", "read_temperature"), note()]))
    assert sorted(answers) == ["a", "b", "c"]
    assert answers["a"]["result"] == {}
    assert "read_temperature" in [t["name"] for t in answers["b"]["result"]["tools"]]
    assert "content" in answers["c"]["result"]   # the board answered it
    assert client.noise == []


@windows_covered
def test_stdio_2025_03_26_a_batch_of_notifications_only_gets_nothing(stdio):
    # JSON-RPC 2.0: "If there are no Response objects contained within the Response array as it
    # is to be sent to the client, the server MUST NOT return an empty Array and should return
    # nothing at all."
    client = stdio()
    client.write(json.dumps([note(), note()]).encode() + b"\n")
    assert frame(client, ping(7)) == {"jsonrpc": "2.0", "id": 7, "result": {}}   # the next line


@windows_covered
def test_stdio_2025_03_26_an_empty_batch_and_each_bad_entry_get_invalid_request(stdio):
    # JSON-RPC 2.0: "If the batch rpc call itself fails to be recognized as an valid JSON or as
    # an Array with at least one value, the response from the Server MUST be a single Response
    # object."
    client = stdio()
    empty = frame(client, [])
    assert type(empty) is dict and empty["id"] is None and empty["error"]["code"] == -32600
    answers = frame(client, [1, {"jsonrpc": "2.0", "id": 9, "method": 5}, ping(4)])
    assert sorted((str(a["id"]), a.get("error", {}).get("code", 0)) for a in answers) == [
        ("4", 0), ("9", -32600), ("None", -32600)]


@windows_covered
def test_stdio_2025_03_26_initialize_is_refused_inside_a_batch(stdio):
    # 2025-03-26 lifecycle: "The initialize request MUST NOT be part of a JSON-RPC batch".
    client = stdio()
    answers = by_id(frame(client, [{"jsonrpc": "2.0", "id": 5, "method": "initialize",
                                    "params": init_params("2025-11-25")}, ping(6)]))
    assert answers[5]["error"]["code"] == -32600 and "initialize" in answers[5]["error"]["message"]
    assert answers[6]["result"] == {}
    assert by_id(frame(client, [ping(8)]))[8]["result"] == {}   # still 2025-03-26


@windows_covered
@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "2025-11-25", None])
def test_stdio_every_other_revision_refuses_a_batch_with_one_invalid_request(stdio, line_client,
                                                                             version):
    # 2025-06-18 changelog: "Remove support for JSON-RPC batching".
    client = stdio(version) if version else line_client("--sim", TESTBOARD)  # None: before it
    refused = frame(client, [ping(1), ping(2)])
    assert type(refused) is dict and refused["id"] is None
    assert refused["error"]["code"] == -32600 and BATCHES in refused["error"]["message"]


@windows_covered
def test_stdio_2026_07_28_refuses_a_batch_with_invalid_request(line_client):
    client = line_client("--sim", TESTBOARD)
    meta = {P + "protocolVersion": STATELESS, P + "clientCapabilities": {}}
    assert "result" in client.request("server/discover", {"_meta": meta})
    refused = frame(client, [{"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                              "params": {"_meta": meta}}])
    assert refused["error"]["code"] == -32600


# -- 2025-03-26 transports: "The body of the POST request MUST be one of the following: [...]
#    An array batching one or more requests and/or notifications". "If the input consists
#    solely of (any number of) JSON-RPC responses or notifications: If the server accepts the
#    input, the server MUST return HTTP status code 202 Accepted with no body." "If the input
#    contains any number of JSON-RPC requests, the server MUST either return
#    Content-Type: text/event-stream [...] or Content-Type: application/json". -----------------

@pytest.fixture
def http_host(http_bridge):
    def start(version, capabilities=None):
        url, _bridge = http_bridge(board=TESTBOARD)
        host = HttpHost(url, capabilities, version=version)
        host.initialize()
        return host
    return start


@windows_covered
def test_http_2025_03_26_a_batch_post_is_answered_with_an_array(http_host):
    host = http_host(BATCHES)
    response, messages = host.post([ping(2), call(3, "read_temperature"), note()])
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    answers = by_id(messages[0])
    assert answers[2]["result"] == {} and "content" in answers[3]["result"]
    response, messages = host.post([note(), note()])
    assert (response.status_code, messages) == (202, [])
    response, messages = host.post([])
    assert response.status_code == 400 and messages[0]["error"]["code"] == -32600


@windows_covered
def test_http_2025_03_26_initialize_inside_a_batch_is_refused(http_host):
    host = http_host(BATCHES)
    response, messages = host.post([{"jsonrpc": "2.0", "id": 5, "method": "initialize",
                                     "params": init_params(BATCHES)}, ping(6)])
    answers = by_id(messages[0])
    assert answers[5]["error"]["code"] == -32600 and answers[6]["result"] == {}


@windows_covered
def test_http_other_revisions_refuse_a_batch_with_invalid_request_never_a_validation_dump(
        http_host):
    host = http_host("2025-11-25")
    response, messages = host.post([ping(2), ping(3)])
    assert response.status_code == 400
    error = messages[0]["error"]
    assert error["code"] == -32600 and BATCHES in error["message"]
    assert "validation" not in response.text.lower()
    # Without a session: no batch opens one.
    response = httpx.post(host.url, json=[ping(1)], headers=dict(host.headers), timeout=30)
    assert response.status_code == 400 and response.json()["error"]["code"] == -32600


# -- 2026-07-28 transports/streamable-http: "If the server does not implement the requested
#    protocol version (whether the version is unknown to the server, or is a known version the
#    server has chosen not to support), it MUST respond with `400 Bad Request` and an
#    `UnsupportedProtocolVersionError` listing its supported versions." ------------------------

@windows_covered
def test_http_an_unsupported_protocol_version_header_is_unsupported_protocol_version_error(
        http_bridge):
    url, _bridge = http_bridge(board=TESTBOARD)
    host = HttpHost(url)
    for extra in ({}, {"mcp-session-id": "nope"}):
        response = httpx.post(url, json=ping(1), timeout=30, headers=dict(
            host.headers, **{"mcp-protocol-version": "2099-01-01"}, **extra))
        assert response.status_code == 400
        error = response.json()["error"]
        assert error["code"] == -32022
        assert error["data"]["supported"] == [STATELESS] + list(VERSIONS)


# -- 2025-11-25 client/elicitation: "Servers MUST NOT send elicitation requests with modes that
#    are not supported by the client." "For backwards compatibility, an empty capabilities
#    object is equivalent to declaring support for form mode only." The bridge declares both
#    modes to the board and checks each request against the host whose call caused it. -------

def elicit(client, rid, mode):
    # -> (every message the bridge wrote before the answer to rid, that answer)
    client.write(json.dumps(call(rid, "elicit", mode=mode)).encode() + b"\n")
    before = []
    while True:
        msg = client.message()
        if msg.get("id") == rid and "method" not in msg:
            return before, msg
        before.append(msg)


@windows_covered
@pytest.mark.parametrize("declared, mode", [({}, "url"), ({"url": {}}, "form")])
def test_stdio_a_mode_the_host_lacks_is_refused_to_the_board_and_never_reaches_it(
        stdio, declared, mode):
    client = stdio("2025-11-25", {"elicitation": declared})
    before, answer = elicit(client, 3, mode)
    assert [m.get("method") for m in before] == []   # nothing was asked
    refused = answer["result"]["structuredContent"]["refused"]
    assert refused["code"] == -32602   # what the host itself would answer
    assert refused["data"] == {"requiredCapabilities": {"elicitation": {mode: {}}}}


def test_stdio_a_declared_url_mode_reaches_the_host(stdio):
    client = stdio("2025-11-25", {"elicitation": {"url": {}}})
    client.write(json.dumps(call(3, "elicit", mode="url")).encode() + b"\n")
    asked = client.message()
    assert asked["method"] == "elicitation/create" and asked["params"]["mode"] == "url"
    client.write(json.dumps({"jsonrpc": "2.0", "id": asked["id"],
                             "result": {"action": "accept"}}).encode() + b"\n")
    answer = client.message()
    assert answer["id"] == 3
    assert answer["result"]["structuredContent"] == {"answer": {"action": "accept"}}


@windows_covered
def test_stdio_2026_07_28_a_mode_the_host_lacks_is_a_missing_capability(line_client):
    # 2026-07-28 client/elicitation: the same MUST NOT; the request fails with
    # MissingRequiredClientCapability (-32021) naming what is missing.
    client = line_client("--sim", TESTBOARD)
    meta = {P + "protocolVersion": STATELESS, P + "clientCapabilities": {"elicitation": {}}}
    reply = client.request("tools/call", {"name": "elicit", "arguments": {"mode": "url"},
                                          "_meta": meta})
    assert reply["error"]["code"] == -32021
    assert reply["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}
    meta[P + "clientCapabilities"] = {"elicitation": {"url": {}}}
    asked = client.request("tools/call", {"name": "elicit", "arguments": {"mode": "url"},
                                          "_meta": meta})["result"]
    assert asked["resultType"] == "input_required"
    assert list(asked["inputRequests"].values())[0]["params"]["mode"] == "url"


@windows_covered
def test_http_a_mode_the_host_lacks_is_refused_to_the_board_and_never_reaches_it(http_bridge):
    url, _bridge = http_bridge(board=TESTBOARD)
    host = HttpHost(url, {"elicitation": {}})
    host.initialize()
    host.listen()
    answer = host.request("tools/call", {"name": "elicit", "arguments": {"mode": "url"}})
    assert host.related == [] and host.heard() == []   # nothing was asked, on either stream
    refused = answer["result"]["structuredContent"]["refused"]
    assert refused["code"] == -32602
    assert refused["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}


def test_http_2025_03_26_a_batched_call_asks_its_host_on_the_get_stream(http_bridge):
    # The batch's answer is one JSON array, so what the board asks meanwhile goes on the GET
    # stream; the batch is answered once the host has answered it.
    url, _bridge = http_bridge(board=TESTBOARD)
    host = HttpHost(url, {"elicitation": {"url": {}}}, version=BATCHES)
    host.initialize()
    host.listen()
    answered = []
    thread = threading.Thread(target=lambda: answered.append(
        host.post([call(4, "elicit", mode="url"), ping(5)])))
    thread.start()
    deadline = time.monotonic() + 20
    asked = []
    while not asked and time.monotonic() < deadline:
        asked = [m for m in host.heard() if m.get("method") == "elicitation/create"]
        time.sleep(0.05)
    assert asked and asked[0]["params"]["mode"] == "url"
    response, _ = host.post({"jsonrpc": "2.0", "id": asked[0]["id"],
                             "result": {"action": "accept"}})
    assert response.status_code == 202
    thread.join(20)
    response, messages = answered[0]
    answers = by_id(messages[0])
    text = answers[4]["result"]["content"][0]["text"]   # 2025-03-26: no structuredContent
    assert json.loads(text) == {"answer": {"action": "accept"}}
    assert answers[5]["result"] == {}
