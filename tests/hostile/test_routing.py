# Two hosts on one board: what the board says while running host A's call (its requests to the
# client, its log lines) reaches host A only; what it asks when no call of a host runs, or after
# the call it belongs to has ended, reaches nobody and is refused at once.
import time

import pytest

from tests.hostile.conftest import HttpHost

SAMPLING = {"sampling": {}}
SECRET = "the secret of host A"


def asking(rid, method="sampling/createMessage"):
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {
        "messages": [{"role": "user", "content": {"type": "text", "text": SECRET}}],
        "maxTokens": 5}}


def script(board, msg):
    # The board's tools: each misbehaves in its own way.
    if msg["method"] != "tools/call":
        return False
    name, rid = msg["params"]["name"], msg["id"]
    if name == "log_call":
        board.send({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "warning", "data": SECRET}})
        board.answer(msg, {"content": []})
    elif name == "late_ask":   # asks only after the bridge gave up on the call
        def ask_when_cancelled():
            board.wait_for(lambda: [m for m in board.received("notifications/cancelled")
                                    if m["params"]["requestId"] == rid], 30, "the cancel")
            board.send(asking("late"))
        board.later(ask_when_cancelled)
    elif name == "idle_ask":   # answers, then asks with nothing running
        board.answer(msg, {"content": []})
        board.send(asking("idle"))
    elif name == "odd_ask":    # asks something no host is ever asked, while running
        board.send(asking("odd", "tinymcp/secrets"))

        def finish():
            board.wait_for(lambda: board.answer_to("odd"), 30, "the bridge's answer")
            board.answer(msg, {"content": []})
        board.later(finish)
    else:
        return False
    return True


@pytest.fixture
def two_hosts(fake_board, http_front):
    board = fake_board(on_request=script)
    url, bridge = http_front("--port", board.device, "--timeout", "2")
    b = HttpHost(url, SAMPLING)   # B first: the bridge used to pick the first host it knew
    b.initialize()
    b.listen()
    a = HttpHost(url, SAMPLING)
    a.initialize()
    return board, a, b


def heard_secret(host):
    return [m for m in host.heard() if SECRET in str(m)]


def test_a_log_of_host_as_call_goes_to_host_a_only(two_hosts):
    board, a, b = two_hosts
    assert "result" in a.request("tools/call", {"name": "log_call", "arguments": {}})
    assert [m["params"]["data"] for m in a.related] == [SECRET]
    time.sleep(0.5)
    assert heard_secret(b) == []


def test_a_board_request_for_a_call_that_timed_out_reaches_nobody(two_hosts):
    board, a, b = two_hosts
    reply = a.request("tools/call", {"name": "late_ask", "arguments": {}})
    assert reply["error"]["data"]["bridge"] == "timeout"
    refusal = board.wait_for(lambda: board.answer_to("late"), 10, "an answer to the late ask")
    assert refusal["error"]["code"] == -32601, refusal
    time.sleep(0.5)
    assert heard_secret(b) == [] and heard_secret(a) == []


def test_a_board_request_while_no_call_runs_reaches_nobody(two_hosts):
    board, a, b = two_hosts
    assert "result" in a.request("tools/call", {"name": "idle_ask", "arguments": {}})
    refusal = board.wait_for(lambda: board.answer_to("idle"), 10, "an answer to the idle ask")
    assert refusal["error"]["code"] == -32601
    time.sleep(0.5)
    assert heard_secret(b) == []


def test_a_board_request_no_host_is_ever_asked_is_refused_at_once(two_hosts):
    board, a, b = two_hosts
    reply = a.request("tools/call", {"name": "odd_ask", "arguments": {}}, timeout=20)
    assert "result" in reply, reply   # answered before the bridge's --timeout of 2 s
    assert board.answer_to("odd")["error"]["code"] == -32601
    assert heard_secret(a) == [] and heard_secret(b) == []
