# Tasks that ask for input: a task's tool that calls ctx.request pauses (input_required) without
# holding the serve loop; a 2026-07-28 client finds the questions on tasks/get and answers with
# tasks/update (SEP-2663 over SEP-2322), a 2025-11-25 client gets them as requests tied to the
# task. With every answer in, the tool runs again from its start and ctx.request returns them.
import json

from tests.core.support import FakeStream, error, frame, initialize, notifications, result
from tinymcp import Server
from tinymcp.channel import Channel, Lines
from tinymcp.schema import string

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED = "io.modelcontextprotocol/related-task"
INPUT_META = "io.tinymcp/input"


def _form(message, field, kind="string"):
    return ("elicitation/create", {"message": message, "requestedSchema": {
        "type": "object", "properties": {field: {"type": kind}}, "required": [field]}})


def asking_board(runs=None):
    # runs: a list each run of a tool appends its name to (how often it ran from its start).
    runs = runs if runs is not None else []
    server = Server("asking", "0")

    @server.tool("confirm", "Asks before it deletes.", inputs={"path": string()}, ctx=True,
                 task="optional")
    def confirm(path, ctx):
        runs.append("confirm")
        answer = ctx.request(*_form("Delete " + path + "?", "ok", "boolean"), key="ok")
        yield 0.5
        ok = (answer.get("content") or {}).get("ok") is True
        return ("deleted " if ok else "kept ") + path

    @server.tool("two", "Asks two things at once, then a third.", ctx=True, task="optional")
    def two(ctx):
        runs.append("two")
        got = ctx.requests({"a": _form("A?", "a"), "b": _form("B?", "b")})
        yield
        third = ctx.request(*_form("C?", "c"))  # unnamed: "elicitation-3" (the third asked)
        return ",".join(str((got[k].get("content") or {}).get(k)) for k in ("a", "b")) + \
            "," + str((third.get("content") or {}).get("c"))

    @server.tool("roots", "Asks the client's roots.", ctx=True, task="optional")
    def roots(ctx):
        yield
        return str(ctx.request("roots/list", {}, key="roots"))

    @server.tool("careful", "Asks only what the client can answer.", ctx=True, task="optional")
    def careful(ctx):
        yield
        if not ctx.can("roots/list"):
            return "no roots to ask for"
        return str(ctx.request("roots/list", {}, key="roots"))

    @server.tool("greet_later", "Asks a name, then greets as a task.", ctx=True,
                 task="required")
    def greet_later(ctx):
        name = ctx.request(*_form("Name?", "name"), key="user_name")["content"]["name"]

        def work():
            yield
            return "Hello, " + name + "!"
        return work()

    @server.tool("hello", "Says hello.")
    def hello():
        return "hello"

    return server


def stamped(params=None, extension=True, caps=None):
    caps = dict(caps if caps is not None else {"elicitation": {}})
    if extension:
        caps["extensions"] = {EXTENSION: {}}
    params = dict(params or {})
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities": caps}
    return params


def call(server, name, arguments=None, id=1, **kw):
    return result(server, "tools/call", stamped({"name": name, "arguments": arguments or {}},
                                               **kw), id)


def get(server, tid, id=50):
    return result(server, "tasks/get", stamped({"taskId": tid}), id)


def update(server, tid, responses, id=60):
    return result(server, "tasks/update", stamped({"taskId": tid, "inputResponses": responses}),
                  id)


def step(server, turns=20):
    # The serve loop's idle time: the live work stepped, a paused task woken when answered.
    work = server.session.work
    for _ in range(turns):
        if work.parked:
            work.wake(server)
        if work.live:
            work.step(server)


def accept(field, value):
    return {"action": "accept", "content": {field: value}}


# -- 2026-07-28: inputRequests on tasks/get, answers by tasks/update --------------------------

def test_a_task_that_asks_is_input_required_with_its_question_on_tasks_get():
    # "A task waiting on client input MUST report status:"input_required" on tasks/get and
    # surface a non-empty inputRequests map"; CreateTaskResult "does not contain inputRequests"
    server = asking_board()
    created = call(server, "confirm", {"path": "/log"})
    assert created["resultType"] == "task" and "inputRequests" not in created
    tid = created["taskId"]
    step(server)
    got = get(server, tid)
    assert got["status"] == "input_required" and got["resultType"] == "complete"
    assert list(got["inputRequests"]) == ["ok"]
    assert got["inputRequests"]["ok"]["method"] == "elicitation/create"
    assert got["inputRequests"]["ok"]["params"]["message"] == "Delete /log?"
    assert "requestState" not in got
    assert not server.session.work.live  # paused: nothing is stepped while it waits


def test_tasks_update_with_the_answer_resumes_the_task_to_its_result():
    # "The server MUST acknowledge the request with an empty result"; "After the response is
    # delivered, the task MUST resume execution"
    runs = []
    server = asking_board(runs)
    tid = call(server, "confirm", {"path": "/log"})["taskId"]
    step(server)
    ack = update(server, tid, {"ok": accept("ok", True)})
    assert ack["resultType"] == "complete" and set(ack) == {"resultType", "_meta"}
    assert get(server, tid)["status"] == "working"
    step(server)
    done = get(server, tid)
    assert done["status"] == "completed" and "inputRequests" not in done
    assert done["result"]["content"][0]["text"] == "deleted /log"
    assert runs == ["confirm", "confirm"]  # run again from its start, with the answer


def test_a_partial_update_keeps_the_task_waiting_for_the_rest_and_keys_are_never_reused():
    # "tasks/update with a subset of keys MUST be acked"; "The task MUST stay in input_required
    # until every pending request has been answered"; "Each request key in inputRequests MUST
    # be unique over the lifetime of a single task"
    server = asking_board()
    tid = call(server, "two")["taskId"]
    step(server)
    assert sorted(get(server, tid)["inputRequests"]) == ["a", "b"]
    update(server, tid, {"a": accept("a", 1)})
    step(server)
    got = get(server, tid)
    assert got["status"] == "input_required" and list(got["inputRequests"]) == ["b"]
    update(server, tid, {"b": accept("b", 2)})
    step(server)
    got = get(server, tid)  # a second round: a new key
    assert got["status"] == "input_required" and list(got["inputRequests"]) == ["elicitation-3"]
    update(server, tid, {"elicitation-3": accept("c", 3)})
    step(server)
    assert get(server, tid)["result"]["content"][0]["text"] == "1,2,3"


def test_answers_to_keys_not_outstanding_are_ignored_and_acked():
    # "A server SHOULD ignore any inputResponses responses mapped to a key that is not
    # currently outstanding for the task"
    server = asking_board()
    tid = call(server, "confirm", {"path": "/x"})["taskId"]
    step(server)
    update(server, tid, {"unknown-key": {"ignored": True}})
    got = get(server, tid)
    assert got["status"] == "input_required" and list(got["inputRequests"]) == ["ok"]


def test_bad_updates_get_invalid_params_and_leave_the_task_as_it_was():
    server = asking_board()
    tid = call(server, "confirm", {"path": "/x"})["taskId"]
    step(server)

    def refused(params, id):
        return error(server, "tasks/update", stamped(params), id)

    assert refused({"taskId": "no-such-task", "inputResponses": {}}, 2)["code"] == -32602
    assert refused({"taskId": tid}, 3)["code"] == -32602  # no inputResponses
    assert refused({"taskId": tid, "inputResponses": [1]}, 4)["code"] == -32602
    bad = refused({"taskId": tid, "inputResponses": {"ok": "yes"}}, 5)
    assert bad["code"] == -32602 and "inputResponses[ok]" in bad["message"]
    forged = refused({"taskId": tid, "inputResponses": {"ok": accept("ok", True)},
                      "requestState": "x" * 65}, 6)
    assert forged["code"] == -32602 and "requestState" in forged["message"]
    assert error(server, "tasks/update", stamped({"taskId": tid, "inputResponses": {}},
                                                  extension=False), 7)["code"] == -32021
    got = get(server, tid)  # none of it touched the task
    assert got["status"] == "input_required" and list(got["inputRequests"]) == ["ok"]
    update(server, tid, {"ok": accept("ok", False)})
    step(server)
    assert get(server, tid)["result"]["content"][0]["text"] == "kept /x"
    ended = refused({"taskId": tid, "inputResponses": {"ok": accept("ok", True)}}, 8)
    assert ended["code"] == -32602 and "completed" in ended["message"]


def test_a_listen_stream_hears_the_task_ask_resume_and_complete():
    # notifications/tasks: "Each notification carries a complete DetailedTask for the current
    # status" (the questions too, while it waits).
    server = asking_board()
    tid = call(server, "confirm", {"path": "/n"})["taskId"]
    assert server.handle(frame("subscriptions/listen", stamped(
        {"notifications": {"taskIds": [tid]}}), 7)) is None
    notifications(server)
    step(server)
    update(server, tid, {"ok": accept("ok", True)})
    step(server)
    told = [n["params"] for n in notifications(server, "notifications/tasks")]
    assert [t["status"] for t in told] == ["input_required", "working", "completed"]
    assert list(told[0]["inputRequests"]) == ["ok"] and "inputRequests" not in told[1]
    assert told[2]["result"]["content"][0]["text"] == "deleted /n"


def test_an_update_for_a_working_task_is_refused():
    server = asking_board()
    tid = call(server, "confirm", {"path": "/x"})["taskId"]  # not stepped yet: working
    refused = error(server, "tasks/update", stamped({"taskId": tid, "inputResponses": {}}), 2)
    assert refused["code"] == -32602 and "working" in refused["message"]


def test_a_task_never_asks_in_a_capability_the_client_lacks_it_fails_with_the_error():
    # SEP-2322: a server MUST NOT ask what the client did not declare; the task's protocol
    # error is its "failed" status with the JSON-RPC error inline.
    server = asking_board()
    tid = call(server, "roots", caps={})["taskId"]  # no roots capability
    step(server)
    got = get(server, tid)
    assert got["status"] == "failed" and got["error"]["code"] == -32021
    assert got["error"]["data"] == {"requiredCapabilities": {"roots": {}}}
    tid = call(server, "careful", id=2, caps={})["taskId"]  # ctx.can reads the task's client
    step(server)
    assert get(server, tid)["result"]["content"][0]["text"] == "no roots to ask for"


def test_a_paused_task_is_cancelled_and_answers_then_are_refused():
    server = asking_board()
    tid = call(server, "confirm", {"path": "/x"})["taskId"]
    step(server)
    assert result(server, "tasks/cancel", stamped({"taskId": tid}), 2)["resultType"] == "complete"
    got = get(server, tid)
    assert got["status"] == "cancelled" and "inputRequests" not in got
    assert error(server, "tasks/update", stamped({"taskId": tid, "inputResponses": {
        "ok": accept("ok", True)}}), 3)["code"] == -32602
    step(server)
    assert get(server, tid)["status"] == "cancelled"


def test_a_question_before_the_task_is_an_input_required_result_and_its_answer_rides_in():
    # SEP-2663 composition: round 1 an InputRequiredResult (no taskId), round 2 the
    # CreateTaskResult (no requestState), the final result reflects the answer.
    server = asking_board()
    first = call(server, "greet_later")
    assert first["resultType"] == "input_required" and "taskId" not in first
    assert list(first["inputRequests"]) == ["user_name"]
    again = {"name": "greet_later", "arguments": {}, "requestState": first["requestState"],
             "inputResponses": {"user_name": accept("name", "Alice")}}
    created = result(server, "tools/call", stamped(again), 2)
    assert created["resultType"] == "task" and "requestState" not in created
    step(server)
    assert get(server, created["taskId"])["result"]["content"][0]["text"] == "Hello, Alice!"
    tampered = dict(again, requestState=first["requestState"].replace("[", "[ ", 1))
    assert error(server, "tools/call", stamped(tampered), 3)["code"] == -32602


def test_the_serve_loop_answers_others_while_a_task_waits_for_its_answer():
    # Nothing blocks: tasks/get and other calls are answered while the question is open.
    server = asking_board()
    stream = Lazy([
        frame("tools/call", stamped({"name": "confirm", "arguments": {"path": "/y"}}), 1),
        None, None,
        lambda s: frame("tasks/get", stamped({"taskId": s.tid()}), 2),
        frame("tools/call", stamped({"name": "hello", "arguments": {}}), 3),
        lambda s: frame("tasks/update", stamped({"taskId": s.tid(), "inputResponses": {
            "ok": accept("ok", True)}}), 4),
        None, None, None, None,
        lambda s: frame("tasks/get", stamped({"taskId": s.tid()}), 5)])
    Channel(server, Lines(stream)).run()
    sent = {m["id"]: m for m in stream.sent if "id" in m}
    assert sent[2]["result"]["status"] == "input_required"
    assert sent[3]["result"]["content"][0]["text"] == "hello"
    assert sent[4]["result"]["resultType"] == "complete"
    assert sent[5]["result"]["result"]["content"][0]["text"] == "deleted /y"


class Lazy(FakeStream):
    # A fake stream whose chunks may be made from what the board said so far (a task's id).
    def __init__(self, chunks):
        FakeStream.__init__(self, [], size=1024)
        self.later = list(chunks)

    def tid(self):
        return self.sent[0]["result"]["taskId"]

    def recv(self, timeout_ms):
        if not self.chunks and self.later:
            chunk = self.later.pop(0)
            if callable(chunk):
                chunk = chunk(self)
            self.chunks.append(chunk if chunk is None else chunk + b"\n")
        return FakeStream.recv(self, timeout_ms)


# -- 2025-11-25: the questions are requests tied to the task -----------------------------------

def tasked():
    server = asking_board()
    initialize(server, "2025-11-25", {"elicitation": {}})
    notifications(server)
    return server


def create(server, name, arguments, id=1):
    params = {"name": name, "arguments": arguments, "task": {}}
    return result(server, "tools/call", params, id)["task"]["taskId"]


def answer(server, rid, **reply):
    msg = {"jsonrpc": "2.0", "id": rid}
    msg.update(reply)
    assert server.handle(json.dumps(msg).encode()) is None


def test_a_handshake_task_sends_its_question_as_a_request_tied_to_it():
    # 2025-11-25: "the receiver MUST move the task to the input_required status"; requests
    # for a task carry io.modelcontextprotocol/related-task.
    server = tasked()
    tid = create(server, "confirm", {"path": "/z"})
    step(server)
    out = notifications(server)
    asked = [m for m in out if m.get("method") == "elicitation/create"]
    assert len(asked) == 1
    meta = asked[0]["params"]["_meta"]
    assert meta[RELATED] == {"taskId": tid} and meta[INPUT_META] == ["ok", 1]
    status = [m["params"]["status"] for m in out if m.get("method") == "notifications/tasks/status"]
    assert status == ["input_required"]
    assert result(server, "tasks/get", {"taskId": tid}, 2)["status"] == "input_required"
    answer(server, asked[0]["id"], result=accept("ok", True))
    step(server)
    assert result(server, "tasks/result", {"taskId": tid}, 3)["content"][0]["text"] == \
        "deleted /z"


def test_a_handshake_task_whose_question_is_refused_fails_with_the_clients_error():
    server = tasked()
    tid = create(server, "confirm", {"path": "/z"})
    step(server)
    asked = [m for m in notifications(server) if m.get("method") == "elicitation/create"]
    answer(server, asked[0]["id"], error={"code": -32600, "message": "user closed it"})
    step(server)
    got = result(server, "tasks/get", {"taskId": tid}, 2)
    assert got["status"] == "failed"
    assert error(server, "tasks/result", {"taskId": tid}, 3)["message"] == "user closed it"
