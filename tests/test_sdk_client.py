# The official MCP Python SDK (2.x) in the handshake era (mode="legacy": initialize,
# resources/subscribe, ping) against the simulated board on both runtimes. Auto mode now finds
# the 2026-07-28 era on our boards: tests/test_modern_sdk.py covers that.
import warnings

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.board_process import REPO, board_command, board_env


def sdk_client(runtime, **kwargs):
    cmd = board_command(runtime)
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], cwd=REPO, env=board_env())
    return Client(params, mode="legacy", **kwargs)


@pytest.mark.parametrize("runtime", ["python", "micropython"])
def test_sdk_client_lists_calls_reads_and_subscribes(runtime):
    updates = []

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            updates.append(root.params.uri)

    async def session():
        async with sdk_client(runtime, message_handler=on_message) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert sorted(tools) == ["plot_history", "read_adc", "read_history",
                                    "read_temperature", "sample", "set_alert", "set_led",
                                    "wait_for_event"]
            assert tools["read_adc"].input_schema["properties"]["channel"]["maximum"] == 3
            assert tools["set_led"].annotations.read_only_hint is False
            assert tools["read_temperature"].annotations.read_only_hint is True

            temp = await client.call_tool("read_temperature", {})
            assert not temp.is_error and 10 < temp.structured_content["celsius"] < 40

            for channel in range(4):
                adc = await client.call_tool("read_adc", {"channel": channel})
                assert not adc.is_error
                assert 0 <= adc.structured_content["raw"] <= 65535
                assert 0 <= adc.structured_content["volts"] <= 3.3

            bad = await client.call_tool("read_adc", {"channel": 7})
            assert bad.is_error and "channel" in bad.content[0].text

            led = await client.call_tool("set_led", {"on": True})
            assert led.structured_content == {"on": True}

            listed = (await client.list_resources()).resources
            assert [str(r.uri) for r in listed] == ["sensor://temperature",
                                                    "sensor://temperature/history",
                                                    "sensor://alerts"]
            read = await client.read_resource("sensor://temperature")
            assert read.contents[0].mime_type == "application/json"
            assert '"celsius"' in read.contents[0].text

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the SDK deprecates it: gone in 2026-07-28
                await client.subscribe_resource("sensor://temperature")
            with anyio.fail_after(20):
                while not updates:
                    await anyio.sleep(0.1)
            assert updates[0] == "sensor://temperature"
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # ping, too, is gone in 2026-07-28
                await client.send_ping()

    anyio.run(session)


@pytest.mark.parametrize("runtime", ["python", "micropython"])
def test_sdk_client_without_tasks_gets_a_plain_sample_and_is_answered_meanwhile(runtime):
    # mcp 2.3.0 has no tasks support: a host without tasks calls `sample` plainly and gets the
    # plain result when it ends; its other calls are answered while the sample runs.
    async def session():
        async with sdk_client(runtime) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["sample"].execution.task_support == "optional"
            done = {}

            async def sample():
                done["sample"] = await client.call_tool(
                    "sample", {"quantity": "temperature", "seconds": 2, "every_ms": 500})

            async with anyio.create_task_group() as group:
                group.start_soon(sample)
                await anyio.sleep(0.3)
                temp = await client.call_tool("read_temperature", {})
                assert "sample" not in done  # answered while the sample still ran
                assert 10 < temp.structured_content["celsius"] < 40
            got = done["sample"].structured_content
            assert got["count"] == 4 and got["min"] <= got["mean"] <= got["max"]

    anyio.run(session)
