# Helpers shared by the core tests on CPython and MicroPython: a server, a fake stream, decoding.
import json

from tinymcp import Server
from tinymcp.schema import integer, string


def frame(method, params=None, id=1):
    msg = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        msg["id"] = id
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()


def reply(server, method, params=None, id=1):
    out = server.handle(frame(method, params, id))
    assert out is not None, "no answer to " + method
    assert b"\n" not in out
    return json.loads(out)


def result(server, method, params=None, id=1):
    msg = reply(server, method, params, id)
    assert "error" not in msg, msg
    assert msg["id"] == id
    return msg["result"]


def error(server, method, params=None, id=1):
    msg = reply(server, method, params, id)
    assert "result" not in msg, msg
    return msg["error"]


def initialize(server, version="2025-11-25", capabilities=None):
    res = result(server, "initialize", {"protocolVersion": version,
                                        "capabilities": capabilities or {},
                                        "clientInfo": {"name": "test", "version": "0"}}, id=0)
    server.handle(frame("notifications/initialized", id=None))
    return res


def notifications(server, method=None):
    found = [json.loads(f) for f in server.outbox]
    del server.outbox[:]
    return [n for n in found if method is None or n.get("method") == method]


def demo_server():
    server = Server("demo", "1.2.3", title="Demo board", instructions="Be nice.")

    @server.tool("add", "Add two integers.",
                 inputs={"a": integer("first", 0, 100), "b": integer("second"),
                         "unit?": string("label", enum=("V", "A"), default="V")},
                 outputs={"sum": integer()}, title="Add", read_only=True)
    def add(a, b, unit):
        return {"sum": a + b}

    @server.tool("fail", "Always raises.")
    def fail():
        raise OSError("sensor not responding")

    @server.tool("echo", "Echo text.", inputs={"text": string()})
    def echo(text):
        return text

    return server


class FakeStream:
    # A port stream fed from a list of byte chunks (None: a quiet moment, recv times out). Every
    # line the board writes is kept raw in .lines, with the count of writes it took; .sent
    # parses them as JSON.
    def __init__(self, chunks, size=64):
        self.chunks = list(chunks)
        self.buf = bytearray(size)
        self.lines = []
        self.line = bytearray()
        self.writes = []  # the size of every write, in order

    def recv(self, timeout_ms):
        if not self.chunks:
            return -1
        chunk = self.chunks.pop(0)
        if chunk is None:
            return 0
        if len(chunk) > len(self.buf):
            self.chunks.insert(0, chunk[len(self.buf):])
            chunk = chunk[:len(self.buf)]
        self.buf[:len(chunk)] = chunk
        return len(chunk)

    def write(self, data, n):
        self.writes.append(n)
        self.line.extend(data[:n])
        while b"\n" in self.line:
            at = self.line.find(b"\n")
            self.lines.append(bytes(self.line[:at]))
            self.line = self.line[at + 1:]

    @property
    def sent(self):
        return [json.loads(line) for line in self.lines]
