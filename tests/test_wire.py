# Bad input on the board's real stdio, on both runtimes: each answered, then a normal request works.
import json

import pytest

from tests.board_process import BoardProcess

RUNTIMES = ["python", "micropython"]


@pytest.fixture(params=RUNTIMES)
def board(request):
    proc = BoardProcess(request.param)
    proc.initialize()
    yield proc
    assert proc.close() == 0


def still_serving(board):
    res = board.request("tools/call", {"name": "read_adc", "arguments": {"channel": 1}})
    assert res["result"]["structuredContent"]["raw"] > 0


def frame_of(size):
    head = b'{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"'
    return head + b"x" * (size - len(head) - 3) + b'"}}'


@pytest.mark.parametrize("size", [64 * 1024, 1024 * 1024])
def test_oversize_frames_are_refused_with_a_null_id_error(board, size):
    board.send_raw(frame_of(size) + b"\n")
    msg = board.read(timeout=120)
    assert msg["id"] is None and msg["error"]["code"] == -32600
    assert "4096" in msg["error"]["message"]
    still_serving(board)


def test_a_frame_just_under_the_limit_is_served(board):
    board.send_raw(frame_of(4096) + b"\n")
    assert board.read() == {"jsonrpc": "2.0", "id": 7, "result": {}}


@pytest.mark.parametrize("garbage", [
    b"\xff\xfe\xfa not utf-8",
    b'{"jsonrpc": "2.0", "id": 1, "method": "tools/li',
    b'{"jsonrpc": "2.0", "id": 1, "method": "ping"',
    b"}}}}",
])
def test_invalid_utf8_and_truncated_json_are_parse_errors(board, garbage):
    board.send_raw(garbage + b"\n")
    msg = board.read()
    assert msg["id"] is None and msg["error"]["code"] == -32700
    still_serving(board)


def test_batches_are_invalid_requests(board):
    board.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
    msg = board.read()
    assert msg["id"] is None and msg["error"]["code"] == -32600
    still_serving(board)


@pytest.fixture(params=RUNTIMES)
def board_2025_03_26(request):
    proc = BoardProcess(request.param)
    assert proc.initialize("2025-03-26")["result"]["protocolVersion"] == "2025-03-26"
    yield proc
    assert proc.close() == 0


def test_a_2025_03_26_batch_is_answered_with_one_line_holding_an_array(board_2025_03_26):
    board = board_2025_03_26
    calls = [{"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": "read_adc", "arguments": {"channel": i % 4}}} for i in range(4)]
    board.send([{"jsonrpc": "2.0", "id": 2, "method": "ping"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                {"jsonrpc": "2.0", "method": "notifications/initialized"}] + calls)
    answers = board.read()  # longer than the board's 512-byte output buffer: streamed
    assert [a["id"] for a in answers] == [2, 3, 0, 1, 2, 3]
    assert "read_adc" in [t["name"] for t in answers[1]["result"]["tools"]]
    assert all(json.loads(a["result"]["content"][0]["text"])["raw"] >= 0 for a in answers[2:])
    board.send([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    board.send({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    assert board.read() == {"jsonrpc": "2.0", "id": 9, "result": {}}  # nothing for the first
    board.send([{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(200)])
    msg = board.read()  # longer than the frame limit
    assert msg["id"] is None and msg["error"]["code"] == -32600 and "4096" in msg["error"]["message"]
    assert board.request("ping")["result"] == {}


@pytest.mark.parametrize("rid", [None, 1.25, True, {"x": 1}, [2]])
def test_wrong_id_types_are_invalid_requests(board, rid):
    board.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
    msg = board.read()
    assert msg["id"] is None and msg["error"]["code"] == -32600
    still_serving(board)


@pytest.mark.parametrize("params,code", [
    ([1, 2], -32602),
    ({"name": 42}, -32602),
    ({"name": "read_adc", "arguments": {"channel": "one"}}, None),
    ({"name": "read_adc", "arguments": {"channel": 4}}, None),
    ({"name": "no_such_tool"}, -32602),
])
def test_wrong_param_types(board, params, code):
    res = board.request("tools/call", params)
    if code is None:  # argument errors are tool results a model can read
        assert res["result"]["isError"] is True
        assert "channel" in res["result"]["content"][0]["text"]
    else:
        assert res["error"]["code"] == code
    still_serving(board)


def test_ids_zero_and_strings_are_echoed_exactly(board):
    for rid in (0, "0", "req-é", 2 ** 53 + 1):
        board.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        assert board.read() == {"jsonrpc": "2.0", "id": rid, "result": {}}


def test_crlf_lines_and_blank_lines(board):
    board.send_raw(b'\r\n\n{"jsonrpc":"2.0","id":"crlf","method":"ping"}\r\n')
    assert board.read()["id"] == "crlf"


def test_interrupt_byte_ends_serving_cleanly(board):
    board.send_raw(b"\x03")
    assert board.proc.wait(timeout=10) == 0


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_initialize_after_server_discover_on_the_boards_stdio(runtime):
    # Claude Code's order: a server/discover probe, then initialize on the same stdio.
    proc = BoardProcess(runtime)
    try:
        found = proc.request("server/discover", {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}})
        assert "2026-07-28" in found["result"]["supportedVersions"]
        init = proc.initialize()
        assert init["result"]["protocolVersion"] == "2025-11-25", init
        assert proc.request("ping")["result"] == {}
        still_serving(proc)
    finally:
        assert proc.close() == 0


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_cancel_sent_while_a_tool_runs_stops_everything_it_would_send(runtime):
    # The tool waits until the cancel is on its stdin, then logs and reports progress: nothing of
    # that, nor its result, may leave. Twenty runs: the old race showed in about one of two.
    proc = BoardProcess(runtime, board="tests/cancel_board.py")
    try:
        proc.initialize()
        proc.request("logging/setLevel", {"level": "debug"})
        for run in range(20):
            rid = 1000 + run
            proc.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": {
                "name": "steps", "arguments": {}, "_meta": {"progressToken": "t%d" % run}}})
            first = proc.read()
            assert first["method"] == "notifications/progress", first
            assert first["params"]["progress"] == 0
            proc.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                      "params": {"requestId": rid, "reason": "run %d" % run}})
                          .encode() + b"\n")
            # A request after the cancel waits for the tool to end, then is answered.
            proc.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            after = []
            while True:
                msg = proc.read()
                if msg.get("id") == 1:
                    break
                after.append(msg)
            assert after == [], (run, after)
    finally:
        assert proc.close() == 0
