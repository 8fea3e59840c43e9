# Boards on the network: the simulated board serving on TCP (--listen, under both runtimes) behind
# tinymcp-bridge --port socket://HOST:PORT, with its token from $TINYMCP_BOARD_TOKEN. The same SDK
# session as over a serial port; a wrong or missing token refused, said once, retried slowly; a
# dropped connection picked up again like a re-plug.
import asyncio
import subprocess
import tempfile
import time

import pytest
from mcp import Client, StdioServerParameters

from tinymcp.host import lineclient
from tests.board_process import MICROPYTHON, REPO, board_command, board_env
from tests.bridge.conftest import LineClient, Updates, bridge_script, clean_env
from tests.free_port import free_port
from tests.bridge.test_sdk_clients import exercise
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)
from tests.windows_shim import windows_paths_run_by


# Under the Windows shim (tests/windows_shim), a socket:// board's link is taken by the session
# and the dropped connection named below; the token's refusal is the same handshake over the same
# link. Tests marked @windows_covered run once, as on POSIX: under the shim they would take no
# path the tests named below do not.
windows_covered = windows_paths_run_by(
    "test_the_sdk_session_over_the_network_is_the_one_over_serial",
    "test_a_dropped_connection_is_picked_up_again_like_a_replug")

TOKEN = "n3twork-b0ard-t0ken"


class NetworkBoard:
    # boards/sim/main.py --listen 127.0.0.1:PORT --token TOKEN, its console in a file.
    def __init__(self, runtime="python", port=None):
        self.runtime = runtime
        self.port = port or free_port()
        self.console = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            board_command(runtime) + ["--listen", "127.0.0.1:%d" % self.port, "--token", TOKEN],
            cwd=REPO, env=board_env(), stdin=subprocess.DEVNULL, stdout=self.console,
            stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while "tinymcp: listening on" not in self.said():
            assert self.proc.poll() is None, self.said()
            assert time.monotonic() < deadline, "the board never listened: " + self.said()
            time.sleep(0.1)

    @property
    def url(self):
        return "socket://127.0.0.1:%d" % self.port

    def said(self):
        return lineclient.written(self.console)

    def refusals(self):
        return self.said().count("refused a client from")

    def kill(self):
        self.proc.kill()
        self.proc.wait()


@pytest.fixture
def network_board():
    boards = []

    def start(runtime="python", port=None):
        if runtime == "micropython" and MICROPYTHON is None:
            pytest.skip("micropython not installed")
        boards.append(NetworkBoard(runtime, port))
        return boards[-1]
    yield start
    for board in boards:
        board.kill()


@pytest.mark.parametrize("runtime", ["python", "micropython"])
def test_the_sdk_session_over_the_network_is_the_one_over_serial(network_board, runtime):
    board = network_board(runtime)
    params = StdioServerParameters(command=bridge_script(), args=["--port", board.url], cwd=REPO,
                                   env=clean_env(TINYMCP_BOARD_TOKEN=TOKEN))
    updates = Updates()

    async def main():
        async with Client(params, mode="legacy", message_handler=updates) as client:
            await exercise(client, updates)
    asyncio.run(main())
    assert board.refusals() == 0, board.said()


@windows_covered
@pytest.mark.parametrize("token", ["wrong-token-0123", None], ids=["wrong", "missing"])
def test_a_wrong_or_missing_token_is_refused_said_once_and_tried_again_slowly(network_board,
                                                                              token):
    board = network_board()
    env = clean_env(TINYMCP_BOARD_TOKEN=token or "")
    if token is None:
        del env["TINYMCP_BOARD_TOKEN"]
    client = LineClient(["--port", board.url, "--timeout", "2", "--log-level", "info"], env=env)
    try:
        client.initialize()
        client.wait_stderr("refused the bridge: %s token" % ("a wrong" if token else "no"))
        reply = client.call("read_temperature")
        assert reply["error"]["data"]["bridge"] in ("disconnected", "timeout"), reply
        time.sleep(4)   # a tight loop would knock many times meanwhile
        assert board.refusals() == 1, board.said()
        said = client.stderr()
        assert said.count("ERROR") == 1 and said.count("refused the bridge") == 1, said
        assert token is None or token not in said
    finally:
        client.stop()


def test_a_dropped_connection_is_picked_up_again_like_a_replug(network_board):
    board = network_board()
    client = LineClient(["--port", board.url, "--timeout", "3", "--log-level", "info"],
                        env=clean_env(TINYMCP_BOARD_TOKEN=TOKEN))
    try:
        client.initialize()
        assert "result" in client.call("read_temperature")
        board.kill()                          # the board goes off the network...
        reply = client.call("read_temperature")
        assert reply["error"]["data"]["bridge"] in ("disconnected", "reset", "timeout"), reply
        network_board(port=board.port)        # ...and comes back on the same address
        end = time.monotonic() + 60
        while "result" not in client.call("read_temperature"):
            assert time.monotonic() < end, client.stderr()[-3000:]
            time.sleep(0.2)
        client.wait_stderr("port socket://127.0.0.1:%d lost" % board.port)
    finally:
        client.stop()
