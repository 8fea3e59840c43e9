# The board's events: one bounded ring fed by alert crossings, list changes and resource updates;
# wait_for_event returns at once what is newer than its cursor, else waits (a generator the serve
# loop steps) up to its bound; a cursor never repeats an event and says when some were lost.
from tests.core.support import initialize, notifications, result
from tinymcp import Server, events, history
from tinymcp.entries import FN, KEY


class Clock:
    # ticks_ms for the sampler and the ring, moved by hand.
    def __init__(self, ms=1000):
        self.ms = ms

    def __call__(self):
        return self.ms


class Ticking(Clock):
    def __call__(self):
        self.ms += 10
        return self.ms


def board(values, size=16):
    # A board sampling "temperature" from `values` once a second, with the ring attached.
    clock = Clock()
    feed = list(values)
    readings = history.History(1000, 8, clock)
    readings.track("temperature", lambda: feed.pop(0) if feed else 20.0, "Cel")
    server = Server("events", "0")
    history.attach(server, readings)
    events.attach(server, events.Events(size, clock))
    server.clock = clock
    return server


def tool(server, name):
    for entry in server.tools.items:
        if entry[KEY] == name:
            return entry[FN]
    raise AssertionError("no tool " + name)


def run(server, seconds, step_ms=100):
    for _ in range(seconds * 1000 // step_ms):
        server.poll()
        server.clock.ms += step_ms


def wait(server, after=None, timeout_s=2, step_ms=100, limit=1000):
    # Steps wait_for_event as the serve loop would: idle work, then the generator, time moving.
    # -> (what it yielded, its result, the steps it took)
    gen = tool(server, "wait_for_event")(after=after, timeout_s=timeout_s)
    assert type(gen).__name__ == "generator"
    yielded = []
    for steps in range(limit):
        try:
            yielded.append(next(gen))
        except StopIteration as e:
            return yielded, e.args[0] if e.args else None, steps
        server.poll()
        server.clock.ms += step_ms
    raise AssertionError("wait_for_event never returned")


def alert_above(server, level):
    return result(server, "tools/call", {"name": "set_alert",
                                         "arguments": {"quantity": "temperature", "above": level}})


def test_an_alert_crossing_is_one_event_and_the_cursor_does_not_repeat_it():
    server = board([20.0, 21.0, 26.5, 27.0, 27.5])
    initialize(server)
    alert_above(server, 25.0)
    _, first, _ = wait(server, timeout_s=0)  # no cursor: what the ring holds (set_alert's update)
    assert [e["kind"] for e in first["events"]] == ["resource_updated"]
    yielded, found, steps = wait(server, first["cursor"], timeout_s=10)
    assert [e["kind"] for e in found["events"]] == ["alert"]
    event = found["events"][0]
    assert event["quantity"] == "temperature" and event["value"] == 26.5
    assert event["unit"] == "Cel" and event["uri"] == "sensor://alerts"
    assert event["crossed"] == "above" and event["level"] == 25.0 and event["t_ms"] == 2000
    assert steps <= 31  # within a sample period of the crossing (at 2 s), stepped every 0.1 s
    assert "missed" not in found
    _, again, _ = wait(server, found["cursor"], timeout_s=1)
    assert again["events"] == [] and again["cursor"] == found["cursor"]


def test_in_2026_07_28_a_listen_stream_and_the_ring_both_hear_the_alert_once():
    from tests.core.test_stateless import call, listen
    server = board([20.0, 26.0, 26.5, 27.0])
    call(server, "server/discover")
    listen(server, "watch", resourceSubscriptions=["sensor://alerts"])
    _, start, _ = wait(server, timeout_s=0)
    call(server, "tools/call", {"name": "set_alert", "arguments": {
        "quantity": "temperature", "above": 25}}, id=2)
    notifications(server)
    _, found, _ = wait(server, start["cursor"], timeout_s=0)  # set_alert's own update
    _, found, _ = wait(server, found["cursor"], timeout_s=5)
    assert [e["kind"] for e in found["events"]] == ["alert"]
    updates = [n for n in notifications(server) if n["method"] == "notifications/resources/updated"]
    assert [u["params"]["uri"] for u in updates] == ["sensor://alerts"]


def test_the_existing_alert_paths_still_speak():
    server = board([20.0, 26.0])
    initialize(server)
    result(server, "resources/subscribe", {"uri": "sensor://alerts"})
    alert_above(server, 25.0)
    notifications(server)
    run(server, 2)
    said = notifications(server)
    assert [n["method"] for n in said] == ["notifications/message",
                                           "notifications/resources/updated"]
    assert said[0]["params"]["data"]["alert"] == "temperature"


def test_a_wait_with_no_event_returns_after_its_bound_with_an_empty_list():
    server = board([])
    initialize(server)
    _, start, _ = wait(server, timeout_s=0)
    yielded, found, steps = wait(server, start["cursor"], timeout_s=2)
    assert found == {"events": [], "cursor": start["cursor"]}
    assert 20 <= steps <= 21  # 2 s at a step of 0.1 s
    progress = [y for y in yielded if y is not None]
    assert progress == [0.5]  # once a second, as a fraction of the bound
    assert all(y is None or 0 <= y <= 1 for y in yielded)


def test_events_newer_than_the_cursor_are_returned_without_waiting():
    server = board([])
    initialize(server)
    _, start, _ = wait(server, timeout_s=0)
    server.events.add("test", quantity="q", value=1)
    server.events.add("test", quantity="q", value=2)
    yielded, found, steps = wait(server, start["cursor"], timeout_s=50)
    assert yielded == [] and [e["value"] for e in found["events"]] == [1, 2]
    assert found["cursor"] != start["cursor"]


def test_list_changes_after_the_handshake_are_events_the_board_build_is_not():
    server = board([])
    _, before, _ = wait(server, timeout_s=0)
    assert before["events"] == []  # registering its tools at build is no event
    initialize(server)

    @server.tool("extra", "Added later.")
    def extra():
        return "x"

    server.remove("tools", "extra")
    _, found, _ = wait(server, before["cursor"], timeout_s=0)
    assert [e["kind"] for e in found["events"]] == ["tools_changed", "tools_changed"]
    assert all(type(e["t_ms"]) is int for e in found["events"])


def test_a_cursor_from_before_a_reset_gets_all_the_ring_holds_flagged_missed():
    server = board([])
    initialize(server)
    server.events.add("test", value=1)
    _, found, _ = wait(server, "000000.5", timeout_s=0)
    if server.events.epoch == "000000":
        return  # one boot in sixteen million draws that epoch
    assert found["missed"] is True and [e["value"] for e in found["events"]] == [1]


def test_a_cursor_older_than_the_ring_gets_what_is_left_flagged_missed():
    server = board([], size=4)
    initialize(server)
    _, start, _ = wait(server, timeout_s=0)
    for i in range(6):
        server.events.add("test", value=i)
    _, found, _ = wait(server, start["cursor"], timeout_s=0)
    assert found["missed"] is True and [e["value"] for e in found["events"]] == [2, 3, 4, 5]
    _, on, _ = wait(server, found["cursor"], timeout_s=0)
    assert on["events"] == [] and "missed" not in on


def test_a_cursor_just_at_the_ring_edge_misses_nothing():
    server = board([], size=4)
    _, start, _ = wait(server, timeout_s=0)
    for i in range(4):
        server.events.add("test", value=i)
    _, found, _ = wait(server, start["cursor"], timeout_s=0)
    assert "missed" not in found and [e["value"] for e in found["events"]] == [0, 1, 2, 3]


def test_a_string_that_is_no_cursor_is_refused_clearly():
    server = board([])
    try:
        wait(server, "yesterday", timeout_s=0)
    except ValueError as e:
        assert "not a cursor" in str(e)
    else:
        raise AssertionError("accepted a cursor it never gave")


def test_inside_a_batch_a_wait_returns_at_once_rather_than_hold_the_board():
    import json
    server = board([])
    initialize(server, "2025-03-26")
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "wait_for_event", "arguments": {"timeout_s": 50}}}
    clock = server.events.clock = Ticking()  # 10 ms pass at every look
    start = clock.ms
    answers = json.loads(server.handle(json.dumps([call]).encode()))
    found = json.loads(answers[0]["result"]["content"][0]["text"])  # 2025-03-26: text only
    assert found["events"] == [] and clock.ms - start < 1000  # no 50 s spent inside the batch


def test_the_tool_declares_its_bound_and_reads_only():
    server = board([])
    initialize(server)
    tools = result(server, "tools/list")["tools"]
    found = [t for t in tools if t["name"] == "wait_for_event"][0]
    props = found["inputSchema"]["properties"]
    assert props["timeout_s"]["maximum"] == 50 and props["timeout_s"]["minimum"] == 0
    assert props["after"]["type"] == "string" and "required" not in found["inputSchema"]
    assert found["annotations"]["readOnlyHint"] is True
    assert set(found["outputSchema"]["properties"]) == {"events", "cursor", "missed"}


def test_task_ends_have_a_place_in_the_ring():
    server = board([])
    server.events.task_ended("t-1", "completed")
    _, found, _ = wait(server, timeout_s=0)
    event = found["events"][0]
    assert event["kind"] == "task_ended" and event["taskId"] == "t-1"
    assert event["status"] == "completed"


def test_a_task_that_ends_is_an_event():
    server = board([])

    @server.tool("measure", "Takes two steps.", task="optional")
    def measure():
        yield
        return {"done": True}

    initialize(server)
    _, start, _ = wait(server, timeout_s=0)
    created = result(server, "tools/call", {"name": "measure", "arguments": {}, "task": {}}, 5)
    for _ in range(10):
        if server.session.work.live:
            server.session.work.step(server)
    _, found, _ = wait(server, start["cursor"], timeout_s=0)
    ended = [e for e in found["events"] if e["kind"] == "task_ended"]
    assert ended == [{"kind": "task_ended", "t_ms": ended[0]["t_ms"],
                      "taskId": created["task"]["taskId"], "status": "completed"}]


def test_a_board_without_the_ring_has_no_wait_and_alerts_as_before():
    clock = Clock()
    readings = history.History(1000, 8, clock)
    feed = [20.0, 26.0]
    readings.track("temperature", lambda: feed.pop(0) if feed else 20.0, "Cel")
    server = Server("plain", "0")
    history.attach(server, readings)
    server.clock = clock
    initialize(server)
    alert_above(server, 25.0)
    notifications(server)
    run(server, 2)
    assert server.events is None
    assert [n["method"] for n in notifications(server)] == ["notifications/message"]
    names = [t["name"] for t in result(server, "tools/list")["tools"]]
    assert "wait_for_event" not in names
