# The board on the network (boards/sim --listen) under both runtimes: a token first, one client at
# a time, each connection its own session, a refused client logged and the board serving on.
import json
import os
import socket
import subprocess
import time

import pytest

from tests.board_process import REPO, board_command, board_env, MICROPYTHON
from tests.free_port import free_port
from tinymcp.host.lineclient import LineClient

RUNTIMES = ["python", "micropython"]
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "tests", "version": "0"}}}


@pytest.fixture(params=RUNTIMES)
def board(request):
    if request.param == "micropython" and MICROPYTHON is None:
        pytest.skip("micropython not installed")
    port = free_port()
    cmd = board_command(request.param) + ["--listen", "127.0.0.1:%d" % port, "--token", "s3cret"]
    proc = subprocess.Popen(cmd, cwd=REPO, env=board_env(), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the board never listened"
            time.sleep(0.1)
    yield port, proc
    proc.kill()
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()


class Client(LineClient):
    # The shared line client on a TCP connection to the board, its token line first.
    def __init__(self, port, first=b"TOKEN s3cret\n"):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=20)
        LineClient.__init__(self, self.sock.fileno(), timeout=20, closing=(self.sock,))
        if first:
            self.write(first)

    def read(self):
        # The next message, or None when the board ended the connection.
        try:
            return self.message()
        except EOFError:
            return None

    def request(self, rid, method, params=None):
        return self.wait(self.start(method, params, rid))


def test_a_client_with_the_token_gets_a_session(board):
    port, _proc = board
    client = Client(port)
    assert client.request(1, "initialize", INIT["params"])["result"]["serverInfo"]["name"] == "tinymcp-sim"
    reply = client.request(2, "tools/call", {"name": "read_adc", "arguments": {"channel": 1}})
    assert set(reply["result"]["structuredContent"]) == {"raw", "volts", "units", "age_ms"}
    client.close()


def test_the_token_and_the_first_request_may_arrive_in_one_write(board):
    port, _proc = board
    client = Client(port, first=None)
    client.write(b"TOKEN s3cret\r\n" + json.dumps(INIT).encode() + b"\n")
    assert client.read()["id"] == 1
    client.close()


@pytest.mark.parametrize("first", [b"TOKEN wrong\n", b"TOKEN s3cret-and-more\n",
                                   json.dumps(INIT).encode() + b"\n", b"x" * 5000 + b"\n"],
                         ids=["wrong", "longer", "no-token", "garbage"])
def test_a_client_without_the_token_is_refused_before_any_frame_and_logged(board, first):
    port, proc = board
    client = Client(port, first=first)
    refusal = client.read()
    assert refusal["id"] is None and refusal["error"]["data"] == {"reason": "unauthorized"}
    assert client.read() is None  # and the connection ends
    client.close()
    good = Client(port)  # the board serves on
    assert good.request(1, "initialize", INIT["params"])["id"] == 1
    good.close()
    proc.kill()
    logged = proc.stderr.read().decode() + proc.stdout.read().decode()
    assert "refused a client from 127.0.0.1:" in logged, logged


def test_a_silent_client_is_refused_after_the_wait(board):
    port, _proc = board
    client = Client(port, first=None)
    refusal = client.read()
    assert refusal["error"]["data"] == {"reason": "unauthorized"}
    client.close()


def test_each_connection_is_a_new_session_and_clients_take_turns(board):
    port, _proc = board
    first = Client(port)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    assert first.request(1, "server/discover", {"_meta": meta})["result"]["supportedVersions"] == ["2026-07-28"]
    second = Client(port)  # waits while the first is served
    second.send(INIT)
    first.close()
    # the first connection spoke 2026-07-28; the second still opens with initialize
    assert second.read()["result"]["protocolVersion"] == "2025-11-25"
    second.close()


def test_a_board_says_where_it_listens_only_once_a_client_can_connect_there():
    # What the board prints is what deploy (and a person) connects to at once: a Wi-Fi board
    # used to announce itself before its socket was bound, and a quick client was refused.
    import threading
    from ports import tcp
    from tinymcp import Server

    port = free_port()
    reached = []

    def log(line):
        if line.startswith("tinymcp: on Wi-Fi"):
            with socket.create_connection(("127.0.0.1", port), timeout=2):
                reached.append(line)
            raise SystemExit   # ends listen() once the announcement was checked

    def run():
        try:
            tcp.listen(Server("t", "0"), "127.0.0.1", port, "x" * 16, log,
                       announce="tinymcp: on Wi-Fi lab as 127.0.0.1; MCP on 127.0.0.1:%d" % port)
        except SystemExit:
            pass
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    assert reached == ["tinymcp: on Wi-Fi lab as 127.0.0.1; MCP on 127.0.0.1:%d" % port]


def test_a_lease_ends_with_the_connection_that_set_it(board):
    port, _proc = board
    first = Client(port)
    first.request(1, "initialize", INIT["params"])
    lit = first.request(2, "tools/call", {"name": "set_led", "arguments": {"on": True,
                                                                          "lease_s": 30}})
    assert lit["result"]["structuredContent"] == {"on": True, "lease_s": 30}
    first.close()
    second = Client(port)
    second.request(1, "initialize", INIT["params"])
    seen = second.request(2, "tools/call", {"name": "read_adc", "arguments": {"channel": 2}})
    assert seen["result"]["structuredContent"]["volts"] < 1   # the photodiode sees it dark
    second.close()
