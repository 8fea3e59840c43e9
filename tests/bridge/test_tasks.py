# Tasks through the bridge (the boards speak 2025-11-25 tasks to it): a 2025-11-25 host runs the
# sim board's `sample` as a task, alone and with several boards; a 2026-07-28 host gets the
# io.modelcontextprotocol/tasks extension's shape; a host without tasks gets a plain result.
import time

RELATED = "io.modelcontextprotocol/related-task"
EXTENSION = "io.modelcontextprotocol/tasks"
SAMPLE = {"quantity": "temperature", "seconds": 1, "every_ms": 250}


def call(client, tool, **extra):
    return client.request("tools/call", dict({"name": tool, "arguments": SAMPLE}, **extra))


def wait_tools(client, names):
    # With several boards the bridge lists a board's tools once it is ready.
    end = time.monotonic() + 30
    while time.monotonic() < end:
        listed = {t["name"]: t for t in client.request("tools/list")["result"]["tools"]}
        if set(names) <= set(listed):
            return listed
        time.sleep(0.2)
    raise AssertionError("tools never listed: %s" % names)


def test_a_2025_11_25_host_runs_sample_as_a_task_through_the_bridge(line_client):
    client = line_client("--sim")
    caps = client.initialize()["capabilities"]
    # "Servers and clients that support task-augmented requests MUST declare a tasks
    # capability during initialization."
    assert caps["tasks"]["requests"] == {"tools": {"call": {}}}
    tools = wait_tools(client, ["sample"])
    assert tools["sample"]["execution"] == {"taskSupport": "optional"}
    created = call(client, "sample", task={"ttl": 60000})["result"]["task"]
    assert created["status"] == "working"
    tid = created["taskId"]
    sent = time.monotonic()
    assert client.request("ping")["result"] == {}
    temp = client.request("tools/call", {"name": "read_temperature", "arguments": {}})
    print("through the bridge: ping + read_temperature answered in %.1f ms while sample ran"
          % ((time.monotonic() - sent) * 1000))
    assert "celsius" in temp["result"]["structuredContent"]
    assert client.request("tasks/get", {"taskId": tid})["result"]["status"] == "working"
    listed = client.request("tasks/list")["result"]["tasks"]
    assert [t["taskId"] for t in listed] == [tid]
    fetched = client.request("tasks/result", {"taskId": tid}, timeout=10)["result"]
    assert fetched["_meta"][RELATED] == {"taskId": tid}
    assert fetched["structuredContent"]["count"] == 4
    status = [n["params"] for n in client.notes if n["method"] == "notifications/tasks/status"]
    assert [s["status"] for s in status] == ["completed"] and status[0]["taskId"] == tid
    assert client.request("tasks/get", {"taskId": "nope"})["error"]["code"] == -32602
    # "Receivers MUST reject cancellation requests for tasks already in a terminal status ...
    # with error code -32602 (Invalid params)."
    assert client.request("tasks/cancel", {"taskId": tid})["error"]["code"] == -32602


def test_a_task_on_one_of_several_boards_is_relayed_to_that_board(line_client):
    client = line_client("--sim", "a=sim", "--sim", "b=sim")
    caps = client.initialize()["capabilities"]
    assert caps["tasks"]["requests"] == {"tools": {"call": {}}}
    wait_tools(client, ["a_sample", "b_sample"])
    on_b = call(client, "b_sample", task={})["result"]["task"]["taskId"]
    cancelled = client.request("tasks/cancel", {"taskId": on_b})["result"]
    assert cancelled["status"] == "cancelled"
    assert client.request("tasks/get", {"taskId": on_b})["result"]["status"] == "cancelled"
    on_a = call(client, "a_sample", task={})["result"]["task"]["taskId"]
    fetched = client.request("tasks/result", {"taskId": on_a}, timeout=10)["result"]
    assert fetched["structuredContent"]["count"] == 4


def test_a_host_without_tasks_gets_a_plain_result(line_client):
    client = line_client("--sim")
    client.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                  "clientInfo": {"name": "old", "version": "0"}})
    client.notify("notifications/initialized")
    assert "execution" not in wait_tools(client, ["sample"])["sample"]
    # "Receivers that do not declare the task capability for a request type MUST process
    # requests of that type normally, ignoring any task-augmentation metadata if present."
    plain = call(client, "sample", task={})["result"]
    assert plain["structuredContent"]["count"] == 4 and "task" not in plain
    assert client.request("tasks/list")["error"]["code"] == -32601


def modern(params, extension=True):
    params = dict(params)
    params["_meta"] = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                       "io.modelcontextprotocol/clientCapabilities":
                           {"extensions": {EXTENSION: {}}} if extension else {}}
    return params


def test_a_2026_07_28_host_gets_the_tasks_extension_through_the_bridge(line_client):
    client = line_client("--sim")
    discovered = client.request("server/discover", modern({}))["result"]
    assert discovered["capabilities"]["extensions"] == {EXTENSION: {}}
    assert "tasks" not in discovered["capabilities"]
    end = time.monotonic() + 30
    while True:   # the bridge learns the board's tools (and how they run) once it is ready
        created = client.request("tools/call", modern({"name": "sample",
                                                       "arguments": SAMPLE}))["result"]
        if created["resultType"] == "task" or time.monotonic() > end:
            break
    # "Servers MUST set resultType to "task" when returning a CreateTaskResult"
    assert created["resultType"] == "task" and created["status"] == "working"
    assert "ttlMs" in created and "pollIntervalMs" in created
    tid = created["taskId"]
    while True:
        got = client.request("tasks/get", modern({"taskId": tid}))["result"]
        if got["status"] != "working":
            break
        time.sleep(0.2)
    # "If the status is completed, the server MUST return a Task object with status completed
    # and a result field containing the final result of the task."
    assert got["status"] == "completed" and got["resultType"] == "complete"
    assert got["result"]["structuredContent"]["count"] == 4
    # "Servers MUST return this error for non-declaring clients issuing tasks/get,
    # tasks/update, and tasks/cancel requests."
    assert client.request("tasks/get", modern({"taskId": tid}, extension=False))["error"][
        "code"] == -32021
    assert client.request("tasks/cancel", modern({"taskId": tid}))["result"][
        "resultType"] == "complete"
    # "A server MUST NOT return CreateTaskResult to a client that did not include the
    # extension capability on its request"
    plain = client.request("tools/call", modern({"name": "sample", "arguments": SAMPLE},
                                                extension=False), timeout=10)["result"]
    assert plain["resultType"] == "complete" and plain["structuredContent"]["count"] == 4


def test_one_hosts_task_does_not_exist_for_another_host(http_bridge):
    # Over Streamable HTTP, two hosts on one board: tasks/get, tasks/result, tasks/cancel and
    # tasks/list of host B never reach host A's task.
    from tests.bridge.test_http import open_session, post, sse_messages
    url, _bridge = http_bridge()
    a, b = open_session(url), open_session(url)

    def ask(sid, rid, method, params):
        headers = {"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        reply = post(url, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params},
                     **headers)
        return [m for m in sse_messages(reply) if m.get("id") == rid][0]

    created = ask(a, 1, "tools/call", {"name": "sample", "arguments": SAMPLE, "task": {}})
    tid = created["result"]["task"]["taskId"]
    for rid, method in enumerate(("tasks/get", "tasks/result", "tasks/cancel"), 2):
        assert ask(b, rid, method, {"taskId": tid})["error"]["code"] == -32602
    assert ask(b, 5, "tasks/list", {})["result"]["tasks"] == []
    assert [t["taskId"] for t in ask(a, 6, "tasks/list", {})["result"]["tasks"]] == [tid]
    fetched = ask(a, 7, "tasks/result", {"taskId": tid})["result"]
    assert fetched["structuredContent"]["count"] == 4


def test_a_plain_call_of_a_long_tool_outlasts_the_bridges_timeout(line_client):
    # --timeout bounds a board's answer; a tool that can run as a task may take longer.
    client = line_client("--sim", "--timeout", "1")
    client.initialize()
    wait_tools(client, ["sample"])
    plain = client.request("tools/call", {"name": "sample", "arguments": dict(
        SAMPLE, seconds=2)}, timeout=10)["result"]
    assert plain["structuredContent"]["count"] == 8


def test_a_task_that_asks_a_2025_11_25_host_fails_with_a_clear_error(line_client):
    # The bridge relays a board task's question only to a 2026-07-28 host (tasks/get shows it,
    # tests/bridge_modern/test_task_input_http.py); a handshake host's task that asks is
    # refused at the board, which fails the task with that error: nothing hangs.
    client = line_client("--sim", "conformance")
    reply = client.request("initialize", {"protocolVersion": "2025-11-25",
                                           "capabilities": {"elicitation": {}},
                                           "clientInfo": {"name": "pytest", "version": "0"}})
    assert "result" in reply, reply
    client.notify("notifications/initialized")
    wait_tools(client, ["confirm_delete"])
    created = client.request("tools/call", {"name": "confirm_delete", "arguments": {
        "filename": "x"}, "task": {}})["result"]["task"]
    fetched = client.request("tasks/result", {"taskId": created["taskId"]}, timeout=20)
    assert "2025-11-25 host" in fetched["error"]["message"], fetched
    got = client.request("tasks/get", {"taskId": created["taskId"]})["result"]
    assert got["status"] == "failed"
    assert client.request("ping")["result"] == {}
