# Board tasks that ask for input, through the bridge's HTTP face to 2026-07-28 hosts: the board's
# question (a request tied to its task) is kept by the bridge and shown on the owner's tasks/get
# as inputRequests; the owner's tasks/update answers the board, which runs the task on. One
# board and two; nobody but the task's principal sees or answers its questions.
from tests.bridge_modern.http_tasks import polled, refused_to, task_post

ASKS = {"elicitation": {}}


def post(url, method, params, token="alice-token", rid=1):
    return task_post(url, method, params, token, rid, caps=ASKS)


def start(url, tool, arguments, token="alice-token"):
    started = post(url, "tools/call", {"name": tool, "arguments": arguments}, token)
    assert started["result"]["resultType"] == "task", started
    return started["result"]["taskId"]


def waiting(url, tid, keys, token="alice-token"):
    # tasks/get until the task waits for exactly these keys.
    got = polled(url, tid, token, "input_required")
    for _ in range(40):
        if sorted(got.get("inputRequests") or ()) == sorted(keys):
            return got
        got = polled(url, tid, token, "input_required")
    raise AssertionError("never waited for %r: %r" % (keys, got))


def update(url, tid, responses, token="alice-token"):
    return post(url, "tasks/update", {"taskId": tid, "inputResponses": responses}, token)


def accept(**content):
    return {"action": "accept", "content": content}


def test_a_board_task_asks_its_host_through_tasks_get_and_runs_on_with_the_answer(http_bridge):
    url, bridge = http_bridge(board="conformance")
    tid = start(url, "confirm_delete", {"filename": "old.log"})
    got = waiting(url, tid, ["confirm_delete"])
    asked = got["inputRequests"]["confirm_delete"]
    assert asked["method"] == "elicitation/create" and "_meta" not in asked["params"], asked
    assert asked["params"]["message"] == "Delete old.log?"
    refused_to(url, tid, "bob-token")   # another principal: as good as no task
    refused_to(url, tid, None)
    assert update(url, tid, {"unknown-key": {"x": 1}})["result"]["resultType"] == "complete"
    bad = update(url, tid, {"confirm_delete": "yes"})
    assert bad["error"]["code"] == -32602 and "inputResponses[confirm_delete]" in \
        bad["error"]["message"], bad
    no_map = post(url, "tasks/update", {"taskId": tid})
    assert no_map["error"]["code"] == -32602, no_map
    forged = post(url, "tasks/update", {"taskId": tid, "requestState": "x",
                                        "inputResponses": {"confirm_delete": accept(confirm=True)}})
    assert forged["error"]["code"] == -32602 and "requestState" in forged["error"]["message"]
    assert list(waiting(url, tid, ["confirm_delete"])["inputRequests"]) == ["confirm_delete"]
    ack = update(url, tid, {"confirm_delete": accept(confirm=True)})
    assert ack["result"]["resultType"] == "complete" and set(ack["result"]) <= {
        "resultType", "_meta"}, ack
    done = polled(url, tid, "alice-token", "completed")
    assert done["result"]["content"][0]["text"] == "Deleted old.log", done
    late = update(url, tid, {"confirm_delete": accept(confirm=True)})
    assert late["error"]["code"] == -32602 and "completed" in late["error"]["message"], late
    assert "Traceback" not in bridge.stderr(), bridge.stderr()


def test_answers_may_come_one_at_a_time_and_a_cancelled_task_asks_no_more(http_bridge):
    url, bridge = http_bridge(board="conformance")
    tid = start(url, "multi_input", {})
    waiting(url, tid, ["name", "confirm"])
    update(url, tid, {"name": accept(name="Ada")})
    assert list(waiting(url, tid, ["confirm"])["inputRequests"]) == ["confirm"]
    update(url, tid, {"confirm": accept(confirm=True)})
    done = polled(url, tid, "alice-token", "completed")
    assert done["result"]["content"][0]["text"] == 'Got name "Ada", confirm true', done
    other = start(url, "confirm_delete", {"filename": "keep.me"})
    waiting(url, other, ["confirm_delete"])
    assert "result" in post(url, "tasks/cancel", {"taskId": other})
    gone = polled(url, other, "alice-token", "cancelled")
    assert "inputRequests" not in gone, gone
    after = update(url, other, {"confirm_delete": accept(confirm=True)})
    assert after["error"]["code"] == -32602, after
    assert polled(url, other, "alice-token", "cancelled")["status"] == "cancelled"
    assert "Traceback" not in bridge.stderr(), bridge.stderr()


def test_with_two_boards_each_task_asks_and_is_answered_on_its_own_board(http_bridge):
    url, bridge = http_bridge("--sim", "a=conformance", "--sim", "b=conformance", board=None)
    first = start(url, "a_confirm_delete", {"filename": "on-a"})
    second = start(url, "b_confirm_delete", {"filename": "on-b"}, token="bob-token")
    waiting(url, first, ["confirm_delete"])
    waiting(url, second, ["confirm_delete"], token="bob-token")
    refused_to(url, second, "alice-token")   # bob's task, though the key is the same
    update(url, second, {"confirm_delete": accept(confirm=False)}, token="bob-token")
    assert polled(url, second, "bob-token", "completed")["result"]["content"][0]["text"] == \
        "Kept on-b"
    assert list(waiting(url, first, ["confirm_delete"])["inputRequests"]) == ["confirm_delete"]
    update(url, first, {"confirm_delete": accept(confirm=True)})
    assert polled(url, first, "alice-token", "completed")["result"]["content"][0]["text"] == \
        "Deleted on-a"
    assert "Traceback" not in bridge.stderr(), bridge.stderr()


def test_a_question_before_the_task_is_input_required_and_a_forged_state_is_refused(http_bridge):
    url, bridge = http_bridge(board="conformance")
    first = post(url, "tools/call", {"name": "test_tool_with_task", "arguments": {}})["result"]
    assert first["resultType"] == "input_required" and "taskId" not in first, first
    retry = {"name": "test_tool_with_task", "arguments": {},
             "inputResponses": {"user_name": accept(name="Alice")}}
    forged = post(url, "tools/call", dict(retry, requestState=first["requestState"] + "x"))
    assert forged["error"]["code"] == -32602, forged
    created = post(url, "tools/call", dict(retry, requestState=first["requestState"]))["result"]
    assert created["resultType"] == "task" and "requestState" not in created, created
    done = polled(url, created["taskId"], "alice-token", "completed")
    assert "Alice" in done["result"]["content"][0]["text"], done
    assert "Traceback" not in bridge.stderr(), bridge.stderr()
