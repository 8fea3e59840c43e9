# Hostile hosts against a handshake-era session's own transport (tinymcp/host/bridge/streamable.py):
# garbage in a POST, headers too big, a stream resumed from a foreign or malformed Last-Event-ID,
# another client's DELETE. Each gets a clear answer, and the session keeps working.
import re

import httpx2 as httpx
import pytest

from tests.hostile.conftest import HttpHost, sse_messages
from tests.hostile.test_http_clients import HostAt

TESTBOARD = "tests/bridge/testboard.py"
CALL = {"name": "read_adc", "arguments": {"channel": 1}}


@pytest.fixture
def bridge(http_front):
    return http_front("--sim", TESTBOARD)


def jsonrpc_error(response):
    # -> the JSON-RPC error object a refusal carries (the body is one JSON-RPC error).
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "error" in body, body
    return body["error"]


def test_garbage_in_a_sessions_post_is_refused_and_the_session_lives(bridge):
    url, _proc = bridge
    host = HttpHost(url)
    host.initialize()
    response, _ = host.post(b"{not json")
    assert response.status_code == 400 and jsonrpc_error(response)["code"] == -32700
    for body in (b'"x"', b"7", b'{"foo": 1}', b'{"jsonrpc": "1.0", "id": 1, "method": "ping"}',
                 b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
                 b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
                 b'{"jsonrpc": "2.0", "id": 2, "method": 5}',
                 b'{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": [1]}',
                 b'{"jsonrpc": "2.0", "id": 4, "result": 5}',
                 b'{"jsonrpc": "2.0", "id": 4, "error": {"code": "x"}}',
                 b'{"jsonrpc": "2.0", "id": 4}'):
        response, _ = host.post(body)
        assert response.status_code == 400, (body, response.status_code)
        error = jsonrpc_error(response)
        assert error["code"] == -32600 and error["message"].startswith("Invalid Request"), error
        assert response.json()["id"] in (None, 1, 2, 3, 4)
    # The headers the transport checks: what the client takes, what it sends, how.
    ping = {"jsonrpc": "2.0", "id": 9, "method": "ping"}
    response, _ = host.post(ping, accept="application/json")
    assert response.status_code == 406 and jsonrpc_error(response)
    response, _ = host.post(ping, **{"content-type": "text/plain"})
    assert response.status_code == 415 and jsonrpc_error(response)
    put = httpx.put(url, content=b"{}", headers=dict(host.headers, **{
        "mcp-session-id": host.sid}), timeout=30)
    assert put.status_code == 405 and set(put.headers["allow"].split(", ")) == {
        "GET", "POST", "DELETE"}
    assert host.request("ping")["result"] == {}
    assert "result" in host.request("tools/call", CALL)


def test_headers_past_the_limit_and_a_huge_session_id_are_refused(bridge):
    url, _proc = bridge
    host = HttpHost(url)
    host.initialize()
    response, _ = host.post({"jsonrpc": "2.0", "id": 1, "method": "ping"},
                            **{"x-padding": "p" * (20 << 10)})
    assert response.status_code == 431
    response, _ = host.post({"jsonrpc": "2.0", "id": 2, "method": "ping"},
                            **{"mcp-session-id": "s" * (8 << 10)})
    assert response.status_code == 404 and jsonrpc_error(response)
    assert host.request("ping")["result"] == {}


def event_ids(text):
    # -> the SSE event ids of a stream's text, in order, and whether each had data.
    return [(int(m.group(1)), m.group(2).strip() != "")
            for m in re.finditer(r"id: (\d+)\r?\n(?:event: message\r?\n)?data: ?([^\r\n]*)", text)]


def resume(host, last, timeout=30):
    return httpx.get(host.url, headers=dict(host.headers, **{
        "accept": "text/event-stream", "mcp-session-id": host.sid,
        "mcp-protocol-version": host.version, "last-event-id": last}), timeout=timeout)


def test_a_stream_resumes_from_its_own_events_only(bridge):
    url, _proc = bridge
    host = HttpHost(url)
    host.initialize()
    response, messages = host.post({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                                    "params": CALL})
    ids = event_ids(response.text)
    assert ids[0][1] is False, response.text   # SEP-1699: it starts with a priming event
    assert "retry: 1000" in response.text
    priming = ids[0][0]
    # The client lost the stream after its priming event: its resume replays the answer, and
    # ends (the answer ends that stream).
    again = resume(host, str(priming))
    assert again.status_code == 200, again.text
    assert sse_messages(again.text) == messages
    # Malformed, or naming no event this session keeps (another session's, or far ahead): a
    # clear refusal, and nothing of any other session.
    other = HttpHost(url)
    other.initialize()
    other.request("tools/call", CALL)
    for last in ("abc", "-1", "1" * 40, "99999999", "1e3"):
        refused = resume(host, last)
        assert refused.status_code == 400, (last, refused.status_code, refused.text)
        assert "Last-Event-ID" in jsonrpc_error(refused)["message"]
    # A 2025-06-18 session's streams carry no priming event (its client cannot read one).
    old = HttpHost(url, version="2025-06-18")
    old.initialize()
    response, _ = old.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert all(has_data for _id, has_data in event_ids(response.text)), response.text
    assert host.request("ping")["result"] == {} and other.request("ping")["result"] == {}


def test_another_client_can_neither_end_nor_use_a_session(bridge):
    url, _proc = bridge
    host = HttpHost(url)
    host.initialize()
    intruder = HostAt(url, "127.0.0.2")
    intruder.initialize()
    headers = dict(intruder.headers, **{"mcp-session-id": host.sid,
                                        "mcp-protocol-version": host.version})
    deleted = intruder.http.delete(url, headers=headers, timeout=30)
    assert deleted.status_code == 404 and jsonrpc_error(deleted)
    got = intruder.http.get(url, headers=dict(headers, accept="text/event-stream"), timeout=30)
    assert got.status_code == 404
    posted = intruder.http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                headers=headers, timeout=30)
    assert posted.status_code == 404
    assert "result" in host.request("tools/call", CALL)
    # Its owner ends it: then it is gone for its owner too.
    mine = dict(host.headers, **{"mcp-session-id": host.sid})
    assert httpx.delete(url, headers=mine, timeout=30).status_code == 200
    response, _ = host.post({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert response.status_code == 404
    assert intruder.request("ping")["result"] == {}


def test_one_get_stream_per_session(bridge):
    url, _proc = bridge
    host = HttpHost(url)
    host.initialize()
    headers = dict(host.headers, **{"accept": "text/event-stream", "mcp-session-id": host.sid,
                                    "mcp-protocol-version": host.version})
    with httpx.stream("GET", url, headers=headers, timeout=30) as first:
        assert first.status_code == 200
        assert first.headers["content-type"].startswith("text/event-stream")
        second = httpx.get(url, headers=headers, timeout=30)
        assert second.status_code == 409 and jsonrpc_error(second)
    assert host.request("ping")["result"] == {}


def test_a_session_idle_past_its_time_is_closed_and_a_busy_one_is_not(monkeypatch):
    # In process, with the idle time cut to a moment: the session nobody uses is closed (its
    # host session with it) and forgotten; the one serving a request (an open GET stream is
    # one) stays.
    import asyncio

    from tinymcp.host.bridge import http as front_module
    from tinymcp.host.bridge.streamable import StreamableSession
    monkeypatch.setattr(front_module, "IDLE_SECONDS", 0.2)

    class QuietHost:   # a host session nobody asks anything
        version = None
        batched = {}
        closed = False

        def close(self):
            self.closed = True

    class QuietHosts:
        router = None   # no boards: the sessions' express lanes route nothing

        def open_session(self, send, label, unanswered=None):
            return QuietHost()

    async def main():
        front = front_module.HttpFront(QuietHosts())
        async with front.lifespan(None):
            sessions = {}
            for sid in ("idle", "busy"):
                sessions[sid] = front.sessions[sid] = StreamableSession(sid, front.hosts,
                                                                        front._ended)
                front.used[sid] = front_module.loop_time()
            front.busy["busy"] += 1
            await asyncio.sleep(1.0)
            left = set(front.sessions)
        return sessions, left
    sessions, left = asyncio.run(main())
    assert left == {"busy"}
    assert sessions["idle"].ended and sessions["idle"].host.closed
    assert sessions["busy"].ended   # by the front's own end (close_all), not before
