# Readings over time: the sampler fills its ring at its period, the statistics match a computation
# from the raw samples, alerts fire once per crossing in both revisions, plots are SVG images.
import json

from tests.core.support import error, initialize, notifications, result
from tests.float32 import f32, mean32
from tinymcp import Server, history


class Clock:
    # ticks_ms for the sampler, moved by hand.
    def __init__(self, ms=1000):
        self.ms = ms

    def __call__(self):
        return self.ms


def board(values, period_ms=1000, depth=8):
    # A board whose "temperature" reads the next of `values` at every sample.
    clock = Clock()
    feed = list(values)
    readings = history.History(period_ms, depth, clock)
    readings.track("temperature", lambda: feed.pop(0), "Cel")
    server = Server("hist", "0")
    history.attach(server, readings)
    server.readings = readings
    server.clock = clock
    return server


def run(server, seconds, step_ms=200):
    # The serve loop's idle polls for that long.
    for _ in range(seconds * 1000 // step_ms):
        server.poll()
        server.clock.ms += step_ms


def samples(server):
    text = result(server, "resources/read", {"uri": "sensor://temperature/history"})
    return json.loads(text["contents"][0]["text"])


def alerts_now(server):
    text = result(server, "resources/read", {"uri": "sensor://alerts"})
    return json.loads(text["contents"][0]["text"])["alerts"]


def test_the_history_fills_at_its_period_oldest_first_in_a_ring():
    server = board([20.0 + i for i in range(20)], period_ms=1000, depth=8)
    initialize(server)
    run(server, 5)
    found = samples(server)
    assert found["unit"] == "Cel" and found["period_ms"] == 1000
    assert [v for _t, v in found["samples"]] == [20, 21, 22, 23, 24]
    times = [t for t, _v in found["samples"]]
    assert times == [0, 1000, 2000, 3000, 4000] and found["now_ms"] >= times[-1]
    run(server, 7)  # twelve samples in a ring of eight: the oldest four are gone
    values = [v for _t, v in samples(server)["samples"]]
    assert values == [24, 25, 26, 27, 28, 29, 30, 31]


def test_the_window_statistics_match_the_raw_samples():
    # Readings a sensor gives, which float32 holds only to about 7 digits: the statistics are
    # those of the samples as kept (float32), on a board or on a double-precision build alike.
    values = [21.1, 21.4, 22.3, 22.0, 23.6, 24.1, 23.7, 25.2]
    server = board(values, period_ms=60000, depth=16)  # a sample a minute
    initialize(server)
    run(server, 8 * 60, step_ms=60000)
    stats = result(server, "tools/call", {"name": "read_history",
                                          "arguments": {"quantity": "temperature"}})
    stats = stats["structuredContent"]
    raw = [v for _t, v in samples(server)["samples"]]
    assert raw == values and stats["count"] == len(values)  # written with 6 digits: as read
    kept = [f32(v) for v in values]
    assert stats["min"] == f32(21.1) and stats["max"] == f32(25.2) and stats["latest"] == f32(25.2)
    assert abs(stats["mean"] - mean32(values)) < 2e-5  # float32 rounding: a few steps of 2e-6 at 23
    # least-squares slope of value against time in hours: a sample a minute
    xs = [i / 60 for i in range(len(values))]
    n, sx, sy = len(xs), sum(xs), sum(kept)
    slope = (n * sum(x * y for x, y in zip(xs, kept)) - sx * sy) / (n * sum(x * x for x in xs) - sx * sx)
    assert abs(stats["trend_per_hour"] - slope) < 0.01 * abs(slope), (stats, slope)
    assert stats["unit"] == "Cel"
    recent = result(server, "tools/call", {"name": "read_history", "arguments": {
        "quantity": "temperature", "seconds": 190}})["structuredContent"]
    assert recent["count"] == 3 and recent["min"] == f32(23.7)  # the samples of the last 190 s


def crossing_values():
    # Rises past 30, wobbles around it (within the hysteresis), falls back, rises again.
    return [28.0, 29.5, 30.5, 30.2, 29.9, 30.4, 31.0, 28.0, 27.5, 30.8, 31.2, 32.0]


def test_an_alert_fires_once_per_crossing_in_the_handshake_era():
    server = board(crossing_values(), depth=16)
    initialize(server)
    assert result(server, "resources/subscribe", {"uri": "sensor://alerts"}) == {}
    set_to = result(server, "tools/call", {"name": "set_alert", "arguments": {
        "quantity": "temperature", "above": 30, "hysteresis": 1}})
    assert set_to["structuredContent"]["alerts"][0]["state"] == "armed"
    notifications(server)
    run(server, len(crossing_values()))
    sent = notifications(server)
    updates = [n for n in sent if n["method"] == "notifications/resources/updated"]
    logs = [n for n in sent if n["method"] == "notifications/message"]
    # 30.5 crosses; the wobble (30.2, 29.9, 30.4, 31.0) stays within the hysteresis; 28.0 re-arms;
    # 30.8 crosses again
    assert [u["params"]["uri"] for u in updates] == ["sensor://alerts", "sensor://alerts"]
    assert [m["params"]["data"]["value"] for m in logs] == [30.5, 30.8]
    alerts = json.loads(result(server, "resources/read", {"uri": "sensor://alerts"})
                        ["contents"][0]["text"])["alerts"]
    assert alerts[0]["crossings"] == 2 and alerts[0]["state"] == "crossed"


def test_an_alert_below_and_clearing_it():
    server = board([22.0, 18.0, 17.0, 22.0, 15.0], depth=16)
    initialize(server)
    result(server, "tools/call", {"name": "set_alert", "arguments": {
        "quantity": "temperature", "below": 20}})
    run(server, 5)
    alerts = alerts_now(server)
    assert alerts[0]["crossings"] == 2 and alerts[0]["below"] == 20
    cleared = result(server, "tools/call", {"name": "set_alert",
                                            "arguments": {"quantity": "temperature", "clear": True}})
    assert cleared["structuredContent"] == {"alerts": []}


def test_alert_arguments_are_checked():
    server = board([20.0] * 4)
    initialize(server)
    for arguments in ({"quantity": "temperature"}, {"quantity": "temperature", "above": 1, "below": 0},
                      {"quantity": "humidity", "above": 1}):
        answer = result(server, "tools/call", {"name": "set_alert", "arguments": arguments})
        assert answer["isError"] is True, arguments


def test_an_alert_reaches_a_stateless_listen_stream_once_per_crossing():
    from tests.core.test_stateless import call, listen
    server = board(crossing_values(), depth=16)
    call(server, "server/discover")
    listen(server, "watch", resourceSubscriptions=["sensor://alerts"])
    call(server, "tools/call", {"name": "set_alert", "arguments": {
        "quantity": "temperature", "above": 30, "hysteresis": 1}}, id=2)
    notifications(server)
    run(server, len(crossing_values()))
    updates = [n for n in notifications(server) if n["method"] == "notifications/resources/updated"]
    assert len(updates) == 2
    assert all(u["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "watch"
               for u in updates)


def test_alerts_outlive_the_session_while_the_board_runs():
    server = board(crossing_values(), depth=16)
    initialize(server)
    result(server, "tools/call", {"name": "set_alert", "arguments": {
        "quantity": "temperature", "above": 30}})
    server.open_session()  # the host went away; another connects
    initialize(server)
    run(server, 4)
    assert alerts_now(server)[0]["crossings"] == 1


def test_a_plot_is_an_svg_image():
    server = board([20.0 + i % 3 for i in range(13)], depth=16)
    initialize(server)
    empty = result(server, "tools/call", {"name": "plot_history",
                                          "arguments": {"quantity": "temperature"}})
    assert "no samples" in empty["content"][0]["text"]
    run(server, 10)
    plot = result(server, "tools/call", {"name": "plot_history",
                                         "arguments": {"quantity": "temperature"}})
    block = plot["content"][0]
    assert block["type"] == "image" and block["mimeType"] == "image/svg+xml"
    from binascii import a2b_base64
    svg = a2b_base64(block["data"].encode()).decode()  # bytes: a str is refused by some ports
    assert svg.startswith("<svg") and svg.endswith("</svg>") and "polyline" in svg
    # Beside it, the window in a line of text for hosts that show no images.
    values = [20.0 + i % 3 for i in range(10)]
    text = plot["content"][1]
    assert text["type"] == "text" and len(plot["content"]) == 2
    assert text["text"] == ("temperature, 10 samples over 9 s: min 20, max 22, mean %.6g, "
                            "last 20 Cel" % mean32(values)), text
    run(server, 3)   # now 13 s: the last 2 s asked hold the samples of 11 and 12 s (22, 20)
    windowed = result(server, "tools/call", {"name": "plot_history", "arguments": {
        "quantity": "temperature", "seconds": 2}})["content"][1]["text"]
    assert windowed == ("temperature, 2 samples over 1 s (the last 2 s asked): min 20, "
                        "max 22, mean 21, last 20 Cel"), windowed


def test_a_failing_sensor_skips_samples_and_unknown_quantities_are_refused():
    def broken():
        raise OSError("no answer")
    server = Server("hist", "0")
    readings = history.History(1000, 4, Clock())
    readings.track("temperature", broken, "Cel")
    history.attach(server, readings)
    initialize(server)
    server.poll()
    assert readings.find("temperature").count == 0
    bad = result(server, "tools/call", {"name": "read_history", "arguments": {"quantity": "x"}})
    assert bad["isError"] is True
    assert error(server, "resources/read", {"uri": "sensor://x/history"})["code"] == -32002


def test_samples_keep_six_significant_digits():
    server = board([1013.25, 22.4375, 0.000123456])
    initialize(server)
    run(server, 3)
    assert [v for _t, v in samples(server)["samples"]] == [1013.25, 22.4375, 0.000123456]
