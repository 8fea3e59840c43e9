# The compact tool surface (tinymcp-bridge --compact) through the official SDK client: with four
# boards a tool they share is listed once, with a board argument (an enum of the labels that have
# it); calls route by it; a missing or unknown board is an isError naming the labels; boards that
# leave and come back change the enum; resources stay LABEL+URI.
import asyncio
import os
import shutil
import signal

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import REPO, TESTBOARD, LineClient, bridge_script, clean_env
from tests.bridge.test_several_boards import SIM_TOOLS, Changes, led_volts
from tests.windows_shim import as_on_windows, same_on_every_os  # noqa: F401  (each test twice)
from tinymcp.host.bridge.routes import NAME, Catalog
from tinymcp.host.bridge.routes import surface

VARIANT = os.path.join(REPO, "tests", "bridge", "variantboard.py")
FOUR = ["--sim", "a=sim", "--sim", "b=sim", "--sim", "c=sim", "--sim", "t=" + TESTBOARD]
# The sim board's tools every board of FOUR has (the testboard is the sim board and more).
SHARED = SIM_TOOLS | {"read_history", "set_alert", "plot_history"}


async def listed(client, changes, check, seconds=40):
    # The tools by name, listed again at each list_changed until check(tools) holds.
    with anyio.fail_after(seconds):
        while True:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            if check(tools):
                return tools
            await changes.next_change(seconds)


def boards_of(tool):
    return tool.input_schema["properties"]["board"]["enum"]


def error_text(result):
    assert result.is_error, result
    return result.content[0].text


def everyone_there(labels):
    return lambda tools: all(name in tools and boards_of(tools[name]) == labels
                             for name in SHARED)


def test_four_boards_list_each_shared_tool_once_with_a_board_argument_over_stdio():
    params = StdioServerParameters(command=bridge_script(), args=["--compact"] + FOUR,
                                   cwd=REPO, env=clean_env())
    changes = Changes()

    async def main():
        async with Client(params, mode="legacy", message_handler=changes) as client:
            tools = await listed(client, changes, everyone_there(["a", "b", "c", "t"]))
            names = [tool.name for tool in (await client.list_tools()).tools]
            assert len(names) == len(set(names)) == len(tools)
            assert SHARED | {"slow", "chatty", "ask"} <= set(names)
            assert not [n for n in names if n.split("_")[0] in ("a", "b", "c", "t")], names
            assert all(NAME.match(name) for name in names)
            adc = tools["read_adc"]
            assert adc.input_schema["required"] == ["board", "channel"]
            assert adc.input_schema["properties"]["channel"]["maximum"] == 3   # the board's own
            assert "a, b, c, t" in adc.description and adc.output_schema is not None
            # A tool only one board has keeps the board's name; its board may be left out.
            assert boards_of(tools["slow"]) == ["t"]
            assert "board" not in tools["slow"].input_schema.get("required", [])
            for line in ("- read_adc: a, b, c, t", "- slow: t"):
                assert line in client.instructions, client.instructions
            # Calls go to the board named: b's LED lights b's photodiode (ADC channel 2) only.
            await client.call_tool("set_led", {"board": "a", "on": False})
            on = await client.call_tool("set_led", {"board": "b", "on": True})
            assert on.structured_content == {"on": True}
            a = await client.call_tool("read_adc", {"board": "a", "channel": 2})
            b = await client.call_tool("read_adc", {"board": "b", "channel": 2})
            assert led_volts(b) > 2.0 > 0.5 > led_volts(a), (a, b)
            assert not (await client.call_tool("chatty", {})).is_error   # t, the only one
            # No board, or one that has no such tool: the model is told the labels.
            missing = error_text(await client.call_tool("read_adc", {"channel": 1}))
            assert "a, b, c, t" in missing and "board" in missing, missing
            wrong = error_text(await client.call_tool("slow", {"board": "a", "seconds": 0}))
            assert "'a'" in wrong and ": t" in wrong, wrong
            # Resources are as without --compact: LABEL+URI.
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
            assert {"%s+sensor://temperature" % label for label in "abct"} <= uris
            read = await client.read_resource("c+sensor://temperature")
            assert str(read.contents[0].uri) == "c+sensor://temperature"
    asyncio.run(main())


def test_a_board_whose_tool_differs_keeps_its_labelled_name():
    # v's read_adc has eight channels (the others four); its locate has an argument named board.
    params = StdioServerParameters(command=bridge_script(), cwd=REPO, env=clean_env(),
                                   args=["--compact", "--sim", "a=sim", "--sim", "b=sim",
                                         "--sim", "v=" + VARIANT])
    changes = Changes()

    async def main():
        async with Client(params, mode="legacy", message_handler=changes) as client:
            tools = await listed(client, changes, lambda t: {"read_adc", "v_read_adc",
                                                             "v_locate"} <= set(t))
            assert boards_of(tools["read_adc"]) == ["a", "b"]
            assert "read_adc: a, b" in client.instructions
            assert tools["v_read_adc"].input_schema["properties"]["channel"]["maximum"] == 7
            assert "locate" not in tools
            eight = await client.call_tool("v_read_adc", {"channel": 7})
            assert eight.structured_content == {"raw": 7000}
            located = await client.call_tool("v_locate", {"board": "0x42"})   # v's own argument
            assert located.structured_content == {"blinking": "0x42"}
            wrong = error_text(await client.call_tool("read_adc", {"board": "v", "channel": 1}))
            assert "a, b" in wrong, wrong
    asyncio.run(main())


@same_on_every_os   # the HTTP front: stdio runs under the shim above
def test_boards_leaving_and_coming_back_change_the_enum_over_http(tmp_path, http_bridge):
    # b runs a copy of the sim board; while the copy is moved away, b cannot be restarted.
    board_b = tmp_path / "b" / "main.py"
    board_b.parent.mkdir()
    shutil.copy(os.path.join(REPO, "boards", "sim", "main.py"), board_b)
    url, bridge = http_bridge("--compact", "--sim", "a=sim", "--sim", "b=" + str(board_b),
                              "--timeout", "3", env=clean_env(PYTHONPATH=REPO), board=None)
    pid_b = int(bridge.wait_stderr(r"sim board b started, pid (\d+)").group(1))
    changes = Changes()

    async def main():
        async with Client(url, mode="legacy", message_handler=changes) as client:
            await listed(client, changes, everyone_there(["a", "b"]))
            moved = board_b.with_name("away.py")
            board_b.rename(moved)
            os.kill(pid_b, signal.SIGKILL)
            tools = await listed(client, changes, everyone_there(["a"]))
            assert "board" not in tools["read_temperature"].input_schema.get("required", [])
            gone = error_text(await client.call_tool("read_temperature", {"board": "b"}))
            assert "'b'" in gone and ": a" in gone, gone
            alone = await client.call_tool("read_temperature", {})   # a, the only one now
            assert 10 < alone.structured_content["celsius"] < 40
            moved.rename(board_b)
            tools = await listed(client, changes, everyone_there(["a", "b"]), seconds=60)
            assert tools["read_temperature"].input_schema["required"] == ["board"]
            back = await client.call_tool("read_temperature", {"board": "b"})
            assert not back.is_error
    asyncio.run(main())
    assert changes.tools_changed >= 2
    assert "Traceback" not in bridge.stderr(), bridge.stderr()[-3000:]


@same_on_every_os
def test_with_one_board_compact_changes_nothing():
    client = LineClient(["--compact", "--sim"])
    try:
        client.initialize()
        tools = client.request("tools/list")["result"]["tools"]
        assert SIM_TOOLS <= {tool["name"] for tool in tools}
        assert not [t for t in tools if "board" in t["inputSchema"].get("properties", {})]
    finally:
        client.stop()


def catalog_of(label, *tools):
    catalog = Catalog()
    catalog.learn("tools", list(tools), label)
    return label, catalog


def adc(maximum, description="Read an ADC channel."):
    return {"name": "read_adc", "description": description, "inputSchema": {
        "type": "object", "properties": {"channel": {"type": "integer", "maximum": maximum}},
        "required": ["channel"]}}


@same_on_every_os   # no process
def test_the_most_boards_that_agree_share_a_tool_and_the_first_board_breaks_a_tie():
    # Three boards with four channels, one with eight: the three share read_adc.
    tools = surface([catalog_of("a", adc(7)), catalog_of("b", adc(3)),
                     catalog_of("c", adc(3, "Newer words.")), catalog_of("d", adc(3))])
    assert sorted(tools) == ["a_read_adc", "read_adc"]
    assert tools["read_adc"].targets == {"b": "read_adc", "c": "read_adc", "d": "read_adc"}
    assert tools["read_adc"].tool["description"].startswith("Read an ADC channel.")
    assert tools["a_read_adc"].tool["inputSchema"]["properties"] == {
        "channel": {"type": "integer", "maximum": 7}}   # no board argument: a's own
    # One against one: the first board's kind is shared.
    tie = surface([catalog_of("a", adc(7)), catalog_of("b", adc(3))])
    assert tie["read_adc"].targets == {"a": "read_adc"} and "b_read_adc" in tie
    # The board argument is taken out of what the board sees.
    assert tools["read_adc"].route({"board": "c", "channel": 1}) == ("c", "read_adc",
                                                                      {"channel": 1})
    assert tools["read_adc"].route({"channel": 1})[0] is None
    assert "b, c, d" in tools["read_adc"].route({"board": ["b"], "channel": 1})[1]
