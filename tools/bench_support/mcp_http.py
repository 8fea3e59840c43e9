# A raw MCP client over Streamable HTTP for the benchmarks: asyncio streams, HTTP/1.1 kept alive,
# one connection per call in flight, the answer read as JSON or as the SSE stream that carries
# it. Light enough that the server, not the client, sets the pace (the SDK's client costs more
# per call than a bridge does).
#   session = await HttpSession.open("http://127.0.0.1:8765/mcp")
#   rate, p50 = await session.rate(calls, window, [("tools/call", params), ...])
import asyncio
import json
import time
from urllib.parse import urlsplit

VERSION = "2025-11-25"


class HttpConnection:
    # One kept-alive HTTP/1.1 connection: one request at a time.
    def __init__(self, reader, writer, head):
        self.reader = reader
        self.writer = writer
        self.head = head   # the request's lines before Content-Length, encoded once

    @classmethod
    async def open(cls, url, sid=None):
        parts = urlsplit(url)
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
        sock = writer.get_extra_info("socket")
        if sock is not None:   # our side never waits on Nagle's algorithm
            import socket
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        head = ("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                "Accept: application/json, text/event-stream\r\n" % (parts.path, parts.netloc))
        if sid:
            head += "Mcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\n" % (sid, VERSION)
        return cls(reader, writer, head.encode())

    async def post(self, msg):
        # -> (status, headers as {lowercase name: value}, the JSON-RPC answer to msg or None).
        body = json.dumps(msg, separators=(",", ":")).encode()
        self.writer.write(self.head + b"Content-Length: %d\r\n\r\n" % len(body) + body)
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                data += (await self.reader.readexactly(size + 2))[:size]   # less its CRLF
                if not size:
                    break
        else:
            data = await self.reader.readexactly(int(headers.get("content-length", "0")))
        return status, headers, _answer(headers, bytes(data), msg.get("id"))

    def close(self):
        self.writer.close()


def _answer(headers, data, rid):
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


class HttpSession:
    # A handshake-era session (initialize, then its Mcp-Session-Id on every request).
    def __init__(self, url, sid):
        self.url = url
        self.sid = sid
        self.ids = 0

    @classmethod
    async def open(cls, url):
        conn = await HttpConnection.open(url)
        try:
            _, headers, answer = await conn.post({
                "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": VERSION, "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"}}})
            if answer is None or "result" not in answer:
                raise RuntimeError("initialize failed: %r" % (answer,))
            session = cls(url, headers["mcp-session-id"])
        finally:
            conn.close()
        conn = await HttpConnection.open(url, session.sid)
        try:
            await conn.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        finally:
            conn.close()
        return session

    async def rate(self, calls, window, requests):
        # -> (calls per second, median seconds per call): `calls` requests, `window` in flight
        # (one connection each), taken from requests [(method, params)] in turn. An error
        # answer ends the run.
        conns = [await HttpConnection.open(self.url, self.sid) for _ in range(window)]
        todo = iter(range(calls))
        took = []

        async def worker(conn):
            for i in todo:
                method, params = requests[i % len(requests)]
                self.ids += 1
                began = time.perf_counter()
                status, _, answer = await conn.post({"jsonrpc": "2.0", "id": self.ids,
                                                     "method": method, "params": params})
                took.append(time.perf_counter() - began)
                if answer is None or "result" not in answer or answer["result"].get("isError"):
                    raise RuntimeError("a call failed (HTTP %d): %r" % (status, answer))
        try:
            began = time.perf_counter()
            await asyncio.gather(*(worker(conn) for conn in conns))
            rate = calls / (time.perf_counter() - began)
        finally:
            for conn in conns:
                conn.close()
        took.sort()
        return rate, took[len(took) // 2]
