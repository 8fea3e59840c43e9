# --sim BOARD|PATH: a board file or folder anywhere, and a board that cannot start (one line, exit 2,
# not a board restarted again and again).
import asyncio
import subprocess

import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import BRIDGE, bridge_script, clean_env
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)
from tinymcp.host.deploy.starter import main_py

BROKEN = {
    "syntax": ("def build(:\n", "SyntaxError"),
    "import": ("import no_such_driver\n", "ModuleNotFoundError: No module named 'no_such_driver'"),
    "build": ("def build():\n    raise ValueError('no sensor at 0x76')\n"
              "if __name__ == '__main__':\n    from tinymcp.port import serve\n    serve(build())\n",
              "ValueError: no sensor at 0x76"),
}


@pytest.mark.parametrize("fault", sorted(BROKEN))
def test_a_board_that_cannot_start_is_one_line_naming_it_and_its_error(tmp_path, fault):
    text, said = BROKEN[fault]
    board = tmp_path / ("%s.py" % fault)
    board.write_text(text)
    done = subprocess.run(BRIDGE + ["--sim", str(board), "--log-level", "info"], cwd=str(tmp_path),
                          env=clean_env(), capture_output=True, stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 2 and done.stdout == b""
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines                   # no "restarting it" lines before it
    assert str(board) in lines[0] and said in lines[0], lines[0]


def test_a_folder_that_holds_no_board_is_one_line(tmp_path):
    done = subprocess.run(BRIDGE + ["--sim", str(tmp_path)], env=clean_env(), capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 2
    assert done.stderr.decode().count("\n") == 1 and "holds no main.py" in done.stderr.decode()


@pytest.mark.parametrize("form", ["folder", "file"])
def test_a_board_from_any_folder_serves_an_sdk_client_through_the_bridge(tmp_path, form):
    if form == "folder":
        (tmp_path / "myboard").mkdir()
        (tmp_path / "myboard" / "main.py").write_text(main_py("myboard"))
        target = "./myboard"
    else:
        (tmp_path / "myboard.py").write_text(main_py("myboard"))
        target = "myboard.py"
    params = StdioServerParameters(command=bridge_script(), args=["--sim", target],
                                   cwd=str(tmp_path), env=clean_env())

    async def session():
        async with Client(params, mode="legacy") as client:
            names = [t.name for t in (await client.list_tools()).tools]
            assert names == ["read_temperature", "wait_for_event"]  # the bridge's own last
            result = await client.call_tool("read_temperature", {"samples": 2})
            assert not result.is_error and result.structured_content["units"] == {"celsius": "Cel"}
            read = await client.read_resource("sensor://temperature")
            assert '"Cel"' in read.contents[0].text
    asyncio.run(session())
