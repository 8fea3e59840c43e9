# The live dashboard in a real headless Chromium (Debian's), against `tinymcp-bridge --sim
# --http`: the page shows the board and plots with points, updates without a reload, and a page
# from another Origin cannot read the bridge's data. Screenshots are kept in build/test-artifacts.
import asyncio
import http.server
import json
import os
import threading

import pytest
from mcp import Client

from tests.bridge.chromium import Chromium
from tests.bridge.conftest import REPO, clean_env
from tests.needs import missing
from tinymcp.host.bridge.dashboard import charts_dir

TOKEN = "br0wser-t0ken"
ARTIFACTS = os.path.join(REPO, "build", "test-artifacts")

# Pixels of the plotted line (uPlot draws the series stroke in this colour on its canvas).
LINE_PIXELS = """(() => {
  const canvas = document.querySelector('figure.plot[data-uri="%s"] canvas');
  if (!canvas) return 0;
  const image = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
  let n = 0;
  for (let i = 0; i < image.length; i += 4) {
    if (Math.abs(image[i] - 31) < 40 && Math.abs(image[i + 1] - 119) < 40 &&
        Math.abs(image[i + 2] - 180) < 40 && image[i + 3] > 200) n++;
  }
  return n;
})()"""


def samples(browser, uri):
    return int(browser.evaluate("document.querySelector('figure.plot[data-uri=\"%s\"]')"
                                "?.dataset.samples || 0" % uri))


def text(browser, selector):
    return browser.evaluate("[...document.querySelectorAll('%s')].map(e => e.innerText)"
                            ".join('\\n')" % selector)


def page_problems(browser):
    # Exceptions, console errors and CSP refusals the page caused.
    found = []
    for event in browser.drain():
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.exceptionThrown":
            found.append(json.dumps(params)[:300])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            found.append(json.dumps(params)[:300])
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            found.append("%s %s" % (params["entry"].get("text", "")[:300],
                                    params["entry"].get("url")))
    return found


@pytest.fixture
def browser():
    started = []

    def start(*flags):
        started.append(Chromium("--no-proxy-server", *flags))
        return started[-1]
    yield start
    for chromium in started:
        chromium.close()


def test_the_dashboard_shows_the_board_and_live_plots(http_bridge, browser):
    if charts_dir() is None:
        missing("uPlot is not installed: run .ci/install-charts")
    url, bridge = http_bridge("--token", TOKEN, env=clean_env(TINYMCP_SIM_BENCH="1"))
    page = browser()
    page.navigate(url.rsplit("/", 1)[0] + "/?token=" + TOKEN)
    page.wait_for("Number(document.body.dataset.updates) >= 1")
    assert page.evaluate("location.search") == ""   # the token left the address bar
    heading = text(page, "section.board h2")
    assert "tinymcp simulated board" in heading and "ready" in heading
    tools = text(page, "table.tools")
    assert "read_temperature\tRead temperature\tread-only" in tools
    assert "set_led\tSet LED\tchanges the board" in tools
    readings = text(page, "table.readings")
    assert "Board temperature\tcelsius" in readings and "\u00b0C" in readings
    assert "hpa" in readings and "hPa" in readings
    assert "none set" in text(page, "table.alerts")

    histories = ["sensor://temperature/history", "sensor://humidity/history",
                 "sensor://pressure/history"]
    for uri in histories:
        page.wait_for("document.querySelector('figure.plot[data-uri=\"%s\"]')"
                      "?.dataset.samples >= 2" % uri)
        assert page.evaluate(LINE_PIXELS % uri) > 20, uri   # a line is drawn on the canvas
    first = samples(page, histories[0])
    loaded = page.evaluate("performance.timeOrigin")
    updates = int(page.evaluate("document.body.dataset.updates"))
    # A later look, without a reload: more samples in the plot, from newer polls.
    page.wait_for("document.querySelector('figure.plot[data-uri=\"%s\"]').dataset.samples > %d"
                  % (histories[0], first), timeout=40)
    assert page.evaluate("performance.timeOrigin") == loaded
    assert int(page.evaluate("document.body.dataset.updates")) > updates
    page.screenshot(os.path.join(ARTIFACTS, "dashboard.png"))
    with open(os.path.join(ARTIFACTS, "dashboard.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert page_problems(page) == []


def test_the_dashboard_lists_the_events_wait_for_event_hands_the_hosts(http_bridge, browser):
    # An alert set by a host through the bridge: the page lists it, with its board, as it
    # lists the board's arrival.
    url, bridge = http_bridge()
    page = browser()
    page.navigate(url.rsplit("/", 1)[0] + "/")
    page.wait_for("document.getElementById('event-list').innerText.includes('board_added')")

    async def alert():
        async with Client(url, mode="legacy") as client:
            celsius = (await client.call_tool("read_temperature", {})).structured_content
            await client.call_tool("set_alert", {"quantity": "temperature",
                                                 "above": celsius["celsius"] - 10})
            found = await client.call_tool("wait_for_event", {"timeout_s": 10})
            assert not found.is_error
    asyncio.run(alert())
    page.wait_for("document.getElementById('event-list').innerText.includes('crossed above')",
                  timeout=20)
    listed = text(page, "#event-list")
    assert "sim\talert\ttemperature" in listed and "\u00b0C crossed above" in listed, listed
    page.screenshot(os.path.join(ARTIFACTS, "dashboard-events.png"))
    assert page_problems(page) == []


class ForeignSite(http.server.ThreadingHTTPServer):
    # Another Origin on this machine: a plain page whose script tries to read the bridge.
    def __init__(self):
        class Page(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<!doctype html><title>elsewhere</title><p>another site</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass
        super().__init__(("127.0.0.1", 0), Page)
        threading.Thread(target=self.serve_forever, daemon=True).start()


def test_a_page_from_a_foreign_origin_cannot_read_the_bridge(http_bridge, browser):
    url, bridge = http_bridge("--token", TOKEN)
    site = url.rsplit("/", 1)[0]
    port = site.rsplit(":", 1)[1]
    foreign = ForeignSite()
    try:
        page = browser("--host-resolver-rules=MAP rebound.test 127.0.0.1")
        page.navigate("http://127.0.0.1:%d/" % foreign.server_address[1])
        assert page.evaluate("document.title") == "elsewhere"
        attempt = """fetch(%s, %s).then(r => r.text().then(t => "read " + r.status + " " + t),
                                         e => "refused: " + e.message)"""
        # Even a page that knows the token: its Origin is refused before anything is read.
        with_token = page.evaluate(attempt % (json.dumps(site + "/dashboard/data"), json.dumps(
            {"headers": {"Authorization": "Bearer " + TOKEN}})))
        without = page.evaluate(attempt % (json.dumps(site + "/dashboard/data"), "{}"))
        assert with_token.startswith("refused") and without.startswith("refused"), \
            (with_token, without)
        bridge.wait_stderr(r"http: refused OPTIONS /dashboard/data \(403; Origin "
                           r"http://127\.0\.0\.1:%d\)" % foreign.server_address[1])
        bridge.wait_stderr(r"http: refused GET /dashboard/data \(403; Origin "
                           r"http://127\.0\.0\.1:%d\)" % foreign.server_address[1])
        # DNS rebinding: a name that resolves to the bridge is not one of its names.
        page.navigate("http://rebound.test:%s/" % port)
        assert "Misdirected Request" in page.evaluate("document.body.innerText")
        statuses = [e["params"]["response"]["status"] for e in page.drain()
                    if e.get("method") == "Network.responseReceived"
                    and e["params"]["response"]["url"] == "http://rebound.test:%s/" % port]
        assert statuses == [421], statuses
    finally:
        foreign.shutdown()
        foreign.server_close()


def test_without_the_chart_library_the_page_shows_the_tables_and_how_to_get_plots(
        http_bridge, browser, tmp_path):
    url, bridge = http_bridge(env=clean_env(TINYMCP_CHARTS_DIR=str(tmp_path)))
    page = browser()
    page.navigate(url.rsplit("/", 1)[0] + "/")
    page.wait_for("Number(document.body.dataset.updates) >= 1")
    hint = page.evaluate("document.getElementById('charts-hint')")
    assert hint is not None
    assert ".ci/install-charts" in page.evaluate(
        "document.getElementById('charts-hint').hidden ? '' : "
        "document.getElementById('charts-hint').innerText")
    assert "read_temperature" in text(page, "table.tools")
    assert "Board temperature" in text(page, "table.readings")
    page.wait_for("document.querySelector('figure.plot')?.innerText.includes('samples over')")
    assert page.evaluate("document.querySelectorAll('canvas').length") == 0
    page.screenshot(os.path.join(ARTIFACTS, "dashboard-without-charts.png"), height=700)


def test_a_board_sending_null_and_wrong_types_costs_those_values_not_the_page(http_bridge,
                                                                              browser):
    # A hostile board: its alerts hold null, a number, a string and one good alert; its
    # readings and history carry values of the wrong kinds. The page shows what it can.
    from tests.hostile.fakeboard import GOOD_INIT, FakeBoard
    values = {
        "sensor://alerts": {"alerts": [None, 5, "x", [], {"quantity": "temperature",
                                                          "above": 30, "unit": "Cel",
                                                          "state": "armed", "crossings": 2}]},
        "sensor://temperature": {"units": {"celsius": "Cel", "bad": None}, "celsius": 21.5,
                                 "bad": {"x": 1}, "age_ms": "soon"},
        "sensor://temperature/history": {"quantity": "temperature", "unit": "Cel",
                                         "now_ms": 5000, "samples": [None, [1000, 20.5], "z",
                                                                     [2000, 21.0], [3000]]}}

    def serve(board, msg):
        if msg["method"] == "resources/list":
            board.answer(msg, {"resources": [{"uri": uri, "name": uri.split("//")[1],
                                              "mimeType": "application/json"}
                                             for uri in values]})
        elif msg["method"] == "resources/read":
            uri = msg["params"]["uri"]
            board.answer(msg, {"contents": [{"uri": uri, "mimeType": "application/json",
                                             "text": json.dumps(values[uri])}]})
        else:
            return False
        return True
    board = FakeBoard(on_request=serve, init_result=dict(
        GOOD_INIT, capabilities=dict(GOOD_INIT["capabilities"], resources={})))
    try:
        url, bridge = http_bridge("--port", board.device, board=None)
        page = browser()
        page.navigate(url.rsplit("/", 1)[0] + "/")
        page.wait_for("Number(document.body.dataset.updates) >= 2", timeout=30)
        alerts = text(page, "table.alerts")
        assert "temperature\tabove 30 \u00b0C\tarmed\t2" in alerts, alerts
        assert "celsius 21.5 \u00b0C" in text(page, "table.readings")
        assert "fakeboard" in text(page, "section.board h2")
        assert "not answering" not in page.evaluate("document.getElementById('status').innerText")
        assert samples(page, "sensor://temperature/history") == 2
    finally:
        board.close()
