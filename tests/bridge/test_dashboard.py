# The live dashboard over plain HTTP: what GET / and /dashboard/data serve, under the same
# Host/Origin/token rules as /mcp, and when the bridge reads its boards for it.
import asyncio
import subprocess
import time

import httpx2 as httpx
from mcp import Client

from tests.bridge.conftest import Bridge, clean_env
from tests.free_port import free_port
from tests.needs import missing
from tinymcp.host.bridge.dashboard import BoardRow, Dashboard, charts_dir

TOKEN = "d4shb0ard-t0ken"


def base(url):
    return url.rsplit("/", 1)[0]


def get(url, **headers):
    return httpx.get(url, headers=headers, timeout=20)


def data_until(url, check, timeout=30, **headers):
    # Polls /dashboard/data as the page does until check(data) holds; -> that data.
    end = time.monotonic() + timeout
    while True:
        response = get(base(url) + "/dashboard/data", **headers)
        assert response.status_code == 200, response.text
        data = response.json()
        if check(data):
            return data
        assert time.monotonic() < end, "never seen in /dashboard/data: %s" % data
        time.sleep(0.5)


def test_the_page_its_script_and_the_chart_library_come_from_the_bridge(http_bridge):
    url, bridge = http_bridge()
    page = get(base(url) + "/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert page.headers["referrer-policy"] == "no-referrer"
    assert 'src="dashboard/uplot.js"' in page.text and 'src="dashboard/dashboard.js"' in page.text
    script = get(base(url) + "/dashboard/dashboard.js")
    assert script.status_code == 200 and "dashboard/data" in script.text
    if charts_dir() is None:
        missing("uPlot is not installed: run .ci/install-charts")
    chart = get(base(url) + "/dashboard/uplot.js")
    assert chart.status_code == 200 and "uPlot" in chart.text
    assert get(base(url) + "/dashboard/uplot.css").status_code == 200
    assert get(base(url) + "/dashboard/../setup.cfg").status_code == 404
    assert get(base(url) + "/dashboard/elsewhere.js").status_code == 404
    assert httpx.post(base(url) + "/", content=b"", timeout=20).status_code == 405


def test_data_is_the_board_its_tools_readings_histories_and_alerts(http_bridge):
    url, bridge = http_bridge()
    data = data_until(url, lambda d: d["boards"][0]["histories"]
                      and d["boards"][0]["histories"][0]["samples"])
    [board] = data["boards"]
    assert board["name"] == "tinymcp-sim" and board["state"] == "ready"
    assert board["label"] is None and "simulated" in board["instructions"]
    tools = {tool["name"]: tool for tool in board["tools"]}
    assert tools["read_temperature"]["read_only"] is True
    assert tools["set_led"]["read_only"] is False and tools["set_led"]["title"] == "Set LED"
    [reading] = [r for r in board["readings"] if r["uri"] == "sensor://temperature"]
    assert reading["units"] == {"celsius": "Cel"} and 10 < reading["celsius"] < 40
    assert reading["age_ms"] >= 0 and reading["read_at"] <= data["now"]
    [history] = board["histories"]
    assert history["uri"] == "sensor://temperature/history" and history["unit"] == "Cel"
    times = [t for t, _ in history["samples"]]
    assert times == sorted(times) and history["now_ms"] >= times[-1]
    assert board["alerts"]["alerts"] == []

    # Live: an alert set by an MCP host shows on the next look, and so do newer samples.
    async def set_alert():
        async with Client(url, mode="auto") as client:
            result = await client.call_tool("set_alert", {"quantity": "temperature",
                                                          "above": 99.5, "hysteresis": 0.5})
            assert not result.is_error, result
    asyncio.run(set_alert())
    later = data_until(url, lambda d: d["boards"][0]["alerts"]["alerts"]
                       and d["boards"][0]["histories"][0]["samples"][-1][0] > times[-1])
    [alert] = later["boards"][0]["alerts"]["alerts"]
    assert alert["quantity"] == "temperature" and alert["above"] == 99.5
    assert alert["state"] == "armed" and alert["crossings"] == 0


def test_host_and_origin_are_checked_as_for_mcp(http_bridge):
    url, bridge = http_bridge()
    port = url.split(":")[2].split("/")[0]
    for path in ("/", "/dashboard/data", "/dashboard/dashboard.js", "/dashboard/uplot.js"):
        assert get(base(url) + path, host="evil.example").status_code == 421, path
        assert get(base(url) + path, host="evil.example:" + port).status_code == 421, path
        assert get(base(url) + path, origin="http://evil.example").status_code == 403, path
        assert get(base(url) + path, origin="http://localhost.evil.example:" + port
                   ).status_code == 403, path
    assert get(base(url) + "/dashboard/data", origin="http://127.0.0.1:" + port,
               host="127.0.0.1:" + port).status_code == 200
    assert get(base(url) + "/dashboard/data", host="localhost:" + port).status_code == 200
    bridge.wait_stderr(r"http: refused GET /dashboard/data \(403; Origin http://evil")


def test_on_all_interfaces_any_host_may_ask_but_never_a_foreign_origin():
    port = free_port()
    bridge = Bridge(["--sim", "--http", "0.0.0.0:%d" % port, "--log-level", "info"],
                    stdin=subprocess.DEVNULL, env=clean_env(TINYMCP_BRIDGE_TOKEN=TOKEN))
    try:
        bridge.wait_stderr("board ready")
        data = "http://127.0.0.1:%d/dashboard/data" % port
        token = "Bearer " + TOKEN
        assert get(data, authorization=token, host="bench-pc.lan:%d" % port).status_code == 200
        assert get(data, host="bench-pc.lan:%d" % port).status_code == 401
        assert get(data, authorization=token, origin="http://evil.example").status_code == 403
        assert get(data, authorization=token,
                   origin="http://127.0.0.1:%d" % port).status_code == 200
    finally:
        assert bridge.stop() == 0


def test_data_needs_the_bearer_token_and_the_token_is_never_logged(http_bridge):
    url, bridge = http_bridge("--token", TOKEN, "--log-level", "debug")
    data = base(url) + "/dashboard/data"
    # The page itself holds nothing of the board: a browser navigating to it cannot send the
    # header, and its script then asks for the data with the token it was given as ?token=.
    assert get(base(url) + "/?token=" + TOKEN).status_code == 200
    refused = get(data)
    assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
    assert get(data, authorization="Bearer wrong").status_code == 401
    assert get(data, authorization="Bearer " + TOKEN + "x").status_code == 401
    assert get(data, authorization=TOKEN).status_code == 401
    assert get(data + "?token=" + TOKEN).status_code == 401   # a URL is no place for it
    assert get(data, authorization="Bearer " + TOKEN).status_code == 200
    assert get(base(url) + "/mcp", authorization="Bearer wrong").status_code == 401
    bridge.wait_stderr("host session|board ready")
    assert TOKEN not in bridge.stderr()


def test_without_the_chart_library_the_data_says_how_to_get_plots(http_bridge, tmp_path):
    url, bridge = http_bridge(env=clean_env(TINYMCP_CHARTS_DIR=str(tmp_path)))
    data = data_until(url, lambda d: d["boards"][0]["readings"])
    assert data["charts"] is False and ".ci/install-charts" in data["charts_hint"]
    missing_chart = get(base(url) + "/dashboard/uplot.js")
    assert missing_chart.status_code == 404 and ".ci/install-charts" in missing_chart.text
    assert get(base(url) + "/").status_code == 200


def test_the_chart_library_is_found_where_its_install_step_puts_it(monkeypatch, tmp_path):
    monkeypatch.setenv("TINYMCP_CHARTS_DIR", str(tmp_path))
    assert charts_dir() is None
    (tmp_path / "uPlot.iife.min.js").write_text("var uPlot;")
    assert charts_dir() is None   # both files, or no plots
    (tmp_path / "uPlot.min.css").write_text(".uplot {}")
    assert charts_dir() == str(tmp_path)


# -- when the boards are read: a board session double counting what reaches it ---------------

class CountingBoard:
    # The part of a BoardSession the dashboard uses, answering like the sim board after `delay`.
    def __init__(self, delay=0.0):
        self.state = "ready"
        self.init_result = {"serverInfo": {"name": "counted"},
                            "capabilities": {"tools": {}, "resources": {}}}
        self.delay = delay
        self.calls = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.release = None   # an asyncio.Event every call waits for, when set by a test

    async def call(self, method, params=None, retry=False):
        self.calls.append(method)
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            if self.release is not None:
                await self.release.wait()
        finally:
            self.in_flight -= 1
        if method == "tools/list":
            return {"result": {"tools": [{"name": "read_x", "annotations":
                                          {"readOnlyHint": True}}]}}
        if method == "resources/list":
            return {"result": {"resources": [
                {"uri": "x://reading", "name": "x", "mimeType": "application/json"},
                {"uri": "x://history", "name": "xh", "mimeType": "application/json"}]}}
        if params["uri"] == "x://reading":
            text = '{"x": 1.5, "units": {"x": "V"}, "age_ms": 0}'
        else:
            text = '{"quantity": "x", "unit": "V", "now_ms": 9, "samples": [[0, 1.5]]}'
        return {"result": {"contents": [{"uri": params["uri"], "text": text}]}}


class QuickDashboard(Dashboard):
    periods = {"readings": 0.05, "histories": 0.1, "listings": 5.0}
    viewer_seconds = 0.5
    first_wait = 0.5


def quick(*boards):
    return QuickDashboard(lambda: [BoardRow(str(i), b) for i, b in enumerate(boards)])


def test_boards_are_read_only_while_a_page_polls():
    board = CountingBoard()

    async def main():
        dashboard = quick(board)
        await asyncio.sleep(0.3)
        assert board.calls == []                 # nobody looks: the board is left alone
        data = await dashboard.look()
        [seen] = data["boards"]
        assert seen["readings"][0]["x"] == 1.5 and seen["histories"][0]["samples"] == [[0, 1.5]]
        assert seen["tools"] == [{"name": "read_x", "title": None, "read_only": True}]
        await asyncio.sleep(0.5)
        assert board.calls.count("resources/read") > 2   # while a page polls, again and again
        await asyncio.sleep(QuickDashboard.viewer_seconds + 0.5)
        stopped = len(board.calls)               # no poll for a while: reading has stopped
        await asyncio.sleep(0.5)
        assert len(board.calls) == stopped
        await dashboard.look()                   # a page is back: so is the reading
        assert len(board.calls) > stopped
        await dashboard.close()
    asyncio.run(main())


def test_many_pages_never_stack_requests_on_a_board():
    board = CountingBoard(delay=0.02)

    async def main():
        dashboard = quick(board)
        for _ in range(10):                      # twenty pages polling at once, ten times
            await asyncio.gather(*[dashboard.look() for _ in range(20)])
            await asyncio.sleep(0.05)
        await dashboard.close()
    asyncio.run(main())
    assert board.most_in_flight == 1 and board.calls.count("resources/list") == 1


def test_a_board_that_does_not_answer_holds_up_no_other():
    stuck, fine = CountingBoard(), CountingBoard()

    async def main():
        stuck.release = asyncio.Event()          # never set: every request to it hangs
        dashboard = quick(stuck, fine)
        data = await dashboard.look()            # the first look waits only so long
        by_label = {b["label"]: b for b in data["boards"]}
        assert by_label["1"]["readings"] and by_label["0"]["readings"] == []
        reads = fine.calls.count("resources/read")
        await asyncio.sleep(0.3)
        await dashboard.look()
        assert fine.calls.count("resources/read") > reads and stuck.most_in_flight == 1
        await dashboard.close()
    asyncio.run(main())


def test_an_unplugged_board_is_shown_as_such_without_requests():
    board = CountingBoard()
    board.state = "disconnected"

    async def main():
        dashboard = quick(board)
        [seen] = (await dashboard.look())["boards"]
        await dashboard.close()
        return seen
    seen = asyncio.run(main())
    assert seen["state"] == "disconnected" and "disconnected" in seen["error"]
    assert board.calls == []

