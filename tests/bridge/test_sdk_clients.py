# The official MCP SDK client in the handshake era (mode="legacy") through the bridge, stdio and HTTP.
import asyncio

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import REPO, TESTBOARD, Updates, bridge_script, clean_env
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)
from tests.windows_shim import windows_paths_run_by


# Under the Windows shim (tests/windows_shim), the SDK client's sessions on stdio and HTTP named
# below, and a board's request to the host on both fronts in test_musts.py, take the Windows paths
# a sampling request takes. Tests marked @windows_covered run once, as on POSIX: under the shim
# they would take no path the tests named below do not.
windows_covered = windows_paths_run_by(
    "test_sdk_client_over_stdio",
    "test_sdk_client_over_http",
    "tests/bridge/test_musts.py::test_stdio_a_declared_url_mode_reaches_the_host",
    "tests/bridge/test_musts.py::test_http_2025_03_26_a_batched_call_asks_its_host_on_the_get_stream")

CONTRACT_TOOLS = {"read_temperature": {}, "read_adc": {"channel": 1}, "set_led": {"on": True}}


async def exercise(client, updates):
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(CONTRACT_TOOLS) <= set(tools)
    for name, args in CONTRACT_TOOLS.items():
        result = await client.call_tool(name, args)
        assert not result.is_error, result
        assert result.structured_content is not None
    temp = (await client.call_tool("read_temperature", {})).structured_content
    assert 10 < temp["celsius"] < 40
    assert (await client.call_tool("set_led", {"on": False})).structured_content == {"on": False}
    read = await client.read_resource("sensor://temperature")
    assert '"celsius"' in read.contents[0].text
    with pytest.warns(Warning):
        await client.subscribe_resource("sensor://temperature")
    with anyio.fail_after(30):
        await updates.event.wait()
    assert updates.uris[0] == "sensor://temperature"


def test_sdk_client_over_stdio():
    updates = Updates()
    params = StdioServerParameters(command=bridge_script(), args=["--sim"], cwd=REPO,
                                   env=clean_env())

    async def main():
        async with Client(params, mode="legacy", message_handler=updates) as client:
            await exercise(client, updates)
    asyncio.run(main())


def test_sdk_client_over_http(http_bridge):
    url, bridge = http_bridge()
    updates = Updates()

    async def main():
        async with Client(url, mode="legacy", message_handler=updates) as client:
            await exercise(client, updates)
    asyncio.run(main())
    assert "Traceback" not in bridge.stderr(), bridge.stderr()


@windows_covered
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_sampling_request_from_the_board_reaches_the_host(transport, http_bridge):
    # The board asks the host's model through the bridge; the answer goes back to the board.
    asked = []

    async def sampling(context, params):
        from mcp import CreateMessageResult
        asked.append(params.messages[0].content.text)
        return CreateMessageResult(role="assistant", model="test",
                                   content={"type": "text", "text": "four"})

    if transport == "http":
        server, bridge = http_bridge(board=TESTBOARD)
    else:
        server = StdioServerParameters(command=bridge_script(), args=["--sim", TESTBOARD],
                                       cwd=REPO, env=clean_env())

    async def main():
        async with Client(server, mode="auto", sampling_callback=sampling) as client:
            result = await client.call_tool("ask", {})
            assert result.structured_content == {"answer": "four"}, result
    asyncio.run(main())
    assert asked == ["2+2?"]
