# The MCP Inspector CLI with --protocol-era modern through the bridge, and a modern host served
# from a board that does not know the 2026-07-28 revision at all.
import json
import os
import subprocess

import anyio
import mcp_types as types

from tests.bridge.conftest import BRIDGE, REPO, inspector_command
from tests.bridge_modern.conftest import MODERN, sdk_client

HANDSHAKE_BOARD = os.path.join(REPO, "tests", "bridge_modern", "handshake_board.py")


def inspect(target, *args):
    argv, env = inspector_command()
    done = subprocess.run(argv + target + ["--protocol-era", "modern"] + list(args), cwd=REPO,
                          env=env, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(done.stdout)


def check(target):
    tools = inspect(target, "--method", "tools/list")["tools"]
    assert "test_simple_text" in {t["name"] for t in tools}
    called = inspect(target, "--method", "tools/call", "--tool-name", "test_simple_text")
    assert called["content"][0]["text"] == "This is a simple text response for testing."
    assert called["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "tinymcp-conformance"
    read = inspect(target, "--method", "resources/read", "--uri", "test://static-text")
    assert (read["ttlMs"], read["cacheScope"]) == (0, "private")


def test_inspector_cli_modern_era_over_stdio():
    check(BRIDGE + ["--sim", "conformance"])


def test_inspector_cli_modern_era_over_http(http_bridge):
    url, bridge = http_bridge(board="conformance")
    check([url, "--transport", "http"])
    assert "Traceback" not in bridge.stderr(), bridge.stderr()


def test_a_handshake_only_board_serves_a_modern_host(http_bridge):
    async def elicit(context, params):
        return types.ElicitResult(action="accept", content={"username": "old", "email": "o@b"})

    async def session():
        async with sdk_client("http", "auto", http_bridge, board=HANDSHAKE_BOARD,
                              elicitation_callback=elicit) as c:
            assert c.protocol_version == MODERN
            got = await c.call_tool("test_elicitation", {"message": "Name?"})
            assert "old" in got.content[0].text
            listed = await c.list_tools()
            assert listed.result_type == "complete"

    anyio.run(session)
