# MCP over TCP for a board on the network, on both runtimes: one client at a time, each its own
# session through the same serve loop. With a token, a client's first line must be
# "TOKEN <token>"; any other client is refused (and the refusal logged) before a frame is served.
#
#   from ports.tcp import listen
#   listen(server, "0.0.0.0", 8765, token)      # returns only on an error of the socket
#
# It announces the board over mDNS as _mcp._tcp.local (ports/mdns.py) while it listens, and says
# goodbye when it stops: `tinymcp-bridge --port discover` finds it without its address.
#
# Anyone on the LAN can reach the port: docs/network.md says what the token does and does not do.
import select
import socket

from tinymcp import once
from tinymcp.channel import Channel, Lines
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.framing import Out
from tinymcp.jsonrpc import JsonLink
from tinymcp.protocol import INVALID_REQUEST, REASON, TOKEN_LINE, UNAUTHORIZED

try:
    from hmac import compare_digest
except ImportError:  # MicroPython: the same comparison, in time that does not depend on where they differ
    def compare_digest(a, b):
        if len(a) != len(b):
            return False
        diff = 0
        for i in range(len(a)):
            diff |= a[i] ^ b[i]
        return diff == 0

_EAGAIN = (11, 35)  # EAGAIN on Linux and the MicroPython ports, EWOULDBLOCK/EAGAIN on BSD

if hasattr(socket.socket, "write"):
    def _send(sock, data, start, end):  # MicroPython: a stream, written from data in place
        return sock.write(data, start, end - start)
else:
    def _send(sock, data, start, end):
        return sock.send(memoryview(data)[start:end])


class SocketStream:
    # A connected client as a port stream: non-blocking reads into one buffer; a write waits for
    # room at most send_wait_ms, and a client that stops reading that long is dropped.
    send_wait_ms = 5000
    auth_wait_ms = 3000

    def __init__(self, sock, size=512):
        sock.setblocking(False)
        self.sock = sock
        self.buf = bytearray(size)
        self.view = memoryview(self.buf)
        self.pending = 0  # bytes already in buf (what followed the token line)
        self.closed = False
        self.readable = select.poll()
        self.readable.register(sock, select.POLLIN)
        self.writable = select.poll()
        self.writable.register(sock, select.POLLOUT)
        into = getattr(sock, "recv_into", None)  # CPython; MicroPython sockets have readinto
        self._into = into if into is not None else sock.readinto

    def readinto(self, view, timeout_ms):
        # -> bytes read into view, 0 on timeout, -1 when the client is gone.
        if self.closed:
            return -1
        if not self.readable.poll(timeout_ms):
            return 0
        try:
            n = self._into(view)
        except OSError as e:
            if e.args and e.args[0] in _EAGAIN:
                return 0
            self.closed = True
            return -1
        if n is None:  # MicroPython: nothing after all
            return 0
        if n <= 0:
            self.closed = True
            return -1
        return n

    def recv(self, timeout_ms):
        if self.pending:
            n, self.pending = self.pending, 0
            return n
        return self.readinto(self.view, timeout_ms)

    def write(self, data, n):
        sent = 0
        start = ticks_ms()
        while sent < n and not self.closed:
            try:
                k = _send(self.sock, data, sent, n)
                if k:  # None: MicroPython's socket would block (CPython raises EAGAIN)
                    sent += k
                    continue
            except OSError as e:
                if not e.args or e.args[0] not in _EAGAIN:
                    self.closed = True
                    return
            left = self.send_wait_ms - ticks_diff(ticks_ms(), start)
            if left <= 0 or not self.writable.poll(left):
                self.closed = True  # it stopped reading: its session ends, the board serves on

    def authenticate(self, token):
        # -> True when the first line is TOKEN_LINE + token; what follows it stays for recv.
        want = TOKEN_LINE.encode() + token.encode()
        got = 0
        start = ticks_ms()
        while True:
            newline = self.buf.find(b"\n", 0, got)
            if newline >= 0:
                break
            left = self.auth_wait_ms - ticks_diff(ticks_ms(), start)
            if got >= len(want) + 2 or left <= 0:
                return False
            n = self.readinto(self.view[got:], left)
            if n < 0:
                return False
            got += n
        end = newline - 1 if newline and self.buf[newline - 1] == 13 else newline
        ok = compare_digest(bytes(self.view[:end]), want)
        rest = got - newline - 1
        self.buf[:rest] = self.buf[newline + 1:got]
        self.pending = rest
        return ok

    def close(self):
        self.closed = True
        try:
            self.sock.close()
        except OSError:
            pass


def refuse(stream, log, peer):
    # One JSON-RPC error the client can act on, then the connection ends; the board logs it.
    log("tinymcp: refused a client from %s: wrong or missing token" % _address(peer))
    JsonLink(Out(stream.write)).error(None, INVALID_REQUEST, "Unauthorized: this board wants "
                                                             "its token first",
                                      {REASON: UNAUTHORIZED})
    # What it sent meanwhile is read and dropped (a little while, a little data): closing a
    # socket with unread input resets it, and the client would lose the refusal.
    for _ in range(32):
        if stream.recv(50) <= 0:
            break


def _address(peer):
    # "1.2.3.4:5678" from CPython's (host, port) or MicroPython's raw sockaddr bytes.
    if type(peer) is tuple:
        return "%s:%d" % (peer[0], peer[1])
    if len(peer) >= 8 and peer[0] == 2:  # AF_INET: port, then the address
        return "%d.%d.%d.%d:%d" % (peer[4], peer[5], peer[6], peer[7], peer[2] << 8 | peer[3])
    return repr(peer)


def listen(server, host="0.0.0.0", port=8765, token=None, log=print, announce=None,
           advertise=None):
    # Serve clients one after another, for ever. What it says once the socket listens (and
    # only then: a client told where to connect must find it there) is announce, if given.
    # advertise: announce the board over mDNS (ports/mdns.py) at the address it is reached at:
    # None for the host bound (for 0.0.0.0, the one multicast leaves from), or that address;
    # False: not at all. The responder is read while no client is served and in the idle time.
    address = socket.getaddrinfo(host, port)[0][-1]
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(address)
    listener.listen(1)
    listener.setblocking(False)
    log(announce or "tinymcp: listening on %s:%d%s" % (host, port, " (token required)" if token else ""))
    waiting = select.poll()
    waiting.register(listener, select.POLLIN)
    responder = hook = None
    if advertise is not False:
        from ports.mdns import start
        where = advertise if type(advertise) is str else once("ports.mdnsrecords.own_address", host)
        responder = start(server, where, port, bool(token), log) if where else None
    if responder is not None:
        hook = responder.poll
        server.idle.append(hook)
        waiting.register(responder.sock, select.POLLIN)
    try:
        while True:
            waiting.poll(-1 if responder is None else responder.quiet_ms // 4)
            if responder is not None:
                responder.poll()
            try:
                client, peer = listener.accept()
            except OSError as e:
                if e.args and e.args[0] in _EAGAIN:
                    continue   # the responder's turn, or a client that went before it was taken
                raise
            stream = SocketStream(client)
            try:
                if token and not stream.authenticate(token):
                    refuse(stream, log, peer)
                    continue
                Channel(server, Lines(stream)).run()
            finally:
                stream.close()
    finally:
        if responder is not None:
            server.idle.remove(hook)
            responder.close()   # the goodbye: browsers forget the board now
        listener.close()
