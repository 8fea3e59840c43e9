# tinymcp-bridge --port on the emulated board's UART with the official SDK client, in both host
# eras, with JSON lines and with the CBOR link: the firmware serves from power-on (the sim board
# frozen as main.py), exactly as a flashed Pico would behind /dev/ttyACM0.
import json
import os
import time

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import REPO, Updates, bridge_script, clean_env, line_client  # noqa: F401

MODERN = "2026-07-28"


def bridge_params(port, link, errpath):
    # The bridge's stderr goes to a file: its log shows which frames the link used.
    return StdioServerParameters(command="/bin/sh", cwd=REPO, env=clean_env(),
                                 args=["-c", 'exec "$0" "$@" 2>>"%s"' % errpath, bridge_script(),
                                       "--port", port, "--link", link, "--log-level", "info"])


@pytest.mark.parametrize("link", ["json", "cbor"])
@pytest.mark.parametrize("mode", ["legacy", MODERN])
def test_sdk_client_through_the_bridge_to_the_emulated_board(mode, link, sim_elf, boot, tmp_path):
    board = boot(sim_elf)
    updates = Updates()
    errlog = str(tmp_path / "bridge.log")

    async def session():
        async with Client(bridge_params(board.port, link, errlog), mode=mode,
                          message_handler=updates) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert sorted(tools) == ["plot_history", "read_adc", "read_history",
                                    "read_temperature", "set_alert", "set_led"]
            assert tools["read_adc"].input_schema["properties"]["channel"]["maximum"] == 3
            for channel in range(4):
                adc = await client.call_tool("read_adc", {"channel": channel})
                assert not adc.is_error and 0 <= adc.structured_content["volts"] <= 3.3
            temp = await client.call_tool("read_temperature", {})
            assert 10 < temp.structured_content["celsius"] < 40
            if mode == MODERN:   # every result names its server in this era
                assert temp.meta["io.modelcontextprotocol/serverInfo"]["name"] == "tinymcp-sim"
            else:
                assert client.server_info.name == "tinymcp-sim"
            led = await client.call_tool("set_led", {"on": True})
            assert led.structured_content == {"on": True}
            bad = await client.call_tool("read_adc", {"channel": 9})
            assert bad.is_error and "channel" in bad.content[0].text
            read = await client.read_resource("sensor://temperature")
            assert '"celsius"' in read.contents[0].text
            # the history, on single-precision firmware: float32 samples, times in ms
            history = json.loads((await client.read_resource(
                "sensor://temperature/history")).contents[0].text)
            assert history["unit"] == "Cel" and history["samples"], history
            assert all(10 < v < 40 for _t, v in history["samples"])
            stats = await client.call_tool("read_history", {"quantity": "temperature"})
            assert stats.structured_content["count"] >= len(history["samples"])
            if mode == "legacy":   # the 2026-07-28 era listens instead (tests/test_modern_sdk.py)
                with pytest.warns(Warning):
                    await client.subscribe_resource("sensor://temperature")
                with anyio.fail_after(30):
                    await updates.event.wait()
                assert updates.uris[0] == "sensor://temperature"
            assert client.protocol_version == (MODERN if mode == MODERN else "2025-11-25")
    anyio.run(session)
    with open(errlog) as f:
        log = f.read()
    assert "Traceback" not in log, log
    if link == "cbor":
        assert "board link: CBOR frames with CRC-32" in log and "0 dropped for a bad CRC" in log, log
    assert board.running()


# -- the bridge's restart recovery: 0x03 ends serving, Ctrl-D soft-resets, main.py serves again --

def type_at(port, data):
    # Bytes onto the board's UART beside the bridge, as a second program on the port would.
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def calls_succeed(client, seconds=60):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        reply = client.call("read_adc", timeout=30, channel=1)
        if "result" in reply and not reply["result"].get("isError"):
            return reply
        time.sleep(0.2)
    raise AssertionError("no tools/call succeeded in %d s; bridge log:\n%s"
                         % (seconds, client.stderr()[-3000:]))


def test_a_board_left_at_its_repl_is_restarted_by_the_bridge(sim_elf, boot, line_client):
    board = boot(sim_elf)
    type_at(board.port, b"\x03")   # someone's Ctrl-C: serving ends, main.py returns, REPL
    time.sleep(0.5)
    client = line_client("--port", board.port, "--log-level", "info")
    client.initialize()
    assert calls_succeed(client)["result"]["structuredContent"]["raw"] >= 0
    assert board.running()


def test_a_soft_reset_mid_session_is_recovered(sim_elf, boot, line_client):
    board = boot(sim_elf)
    client = line_client("--port", board.port, "--log-level", "info")
    client.initialize()
    calls_succeed(client)
    type_at(board.port, b"\x03")   # serving ends...
    time.sleep(0.5)
    type_at(board.port, b"\x04")   # ...and a soft reset at the REPL runs main.py again
    calls_succeed(client)
    assert client.request("tools/list")["result"]["tools"]
    assert not client.noise
