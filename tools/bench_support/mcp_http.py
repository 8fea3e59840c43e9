# The benchmarks' raw MCP client over Streamable HTTP (tools/bridge_bench.py, tools/mqtt_bench.py):
# HTTP/1.1 kept alive, one connection per call in flight, all served by one selector in one
# thread; an answer is read as JSON or out of the SSE stream that carries it, by length or
# chunked. Light enough that the server, not the client, sets the pace (the SDK's client costs
# more per call than a bridge does).
#   client = HttpClient("http://127.0.0.1:8765/mcp")   # version: the one it initializes with
#   client.session()                                    # initialize, notifications/initialized
#   rate, p50 = client.rate(calls, window, [("tools/call", params), ...])
# Blocking: from asyncio code, asyncio.to_thread(client.rate, ...).
import json
import selectors
import socket
import time
from urllib.parse import urlsplit

VERSION = "2025-11-25"


class HttpClient:
    def __init__(self, url, version=VERSION):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.version = version
        self.head = ("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                     "Accept: application/json, text/event-stream\r\n"
                     % (parts.path, parts.netloc)).encode()
        self.ids = 0

    def _connect(self):
        sock = socket.create_connection((self.host, self.port), timeout=60)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)   # never wait on Nagle
        return sock

    def _request(self, msg):
        body = json.dumps(msg, separators=(",", ":")).encode()
        return self.head + b"Content-Length: %d\r\n\r\n" % len(body) + body

    def post(self, msg):
        # One request on a connection of its own -> (status, {lowercase header: value}, the
        # JSON-RPC answer to msg or None).
        with self._connect() as sock:
            sock.sendall(self._request(msg))
            data = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    raise RuntimeError("connection closed: %r" % data[:200])
                data += chunk
                done = complete(data)
                if done is not None:
                    status, headers, body, _used = done
                    return status, headers, answer(headers, body, msg.get("id"))

    def session(self):
        # A handshake-era session: initialize, then its Mcp-Session-Id on every request.
        status, headers, reply = self.post({
            "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": self.version, "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"}}})
        if status != 200 or reply is None or "result" not in reply:
            raise RuntimeError("initialize failed: HTTP %s %r" % (status, reply))
        self.head += ("Mcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n"
                      % (headers["mcp-session-id"], self.version)).encode()
        status, _headers, _reply = self.post({"jsonrpc": "2.0",
                                              "method": "notifications/initialized"})
        if status not in (200, 202):
            raise RuntimeError("notifications/initialized: HTTP %s" % status)

    def rate(self, calls, window, requests):
        # -> (calls per second, the median seconds per call): `calls` requests, `window` in
        # flight (one kept-alive connection each), taken from requests [(method, params)] in
        # turn. An answer that is an error (or a tool's isError) ends the run.
        socks = [self._connect() for _ in range(window)]
        sel = selectors.DefaultSelector()
        took = []
        state = {}
        sent = 0

        def send(sock):
            nonlocal sent
            method, params = requests[sent % len(requests)]
            self.ids += 1
            state[sock] = [b"", time.perf_counter(), self.ids]
            sock.sendall(self._request({"jsonrpc": "2.0", "id": self.ids, "method": method,
                                        "params": params}))
            sent += 1

        try:
            start = time.perf_counter()
            for sock in socks:
                sel.register(sock, selectors.EVENT_READ)
                if sent < calls:
                    send(sock)
            while len(took) < calls:
                for key, _ in sel.select(60):
                    sock = key.fileobj
                    chunk = sock.recv(65536)
                    if not chunk:
                        raise RuntimeError("the server closed a connection")
                    state[sock][0] += chunk
                    done = complete(state[sock][0])
                    if done is None:
                        continue
                    status, headers, body, _used = done
                    reply = answer(headers, body, state[sock][2])
                    if (status != 200 or reply is None or type(reply.get("result")) is not dict
                            or reply["result"].get("isError")):
                        raise RuntimeError("a call failed (HTTP %s): %r" % (status, body[:300]))
                    took.append(time.perf_counter() - state[sock][1])
                    if sent < calls:
                        send(sock)
            seconds = time.perf_counter() - start
        finally:
            sel.close()
            for sock in socks:
                sock.close()
        took.sort()
        return calls / seconds, took[len(took) // 2]


def complete(data):
    # -> (status, {lowercase header: value}, body, bytes used) once data holds a whole
    # response, else None. Its body by Content-Length, or chunked.
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = data[:end].decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    at = end + 4
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        while True:
            line_end = data.find(b"\r\n", at)
            if line_end < 0:
                return None
            size = int(data[at:line_end].split(b";")[0], 16)
            if size == 0:
                trailer = data.find(b"\r\n", line_end + 2)
                return (status, headers, body, trailer + 2) if trailer >= 0 else None
            if len(data) < line_end + 2 + size + 2:
                return None
            body += data[line_end + 2:line_end + 2 + size]
            at = line_end + 2 + size + 2
    length = int(headers.get("content-length", "0"))
    if len(data) < at + length:
        return None
    return status, headers, data[at:at + length], at + length


def answer(headers, data, rid):
    # The answer with id rid in a JSON body or among an SSE stream's events, or None.
    if not data.strip():
        return None
    if headers.get("content-type", "").startswith("text/event-stream"):
        for line in data.split(b"\n"):
            if line.startswith(b"data:") and line[5:].strip():   # (a priming event: empty)
                msg = json.loads(line[5:])
                if type(msg) is dict and "method" not in msg and msg.get("id") == rid:
                    return msg
        return None
    msg = json.loads(data)
    return msg if type(msg) is dict else None
