# The relay's express lane (tinymcp/host/bridge/express.py): a stdio host's tools/call of a
# read-only tool on the one board, and the board's result back, each as it came but for its id.
# Hostile ids, lines split or joined by the pipe, answers the host never asked for, a board
# that dies mid-answer, a host that stops reading, a call that times out or is cancelled: each
# is answered exactly once, with the host's own id, and the session goes on. Each test runs on
# POSIX (where the lane is open) and under the Windows shim (where stdin is read by a thread
# and the general way serves every call): the answers must be the same.
import asyncio
import json
import os
import re
import threading
import time

from tests.hostile.conftest import SLOW
from tests.hostile.fakeboard import TOOLS
from tests.windows_shim import as_on_windows  # noqa: F401  (POSIX, Windows)

HOSTILE_IDS = ['a"b\\c', "\u00e9\U0001f600", "", "1", "id", '"id":1', "\\u0069d", "\n\t/",
               0, -5, 7, 2 ** 70, -(2 ** 64) - 1, "x" * 300]
# A board line whose result holds what a host must get byte for byte (numbers as the board
# wrote them, escapes, non-ASCII text).
RESULT = (b'{"content":[{"type":"text","text":"a\\"b \xc3\xa9\xf0\x9f\x98\x80"}],'
          b'"structuredContent":{"v":1.50,"w":1E2}}')


def call(rid, name="echo", arguments=b"{}"):
    return (b'{"jsonrpc":"2.0","id":' + json.dumps(rid, ensure_ascii=False).encode()
            + b',"method":"tools/call","params":{"name":"' + name.encode()
            + b'","arguments":' + arguments + b'}}\n')


def verbatim(board, msg):
    # A FakeBoard's tools/call, answered with RESULT's bytes under the board's id.
    if msg["method"] != "tools/call":
        return False
    board.write(b'{"jsonrpc":"2.0","id":%d,"result":' % msg["id"] + RESULT + b"}\n")
    return True


def lane_count(host):
    # How many calls the ended bridge says took the express lane (None: no lane, Windows).
    host.close()
    found = re.search(r"(\d+) tools/call took the express lane", host.stderr())
    return int(found.group(1)) if found else None


def expect_lane(host, calls, as_on_windows):
    assert lane_count(host) == (None if as_on_windows else calls), host.stderr()


def bridge(fake_board, stdio_bridge, on_request=None, *args):
    board = fake_board(on_request=on_request)
    host = stdio_bridge(board.device, "--timeout", str(SLOW), "--log-level", "debug", *args)
    host.initialize()
    return board, host


def test_hostile_ids_get_the_boards_bytes_with_their_own_id(fake_board, stdio_bridge,
                                                           as_on_windows):
    board, host = bridge(fake_board, stdio_bridge, verbatim)
    host.write(b"".join(call(rid) for rid in HOSTILE_IDS))   # all in flight, one write
    got = {}
    for _ in HOSTILE_IDS:
        line = host.line(timeout=20)
        rid = json.loads(line)["id"]
        key = json.dumps(rid)
        assert key not in got, "two answers for %r" % (rid,)
        got[key] = line
    for rid in HOSTILE_IDS:
        line = got[json.dumps(rid)]
        # The board's bytes (1.50, 1E2, its escapes), under the host's id, with its own type.
        assert line.endswith(b',"result":' + RESULT + b"}"), line
        assert json.loads(line)["id"] == rid and type(json.loads(line)["id"]) is type(rid)
    assert host.noise == []
    # The id "\\u0069d" makes a line that could read otherwise (wire.routable): it takes the
    # general way. "id" is the id where the usual shape has it (wire.tools_call): the lane's.
    expect_lane(host, len(HOSTILE_IDS) - 1, as_on_windows)


def test_lines_split_and_joined_by_the_pipe_are_each_answered_once(fake_board, stdio_bridge,
                                                                  as_on_windows):
    board, host = bridge(fake_board, stdio_bridge)
    lines = b"".join(call(n, arguments=b'{"n":%d}' % n) for n in range(1, 41))
    # Pieces of every size, cut anywhere: inside an id, inside a key, between \r and \n.
    at = 0
    for size in (1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233) * 20:
        if at >= len(lines):
            break
        host.write(lines[at:at + size])
        at += size
        time.sleep(0.002)
    host.write(lines[at:])
    seen = {}
    for _ in range(40):
        msg = json.loads(host.line(timeout=20))
        assert msg["id"] not in seen
        seen[msg["id"]] = msg["result"]["structuredContent"]["n"]
    assert seen == {n: n for n in range(1, 41)}
    expect_lane(host, 40, as_on_windows)


def test_a_last_call_without_its_newline_is_answered_before_the_bridge_ends(fake_board,
                                                                           stdio_bridge,
                                                                           as_on_windows):
    board, host = bridge(fake_board, stdio_bridge, verbatim)
    host.write(call(9)[:-1])
    host.proc.stdin.close()
    line = host.line(timeout=20)
    assert line == b'{"jsonrpc":"2.0","id":9,"result":' + RESULT + b"}"
    assert host.proc.wait(20) == 0
    expect_lane(host, 1, as_on_windows)


def test_answers_the_host_never_asked_for_reach_it_not(fake_board, stdio_bridge, as_on_windows):
    def twice(board, msg):
        # The answer, then the same answer again, then one for an id never sent, then an
        # answer whose id is no id: only the first is the host's.
        if msg["method"] != "tools/call":
            return False
        for rid in (msg["id"], msg["id"], msg["id"] + 1000, [msg["id"]], True):
            board.write(b'{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}\n'
                        % json.dumps(rid).encode())
        return True
    board, host = bridge(fake_board, stdio_bridge, twice)
    for rid in ("a", 1, "b"):
        host.write(call(rid))
        assert json.loads(host.line(timeout=20)) == {"jsonrpc": "2.0", "id": rid,
                                                     "result": {"content": []}}
    assert host.request("ping", timeout=20)["result"] == {}
    time.sleep(0.3)
    host.write(call("c"))
    assert json.loads(host.line(timeout=20))["id"] == "c"   # nothing extra came before it
    expect_lane(host, 4, as_on_windows)


def test_answers_the_lane_does_not_pass_as_they_came_are_answered_the_general_way(
        fake_board, stdio_bridge, as_on_windows):
    answers = {
        "error": b'{"jsonrpc":"2.0","id":%d,"error":{"code":-32602,"message":"no"}}',
        "order": b'{"id":%d,"jsonrpc":"2.0","result":{"content":[],"k":1}}',
        "task": b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],"task":1}}',
        "escape": b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],"\\u006b":1}}',
        "malformed": b'{"jsonrpc":"2.0","id":%d,"result":[1]}',
    }

    def kinds(board, msg):
        if msg["method"] != "tools/call":
            return False
        board.write(answers[msg["params"]["arguments"]["kind"]] % msg["id"] + b"\n")
        return True
    board, host = bridge(fake_board, stdio_bridge, kinds)
    for n, kind in enumerate(sorted(answers)):
        host.write(call(n, arguments=b'{"kind":"%s"}' % kind.encode()))
        msg = json.loads(host.line(timeout=20))
        assert msg["id"] == n, msg
        if kind == "error":
            assert msg["error"] == {"code": -32602, "message": "no"}
        elif kind == "malformed":
            assert msg["error"]["code"] == -32603 and "malformed" in msg["error"]["message"]
        elif kind == "task":
            assert msg["result"] == {"content": [], "task": 1}
        else:
            assert msg["result"] == {"content": [], "k": 1}, msg
    expect_lane(host, len(answers), as_on_windows)


def test_calls_the_lane_leaves_to_the_general_way_are_served_there(fake_board, stdio_bridge,
                                                                   as_on_windows):
    tools = TOOLS + [{"name": "switch", "inputSchema": {"type": "object"}}]   # not read-only

    def serve(board, msg):
        if msg["method"] == "tools/list":
            board.answer(msg, {"tools": tools})
            return True
        if msg["method"] == "tools/call":
            if type(msg["params"]["name"]) is not str:   # as a board's server refuses it
                board.answer(msg, error={"code": -32602, "message": "name must be a string"})
                return True
            board.answer(msg, {"content": [], "structuredContent": msg["params"]})
            return True
        return False
    board, host = bridge(fake_board, stdio_bridge, serve)
    # Not read-only: the board is told whose call it is (an owner in _meta).
    got = host.request("tools/call", {"name": "switch", "arguments": {}}, timeout=20)
    assert "io.tinymcp/owner" in got["result"]["structuredContent"]["_meta"], got
    # A progress token: the board sees the bridge's, not the host's.
    got = host.request("tools/call", {"name": "echo", "arguments": {},
                                      "_meta": {"progressToken": "mine"}}, timeout=20)
    assert got["result"]["structuredContent"]["_meta"]["progressToken"] != "mine"
    # A name that is no string, params with a key of their own: answered the general way
    # (a name that is no string, with the board's error: the bridge passes it on).
    for params in ({"name": ["echo"], "arguments": {}}, {"name": {"echo": 1}},
                   {"name": "echo", "arguments": {}, "x": 1}):
        got = host.request("tools/call", params, timeout=20)
        assert ("result" in got) == (type(params["name"]) is str), got
    # A duplicate id while the first is in flight: refused, the first still answered.
    slow = threading.Event()

    def held(board, msg):
        if msg["method"] == "tools/call" and msg["params"]["name"] == "echo":
            board.later(lambda: (slow.wait(20), board.answer(msg, {"content": []})))
            return True
        return serve(board, msg)
    board.on_request = held
    host.write(call("dup") + call("dup"))
    refused = json.loads(host.line(timeout=20))
    assert refused["id"] == "dup" and refused["error"]["code"] == -32600
    slow.set()
    assert json.loads(host.line(timeout=20)) == {"jsonrpc": "2.0", "id": "dup",
                                                 "result": {"content": []}}
    # The lane's: params with a key of their own (the board reads them as they came), "dup".
    expect_lane(host, 2, as_on_windows)


def test_a_call_the_board_never_answers_times_out_on_time_beside_answered_ones(
        fake_board, stdio_bridge, line_client, as_on_windows):
    def silent_first(board, msg):
        if msg["method"] == "tools/call" and msg["params"]["arguments"].get("silent"):
            return True   # never answered
        return False
    board = fake_board(on_request=silent_first)
    host = stdio_bridge(board.device, "--timeout", "1.5", "--log-level", "debug")
    host.initialize()
    start = time.monotonic()
    host.write(call("lost", arguments=b'{"silent":true}'))
    for n in range(20):   # answered ones after it, each on its own deadline
        got = host.request("tools/call", {"name": "echo", "arguments": {"n": n}}, timeout=20)
        assert got["result"]["structuredContent"] == {"n": n}
    lost = host.wait("lost", timeout=20)
    took = time.monotonic() - start
    assert lost["error"]["code"] == -32001 and "within 1.5 s" in lost["error"]["message"]
    assert 1.4 < took < 15, took
    # The session goes on.
    assert host.request("tools/call", {"name": "echo", "arguments": {}}, timeout=20)["result"]
    expect_lane(host, 22, as_on_windows)


def test_a_cancelled_call_goes_unanswered_and_the_board_is_told(fake_board, stdio_bridge,
                                                               as_on_windows):
    held = []

    def hold(board, msg):
        if msg["method"] == "tools/call":
            held.append(msg)
            return True
        return False
    board, host = bridge(fake_board, stdio_bridge, hold)
    host.write(call("c1"))
    board.wait_for(lambda: held)
    host.notify("notifications/cancelled", {"requestId": "c1", "reason": "changed my mind"})
    told = board.wait_for(lambda: board.received("notifications/cancelled"))
    assert told[0]["params"]["requestId"] == held[0]["id"]
    board.answer(held[0], {"content": []})   # too late: nobody waits for it
    host.write(call("c1"))   # the id is free again
    board.wait_for(lambda: len(held) == 2)
    board.answer(held[1], {"content": [{"type": "text", "text": "second"}]})
    assert json.loads(host.line(timeout=20))["result"]["content"][0]["text"] == "second"
    expect_lane(host, 2, as_on_windows)


def test_a_board_that_dies_mid_answer_costs_the_call_and_not_the_session(fake_board,
                                                                         stdio_bridge,
                                                                         as_on_windows):
    def half(board, msg):
        if msg["method"] == "tools/call":
            board.write(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"te'
                        % msg["id"])
            board.later(board.close)
            return True
        return False
    board, host = bridge(fake_board, stdio_bridge, half)
    host.write(call("x"))
    msg = json.loads(host.line(timeout=20))
    assert msg["id"] == "x" and msg["error"]["code"] == -32000, msg   # disconnected
    assert host.request("ping", timeout=20)["result"] == {}
    got = host.request("tools/call", {"name": "echo", "arguments": {}}, timeout=20)
    assert got["error"]["code"] == -32000   # the port is gone: said at once
    expect_lane(host, 1, as_on_windows)


def test_a_host_that_stops_reading_gets_every_answer_once_it_reads_again(fake_board,
                                                                        stdio_bridge,
                                                                        as_on_windows):
    board, host = bridge(fake_board, stdio_bridge, verbatim)
    count = 3000   # about 750 KB of answers: far more than a pipe holds
    lines = b"".join(call(n) for n in range(count))
    fd = host.write_fd
    writer = threading.Thread(target=lambda: os.write(fd, lines) and None, daemon=True)
    os.set_blocking(fd, True)
    writer.start()   # the host writes all, reading nothing meanwhile
    time.sleep(2)
    got = set()
    while len(got) < count:
        msg = json.loads(host.line(timeout=30))
        assert msg["id"] not in got
        got.add(msg["id"])
    writer.join(10)
    assert got == set(range(count))
    assert host.request("ping", timeout=20)["result"] == {}
    expect_lane(host, count, as_on_windows)


class LinkEvents:
    # What a Link tells its board session (link.Link's events): here only that its port is up.
    def __init__(self):
        self.up = asyncio.Event()

    def on_state(self, connected):
        if connected:
            self.up.set()

    def on_message(self, msg):
        pass

    def on_noise(self, line):
        pass


async def open_link(device):
    # A Link on device, running on this loop with its port up -> (the link, its task).
    from tinymcp.host.bridge.link import Link, PortLoop
    events = LinkEvents()
    link = Link(device, events=events)
    runner = asyncio.ensure_future(link.run())
    await asyncio.wait_for(events.up.wait(), 20)
    assert type(link._io) is PortLoop
    return link, runner


def test_a_lone_calls_frame_reaches_the_board_before_its_chunk_has_been_handled():
    # Link.write(now=True), as the lane writes the call a chunk held alone: on the port at once
    # (the board starts on it sooner); any other frame waits for the end of the chunk, all in
    # one write (turn.py). The bytes are read from the pty's other end, where a board reads.
    import pty
    import select

    from tinymcp.host.bridge import turn

    master, slave = pty.openpty()

    def arrived(wait):
        got = b""
        while select.select([master], [], [], wait)[0]:
            got += os.read(master, 4096)
            wait = 0.2
        return got.replace(b"\r", b"")

    async def main():
        link, runner = await open_link(os.ttyname(slave))
        await asyncio.sleep(0)
        assert arrived(5) == b"\n"   # the link's first newline
        seen = []

        def handle(data):
            link.write(b'{"a":1}\n', now=True)
            seen.append(arrived(5))   # written at once
            link.write(b'{"b":2}\n')
            link.write(b'{"c":3}\n', now=True)   # behind a frame held: it waits with it
            seen.append(arrived(0.3))   # held for the end of the chunk: nothing yet

        turn.handled(handle, b"x")
        seen.append(arrived(5))
        link.close()
        runner.cancel()
        return seen

    try:
        seen = asyncio.run(main())
    finally:
        os.close(master)
        os.close(slave)
    assert seen == [b'{"a":1}\n', b"", b'{"b":2}\n{"c":3}\n'], seen


def test_with_several_boards_each_call_reaches_its_board_under_its_own_name(fake_board,
                                                                          line_client,
                                                                          as_on_windows):
    # LABEL_TOOL: the board gets the host's bytes with the bridge's id and its own tool name.
    a, b = fake_board(on_request=verbatim), fake_board(on_request=verbatim)
    host = line_client("--port", "a=" + a.device, "--port", "b=" + b.device, "--timeout",
                       str(SLOW), "--log-level", "debug")
    host.initialize()
    host.write(b"".join(call(n, "a_echo" if n % 2 else "b_echo") for n in range(1, 11)))
    got = {json.loads(line)["id"]: line for line in (host.line(timeout=20) for _ in range(10))}
    assert sorted(got) == list(range(1, 11))
    assert all(line.endswith(b',"result":' + RESULT + b"}") for line in got.values())
    for board, ids in ((a, range(1, 11, 2)), (b, range(2, 11, 2))):
        sent = [json.loads(line) for line in board.lines if b'"tools/call"' in line]
        assert len(sent) == len(ids)
        assert all(m["params"] == {"name": "echo", "arguments": {}} for m in sent)
    expect_lane(host, 10, as_on_windows)


def test_a_lone_frame_the_port_cannot_take_whole_is_written_as_it_drains():
    # Link.write(now=True) with nothing waiting writes past the queue (PortLoop.write_now): what
    # the port does not take at once is written as it drains, before any frame queued after it.
    import pty

    master, slave = pty.openpty()
    big = b'{"a":"' + b"x" * (1 << 18) + b'"}\n'   # far more than a pty's buffer holds

    async def main():
        link, runner = await open_link(os.ttyname(slave))
        await asyncio.sleep(0.1)
        os.set_blocking(master, False)
        got = b""
        try:
            got += os.read(master, 1 << 16)   # the link's first newline
        except BlockingIOError:
            pass
        assert link.write(big, now=True) is big
        assert link._io._watching   # the rest waits for the port to drain
        link.write(b'{"b":2}\n', now=True)   # behind it: queued
        deadline = time.monotonic() + 20
        while len(got) < 1 + len(big) + 8 and time.monotonic() < deadline:
            try:
                got += os.read(master, 1 << 16)
            except BlockingIOError:
                await asyncio.sleep(0.01)
        link.close()
        runner.cancel()
        return got.replace(b"\r", b"")

    try:
        got = asyncio.run(main())
    finally:
        os.close(master)
        os.close(slave)
    assert got == b"\n" + big + b'{"b":2}\n', (len(got), got[:40], got[-40:])


# Board lines that begin as the usual answer does and are no JSON, or no UTF-8: never passed on.
NOT_JSON = [b'{"jsonrpc":"2.0","id":%d,"result":{"a":01}}',
            b'{"jsonrpc":"2.0","id":%d,"result":{"a":1}',
            b'{"jsonrpc":"2.0","id":%d,"result":{"a":1}}}',
            b'{"jsonrpc":"2.0","id":%d,"result":}',
            b'{"jsonrpc":"2.0","id":%d,"result":{"a":"\xff"}}',
            b'{"jsonrpc":"2.0","id":%d,"result":{"a":"x\x01"}}',
            b'{"jsonrpc":"2.0","id":%d,"result":{"a":[1,]}}']


def test_board_lines_that_are_no_json_never_reach_the_host(fake_board, stdio_bridge,
                                                          as_on_windows):
    def garbage_first(board, msg):
        if msg["method"] != "tools/call":
            return False
        n = msg["params"]["arguments"]["n"]
        board.write(NOT_JSON[n] % msg["id"] + b"\n")   # noise: the call still waits
        board.write(b'{"jsonrpc":"2.0","id":%d,"result":{"n":%d}}\n' % (msg["id"], n))
        return True
    board, host = bridge(fake_board, stdio_bridge, garbage_first)
    for n in range(len(NOT_JSON)):
        host.write(call("c%d" % n, arguments=b'{"n":%d}' % n))
        line = host.line(timeout=20)
        assert line == b'{"jsonrpc":"2.0","id":"c%d","result":{"n":%d}}' % (n, n), line
    assert host.request("ping", timeout=20)["result"] == {}
    assert host.noise == []
    expect_lane(host, len(NOT_JSON), as_on_windows)


def test_an_answer_after_the_deadline_reaches_the_host_not(fake_board, stdio_bridge,
                                                           as_on_windows):
    held = []

    def slow_first(board, msg):
        # The first call is answered only when the next one comes, just before that one.
        if msg["method"] != "tools/call":
            return False
        if not held:
            held.append(msg)
            return True
        board.answer(held[0], {"content": [], "structuredContent": {"late": True}})
        return False
    board = fake_board(on_request=slow_first)
    host = stdio_bridge(board.device, "--timeout", "1", "--log-level", "debug")
    host.initialize()
    host.write(call("slow", arguments=b'{"slow":true}'))
    timed_out = json.loads(host.line(timeout=20))
    assert timed_out["id"] == "slow" and timed_out["error"]["code"] == -32001, timed_out
    board.wait_for(lambda: board.received("notifications/cancelled"), what="the cancel")
    # The late answer comes first, then this call's: only this one reaches the host.
    got = host.request("tools/call", {"name": "echo", "arguments": {"n": 1}}, timeout=20)
    assert got["result"]["structuredContent"] == {"n": 1}
    assert host.request("ping", timeout=20)["result"] == {}
    assert host.early == {} and host.noise == [], (host.early, host.noise)
    expect_lane(host, 2, as_on_windows)


def test_answers_ending_in_a_cooked_ttys_cr_keep_their_bytes(fake_board, stdio_bridge,
                                                            as_on_windows):
    # A tty that is not raw ends each line "\r\n": the answer is read once the "\r" is stripped,
    # and goes to the host as the board wrote it, without the "\r".
    def cooked(board, msg):
        if msg["method"] != "tools/call":
            return False
        board.write(b'{"jsonrpc":"2.0","id":%d,"result":' % msg["id"] + RESULT + b"}\r\n")
        return True
    board, host = bridge(fake_board, stdio_bridge, cooked)
    for n in range(3):
        host.write(call(n))
        line = host.line(timeout=20)
        assert line == b'{"jsonrpc":"2.0","id":%d,"result":' % n + RESULT + b"}", line
    assert host.noise == []
    expect_lane(host, 3, as_on_windows)


# No JSON holds NaN or an infinity: a board's sensor may read one, a hostile board may write one.
# A host never gets one, whichever way the answer goes: null stands in (as JSON.stringify
# writes); 1e999, which is JSON (its reader's number may be an infinity), may pass as it came.
NONFINITE = [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999"]


def strict(line):
    def refuse(name):
        raise AssertionError("%s reached the host: %r" % (name, line))
    return json.loads(line, parse_constant=refuse)


def test_no_host_gets_a_nan_or_an_infinity(fake_board, stdio_bridge, as_on_windows):
    def nonfinite(board, msg):
        if msg["method"] != "tools/call":
            return False
        board.write(b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],"structuredContent":'
                    b'{"v":%s,"w":[1,%s]}}}\n' % (msg["id"], NONFINITE[msg["params"]["arguments"]
                                                  ["n"]], b"2.5"))
        return True
    board, host = bridge(fake_board, stdio_bridge, nonfinite)
    rid = 0
    for n, token in enumerate(NONFINITE):
        # the lane's way, and the general way (progress asked: the router serves it)
        for meta in (b"", b',"_meta":{"progressToken":"p%d"}' % n):
            rid += 1
            host.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo",'
                       b'"arguments":{"n":%d}%s}}\n' % (rid, n, meta))
            got = strict(host.line(timeout=20))
            assert got["id"] == rid, got
            value = got["result"]["structuredContent"]
            assert value["w"] == [1, 2.5], got
            assert value["v"] is None or (token.endswith(b"999") and abs(value["v"]) == float(
                "inf")), (token, got)
    assert host.request("ping", timeout=20)["result"] == {}
    assert host.noise == []


def test_dump_writes_null_for_nan_and_the_infinities():
    from tinymcp.host.bridge.wire import dump
    inf = float("inf")
    assert dump({"a": [inf, -inf, float("nan"), 1.5], "b": {"c": (inf,)}}) == (
        '{"a":[null,null,null,1.5],"b":{"c":[null]}}')
    assert dump({"a": 1.5}) == '{"a":1.5}'
