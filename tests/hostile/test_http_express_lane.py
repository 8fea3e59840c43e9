# The HTTP front's express lane (guard.Connection, Guard.express, HttpFront.express,
# StreamableSession.express; express.py): a session's POST of one tools/call of a read-only tool,
# whole in one read, goes to its board (of several: the board's own tool name in it) as the host
# wrote it but for the id and the name, and its answer comes back in the bytes the general way
# writes. Everything the lane does not take is answered as before: hostile bodies, other
# sessions, wrong tokens, pipelined requests, bodies in pieces. A session that ends, a board that
# goes, a cancel, a slow answer: each call is answered once. The bridge says at its end how many
# calls took the lane (--log-level debug); without the lane it says nothing, and these fail.
import json
import re
import socket
import threading
import time

from tests.hostile.conftest import SLOW, HttpHost
from tests.hostile.test_express_lane import RESULT, verbatim
from tools.bench_support.mcp_http import complete

CALL = (b'{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s",'
        b'"arguments":{}}}')
# The same call as the general way takes it: a newline between its tokens (which no board line
# may hold, so the lane leaves it).
CALL_GENERAL = (b'{"jsonrpc":"2.0","id":%s,"method":"tools/call",\n"params":{"name":"%s",'
                b'"arguments":{}}}')


def posting(host, body):
    # host.post(body) in a thread of its own -> (the thread, the dict its "response" and
    # "messages" land in).
    got = {}
    thread = threading.Thread(target=lambda: got.update(
        zip(("response", "messages"), host.post(body))))
    thread.start()
    return thread, got


def holding(held):
    # Boards that leave the first tools/call unanswered (it lands in held), answer the rest.
    def on_request(board, msg):
        if msg["method"] != "tools/call":
            return False
        if held:
            return verbatim(board, msg)
        held.append(msg)
        return True
    return on_request


def fleet(fake_board, http_front, on_request=None, *args, headers=None):
    # Two boards a and b behind one bridge -> (board a, board b, url, bridge, an initialized
    # HttpHost).
    a = fake_board(on_request=on_request)
    b = fake_board(on_request=on_request)
    url, bridge = http_front("--port", "a=" + a.device, "--port", "b=" + b.device,
                             "--timeout", str(SLOW), "--log-level", "debug", *args)
    bridge.wait_stderr(r"board b ready")
    host = HttpHost(url, headers=headers)
    host.initialize()
    names = {t["name"] for t in host.request("tools/list")["result"]["tools"]}
    assert {"a_echo", "b_echo"} <= names, names
    return a, b, url, bridge, host


def lane_count(bridge):
    # How many calls the ended bridge says took the express lane (None: it says nothing).
    assert bridge.stop() == 0, bridge.stderr()
    found = re.search(r"http: (\d+) tools/call took the express lane", bridge.stderr())
    return int(found.group(1)) if found else None


def raw(url, host, body, more_headers=b""):
    # One POST on a connection of its own, every byte the test's -> the response's bytes.
    port = int(url.split(":")[2].split("/")[0])
    head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\n"
            b"Mcp-Protocol-Version: 2025-11-25\r\n" % (port, host.sid.encode()))
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(head + more_headers + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return read_response(sock)


def read_response(sock, data=b""):
    while complete(data) is None:
        chunk = sock.recv(65536)
        assert chunk, data
        data += chunk
    return data


def shape(response):
    # A response as it reads, with what differs from one request to the next made alike (the
    # date, the event ids, the length they make) -> (its head, its body, chunked or not).
    status, headers, body, used = complete(response)
    assert used == len(response)
    head = response[:response.index(b"\r\n\r\n")]
    if "content-length" in headers:
        assert int(headers["content-length"]) == len(body)
    head = re.sub(rb"(date|content-length): [^\r]*", rb"\1: X", head)
    return head, re.sub(rb"(^|\n)id: \d+\r", rb"\1id: N\r", body)


def test_the_lane_writes_the_bytes_the_general_way_writes(fake_board, http_front):
    a, b, url, bridge, host = fleet(fake_board, http_front, verbatim)
    lane = raw(url, host, CALL % (b"7", b"b_echo"))
    general = raw(url, host, CALL_GENERAL % (b"7", b"b_echo"))
    assert lane.endswith(b'data: {"jsonrpc":"2.0","id":7,"result":' + RESULT + b"}\r\n\r\n")
    assert shape(lane) == shape(general)
    # Board b got the host's bytes but for the id (the bridge's) and its own tool name.
    sent = [line for line in b.lines if b'"tools/call"' in line][0]
    bid = json.loads(sent)["id"]
    assert sent == CALL % (b"%d" % bid, b"echo")
    assert not [line for line in a.lines if b'"tools/call"' in line]
    assert lane_count(bridge) == 1


def test_hostile_ids_and_bodies_get_the_answers_they_got_before(fake_board, http_front):
    a, b, url, bridge, host = fleet(fake_board, http_front, verbatim)
    # Ids the lane takes, each answered with its own id, its own type.
    for rid in ['a"b\\c', "\u00e9", "", "1", 0, -5, 2 ** 70]:
        response, messages = host.post(CALL % (json.dumps(rid).encode(), b"a_echo"))
        assert response.status_code == 200
        assert [m["id"] for m in messages] == [rid] and type(messages[0]["id"]) is type(rid)
        assert messages[0]["result"]["structuredContent"] == {"v": 1.5, "w": 100.0}
    taken = 6   # "\u00e9" is written \u00e9: a \u escape could spell a key (wire.routable)
    # What the general way refuses, refused as it was.
    for body, status in ((CALL % (b"1.5", b"a_echo"), 400), (CALL % (b"true", b"a_echo"), 400),
                         (CALL % (b"[1]", b"a_echo"), 400), (b'{"jsonrpc":"2.0",', 400),
                         (CALL % (b"8", b"a_echo") + b"]", 400),
                         ((CALL % (b"8", b"a_echo"))[:-2] + b',"x":' + b"1" * (1 << 20) + b"}}",
                          413)):
        response, messages = host.post(body)
        assert response.status_code == status, (body[:80], response.text[:300])
        assert "error" in messages[0]
    # A tool of no board; one its board does not list (the board says what it says): the
    # general way.
    response, messages = host.post(CALL % (b"9", b"c_echo"))
    assert response.status_code == 200 and "error" in messages[0]
    response, messages = host.post(CALL % (b"9", b"a_nothing"))
    assert response.status_code == 200 and "result" in messages[0]
    # Headers the general way refuses; a session of nobody's.
    for headers, status in (({"accept": "application/json"}, 406),
                            ({"content-type": "text/plain"}, 415),
                            ({"mcp-session-id": "0" * 32}, 404),
                            ({"mcp-protocol-version": "1999-01-01"}, 400),
                            ({"host": "evil.example"}, 421),
                            ({"origin": "http://evil.example"}, 403)):
        response, messages = host.post(CALL % (b"10", b"a_echo"), **headers)
        assert response.status_code == status, (headers, response.text[:300])
    response, _ = HttpHost(url).post(CALL % (b"11", b"a_echo"))   # no session
    assert response.status_code == 400
    assert lane_count(bridge) == taken


def test_a_duplicate_id_in_flight_is_refused_and_the_first_answered(fake_board, http_front):
    held = []
    a, b, url, bridge, host = fleet(fake_board, http_front, holding(held))
    thread, first = posting(host, CALL % (b"5", b"a_echo"))
    a.wait_for(lambda: held)
    response, messages = host.post(CALL % (b"5", b"a_echo"))
    assert response.status_code == 400 and "in use" in messages[0]["error"]["message"]
    verbatim(a, held[0])
    thread.join(30)
    assert [m["id"] for m in first["messages"]] == [5] and "result" in first["messages"][0]
    assert lane_count(bridge) == 1


def test_a_cancelled_call_is_answered_once_and_the_board_told(fake_board, http_front):
    held = []
    a, b, url, bridge, host = fleet(fake_board, http_front, holding(held))
    thread, got = posting(host, CALL % (b"3", b"b_echo"))
    b.wait_for(lambda: held)
    response, _ = host.post({"jsonrpc": "2.0", "method": "notifications/cancelled",
                             "params": {"requestId": 3}})
    assert response.status_code == 202
    thread.join(30)
    assert got["response"].status_code == 200
    assert [m.get("error", {}).get("code") for m in got["messages"]] == [-32800]
    b.wait_for(lambda: [m for m in b.received("notifications/cancelled")
                        if m["params"]["requestId"] == held[0]["id"]])
    verbatim(b, held[0])   # too late: nobody gets it
    assert "result" in host.request("tools/call", {"name": "a_echo", "arguments": {}})
    assert lane_count(bridge) == 2


def test_a_session_deleted_with_a_call_in_flight_ends_its_stream(fake_board, http_front):
    held = []
    a, b, url, bridge, host = fleet(fake_board, http_front, holding(held))
    thread, got = posting(host, CALL % (b"4", b"a_echo"))
    a.wait_for(lambda: held)
    response = HttpHost.http.delete(url, headers={"mcp-session-id": host.sid})
    assert response.status_code == 200
    thread.join(30)
    assert got["response"].status_code == 200 and got["messages"] == []
    verbatim(a, held[0])
    other = HttpHost(url)
    other.initialize()
    assert "result" in other.request("tools/call", {"name": "a_echo", "arguments": {}})
    assert lane_count(bridge) == 2


def test_a_board_gone_with_a_call_in_flight_answers_it_with_an_error(fake_board, http_front):
    held = []
    a, b, url, bridge, host = fleet(fake_board, http_front, lambda board, msg: msg[
        "method"] == "tools/call" and not held.append(msg), "--timeout", "2")
    thread, got = posting(host, CALL % (b"6", b"a_echo"))
    a.wait_for(lambda: held)
    a.close()   # its port is gone: the call ends when the bridge gives up on it
    thread.join(30)
    assert not thread.is_alive()
    assert [m["id"] for m in got["messages"]] == [6] and "error" in got["messages"][0]
    assert lane_count(bridge) == 1


def test_a_slow_answer_and_what_the_board_logs_meanwhile_reach_the_host(fake_board, http_front):
    def slow(board, msg):
        if msg["method"] != "tools/call":
            return False

        def later():
            board.send({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": "warning", "data": "warming up"}})
            time.sleep(1.0)   # past HEAD_SECONDS: the headers went out alone
            verbatim(board, msg)
        board.later(later)
        return True
    a, b, url, bridge, host = fleet(fake_board, http_front, slow)
    lane = raw(url, host, CALL % (b"12", b"a_echo"))
    general = raw(url, host, CALL_GENERAL % (b"12", b"a_echo"))
    assert b"transfer-encoding: chunked" in lane
    for response in (lane, general):
        body = complete(response)[2]
        assert body.index(b"warming up") < body.index(b'"id":12,"result":' + RESULT)
    assert shape(lane) == shape(general)
    assert lane_count(bridge) == 1


def test_pipelined_and_split_requests_are_each_answered_in_order(fake_board, http_front):
    a, b, url, bridge, host = fleet(fake_board, http_front, verbatim)
    port = int(url.split(":")[2].split("/")[0])
    head = (b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nMcp-Session-Id: %s\r\n"
            % (port, host.sid.encode()))

    def request(rid):
        body = CALL % (b"%d" % rid, b"a_echo")
        return head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(request(1) + request(2))   # the second waits for the first's answer
        first = read_response(sock)
        used = complete(first)[3]
        second = read_response(sock, first[used:])
        for response, rid in ((first[:used], 1), (second, 2)):
            assert b'"id":%d,"result":' % rid + RESULT in response
        # Its head, then its body (as httpx writes them): held for that one more read.
        whole = request(3)
        at = whole.index(b"\r\n\r\n") + 4
        sock.sendall(whole[:at])
        time.sleep(0.2)
        sock.sendall(whole[at:])
        assert b'"id":3,"result":' + RESULT in read_response(sock)
        # Its body in two more reads: the general way reads it.
        whole = request(4)
        for piece in (whole[:at], whole[at:-10], whole[-10:]):
            sock.sendall(piece)
            time.sleep(0.2)
        assert b'"id":4,"result":' + RESULT in read_response(sock)
    assert lane_count(bridge) == 2


def test_a_token_is_checked_as_before(fake_board, http_front):
    a, b, url, bridge, host = fleet(fake_board, http_front, verbatim, "--token", "s3cret",
                                    headers={"authorization": "Bearer s3cret"})
    response, messages = host.post(CALL % (b"1", b"a_echo"))
    assert response.status_code == 200 and messages[0]["id"] == 1
    for token in ("Bearer s3cre", "Bearer s3cret2", "Basic s3cret", ""):
        other = HttpHost(url, headers={"authorization": token} if token else None)
        other.sid = host.sid
        response, _ = other.post(CALL % (b"2", b"a_echo"))
        assert response.status_code == 401, token
    assert lane_count(bridge) == 1
