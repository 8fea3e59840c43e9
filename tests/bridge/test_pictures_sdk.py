# The official MCP SDK client gets a board's plot through the bridge as a PNG it can decode, with
# the board's text beside it: stdio and HTTP, in the handshake era and the 2026-07-28 one; a
# hostile picture costs the call its PNG and nothing else; without the renderer the SVG arrives
# with the text.
import asyncio
import os

import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import REPO, bridge_script, clean_env
from tests.bridge.picture_check import TEXT, check_plot_png
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

PLOTBOARD = os.path.join(REPO, "tests", "bridge", "plotboard.py")
SVG, PNG = "image/svg+xml", "image/png"


def kinds(result):
    return [c.mime_type if c.type == "image" else c.type for c in result.content]


def through(transport, http_bridge, **env):
    # -> what the SDK client connects to: the bridge over stdio or HTTP, serving the plot board.
    if transport == "http":
        url, _bridge = http_bridge(board=PLOTBOARD, env=clean_env(**env))
        return url
    return StdioServerParameters(command=bridge_script(), args=["--sim", PLOTBOARD], cwd=REPO,
                                 env=clean_env(**env))


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_sdk_client_gets_the_plot_as_a_png(transport, mode, http_bridge, tmp_path):
    from PIL import Image
    red = tmp_path / "red.png"
    Image.new("RGB", (40, 40), (255, 0, 0)).save(red)
    server = through(transport, http_bridge, PLOTBOARD_IMAGE=str(red))

    async def main():
        async with Client(server, mode=mode) as client:
            plot = await client.call_tool("plot_history", {"quantity": "temperature"})
            assert not plot.is_error and kinds(plot) == [PNG, "text"], plot
            check_plot_png(plot.content[0].data)
            assert plot.content[1].text == TEXT
            for kind in ("file", "entities", "malformed"):
                hostile = await client.call_tool("hostile_picture", {"kind": kind})
                assert not hostile.is_error and kinds(hostile) == [SVG, "text"], hostile
                assert hostile.content[1].text.startswith("[The board sent")
            huge = await client.call_tool("hostile_picture", {"kind": "huge"})
            assert kinds(huge) == [PNG]
            again = await client.call_tool("plot_history", {"quantity": "temperature"})
            assert kinds(again) == [PNG, "text"]   # the bridge and the board are fine
    asyncio.run(main())


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_without_the_renderer_the_svg_arrives_with_the_text(transport, http_bridge, tmp_path):
    # stdio: the bridge's switch; HTTP: resvg_py made unimportable for the bridge's renderer.
    if transport == "stdio":
        env = {"TINYMCP_RENDER_SVG": "0"}
    else:
        shadow = tmp_path / "resvg_py"
        shadow.mkdir()
        (shadow / "__init__.py").write_text("raise ImportError('not installed (the test)')\n")
        env = {"PYTHONPATH": os.pathsep.join(
            [str(tmp_path)] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    server = through(transport, http_bridge, **env)

    async def main():
        async with Client(server, mode="legacy") as client:
            plot = await client.call_tool("plot_history", {"quantity": "temperature"})
            assert kinds(plot) == [SVG, "text"] and plot.content[1].text == TEXT
            assert plot.content[0].data   # the board's SVG as it sent it
            hostile = await client.call_tool("hostile_picture", {"kind": "huge"})
            assert kinds(hostile) == [SVG, "text"]
            said = hostile.content[1].text
            assert ("TINYMCP_RENDER_SVG=0" if transport == "stdio"
                    else "pip install tinymcp-hw[plots]") in said, said
    asyncio.run(main())


def test_a_tasks_result_gets_its_pictures_as_a_call_does(line_client):
    # tasks/result carries the tool's result: its SVG reaches the host as PNG too.
    client = line_client("--sim", PLOTBOARD)
    client.initialize()
    created = client.request("tools/call", {"name": "plot_as_task", "arguments": {},
                                            "task": {"ttl": 60000}})["result"]["task"]
    fetched = client.request("tasks/result", {"taskId": created["taskId"]})["result"]
    assert [c.get("mimeType", c["type"]) for c in fetched["content"]] == [PNG, "text"], fetched
