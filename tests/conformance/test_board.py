# boards/conformance on both runtimes, straight on its stdio: every fixture the suite names.
import base64
import json
import time

import pytest

from tests.board_process import MICROPYTHON, BoardProcess

RELATED = "io.modelcontextprotocol/related-task"
TASKS = "io.modelcontextprotocol/tasks"

TOOLS = {"test_simple_text", "test_image_content", "test_audio_content", "test_embedded_resource",
         "test_multiple_content_types", "test_tool_with_logging", "test_tool_with_progress",
         "test_error_handling", "test_sampling", "test_elicitation",
         "test_elicitation_sep1034_defaults", "test_elicitation_sep1330_enums",
         "test_reconnection", "json_schema_2020_12_tool", "test_custom_header",
         # 0.2.0-alpha.12: input-required results (SEP-2322), SEP-2575's diagnostic tools
         "test_input_required_result_elicitation", "test_input_required_result_sampling",
         "test_input_required_result_list_roots", "test_input_required_result_request_state",
         "test_input_required_result_tampered_state", "test_input_required_result_multiple_inputs",
         "test_input_required_result_multi_round", "test_input_required_result_capabilities",
         "test_missing_capability", "test_streaming_elicitation", "test_logging_tool",
         # the tasks extension's (SEP-2663)
         "greet", "slow_compute", "failing_job", "protocol_error_job",
         # ... and its tasks that ask for input (SEP-2663 over SEP-2322)
         "confirm_delete", "multi_input", "test_tool_with_task"}
PROMPTS = {"test_simple_prompt", "test_prompt_with_arguments",
           "test_prompt_with_embedded_resource", "test_prompt_with_image",
           "test_input_required_result_prompt"}
RUNTIMES = ["python", pytest.param("micropython", marks=pytest.mark.skipif(
    MICROPYTHON is None, reason="micropython is not installed"))]


@pytest.fixture(params=RUNTIMES)
def board(request):
    proc = BoardProcess(request.param, board="conformance")
    # a client that answers the board's questions, as the suite's does
    proc.initialize(capabilities={"sampling": {}, "elicitation": {}, "roots": {}})
    yield proc
    proc.close()


def call(board, name, arguments=None):
    reply = board.request("tools/call", {"name": name, "arguments": arguments or {}})
    return reply["result"]


def notes_until(board, rid, method):
    # Notifications of `method` the board sends before the answer to rid, and that answer.
    seen = []
    while True:
        msg = board.read()
        if msg.get("method") == method:
            seen.append(msg["params"])
        elif msg.get("id") == rid and "method" not in msg:
            return seen, msg


def test_lists_name_every_fixture(board):
    tools = board.request("tools/list")["result"]["tools"]
    assert {t["name"] for t in tools} == TOOLS
    schema = [t for t in tools if t["name"] == "json_schema_2020_12_tool"][0]["inputSchema"]
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["additionalProperties"] is False and "address" in schema["$defs"]
    # SEP-2106 (2026-07-28): composition, conditional and $anchor keywords reach the host
    assert schema["allOf"] == [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}]
    assert schema["if"] == {"properties": {"contactMethod": {"const": "phone"}},
                            "required": ["contactMethod"]}
    assert schema["then"] == {"required": ["phone"]} and schema["else"] == {"required": ["email"]}
    assert schema["$defs"]["address"]["$anchor"] == "addressDef"
    resources = board.request("resources/list")["result"]["resources"]
    assert {r["uri"] for r in resources} == {"test://static-text", "test://static-binary",
                                             "test://watched-resource"}
    templates = board.request("resources/templates/list")["result"]["resourceTemplates"]
    assert [t["uriTemplate"] for t in templates] == ["test://template/{id}/data"]
    prompts = board.request("prompts/list")["result"]["prompts"]
    assert {p["name"] for p in prompts} == PROMPTS


def test_content_tools_return_their_blocks(board):
    assert call(board, "test_simple_text")["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}]
    image = call(board, "test_image_content")["content"][0]
    assert image["mimeType"] == "image/png"
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG")
    audio = call(board, "test_audio_content")["content"][0]
    assert audio["mimeType"] == "audio/wav"
    assert base64.b64decode(audio["data"])[:4] == b"RIFF"
    embedded = call(board, "test_embedded_resource")["content"][0]
    assert embedded["resource"]["uri"] == "test://embedded-resource"
    mixed = call(board, "test_multiple_content_types")["content"]
    assert [c["type"] for c in mixed] == ["text", "image", "resource"]
    assert json.loads(mixed[2]["resource"]["text"]) == {"test": "data", "value": 123}
    failed = call(board, "test_error_handling")
    assert failed["isError"] is True and "intentionally" in failed["content"][0]["text"]


def test_logging_and_progress_arrive_during_the_call(board):
    board.request("logging/setLevel", {"level": "debug"})
    board.send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "test_tool_with_logging", "arguments": {}}})
    logs, answer = notes_until(board, 1, "notifications/message")
    assert [n["data"] for n in logs] == ["Tool execution started", "Tool processing data",
                                         "Tool execution completed"]
    assert "result" in answer
    board.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "test_tool_with_progress", "arguments": {},
                           "_meta": {"progressToken": "t"}}})
    progress, answer = notes_until(board, 2, "notifications/progress")
    assert [(p["progress"], p["total"]) for p in progress] == [(0, 100), (50, 100), (100, 100)]


def test_sampling_and_elicitation_ask_the_client(board):
    board.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "test_sampling", "arguments": {"prompt": "2+2?"}}})
    ask = board.read()
    assert ask["method"] == "sampling/createMessage"
    assert ask["params"]["messages"][0]["content"]["text"] == "2+2?"
    board.send({"jsonrpc": "2.0", "id": ask["id"], "result": {
        "role": "assistant", "model": "m", "content": {"type": "text", "text": "four"}}})
    assert board.response(3)["result"]["content"][0]["text"] == "LLM response: four"
    board.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "test_elicitation_sep1034_defaults", "arguments": {}}})
    ask = board.read()
    fields = ask["params"]["requestedSchema"]["properties"]
    assert {k: v["default"] for k, v in fields.items()} == {
        "name": "John Doe", "age": 30, "score": 95.5, "status": "active", "verified": True}
    board.send({"jsonrpc": "2.0", "id": ask["id"], "result": {"action": "decline"}})
    text = board.response(4)["result"]["content"][0]["text"]
    assert text.startswith("Elicitation completed: action=decline")


def test_resources_and_prompts(board):
    binary = board.request("resources/read", {"uri": "test://static-binary"})["result"]
    assert base64.b64decode(binary["contents"][0]["blob"]).startswith(b"\x89PNG")
    data = board.request("resources/read", {"uri": "test://template/123/data"})["result"]
    assert json.loads(data["contents"][0]["text"]) == {
        "id": "123", "templateTest": True, "data": "Data for ID: 123"}
    got = board.request("prompts/get", {"name": "test_prompt_with_embedded_resource",
                                        "arguments": {"resourceUri": "test://x"}})["result"]
    assert got["messages"][0]["content"]["resource"]["uri"] == "test://x"
    got = board.request("prompts/get", {"name": "test_prompt_with_arguments",
                                        "arguments": {"arg1": "hello", "arg2": "world"}})
    assert got["result"]["messages"][0]["content"]["text"] == (
        "Prompt with arguments: arg1='hello', arg2='world'")
    done = board.request("completion/complete", {
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "par"}})["result"]["completion"]
    assert done["values"] == ["paris", "park", "party"]


def test_input_required_fixtures_ask_under_the_suites_keys(board):
    # On a handshake session the questions are real requests, carrying their key in _meta
    # (io.tinymcp/input: [key, how many at once]) for a bridge serving a 2026-07-28 host.
    board.send({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "test_input_required_result_multiple_inputs", "arguments": {}}})
    asks = [board.read() for _ in range(3)]
    assert sorted(a["params"]["_meta"]["io.tinymcp/input"][0] for a in asks) == [
        "client_roots", "greeting", "user_name"]
    assert {a["params"]["_meta"]["io.tinymcp/input"][1] for a in asks} == {3}
    answers = {"elicitation/create": {"action": "accept", "content": {"name": "Al"}},
               "sampling/createMessage": {"role": "assistant", "model": "m",
                                          "content": {"type": "text", "text": "hi"}},
               "roots/list": {"roots": []}}
    for ask in asks:
        board.send({"jsonrpc": "2.0", "id": ask["id"], "result": answers[ask["method"]]})
    text = board.response(5)["result"]["content"][0]["text"]
    assert text == "Got: client_roots, greeting, user_name"


def test_task_fixtures_declare_their_task_support(board):
    tools = {t["name"]: t for t in board.request("tools/list")["result"]["tools"]}
    support = {name: tools[name].get("execution", {}).get("taskSupport")
               for name in ("greet", "slow_compute", "failing_job", "protocol_error_job",
                            "confirm_delete", "multi_input", "test_tool_with_task")}
    assert support == {"greet": None, "slow_compute": "optional", "failing_job": "required",
                       "protocol_error_job": "optional", "confirm_delete": "optional",
                       "multi_input": "optional", "test_tool_with_task": "required"}


def test_a_task_that_asks_sends_its_question_tied_to_it_and_runs_on_with_the_answer(board):
    # 2025-11-25 on the board's own stdio (what the bridge sees): the question is a request
    # whose _meta names the task, the task is input_required meanwhile and answers polls.
    created = board.request("tools/call", {"name": "confirm_delete", "task": {},
                                           "arguments": {"filename": "a.txt"}})["result"]["task"]
    tid = created["taskId"]
    asked = board.read()
    while asked.get("method") != "elicitation/create":
        asked = board.read()
    assert asked["params"]["_meta"][RELATED] == {"taskId": tid}
    assert board.request("tasks/get", {"taskId": tid})["result"]["status"] == "input_required"
    assert call(board, "greet", {"name": "meanwhile"})["content"][0]["text"] == \
        "Hello, meanwhile!"
    board.send({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "action": "accept", "content": {"confirm": True}}})
    done = board.request("tasks/result", {"taskId": tid})["result"]
    assert done["content"][0]["text"] == "Deleted a.txt"


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_2026_07_28_task_asks_on_tasks_get_and_is_answered_by_tasks_update(runtime):
    # SEP-2663 on the board's own stdio, both runtimes: two questions at once, answered one at
    # a time; the serve loop answers polls all along.
    proc = BoardProcess(runtime, board="conformance")
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {
                          "elicitation": {}, "extensions": {TASKS: {}}}}}

    def ask(method, params):
        reply = proc.request(method, dict(params, **meta))
        assert "result" in reply, reply
        return reply["result"]

    def until(tid, wanted):
        for _ in range(200):
            got = ask("tasks/get", {"taskId": tid})
            if wanted(got):
                return got
            time.sleep(0.05)
        raise AssertionError(got)

    try:
        tid = ask("tools/call", {"name": "multi_input", "arguments": {}})["taskId"]
        got = until(tid, lambda t: t["status"] == "input_required")
        assert sorted(got["inputRequests"]) == ["confirm", "name"]
        ask("tasks/update", {"taskId": tid, "inputResponses": {"name": {
            "action": "accept", "content": {"name": "Ada"}}}})
        assert list(ask("tasks/get", {"taskId": tid})["inputRequests"]) == ["confirm"]
        ask("tasks/update", {"taskId": tid, "inputResponses": {"confirm": {
            "action": "accept", "content": {"confirm": True}}}})
        done = until(tid, lambda t: t["status"] == "completed")
        assert done["result"]["content"][0]["text"] == 'Got name "Ada", confirm true'
    finally:
        proc.close()


def test_json_schema_2020_12_tool_checks_its_keywords_on_the_board(board):
    # The board checks the SEP-2106 keywords it lists: if/then/else, allOf/anyOf, the $ref.
    ok = call(board, "json_schema_2020_12_tool", {"name": "x", "contactMethod": "phone",
                                                  "phone": "123", "address": {"city": "Paris"}})
    assert not ok.get("isError") and '"phone": "123"' in ok["content"][0]["text"]
    for wrong in ({"name": "x"},                                    # anyOf: neither phone nor email
                  {"contactMethod": "phone", "email": "a@b"},      # then: phone required
                  {"contactMethod": "email", "phone": "1"},        # else: email required
                  {"email": "a@b", "address": {"city": 3}}):       # $ref to $defs.address
        bad = call(board, "json_schema_2020_12_tool", wrong)
        assert bad["isError"] and "Invalid arguments" in bad["content"][0]["text"], wrong


def test_custom_header_tool_lists_its_annotation_and_answers(board):
    # SEP-2243: the x-mcp-header annotation reaches the host as written; the board ignores it.
    tools = {t["name"]: t for t in board.request("tools/list")["result"]["tools"]}
    region = tools["test_custom_header"]["inputSchema"]["properties"]["region"]
    assert region["x-mcp-header"] == "Region" and region["type"] == "string"
    assert call(board, "test_custom_header", {"region": "eu-west"})["content"] == [
        {"type": "text", "text": "Region: eu-west"}]
