# 2026-07-28 tasks over the bridge's HTTP face, by hand: each POST a request of its own, as the
# holder of a bearer token (tests/bridge_modern, tests/oauth).
import time

import httpx2 as httpx

MODERN = "2026-07-28"
P = "io.modelcontextprotocol/"
TASKS = {"extensions": {"io.modelcontextprotocol/tasks": {}}}


def task_post(url, method, params, token=None, rid=1, caps=None):
    # One 2026-07-28 POST declaring the tasks extension (and caps), as the holder of token
    # (None: none).
    h = {"accept": "application/json, text/event-stream", "content-type": "application/json",
         "mcp-protocol-version": MODERN, "mcp-method": method}
    if "name" in params:
        h["mcp-name"] = params["name"]
    if token is not None:
        h["authorization"] = "Bearer " + token
    declared = dict(caps or {}, **TASKS)
    params = dict(params, _meta={P + "protocolVersion": MODERN, P + "clientCapabilities": declared})
    body = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    return httpx.post(url, json=body, headers=h, timeout=30).json()


def start_sample(url, token, seconds):
    started = task_post(url, "tools/call", {"name": "sample", "arguments": {
        "quantity": "temperature", "seconds": seconds, "every_ms": 100}}, token)
    assert started["result"]["resultType"] == "task", started
    return started["result"]["taskId"]


def polled(url, tid, token, status):
    # tasks/get until the task is in status (the board bounds how long that takes).
    for _ in range(240):
        got = task_post(url, "tasks/get", {"taskId": tid}, token)
        assert "result" in got, got
        if got["result"]["status"] == status:
            return got["result"]
        time.sleep(0.25)
    raise AssertionError("task %s never %s: %r" % (tid, status, got))


def refused_to(url, tid, token):
    # Another principal's task is as good as missing: the same answers as for no task at all.
    for method, params in (("tasks/get", {"taskId": tid}), ("tasks/cancel", {"taskId": tid}),
                           ("tasks/update", {"taskId": tid, "inputResponses": {}})):
        got = task_post(url, method, params, token)
        missing = task_post(url, method, dict(params, taskId="no-such-task"), token)
        assert "error" in got and got["error"] == missing["error"], (method, got, missing)
        assert "not found" in got["error"]["message"].lower(), got
