# wait_for_event on the sim board's real stdio, on both runtimes: an alert set with set_alert comes
# back within a sample period of its crossing, exactly once; a wait with nothing to say ends at its
# bound with an empty list, sending progress meanwhile; the board answers other requests while a
# wait is open.
import time

import pytest

from tests.board_process import MICROPYTHON, BoardProcess


@pytest.fixture(params=["python", "micropython"])
def board(request):
    if request.param == "micropython" and MICROPYTHON is None:
        pytest.skip("micropython not installed")
    proc = BoardProcess(request.param)
    proc.initialize()
    yield proc
    assert proc.close() == 0


def structured(reply):
    assert "result" in reply and not reply["result"].get("isError"), reply
    return reply["result"]["structuredContent"]


def wait_for_event(board, timeout=60, **arguments):
    return structured(board.call("wait_for_event", timeout, **arguments))


def test_an_alert_comes_back_once_within_a_sample_period_of_its_crossing(board):
    cursor = wait_for_event(board, timeout_s=0)["cursor"]
    celsius = structured(board.call("read_temperature"))["celsius"]
    structured(board.call("set_alert", quantity="temperature", above=celsius - 10))
    set_at = time.monotonic()  # armed and already beyond: it crosses at the next sample
    alerts = []
    while not alerts and time.monotonic() - set_at < 10:
        found = wait_for_event(board, after=cursor, timeout_s=5)
        cursor = found["cursor"]
        alerts = [e for e in found["events"] if e["kind"] == "alert"]
    latency = time.monotonic() - set_at
    print("alert returned %.3f s after set_alert was answered (sample period 1 s)" % latency)
    assert len(alerts) == 1, alerts
    alert = alerts[0]
    assert alert["quantity"] == "temperature" and alert["unit"] == "Cel"
    assert alert["uri"] == "sensor://alerts" and alert["crossed"] == "above"
    assert alert["value"] > celsius - 10 and type(alert["t_ms"]) is int
    assert latency < 1.0 + 1.0  # a sample period, plus the slack of a shared machine
    again = wait_for_event(board, after=cursor, timeout_s=1.5)
    assert again["events"] == [] and again["cursor"] == cursor  # no repeat
    # The log line and the alert resource still tell those who listen that way.
    assert any(n["method"] == "notifications/message" and n["params"]["data"].get("alert")
               for n in board.notes)


def test_a_wait_with_no_event_ends_at_its_bound_with_progress_and_the_board_keeps_answering(board):
    cursor = wait_for_event(board, timeout_s=0)["cursor"]
    began = time.monotonic()
    rid = board.start("tools/call", {"name": "wait_for_event",
                                     "arguments": {"after": cursor, "timeout_s": 2},
                                     "_meta": {"progressToken": "w"}})
    ping_began = time.monotonic()
    assert board.request("ping", timeout=5)["result"] == {}
    ping_s = time.monotonic() - ping_began
    temp = structured(board.call("read_temperature", timeout=5))
    assert 10 < temp["celsius"] < 40
    found = structured(board.wait(rid, timeout=30))
    waited = time.monotonic() - began
    print("empty wait of 2 s returned after %.3f s; a ping meanwhile took %.3f s" % (waited, ping_s))
    assert found == {"events": [], "cursor": cursor}
    assert 1.9 <= waited < 10
    progress = [n["params"] for n in board.notes if n["method"] == "notifications/progress"]
    assert progress and all(p["progressToken"] == "w" and 0 < p["progress"] <= 1
                            for p in progress), progress


def test_a_cursor_it_never_gave_is_an_error_result(board):
    reply = board.call("wait_for_event", after="tomorrow", timeout_s=1)
    assert reply["result"]["isError"] is True
    assert "not a cursor" in reply["result"]["content"][0]["text"]
    assert board.request("ping")["result"] == {}
