# The bridge's own wait_for_event, across its boards, with the official SDK client: one tool in
# place of the boards' own, an alert set on a board comes back once, naming its board, a wait with
# nothing to say ends at its bound with progress, several hosts wait with their own cursors, and
# boards leaving and arriving are events too.
import asyncio
import json
import time

import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import REPO, bridge_script, clean_env


def structured(result):
    assert not result.is_error, result
    return result.structured_content


async def wait_for_event(client, progress=None, **arguments):
    return structured(await client.call_tool("wait_for_event", arguments,
                                             progress_callback=progress))


async def alert_comes_back(client, prefix, cursor):
    # Sets an alert the board's temperature already exceeds (it crosses at the next sample)
    # -> (the alert events seen, the cursor after them, seconds from set_alert's answer).
    celsius = structured(await client.call_tool(prefix + "read_temperature", {}))["celsius"]
    structured(await client.call_tool(prefix + "set_alert",
                                      {"quantity": "temperature", "above": celsius - 10}))
    set_at = time.monotonic()
    alerts = []
    while not alerts and time.monotonic() - set_at < 10:
        found = await wait_for_event(client, after=cursor, timeout_s=5)
        cursor = found["cursor"]
        alerts = [e for e in found["events"] if e["kind"] == "alert"]
    return alerts, cursor, time.monotonic() - set_at


def test_one_board_one_wait_an_alert_once_and_an_empty_wait_with_progress():
    params = StdioServerParameters(command=bridge_script(), args=["--sim"], cwd=REPO,
                                   env=clean_env())
    ticks = []

    async def progress(done, total, message):
        ticks.append((done, total))

    async def main():
        async with Client(params, mode="legacy") as client:
            tools = [t for t in (await client.list_tools()).tools if t.name == "wait_for_event"]
            assert len(tools) == 1 and "any board" in tools[0].description  # the bridge's
            assert tools[0].input_schema["properties"]["timeout_s"]["maximum"] == 50
            first = await wait_for_event(client, timeout_s=0)
            assert {"kind": "board_added", "board": "sim"} in [
                {k: e[k] for k in ("kind", "board")} for e in first["events"]]
            alerts, cursor, latency = await alert_comes_back(client, "", first["cursor"])
            print("through the bridge: alert returned %.3f s after set_alert" % latency)
            assert len(alerts) == 1 and latency < 2.0
            alert = alerts[0]
            assert alert["board"] == "sim" and alert["quantity"] == "temperature"
            assert alert["unit"] == "Cel" and alert["uri"] == "sensor://alerts"
            assert alert["crossed"] == "above" and type(alert["value"]) is float
            began = time.monotonic()
            again = await wait_for_event(client, progress, after=cursor, timeout_s=2)
            waited = time.monotonic() - began
            print("through the bridge: empty 2 s wait returned after %.3f s" % waited)
            assert again == {"events": [], "cursor": cursor} and 1.9 <= waited < 10
            assert ticks and all(total == 2 and 0 < done <= 2 for done, total in ticks)
            bad = await client.call_tool("wait_for_event", {"after": "x", "timeout_s": 60})
            assert bad.is_error and "timeout_s" in bad.content[0].text
            bad = await client.call_tool("wait_for_event", {"after": "not-one"})
            assert bad.is_error and "not a cursor" in bad.content[0].text
    asyncio.run(main())


def test_several_boards_and_two_hosts_each_with_its_own_cursor(http_bridge):
    url, bridge = http_bridge("--sim", "a=sim", "--sim", "b=sim", board=None)

    async def main():
        async with Client(url, mode="legacy") as one, Client(url, mode="legacy") as two:
            names = [t.name for t in (await one.list_tools()).tools]
            assert names.count("wait_for_event") == 1 and not any(
                n.endswith("_wait_for_event") for n in names), names
            start_one = (await wait_for_event(one, timeout_s=0))["cursor"]
            start_two = (await wait_for_event(two, timeout_s=0))["cursor"]
            waiting = asyncio.ensure_future(wait_for_event(two, after=start_two, timeout_s=20))
            alerts, cursor, _ = await alert_comes_back(one, "b_", start_one)
            assert len(alerts) == 1 and alerts[0]["board"] == "b"
            assert alerts[0]["uri"] == "b+sensor://alerts"
            heard = (await waiting)["events"]   # the other host's wait ended with the news too
            while not any(e["kind"] == "alert" for e in heard):
                more = await wait_for_event(two, after=start_two, timeout_s=5)
                heard = more["events"]
            assert [e["board"] for e in heard if e["kind"] == "alert"] == ["b"]
            none = await wait_for_event(one, after=cursor, timeout_s=1)
            assert none["events"] == []   # one host's cursor: nothing twice
    asyncio.run(main())
    assert "Traceback" not in bridge.stderr(), bridge.stderr()


def test_a_board_leaving_and_coming_back_are_events(socat_board, line_client):
    pair, board = socat_board
    client = line_client("--port", pair.a, "--timeout", "3", "--log-level", "info")
    client.initialize()

    def wait(cursor, kind, seconds=30):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            since = {"after": cursor} if cursor else {}
            reply = client.call("wait_for_event", timeout=60, timeout_s=5, **since)
            found = reply["result"]["structuredContent"]
            cursor = found["cursor"]
            kinds = [e["kind"] for e in found["events"]]
            if kind in kinds:
                return found["events"][kinds.index(kind)], cursor
        raise AssertionError("no %s event in %s s\n%s" % (kind, seconds, client.stderr()[-2000:]))

    added, cursor = wait(None, "board_added")
    board.kill()
    pair.down()
    removed, cursor = wait(cursor, "board_removed")
    assert removed["board"] == added["board"]
    pair.up()
    board.start()
    again, cursor = wait(cursor, "board_added")
    assert again["board"] == added["board"]
    assert client.noise == []


def test_list_changes_of_a_board_are_events(line_client):
    client = line_client("--sim", "tests/bridge/testboard.py")
    client.initialize()
    start = client.call("wait_for_event", timeout_s=0)["result"]["structuredContent"]
    assert "result" in client.call("grow")
    end = time.monotonic() + 10
    kinds = []
    cursor = start["cursor"]
    while "tools_changed" not in kinds and time.monotonic() < end:
        found = client.call("wait_for_event", after=cursor, timeout_s=3)
        found = found["result"]["structuredContent"]
        cursor = found["cursor"]
        kinds += [e["kind"] for e in found["events"]]
    assert "tools_changed" in kinds, json.dumps(kinds)


def test_a_host_that_wants_only_errors_still_gets_alerts_as_events_and_no_warning(line_client):
    client = line_client("--sim")
    client.initialize()
    assert client.request("logging/setLevel", {"level": "error"})["result"] == {}
    cursor = client.call("wait_for_event", timeout_s=0)["result"]["structuredContent"]["cursor"]
    celsius = client.call("read_temperature")["result"]["structuredContent"]["celsius"]
    assert "result" in client.call("set_alert", quantity="temperature", above=celsius - 10)
    alerts = []
    end = time.monotonic() + 10
    while not alerts and time.monotonic() < end:
        found = client.call("wait_for_event", after=cursor, timeout_s=3)
        found = found["result"]["structuredContent"]
        cursor = found["cursor"]
        alerts = [e for e in found["events"] if e["kind"] == "alert"]
    assert len(alerts) == 1
    assert not [n for n in client.notes if n["method"] == "notifications/message"]


def test_a_2026_07_28_host_waits_through_the_bridge_as_well():
    params = StdioServerParameters(command=bridge_script(), args=["--sim"], cwd=REPO,
                                   env=clean_env())

    async def main():
        async with Client(params, mode="2026-07-28") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names.count("wait_for_event") == 1
            first = await wait_for_event(client, timeout_s=0)
            alerts, cursor, latency = await alert_comes_back(client, "", first["cursor"])
            assert len(alerts) == 1 and alerts[0]["board"] == "sim"
            began = time.monotonic()
            empty = await wait_for_event(client, after=cursor, timeout_s=1)
            assert empty["events"] == [] and time.monotonic() - began >= 0.9
    asyncio.run(main())
