# mDNS (RFC 6762, DNS-SD RFC 6763) for a board serving MCP over TCP, on both runtimes: the board
# is announced as _mcp._tcp.local, so `tinymcp-bridge --port discover` finds it without an address.
# A small responder of our own: it answers questions for the service, its instance and its host
# name with the four records (PTR, SRV, TXT, A), announces them when it starts and says goodbye
# (TTL 0) when it stops. The records are built once by ports/mdnsrecords.py, released after.
#
#   responder = start(server, "10.0.0.7", 8765, token_needed=True)   # None when it cannot
#   listen on responder.sock; responder.poll() when it is readable (and now and then)
#   responder.close()                                                 # the goodbye
#
# The TXT record says the server's name, the revisions it speaks, whether a token is needed
# (never the token) and the wire (JSON lines over TCP). ports/tcp.py runs it; it ships with the
# network code for network.json's TCP mode (tinymcp/host/deploy/files.py NETWORK).
import socket

from tinymcp import once
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.protocol import const

GROUP = "224.0.0.251"
PORT = const(5353)
# Linux's numbers (the unix port lacks some names); lwIP ports export their own.
_IPPROTO_IP = getattr(socket, "IPPROTO_IP", 0)
_ADD_MEMBERSHIP = getattr(socket, "IP_ADD_MEMBERSHIP", 35)
_MULTICAST_IF = getattr(socket, "IP_MULTICAST_IF", 32)
_MULTICAST_TTL = getattr(socket, "IP_MULTICAST_TTL", 33)
_PTR = const(12)
_SRV = const(33)
_TXT = const(16)
_A = const(1)
_ANY = const(255)


class Responder:
    announce_ms = 1000   # the second announcement, this long after the first (RFC 6762 8.3)
    quiet_ms = 1000      # a record is multicast at most once a second (RFC 6762 6)

    def __init__(self, sock, packet, ttls, names):
        self.sock = sock
        self.packet = packet       # the answer: every record, built once
        self.ttls = ttls           # where each TTL sits in it
        self.names = names         # (service, instance, host) on the wire, lowercase: what we answer for
        self.buf = bytearray(512)  # one query at a time (a longer one is cut: its questions come first)
        self.sent = ticks_ms()
        self.owed = 1              # answers due once quiet_ms has passed (the second announcement)
        self.group = socket.getaddrinfo(GROUP, PORT)[0][-1]
        into = getattr(sock, "recv_into", None)   # CPython; MicroPython sockets have readinto
        self._into = into if into is not None else sock.readinto

    def poll(self):
        # Reads every query waiting (never blocks); answers when one asks for us.
        while True:
            try:
                n = self._into(self.buf)
            except OSError:
                n = None
            if not n:
                break
            if self._asks(n):
                self.owed = 1
        if self.owed and ticks_diff(ticks_ms(), self.sent) >= self.quiet_ms:
            self._send()

    def close(self):
        # The goodbye (every TTL 0), then the socket goes.
        packet = self.packet
        for at in self.ttls:
            packet[at + 2] = packet[at + 3] = 0
        try:
            self._send()
        finally:
            self.sock.close()

    def _send(self):
        self.owed = 0
        self.sent = ticks_ms()
        try:
            self.sock.sendto(self.packet, self.group)
        except OSError:
            pass   # the network is down a moment: the next query is answered

    def _asks(self, n):
        # Whether the query in buf[:n] asks for the service, our instance or our host.
        buf = self.buf
        if n < 12 or buf[2] & 0x80:   # a response, not a query
            return False
        pos = 12
        for _ in range((buf[4] << 8) | buf[5]):
            which, pos = self._which(buf, pos, n)
            if pos < 0 or pos + 4 > n:
                return False
            qtype = (buf[pos] << 8) | buf[pos + 1]
            pos += 4
            if qtype == _ANY or (which == 0 and qtype == _PTR) or (
                    which == 1 and (qtype == _SRV or qtype == _TXT)) or (which == 2 and qtype == _A):
                return True
        return False

    def _which(self, buf, pos, n):
        # The question's name at pos -> (0 the service, 1 our instance, 2 our host, -1 other,
        # where its question type sits; -1 there when the name is malformed).
        end = -1
        name = bytearray()
        hops = 0
        while pos < n:
            length = buf[pos]
            if length == 0:
                break
            if length >= 0xC0:   # a pointer to a name earlier in the packet
                if pos + 1 >= n or hops > 8:
                    return -1, -1
                if end < 0:
                    end = pos + 2
                pos = ((length & 0x3F) << 8) | buf[pos + 1]
                hops += 1
                continue
            if pos + length >= n or len(name) > 255:
                return -1, -1
            name.append(length)
            for i in range(pos + 1, pos + 1 + length):
                c = buf[i]
                name.append(c + 32 if 65 <= c <= 90 else c)
            pos += length + 1
        else:
            return -1, -1
        name.append(0)
        if end < 0:
            end = pos + 1
        wanted = self.names
        for i in range(3):
            if name == wanted[i]:
                return i, end
        return -1, end


def start(server, address, port, token_needed, log=print):
    # -> the responder for the board at address:port, announced; None (and one line why) when
    # multicast cannot be had here: the board serves on, found by its address alone.
    sock = None
    try:
        packet, ttls, names, instance = once("ports.mdnsrecords.records", server, address, port,
                                             token_needed)
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(socket.getaddrinfo("0.0.0.0", PORT)[0][-1])
        here = bytes(packet[-4:])   # the A record's address, last in the answer
        sock.setsockopt(_IPPROTO_IP, _ADD_MEMBERSHIP, bytes((224, 0, 0, 251)) + here)
        sock.setsockopt(_IPPROTO_IP, _MULTICAST_IF, here)
        sock.setsockopt(_IPPROTO_IP, _MULTICAST_TTL, 255)
        sock.setblocking(False)
    except (OSError, ValueError) as e:
        if sock is not None:
            sock.close()
        log("tinymcp: not announced over mDNS (%s); reach the board at %s:%d" % (e, address, port))
        return None
    responder = Responder(sock, packet, ttls, names)
    responder._send()   # the announcement; the second follows a second later (owed)
    responder.owed = 1
    log("tinymcp: announced over mDNS as " + instance)
    return responder
