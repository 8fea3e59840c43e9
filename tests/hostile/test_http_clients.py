# One HTTP client cannot deny another: sessions and requests in flight are capped per client (its
# peer address here: each host binds its own loopback address), eviction takes the client's own
# idlest session first and never one holding a lease; and the smaller HTTP limits, as an
# attacker tries them: headers past 16 KiB, a bridge bound to another loopback address.
import json
import socket
import subprocess

import httpx2 as httpx

from tests.bridge.conftest import Bridge, clean_env
from tests.hostile.conftest import HttpHost
from tinymcp.host.bridge.http import CLIENT_REQUESTS
from tests.windows_shim import as_on_windows  # noqa: F401
from tests.windows_shim import same_on_every_os, windows_paths_run_by


# Under the Windows shim (tests/windows_shim), the two named below start the HTTP front over its
# sim board on pipes and serve sessions from two clients; the caps on streams, sessions and
# headers are counted in OS-independent code. Tests marked @windows_covered run once, as on POSIX:
# under the shim they would take no path the tests named below do not.
windows_covered = windows_paths_run_by(
    "test_a_session_is_another_clients_no_more_than_an_unknown_one",
    "test_a_bridge_bound_to_another_loopback_address_takes_its_own_host")

TESTBOARD = "tests/bridge/testboard.py"
MODERN = "2026-07-28"
P = "io.modelcontextprotocol/"


class HostAt(HttpHost):
    # An HttpHost whose connections leave from its own loopback address (127.0.0.2, ...): to
    # the bridge, another client.
    def __init__(self, url, address, **kw):
        HttpHost.__init__(self, url, **kw)
        self.http = httpx.Client(transport=httpx.HTTPTransport(local_address=address))


def listen_request(where, rid):
    # A 2026-07-28 subscriptions/listen POST: its stream never ends by itself.
    body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": True},
        "_meta": {P + "protocolVersion": MODERN, P + "clientCapabilities": {}}}}).encode()
    return (("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
             "Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: %s\r\n"
             "Mcp-Method: subscriptions/listen\r\nContent-Length: %d\r\n\r\n"
             % (where, MODERN, len(body))).encode() + body)


def status_of(sock):
    # -> the status line's start of what a held socket was answered, b"" if it was closed.
    try:
        return sock.recv(200)[:12]
    except (ConnectionResetError, socket.timeout):
        return b""


@windows_covered
def test_130_listen_streams_of_one_client_leave_another_served(http_front):
    url, proc = http_front("--sim", TESTBOARD)
    where = url.split("/")[2]
    port = int(where.split(":")[1])
    held = []
    try:
        # The client's first CLIENT_REQUESTS streams, each answered before the next is opened:
        # busy, so the connection cap may never close them. (Opened all at once, a loaded loop
        # may accept the 130 connections before reading the first one's request, and the cap
        # then closes that one as the idlest: it is not being served yet.)
        for rid in range(CLIENT_REQUESTS):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(listen_request(where, rid))
            held.append(s)
            first = s.recv(200)
            assert first.startswith(b"HTTP/1.1 200"), (rid, first)   # a listen stream is served
        for rid in range(CLIENT_REQUESTS, 130):
            s = socket.create_connection(("127.0.0.1", port), timeout=10)
            s.sendall(listen_request(where, rid))
            held.append(s)
        other = HostAt(url, "127.0.0.2")
        assert other.initialize()["result"]["protocolVersion"] == "2025-11-25"
        reply = other.request("tools/call", {"name": "read_adc", "arguments": {"channel": 1}})
        assert "result" in reply, reply
        # Past its CLIENT_REQUESTS the client's streams were refused (429), or, being over the
        # bridge's 128 connections, closed by the connection cap (which closes the idlest, and a
        # refused one is idle): which of the two a given socket met depends on the order the loop
        # read them.
        statuses = [status_of(s) for s in held[CLIENT_REQUESTS:]]
        assert statuses.count(b"HTTP/1.1 429") >= 1, statuses
        assert all(status in (b"HTTP/1.1 429", b"") for status in statuses), statuses
        proc.wait_stderr("requests in flight: refusing another")
    finally:
        for s in held:
            s.close()


@windows_covered
def test_64_initializes_of_one_client_evict_neither_another_nor_its_leased_led(http_front):
    url, proc = http_front("--sim", env=clean_env(TINYMCP_SIM_BENCH="1"))
    victim = HostAt(url, "127.0.0.2")
    victim.initialize()
    lit = victim.request("tools/call", {"name": "set_led",
                                        "arguments": {"on": True, "lease_s": 3600}})
    assert lit["result"]["structuredContent"] == {"on": True, "lease_s": 3600}, lit
    attacker = HostAt(url, "127.0.0.1")
    for _ in range(70):
        attacker.sid = None
        attacker.initialize()
    # And from four more addresses: the bridge's 64 sessions in all are full, so other
    # clients' sessions go too, but never one holding a lease.
    for n in range(3, 7):
        crowd = HostAt(url, "127.0.0.%d" % n)
        for _ in range(24):
            crowd.sid = None
            crowd.initialize()
    assert victim.request("ping")["result"] == {}   # its session is still there
    volts = victim.request("tools/call", {"name": "read_adc", "arguments": {"channel": 2}})
    assert volts["result"]["structuredContent"]["volts"] > 2, volts   # its LED is still lit
    proc.wait_stderr("sessions open: closing session")


def test_a_session_is_another_clients_no_more_than_an_unknown_one(http_front):
    url, proc = http_front("--sim", TESTBOARD)
    owner = HostAt(url, "127.0.0.2")
    owner.initialize()
    thief = HostAt(url, "127.0.0.3")
    thief.sid = owner.sid
    response, _ = thief.post({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    assert response.status_code == 404
    assert owner.request("ping")["result"] == {}


@windows_covered
def test_headers_past_16_kib_are_refused_as_documented(http_front):
    url, proc = http_front("--sim", TESTBOARD)
    where = url.split("/")[2]
    host, port = where.split(":")
    filler = "".join("X-Pad-%d: %s\r\n" % (i, "a" * 1000) for i in range(60))   # about 60 KB
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "padded", "version": "0"}}}).encode()
    request = ("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
               "Accept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n"
               % (where, filler, len(body))).encode() + body
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(request)   # in one piece, as h11 never sees it incomplete
        answer = s.recv(200)
    assert answer.startswith(b"HTTP/1.1 431"), answer   # never a session
    assert HttpHost(url).initialize()


def test_a_bridge_bound_to_another_loopback_address_takes_its_own_host():
    bridge = Bridge(["--sim", TESTBOARD, "--http", "127.0.0.2:0", "--no-auth", "--log-level",
                     "info"], stdin=subprocess.DEVNULL)
    try:
        url = bridge.wait_stderr(r"serving (http://127\.0\.0\.2:\d+/mcp)").group(1)
        bridge.wait_stderr("board ready")
        host = HttpHost(url)
        assert host.initialize()["result"]["protocolVersion"] == "2025-11-25"
        assert host.request("ping")["result"] == {}
        # Still no other name: a rebound DNS name is refused.
        port = url.split(":")[2].split("/")[0]
        response, _ = HttpHost(url, headers={"host": "evil.example:" + port}).post(
            {"jsonrpc": "2.0", "id": 0, "method": "ping"})
        assert response.status_code == 421
    finally:
        assert bridge.stop() == 0, bridge.stderr()


@same_on_every_os   # in process: no process of it runs under the shim
def test_a_listen_stream_is_ended_cleanly_after_its_lifetime(monkeypatch):
    # In process, with the lifetime cut to a moment: the stream that never ends by itself gets
    # its headers, pings, and then its end (a client listens again), and its session closes.
    import asyncio

    from starlette.requests import Request

    from tinymcp.host.bridge import http as front_module
    monkeypatch.setattr(front_module, "LISTEN_SECONDS", 0.3, raising=False)
    monkeypatch.setattr(front_module, "PING_SECONDS", 0.05)

    class Session:
        era = None
        closed = False

        def receive(self, msg):
            pass   # a board that never says anything

        def close(self):
            self.closed = True

    class Hosts:
        def open_session(self, send, label):
            self.session = Session()
            return self.session

    msg = json.loads(listen_request("127.0.0.1:1", 3).split(b"\r\n\r\n", 1)[1])
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": [
        (b"host", b"127.0.0.1:1"), (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", MODERN.encode()),
        (b"mcp-method", b"subscriptions/listen")]}
    sent = []

    async def main():
        hosts = Hosts()
        front = front_module.HttpFront(hosts)
        never = asyncio.Event()

        async def receive():
            await never.wait()

        async def send(message):
            sent.append(message)
        await asyncio.wait_for(front._stateless(Request(scope, receive), msg, scope, receive,
                                                send), 30)
        return hosts.session
    session = asyncio.run(main())
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert session.closed


@windows_covered
def test_a_forwarded_for_header_makes_no_other_client(http_front):
    # The caps count by peer address: a loopback client naming another in X-Forwarded-For (or
    # Forwarded) stays itself, so its sessions past CLIENT_SESSIONS close its own first.
    from tinymcp.host.bridge.http import CLIENT_SESSIONS
    url, proc = http_front("--sim", TESTBOARD)
    first = HttpHost(url, headers={"x-forwarded-for": "10.0.0.1"})
    first.initialize()
    for n in range(2, CLIENT_SESSIONS + 2):
        HttpHost(url, headers={"x-forwarded-for": "10.0.0.%d" % n,
                               "x-forwarded-proto": "https"}).initialize()
    response, _ = first.post({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    assert response.status_code == 404   # its idlest session: closed for its own newer ones
