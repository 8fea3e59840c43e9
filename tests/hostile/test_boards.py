# Hostile boards: what a board says is checked before a host hears it, and a host's request that
# the board could never read is refused at once, before it reaches the line.
import time

import pytest

from tests.hostile.conftest import SLOW
from tests.hostile.fakeboard import GOOD_INIT
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)
from tests.windows_shim import windows_paths_run_by


# Under the Windows shim (tests/windows_shim), a board's lines reach the bridge through the port
# served by threads in every test here kept twice (junk lines, a log flood, long and timed-out
# requests); an unusable initialize answer and a storm of list_changed differ from the junk named
# below only in what the bridge makes of a well-formed frame, decided in OS-independent code.
# Tests marked @windows_covered run once, as on POSIX: under the shim they would take no path the
# tests named below do not.
windows_covered = windows_paths_run_by(
    "test_board_messages_that_are_not_json_rpc_are_dropped",
    "test_a_request_longer_than_the_boards_frames_is_refused_before_the_line")

BAD_INITS = {
    "result null": None,
    "result a list": ["tools"],
    "capabilities a list": dict(GOOD_INIT, capabilities=["tools"]),
    "serverInfo a string": dict(GOOD_INIT, serverInfo="fakeboard 1"),
}


@windows_covered
@pytest.mark.parametrize("bad", sorted(BAD_INITS))
def test_an_unusable_initialize_answer_is_logged_and_asked_again(fake_board, stdio_bridge, bad):
    def init_result(board):
        return BAD_INITS[bad] if board.inits <= 5 else GOOD_INIT
    board = fake_board(init_result=init_result)
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    reply = host.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "hostile", "version": "0"}})
    result = reply["result"]   # not the board's nonsense, and long before the --timeout
    assert type(result["capabilities"]) is dict and type(result["serverInfo"]) is dict
    host.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    early = host.call("echo", x=1)
    assert "result" in early or early["error"]["data"]["bridge"] == "not-serving", early
    host.wait_stderr("initialize answer is unusable")
    end = time.monotonic() + 30
    while "result" not in host.call("echo", x=2):
        assert time.monotonic() < end, host.stderr()[-3000:]
        time.sleep(0.2)
    assert board.inits > 5


def test_a_request_longer_than_the_boards_frames_is_refused_before_the_line(fake_board,
                                                                          stdio_bridge):
    board = fake_board()   # old firmware: no frame limit offered, 4096 bytes assumed
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    reply = host.call("echo", text="x" * 5000, timeout=20)   # the --timeout is 60 s
    assert reply["error"]["code"] == -32600
    assert reply["error"]["data"] == {"reason": "frame-too-long", "limit": 4096}
    reply = host.request("resources/read", {"uri": "sensor://" + "t" * 5000}, timeout=20)
    assert reply["error"]["data"]["reason"] == "frame-too-long"
    assert max(len(line) for line in board.lines) <= 4096
    assert host.call("echo", text="x" * 3000)["result"]["structuredContent"] == {"text": "x" * 3000}


def test_the_frame_limit_the_board_offers_is_the_one_enforced(fake_board, stdio_bridge):
    board = fake_board(max_frame=1024)
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    info = host.initialize()
    assert "experimental" not in info["capabilities"]   # the link offer is the bridge's
    reply = host.call("echo", text="x" * 1500, timeout=20)
    assert reply["error"]["data"] == {"reason": "frame-too-long", "limit": 1024}
    assert "result" in host.call("echo", text="x" * 500)
    assert max(len(line) for line in board.lines) <= 1024


def test_a_request_that_timed_out_before_it_was_written_is_never_written(fake_board,
                                                                        stdio_bridge):
    board = fake_board()
    host = stdio_bridge(board.device, "--timeout", "2")
    host.initialize()
    board.reading.clear()   # the board stops reading: the line fills, frames queue up
    rids = [host.start("tools/call", {"name": "echo", "arguments": {"n": n, "pad": "x" * 3000}})
            for n in range(40)]
    replies = [host.wait(rid, timeout=30) for rid in rids]
    timed_out = [n for n, reply in enumerate(replies)
                 if reply.get("error", {}).get("data", {}).get("bridge") == "timeout"]
    assert len(timed_out) > 20, replies[:3]
    board.reading.set()
    time.sleep(2)
    heard = [m["params"]["arguments"]["n"] for m in board.received("tools/call")]
    late = [n for n in heard if n in timed_out]
    assert len(late) < 10, late   # what the line held already; the rest was taken back
    end = time.monotonic() + 30
    while "result" not in host.call("echo", x=1, timeout=30):
        assert time.monotonic() < end, host.stderr()[-3000:]


@windows_covered
def test_a_storm_of_tools_list_changed_is_one_refresh_at_a_time(fake_board, stdio_bridge):
    board = fake_board()
    host = stdio_bridge(board.device)
    host.initialize()
    before = len(board.received("tools/list"))
    board.write(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n' * 2000)
    time.sleep(3)
    assert host.request("ping")["result"] == {}
    refreshes = len(board.received("tools/list")) - before
    told = [n for n in host.notes if n["method"] == "notifications/tools/list_changed"]
    assert 1 <= refreshes <= 3, refreshes
    assert 1 <= len(told) <= 3, len(told)


def test_board_messages_that_are_not_json_rpc_are_dropped(fake_board, stdio_bridge):
    board = fake_board()
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    for junk in ({"jsonrpc": "2.0", "method": 5}, {"jsonrpc": "2.0", "method": "x", "params": 1},
                 {"jsonrpc": "2.0", "id": [1], "method": "sampling/createMessage"},
                 {"jsonrpc": "2.0", "method": "notifications/cancelled",
                  "params": {"requestId": [1]}},
                 {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": 3}},
                 {"jsonrpc": "2.0", "method": "notifications/whatever", "params": {"a": 1}},
                 {"jsonrpc": "2.0", "id": [2], "result": {}}):
        board.send(junk)
    board.write(b'{"jsonrpc":"2.0","id":1,"result":' + b"[" * 50000 + b"]" * 50000 + b"}\n")

    def wrong(board, msg):   # answers that are no MCP result
        if msg["method"] == "tools/call":
            board.send({"jsonrpc": "2.0", "id": msg["id"], "result": ["not", "an", "object"]})
            return True
        return False
    board.on_request = wrong
    reply = host.call("echo", x=1, timeout=20)
    assert reply["error"]["data"]["bridge"] == "malformed", reply
    assert host.request("ping")["result"] == {}
    assert not [n for n in host.notes if n["method"] == "notifications/whatever"]
    assert not [n for n in host.notes if n["method"] == "notifications/message"]
    assert host.noise == []


def test_a_board_that_floods_its_log_is_rate_limited_and_the_host_told_how_much_was_dropped(
        fake_board, stdio_bridge):
    # logging: servers "SHOULD rate limit log messages". 2,000 lines at once reach the host as at
    # most a burst and then the rate; the next line after a pause comes behind a warning, and the
    # warnings count every line dropped.
    from tinymcp.host.bridge.host import LOG_BURST
    board = fake_board()
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    line = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning",' \
           b'"data":"flood"}}\n'
    board.write(line * 2000)
    assert host.request("ping", timeout=30)["result"] == {}
    time.sleep(1.0)
    board.send({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "warning", "data": "after"}})
    assert host.request("ping")["result"] == {}
    end = time.monotonic() + 10
    while not [n for n in host.notes if n["params"].get("data") == "after"]:
        assert time.monotonic() < end, "the line after the flood never came"
        host.request("ping")
    logs = [n["params"] for n in host.notes if n["method"] == "notifications/message"]
    flood = [p for p in logs if p["data"] == "flood"]
    told = [p["data"] for p in logs if type(p["data"]) is dict and "dropped" in p["data"]]
    assert len(flood) < 2000 and len(flood) >= LOG_BURST, len(flood)
    assert told and sum(t["dropped"] for t in told) + len(flood) == 2000, told
    assert logs[-1]["data"] == "after" and logs[-2]["data"] is told[-1]
    assert host.noise == []
