# Several boards behind one bridge (tinymcp-bridge --sim a=sim --sim b=sim), through the official
# SDK client: each board's tools and resources under its label, calls to the right board, a
# board that is busy or dead holding up no other, and a board that dies and comes back.
import asyncio
import os
import shutil
import signal
import subprocess

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters

from tests.bridge.conftest import (BRIDGE, REPO, TESTBOARD, LineClient, Updates, bridge_script,
                                   clean_env)
from tinymcp.host.bridge.routes import NAME

SIM_TOOLS = {"read_temperature", "read_adc", "set_led"}


class Changes(Updates):
    # A message_handler that counts notifications/tools/list_changed (and keeps updates).
    def __init__(self):
        Updates.__init__(self)
        self.tools_changed = 0
        self.changed = anyio.Event()

    async def __call__(self, message):
        await Updates.__call__(self, message)
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self.tools_changed += 1
            self.changed.set()

    async def next_change(self, seconds=30):
        with anyio.fail_after(seconds):
            await self.changed.wait()
        self.changed = anyio.Event()


async def tool_names(client):
    return {tool.name for tool in (await client.list_tools()).tools}


async def until_tools(client, changes, check, seconds=30):
    # Lists the tools again at each list_changed until check(names) holds -> the names.
    with anyio.fail_after(seconds):
        while True:
            names = await tool_names(client)
            if check(names):
                return names
            await changes.next_change(seconds)


def led_volts(result):
    return result.structured_content["volts"]


def test_two_simulated_boards_under_their_labels_over_stdio():
    params = StdioServerParameters(command=bridge_script(), args=["--sim", "a=sim", "--sim",
                                                                  "b=sim"], cwd=REPO,
                                   env=clean_env())
    updates = Updates()

    async def main():
        async with Client(params, mode="legacy", message_handler=updates) as client:
            assert "a:" in client.instructions and "b:" in client.instructions, \
                client.instructions
            names = await until_tools(client, Changes(), lambda n: len(n) >= 2 * len(SIM_TOOLS))
            assert {"a_" + t for t in SIM_TOOLS} | {"b_" + t for t in SIM_TOOLS} <= names
            assert all(NAME.match(name) for name in names)
            # a_set_led switches a's LED only: its photodiode (ADC channel 2) reads bright.
            await client.call_tool("b_set_led", {"on": False})
            on = await client.call_tool("a_set_led", {"on": True})
            assert on.structured_content == {"on": True}
            a = await client.call_tool("a_read_adc", {"channel": 2})
            b = await client.call_tool("b_read_adc", {"channel": 2})
            assert led_volts(a) > 2.0 > 0.5 > led_volts(b), (a, b)
            # Resources carry the label too, reads and subscriptions included.
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
            assert {"a+sensor://temperature", "b+sensor://temperature"} <= uris
            read = await client.read_resource("b+sensor://temperature")
            assert str(read.contents[0].uri) == "b+sensor://temperature"
            assert '"celsius"' in read.contents[0].text
            with pytest.warns(Warning):
                await client.subscribe_resource("a+sensor://temperature")
            with anyio.fail_after(30):
                await updates.event.wait()
            assert updates.uris[0] == "a+sensor://temperature"
            with pytest.raises(MCPError) as unknown:
                await client.call_tool("c_read_temperature", {})
            assert "a_" in unknown.value.error.message and "b_" in unknown.value.error.message
    asyncio.run(main())


def test_two_boards_for_a_2026_07_28_host():
    params = StdioServerParameters(command=bridge_script(), args=["--sim", "a=sim", "--sim",
                                                                  "b=sim"], cwd=REPO,
                                   env=clean_env())

    async def main():
        async with Client(params, mode="auto") as client:
            assert client.protocol_version == "2026-07-28"
            with anyio.fail_after(30):
                while not {"a_read_adc", "b_read_adc"} <= await tool_names(client):
                    await anyio.sleep(0.2)
            adc = await client.call_tool("b_read_adc", {"channel": 1})
            assert set(adc.structured_content) >= {"raw", "volts"}
            read = await client.read_resource("a+sensor://temperature")
            assert str(read.contents[0].uri) == "a+sensor://temperature"
    asyncio.run(main())


def test_a_busy_board_holds_up_no_other_and_its_tools_stay_listed():
    client = LineClient(["--sim", "a=" + TESTBOARD, "--sim", "b=" + TESTBOARD, "--timeout", "60"])
    try:
        client.initialize()
        slow = client.start("tools/call", {"name": "b_slow", "arguments": {"seconds": 50}})
        # While b is busy: a answers, and the list of both boards' tools comes.
        assert "result" in client.call("a_read_temperature")
        listed = client.request("tools/list")["result"]["tools"]
        assert {"a_slow", "b_slow"} <= {tool["name"] for tool in listed}
        assert slow not in client.early   # b is still at it
        client.notify("notifications/cancelled", {"requestId": slow})
        assert "result" in client.call("b_read_temperature")   # b stopped when cancelled
    finally:
        client.stop()


def test_a_board_killed_loses_its_tools_while_the_other_answers_and_comes_back(tmp_path,
                                                                               http_bridge):
    # b runs a copy of the sim board; while the copy is moved away, b cannot be restarted.
    board_b = tmp_path / "b" / "main.py"
    board_b.parent.mkdir()
    shutil.copy(os.path.join(REPO, "boards", "sim", "main.py"), board_b)
    url, bridge = http_bridge("--sim", "a=sim", "--sim", "b=" + str(board_b), "--timeout", "3",
                              env=clean_env(PYTHONPATH=REPO), board=None)
    pid_b = int(bridge.wait_stderr(r"sim board b started, pid (\d+)").group(1))
    bridge.wait_stderr(r"board b ready")
    changes = Changes()

    async def main():
        async with Client(url, mode="legacy", message_handler=changes) as client:
            await until_tools(client, changes, lambda n: "b_read_temperature" in n
                              and "a_read_temperature" in n)
            moved = board_b.with_name("away.py")
            board_b.rename(moved)
            os.kill(pid_b, signal.SIGKILL)
            names = await until_tools(client, changes,
                                      lambda n: not any(n.startswith("b_") for n in n))
            assert "a_read_temperature" in names
            reading = await client.call_tool("a_read_temperature", {})
            assert not reading.is_error and 10 < reading.structured_content["celsius"] < 40
            with pytest.raises(MCPError) as gone:   # b does not answer meanwhile
                await client.call_tool("b_read_temperature", {})
            assert gone.value.error.data["bridge"] == "timeout", gone.value.error
            moved.rename(board_b)   # b can start again: it comes back with its tools
            names = await until_tools(client, changes, lambda n: "b_read_temperature" in n,
                                      seconds=60)
            assert "a_read_temperature" in names
            assert not (await client.call_tool("b_read_temperature", {})).is_error
    asyncio.run(main())
    assert changes.tools_changed >= 2
    assert "Traceback" not in bridge.stderr(), bridge.stderr()[-3000:]


def test_board_arguments_are_checked_before_anything_starts():
    for args, words in ((["--sim", "A=sim"], "label"), (["--sim", "1x=sim"], "label"),
                        (["--sim", "a=sim", "--sim", "a=sim"], "two boards"),
                        (["--port", "x=auto"], "auto"),
                        (["--port", "auto", "--port", "auto"], "once"),
                        (["--port", "socket://nowhere"], "url")):
        done = subprocess.run(BRIDGE + args, cwd=REPO, env=clean_env(),
                              capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
        assert done.returncode == 2, (args, done)
        said = done.stderr.decode().strip()
        assert len(said.splitlines()) == 1 and words in said.lower(), (args, said)


def test_the_dashboard_shows_every_board_under_its_label(http_bridge):
    from tests.bridge.test_dashboard import data_until
    url, _bridge = http_bridge("--sim", "a=sim", "--sim", "b=sim", board=None)
    data = data_until(url, lambda d: len(d["boards"]) == 2 and all(
        b["state"] == "ready" and b["readings"] for b in d["boards"]))
    assert [board["label"] for board in data["boards"]] == ["a", "b"]
    for board in data["boards"]:
        assert "read_temperature" in {tool["name"] for tool in board["tools"]}


def test_prompts_templates_completion_and_sampling_are_routed_by_label():
    client = LineClient(["--sim", "c=conformance", "--sim", "t=" + TESTBOARD])
    try:
        reply = client.request("initialize", {"protocolVersion": "2025-11-25",
                                              "capabilities": {"sampling": {}},
                                              "clientInfo": {"name": "pytest", "version": "0"}})
        assert "completions" in reply["result"]["capabilities"]
        client.notify("notifications/initialized")
        prompts = {p["name"] for p in client.request("prompts/list")["result"]["prompts"]}
        assert {"c_test_simple_prompt", "c_test_prompt_with_arguments"} <= prompts
        got = client.request("prompts/get", {"name": "c_test_prompt_with_arguments",
                                             "arguments": {"arg1": "x", "arg2": "y"}})
        assert "arg1='x'" in str(got["result"]["messages"]), got
        got = client.request("prompts/get", {"name": "c_test_prompt_with_embedded_resource",
                                             "arguments": {"resourceUri": "test://static-text"}})
        embedded = got["result"]["messages"][0]["content"]["resource"]
        assert embedded["uri"] == "c+test://static-text"   # a URI the board names: labelled
        templates = client.request("resources/templates/list")["result"]["resourceTemplates"]
        assert [t["uriTemplate"] for t in templates] == ["c+test://template/{id}/data"]
        read = client.request("resources/read", {"uri": "c+test://template/7/data"})
        assert read["result"]["contents"][0]["uri"] == "c+test://template/7/data"
        assert '"id":"7"' in read["result"]["contents"][0]["text"].replace(" ", "")
        done = client.request("completion/complete", {
            "ref": {"type": "ref/prompt", "name": "c_test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "par"}})
        assert done["result"]["completion"]["values"] == ["paris", "park", "party"]
        assert client.request("resources/read", {"uri": "d+test://static-text"})["error"][
            "code"] == -32002
        # t's request to the client reaches the host whose call it is running.
        rid = client.start("tools/call", {"name": "t_ask", "arguments": {}})
        asked = None
        while asked is None:
            message = client.message()
            if message.get("method") == "sampling/createMessage":
                asked = message
            elif "method" not in message:
                client.early[message.get("id")] = message
        client.send({"jsonrpc": "2.0", "id": asked["id"], "result": {
            "role": "assistant", "model": "m", "content": {"type": "text", "text": "four"}}})
        assert client.wait(rid)["result"]["structuredContent"] == {"answer": "four"}
    finally:
        client.stop()
