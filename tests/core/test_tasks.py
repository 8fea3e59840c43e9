# Long tools: a generator tool is stepped in the serve loop's idle time, so the board keeps
# answering; a plain call is answered when the generator returns. Tasks: the 2025-11-25 tasks
# utility and the 2026-07-28 io.modelcontextprotocol/tasks extension, quoting their MUSTs.
from tests.core.support import FakeStream, error, frame, initialize, notifications, result
from tinymcp import Server
from tinymcp.channel import Channel, Lines
from tinymcp.schema import integer

RELATED = "io.modelcontextprotocol/related-task"
EXTENSION = "io.modelcontextprotocol/tasks"
MODERN = "2026-07-28"


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
    Channel(server, Lines(stream)).run()
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
    server.session.work.step(server)
    server.session.work.step(server)
    assert [m["id"] for m in notifications(server)] == [1]
    assert result(server, "ping", id=2) == {}


def test_a_stateless_call_is_answered_with_the_revision_fields():
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    call = {"name": "count", "arguments": {"n": 2}, "_meta": meta}
    sent = serve(board(), [line("tools/call", call), None, None, None])
    res = by_id(sent, 1)[0]["result"]
    assert res["resultType"] == "complete" and res["structuredContent"] == {"counted": 2}


# -- tasks, 2025-11-25 ---------------------------------------------------------------------------

def task_board():
    server = board()

    @server.tool("measure", "Counts to n as a task if asked.", inputs={"n": integer()},
                 outputs={"counted": integer()}, task="optional")
    def measure(n):
        for i in range(n):
            yield (i + 1) / (n + 1)
        return {"counted": n}

    @server.tool("calibrate", "Runs only as a task.", task="required")
    def calibrate():
        yield
        return "calibrated"

    @server.tool("flaky", "Fails as a task.", task="optional")
    def flaky():
        yield
        raise OSError("no sensor")

    return server


def tasked(version="2025-11-25"):
    server = task_board()
    initialize(server, version)
    notifications(server)
    return server


def create(server, name="measure", arguments=None, id=1, **task):
    params = {"name": name, "arguments": arguments if arguments is not None else {"n": 2},
              "task": task}
    return result(server, "tools/call", params, id)["task"]


def finish(server):
    # Step the long work to its end, as the serve loop does in its idle time.
    for _ in range(100):
        if not server.session.work.live:
            return
        server.session.work.step(server)
    raise AssertionError("the work never ended")


def test_a_board_with_task_tools_declares_the_tasks_capability():
    # "Servers and clients that support task-augmented requests MUST declare a tasks
    # capability during initialization."
    caps = initialize(task_board())["capabilities"]
    assert caps["tasks"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    assert "tasks" not in initialize(board())["capabilities"]
    assert "tasks" not in initialize(task_board(), "2025-06-18")["capabilities"]


def test_tools_declare_their_task_support():
    tools = result(tasked(), "tools/list")["tools"]
    support = dict((t["name"], t.get("execution", {}).get("taskSupport")) for t in tools)
    assert support == {"count": None, "broken": None, "hello": None, "measure": "optional",
                       "calibrate": "required", "flaky": "optional"}


def test_a_task_augmented_call_answers_at_once_with_a_working_task():
    # "Receivers that accept a task-augmented request MUST return a CreateTaskResult as the
    # response." "Tasks MUST begin in the working status when created." "Task IDs MUST be a
    # string value." "Receivers MUST include a createdAt ISO 8601-formatted timestamp ..."
    server = tasked()
    task = create(server, ttl=60000)
    assert task["status"] == "working" and type(task["taskId"]) is str
    assert task["ttl"] == 60000 and task["pollInterval"] == 1000
    assert len(task["createdAt"]) == 20 and task["createdAt"][10] == "T"
    assert task["createdAt"].endswith("Z") and task["lastUpdatedAt"] == task["createdAt"]
    assert notifications(server) == []  # nothing of the work has run yet


def test_the_spec_flow_create_poll_complete_fetch():
    server = tasked()
    tid = create(server)["taskId"]
    assert result(server, "tasks/get", {"taskId": tid}, 2)["status"] == "working"
    finish(server)
    status = notifications(server, "notifications/tasks/status")
    assert [n["params"]["status"] for n in status] == ["completed"]
    assert RELATED not in status[0]["params"].get("_meta", {})
    assert result(server, "tasks/get", {"taskId": tid}, 3)["status"] == "completed"
    # "The tasks/result operation MUST include this metadata in its response"
    fetched = result(server, "tasks/result", {"taskId": tid}, 4)
    assert fetched == {"content": [{"type": "text", "text": '{"counted":2}'}],
                       "structuredContent": {"counted": 2}, "_meta": {RELATED: {"taskId": tid}}}


def test_tasks_result_blocks_until_the_task_ends():
    # "When a receiver receives a tasks/result request for a task in any other non-terminal
    # status (working or input_required), it MUST block the response until the task reaches
    # a terminal status."
    server = tasked()
    tid = create(server)["taskId"]
    assert server.handle(frame("tasks/result", {"taskId": tid}, 2)) is None
    assert result(server, "ping", id=3) == {}
    finish(server)
    answers = [m for m in notifications(server) if m.get("id") == 2]
    assert answers[0]["result"]["structuredContent"] == {"counted": 2}


def test_progress_of_a_task_names_it():
    # "All requests, notifications, and responses related to a task MUST include the
    # io.modelcontextprotocol/related-task key in their _meta field"
    server = tasked()
    params = {"name": "measure", "arguments": {"n": 1}, "task": {},
              "_meta": {"progressToken": 7}}
    tid = result(server, "tools/call", params)["task"]["taskId"]
    finish(server)
    progress = notifications(server, "notifications/progress")
    assert progress == [{"jsonrpc": "2.0", "method": "notifications/progress", "params": {
        "progressToken": 7, "progress": 0.5, "total": 1, "_meta": {RELATED: {"taskId": tid}}}}]


def test_a_required_task_tool_called_plainly_gets_method_not_found():
    # "If execution.taskSupport is "required", ... Servers MUST return a -32601 (Method not
    # found) error if a client does not attempt to do so."
    err = error(tasked(), "tools/call", {"name": "calibrate"})
    assert err["code"] == -32601 and "calibrate" in err["message"]


def test_a_tool_without_task_support_called_as_a_task_gets_method_not_found():
    # "If execution.taskSupport is not present or "forbidden" ... Servers SHOULD return a
    # -32601 (Method not found) error if a client attempts to do so."
    err = error(tasked(), "tools/call", {"name": "hello", "task": {}})
    assert err["code"] == -32601


def test_a_plain_call_to_an_optional_task_tool_gets_a_plain_result():
    server = tasked()
    assert server.handle(frame("tools/call", {"name": "measure", "arguments": {"n": 1}})) is None
    finish(server)
    answer = [m for m in notifications(server) if m.get("id") == 1][0]
    assert answer["result"]["structuredContent"] == {"counted": 1} and "task" not in answer


def test_before_2025_11_25_the_task_param_is_ignored():
    # "Receivers that do not declare the task capability for a request type MUST process
    # requests of that type normally, ignoring any task-augmentation metadata if present."
    server = tasked("2025-06-18")
    params = {"name": "measure", "arguments": {"n": 1}, "task": {"ttl": 1000}}
    assert server.handle(frame("tools/call", params)) is None
    finish(server)
    answer = [m for m in notifications(server) if m.get("id") == 1][0]
    assert answer["result"]["structuredContent"] == {"counted": 1}
    assert error(server, "tasks/list", {}, 2)["code"] == -32601


def test_a_tool_result_with_is_error_is_a_failed_task():
    # "failed: ... For tool calls specifically, this includes cases where the tool call
    # result has isError set to true."
    server = tasked()
    tid = create(server, "flaky", {})["taskId"]
    finish(server)
    assert result(server, "tasks/get", {"taskId": tid}, 2)["status"] == "failed"
    fetched = result(server, "tasks/result", {"taskId": tid}, 3)
    assert fetched["isError"] is True and fetched["content"][0]["text"] == "flaky failed: no sensor"


def test_bad_arguments_make_a_task_that_has_failed_already():
    server = tasked()
    task = create(server, "measure", {"n": "two"})
    assert task["status"] == "failed"
    assert "Invalid arguments" in result(server, "tasks/result", {"taskId": task["taskId"]}, 2)[
        "content"][0]["text"]


def test_cancelling_a_task_stops_it_and_nothing_more_is_sent():
    # "Upon receiving a valid cancellation request, receivers ... MUST transition the task to
    # cancelled status before sending the response."
    server = tasked()
    tid = create(server, arguments={"n": 5})["taskId"]
    server.session.work.step(server)
    cancelled = result(server, "tasks/cancel", {"taskId": tid}, 2)
    assert cancelled["taskId"] == tid and cancelled["status"] == "cancelled"
    assert server.session.work.live == []
    assert notifications(server) == []
    assert result(server, "tasks/get", {"taskId": tid}, 3)["status"] == "cancelled"
    # "Receivers MUST reject cancellation requests for tasks already in a terminal status
    # (completed, failed, or cancelled) with error code -32602 (Invalid params)."
    assert error(server, "tasks/cancel", {"taskId": tid}, 4)["code"] == -32602


def test_unknown_task_ids_and_cursors_are_invalid_params():
    # "Invalid or nonexistent taskId in tasks/get, tasks/result, or tasks/cancel: -32602";
    # "Invalid or nonexistent cursor in tasks/list: -32602"
    server = tasked()
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        assert error(server, method, {"taskId": "nope"})["code"] == -32602
        assert error(server, method, {})["code"] == -32602
    assert error(server, "tasks/list", {"cursor": "9"})["code"] == -32602


def test_tasks_list_shows_every_task_kept():
    # "If a task is retrievable via tasks/get for a requestor, it MUST be retrievable via
    # tasks/list for that requestor."
    server = tasked()
    ids = [create(server, id=i)["taskId"] for i in (1, 2)]
    listed = result(server, "tasks/list", {}, 3)
    assert [t["taskId"] for t in listed["tasks"]] == ids and "nextCursor" not in listed


def test_task_ids_are_unguessable():
    server = tasked()
    ids = [create(server, id=i)["taskId"] for i in (1, 2, 3)]
    assert len(set(ids)) == 3
    for tid in ids:
        assert len(tid) == 32 and int(tid, 16) >= 0


def test_the_board_keeps_a_bounded_number_of_tasks():
    server = tasked()
    first = create(server, arguments={"n": 1}, id=1)["taskId"]
    for i in (2, 3, 4):
        create(server, arguments={"n": 50}, id=i)
    err = error(server, "tools/call", {"name": "measure", "arguments": {"n": 1}, "task": {}}, 5)
    assert err["code"] == -32603 and "4 tasks are working" in err["message"]
    server.session.work.step(server)
    server.session.work.step(server)  # the first ended: it makes room for a new one
    create(server, arguments={"n": 1}, id=6)
    kept = [t["taskId"] for t in result(server, "tasks/list", {}, 7)["tasks"]]
    assert first not in kept and len(kept) == 4


def test_the_board_caps_the_ttl_a_client_asks():
    # "Receivers MAY override the requested ttl duration." "Receivers MUST include the actual
    # ttl duration (or null for unlimited) in tasks/get responses."
    server = tasked()
    tid = create(server, ttl=10 ** 9)["taskId"]
    assert result(server, "tasks/get", {"taskId": tid}, 2)["ttl"] == server.session.work.max_ttl_ms


def test_an_ended_task_is_forgotten_after_its_ttl():
    import time
    server = tasked()
    tid = create(server, arguments={"n": 1}, ttl=1)["taskId"]
    finish(server)
    time.sleep(0.01)
    assert error(server, "tasks/get", {"taskId": tid}, 2)["code"] == -32602


# -- tasks, 2026-07-28: the io.modelcontextprotocol/tasks extension ------------------------------

def stamped(params=None, extension=True, id=1):
    caps = {"extensions": {EXTENSION: {}}} if extension else {}
    params = dict(params or {})
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": MODERN,
                       "io.modelcontextprotocol/clientCapabilities": caps}
    return params


def modern(method, params=None, extension=True, id=1):
    return frame(method, stamped(params, extension), id)


def test_the_extension_is_advertised_in_discover():
    server = task_board()
    caps = result(server, "server/discover", stamped())["capabilities"]
    assert caps["extensions"] == {EXTENSION: {}} and "tasks" not in caps


def test_a_declaring_client_gets_a_task_and_polls_it_to_its_result():
    # "Servers MUST set resultType to "task" when returning a CreateTaskResult"; "If the
    # status is completed, the server MUST return a Task object with status completed and a
    # result field containing the final result of the task."; "The resultType field MUST be
    # set to "complete" on this object"
    server = task_board()
    created = result(server, "tools/call", stamped({"name": "measure", "arguments": {"n": 2}}))
    assert created["resultType"] == "task" and created["status"] == "working"
    assert created["ttlMs"] == 300000 and created["pollIntervalMs"] == 1000
    tid = created["taskId"]
    got = result(server, "tasks/get", stamped({"taskId": tid}), 2)
    assert got["status"] == "working" and got["resultType"] == "complete"
    finish(server)
    assert notifications(server) == []  # no progress, no status unless listened for
    got = result(server, "tasks/get", stamped({"taskId": tid}), 3)
    assert got["status"] == "completed" and got["result"]["structuredContent"] == {"counted": 2}


def test_a_client_without_the_extension_gets_a_plain_result():
    # "A server MUST NOT return CreateTaskResult to a client that did not include the
    # extension capability on its request, regardless of prior declarations."
    server = task_board()
    assert server.handle(modern("tools/call", {"name": "measure", "arguments": {"n": 1}},
                                extension=False)) is None
    finish(server)
    answer = [m for m in notifications(server) if m.get("id") == 1][0]["result"]
    assert answer["resultType"] == "complete" and answer["structuredContent"] == {"counted": 1}


def test_a_task_only_tool_needs_the_extension():
    # "If a server is unable to service a request to a client that does not declare this
    # extension capability without returning CreateTaskResult, the server MUST return an
    # error with the code -32021"
    err = error(task_board(), "tools/call", stamped({"name": "calibrate"}, extension=False))
    assert err["code"] == -32021
    assert err["data"] == {"requiredCapabilities": {"extensions": {EXTENSION: {}}}}


def test_task_methods_need_the_extension():
    # "Servers MUST return this error for non-declaring clients issuing tasks/get,
    # tasks/update, and tasks/cancel requests."
    server = task_board()
    tid = result(server, "tools/call", stamped({"name": "measure", "arguments": {"n": 1}}))[
        "taskId"]
    for method in ("tasks/get", "tasks/update", "tasks/cancel"):
        assert error(server, method, stamped({"taskId": tid}, extension=False), 2)[
            "code"] == -32021


def test_the_extension_has_no_tasks_result_or_list():
    server = task_board()
    for method in ("tasks/result", "tasks/list"):
        assert error(server, method, stamped({"taskId": "x"}))["code"] == -32601


def test_a_tool_error_completes_the_task_with_it():
    # "The failed status MUST NOT be used to represent non-JSON-RPC errors, such as a tool
    # result that completed with isError: true."
    server = task_board()
    tid = result(server, "tools/call", stamped({"name": "flaky"}))["taskId"]
    finish(server)
    got = result(server, "tasks/get", stamped({"taskId": tid}), 2)
    assert got["status"] == "completed" and got["result"]["isError"] is True


def test_a_protocol_error_fails_the_task_and_tasks_result_answers_it():
    # SEP-2663: "failed" is for protocol-level errors, with the JSON-RPC error inlined (the
    # conformance suite's protocol_error_job); a tool error stays a completed isError result.
    from tinymcp.jsonrpc import RpcError
    server = task_board()

    @server.tool("broken", "Ends in a protocol error.", task="optional")
    def broken():
        yield
        raise RpcError(-32603, "internal failure")

    tid = result(server, "tools/call", stamped({"name": "broken"}))["taskId"]
    finish(server)
    got = result(server, "tasks/get", stamped({"taskId": tid}), 2)
    assert got["status"] == "failed" and "result" not in got
    assert got["error"] == {"code": -32603, "message": "internal failure"}
    # In the 2025-11-25 tasks utility, tasks/result answers the error.
    server = tasked()
    server.tool("broken2", "Ends in a protocol error.", task="optional")(broken)
    tid = create(server, "broken2", {})["taskId"]
    finish(server)
    assert result(server, "tasks/get", {"taskId": tid}, 2)["status"] == "failed"
    assert error(server, "tasks/result", {"taskId": tid}, 3) == {
        "code": -32603, "message": "internal failure"}
    # ... and so does a tasks/result that was blocked on it when it failed (this ended the
    # board's serve loop with the error once).
    tid = create(server, "broken2", {}, id=4)["taskId"]
    assert server.handle(frame("tasks/result", {"taskId": tid}, 5)) is None
    finish(server)
    answers = [m for m in notifications(server) if m.get("id") == 5]
    assert answers == [{"jsonrpc": "2.0", "id": 5, "error": {
        "code": -32603, "message": "internal failure"}}]


def test_cancel_is_acknowledged_with_an_empty_result_and_update_needs_a_waiting_task():
    # "On success, the server MUST acknowledge the request with an empty result." (both; a
    # task that asks is in tests/core/test_task_input.py). A task that asks nothing is never
    # waiting for input: an update for it is refused, not silently dropped.
    server = task_board()
    tid = result(server, "tools/call", stamped({"name": "measure", "arguments": {"n": 9}}))[
        "taskId"]
    refused = error(server, "tasks/update", stamped({"taskId": tid, "inputResponses": {}}), 2)
    assert refused["code"] == -32602 and "not waiting for input" in refused["message"]
    ack = result(server, "tasks/cancel", stamped({"taskId": tid}), 3)
    assert ack["resultType"] == "complete" and set(ack) == {"resultType", "_meta"}
    assert result(server, "tasks/get", stamped({"taskId": tid}), 4)["status"] == "cancelled"
    assert error(server, "tasks/get", stamped({"taskId": "nope"}), 5)["code"] == -32602


def test_a_board_without_task_tools_has_no_task_methods():
    server = board()
    initialize(server)
    result(server, "tools/list")
    assert server.session.work is None and server.handlers is Server.handlers
    assert "tasks" not in result(server, "initialize", {"protocolVersion": "2025-11-25",
                                                        "capabilities": {}}, 0)["capabilities"]
    assert error(server, "tasks/get", {"taskId": "x"}, 2)["code"] == -32601


def test_a_task_mode_other_than_optional_or_required_is_refused_at_registration():
    server = Server("bad", "0")
    try:
        server.tool("x", "A tool.", task="always")(lambda: "x")
    except ValueError as e:
        assert "optional" in str(e)
    else:
        raise AssertionError("task='always' was accepted")


def test_task_notifications_come_on_a_listen_stream_that_asked_for_them():
    # 2026-07-28 extension: "Each notification carries a complete DetailedTask for the
    # current status"; "If a client requests task status notifications but does not declare
    # the io.modelcontextprotocol/tasks extension capability, the server MUST return a JSON-RPC
    # error specifying the missing capabilities"
    server = task_board()
    tid = result(server, "tools/call", stamped({"name": "measure", "arguments": {"n": 1}}))[
        "taskId"]
    listen = {"notifications": {"taskIds": [tid, "unknown"]}}
    refused = error(server, "subscriptions/listen", stamped(listen, extension=False), 2)
    assert refused["code"] == -32021
    assert server.handle(frame("subscriptions/listen", stamped(listen), 3)) is None
    acked = notifications(server, "notifications/subscriptions/acknowledged")
    assert acked[0]["params"]["notifications"] == {"taskIds": [tid]}
    finish(server)
    told = notifications(server, "notifications/tasks")
    assert [n["params"]["status"] for n in told] == ["completed"]
    assert told[0]["params"]["result"]["structuredContent"] == {"counted": 1}
    assert told[0]["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": 3}


def test_notifications_cancelled_for_the_call_that_made_a_task_does_not_stop_it():
    # 2026-07-28 extension: "The notifications/cancelled notification MUST NOT be used for
    # task cancellation." (2025-11-25: tasks/cancel is how a task is cancelled.)
    server = tasked()
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}}

    @server.tool("hears", "Reads its input mid-step, as ctx.cancelled does.", task="optional")
    def hears():
        server.answer(cancel, None)  # the cancel arrives while the task's step runs
        yield
        return "heard"

    tid = create(server, "hears", {}, id=5)["taskId"]
    server.handle(frame("notifications/cancelled", {"requestId": 5}, id=None))
    finish(server)
    assert result(server, "tasks/get", {"taskId": tid}, 2)["status"] == "completed"


def test_a_task_that_ran_past_its_ttl_is_still_fetched_once_it_ends():
    import time
    server = tasked()
    tid = create(server, arguments={"n": 1}, ttl=20)["taskId"]
    time.sleep(0.05)  # its ttl has run out while it works
    finish(server)
    assert result(server, "tasks/result", {"taskId": tid}, 2)["structuredContent"] == {"counted": 1}
