# The HTTP front's connection (tinymcp/host/bridge/guard.py Connection) on its two parsers:
# uvicorn's httptools protocol (llhttp), which the bridge runs on when httptools is installed,
# and its h11 one, the fallback. Each limit the front sets and each request a hostile client
# may send (a head streamed past its cap, smuggling with both Content-Length and
# Transfer-Encoding, bad chunks, pipelining, slow headers, too many connections), on both.
import asyncio
import importlib.util
import sys

import pytest
import uvicorn

from tinymcp.host.bridge import guard
from tinymcp.host.bridge.cli import _listen
from tests.windows_shim import as_on_windows  # noqa: F401
from tests.windows_shim import same_on_every_os

pytestmark = same_on_every_os   # in process: no process of it runs under the shim


def h11_guard(monkeypatch):
    # guard.py loaded again as if httptools were not installed: the fallback's Connection.
    monkeypatch.setitem(sys.modules, "uvicorn.protocols.http.httptools_impl", None)
    spec = importlib.util.spec_from_file_location("guard_without_httptools", guard.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(params=["httptools", "h11"])
def front(request, monkeypatch):
    # -> (the guard module whose Connection serves, its parser's name)
    if request.param == "h11":
        return h11_guard(monkeypatch), "h11"
    return guard, "httptools"


def serve(module, talk, app_calls=None, heads=None):
    # Serves an app answering "ok" (and counting its calls; heads: each request's headers) on
    # module.Connection, configured as the bridge configures it (tinymcp/host/bridge/http.py),
    # and runs talk(port) against it.
    calls = [] if app_calls is None else app_calls

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        calls.append((scope["method"], scope["path"], body))
        if heads is not None:
            heads.append(scope["headers"])
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"%d" % (3 + len(body)))]})
        await send({"type": "http.response.body", "body": b"ok " + body})

    async def run():
        sock = _listen("127.0.0.1", 0)
        port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(
            app, http=module.Connection, log_config=None, lifespan="off", ws="none",
            timeout_keep_alive=5, h11_max_incomplete_event_size=16 << 10))
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        try:
            while not server.started:
                await asyncio.sleep(0.01)
            return await asyncio.wait_for(talk(port), 60)
        finally:
            server.should_exit = True
            await serving
    return asyncio.run(run())


async def exchange(port, *pieces, pause=0.0):
    # Sends the pieces (one write each, pause seconds apart) while reading, until the server
    # closes: -> what it answered. A server refusing mid-request closes with bytes unread, so
    # its answer is followed by a reset: what came before it is kept.
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    answer = bytearray()

    async def read():
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    return
                answer.extend(data)
        except ConnectionError:
            return
    reading = asyncio.ensure_future(read())
    try:
        for piece in pieces:
            if reading.done():
                break   # answered and closed: the rest is not wanted
            writer.write(piece)
            await writer.drain()
            if pause:
                await asyncio.sleep(pause)
    except ConnectionError:
        pass   # refused before all was sent
    await reading
    writer.close()
    return bytes(answer)


def test_the_front_runs_on_httptools_when_it_is_installed():
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
    import httptools
    assert issubclass(guard.Connection, HttpToolsProtocol)
    parsers = []

    class Probe(guard.Connection):
        def connection_made(self, transport):
            super().connection_made(transport)
            parsers.append(type(self.parser))

    async def talk(port):
        return await exchange(port, b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")

    class Module:
        Connection = Probe
    assert serve(Module, talk).startswith(b"HTTP/1.1 200")
    assert parsers == [httptools.HttpRequestParser]


def test_without_httptools_the_front_falls_back_to_h11(monkeypatch):
    from uvicorn.protocols.http.h11_impl import H11Protocol
    assert issubclass(h11_guard(monkeypatch).Connection, H11Protocol)


def test_requests_pipelined_in_one_write_are_answered_in_order(front):
    module, _ = front
    calls = []

    async def talk(port):
        return await exchange(port, b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nhi"
                              b"GET /b HTTP/1.1\r\nHost: a\r\n\r\n"
                              b"POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                              b"3\r\nabc\r\n0\r\n\r\n"
                              b"GET /d HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    answer = serve(module, talk, calls)
    assert answer.count(b"HTTP/1.1 200") == 4, answer
    assert answer.index(b"ok hi") < answer.index(b"ok abc"), answer
    assert calls == [("POST", "/a", b"hi"), ("GET", "/b", b""), ("POST", "/c", b"abc"),
                     ("GET", "/d", b"")]


@pytest.mark.parametrize("request_bytes", [
    # Smuggling: a body framed two ways; a front and a proxy behind it could disagree.
    b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
    b"0\r\n\r\nGET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n",
    b"POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nabcd",
    b"POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
    # A chunk whose size is not hex, one longer than it said, a header without a colon.
    b"POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n",
    b"POST /a HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabcdef\r\n0\r\n\r\n",
    b"GET /a HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n",
], ids=["cl-and-te", "two-cl", "te-not-chunked-last", "chunk-size", "chunk-overrun",
        "header-line"])
def test_a_request_framed_badly_gets_400_and_never_reaches_the_app(front, request_bytes):
    module, parser = front
    calls = []

    async def talk(port):
        return await exchange(port, request_bytes)
    answer = serve(module, talk, calls)
    if parser == "h11" and b"/smuggled" in request_bytes:
        # h11 frames it as RFC 9112 section 6.3 allows an endpoint (Transfer-Encoding over
        # Content-Length), so the rest is its next request; no proxy behind it frames otherwise.
        assert calls == [("POST", "/a", b""), ("GET", "/smuggled", b"")], calls
        return
    assert answer.startswith(b"HTTP/1.1 400"), answer
    assert all(path == "/a" for _, path, _ in calls), calls   # never /smuggled


@pytest.mark.parametrize("what", ["headers", "url"])
def test_a_request_head_streamed_past_its_cap_is_refused(front, what):
    # In 1 KiB writes, each its own read: neither parser may keep a head growing without end.
    module, parser = front
    calls = []
    if what == "headers":
        head = b"GET / HTTP/1.1\r\nHost: a\r\n" + b"".join(
            b"X-Pad-%d: %s\r\n" % (i, b"p" * 1000) for i in range(200))
    else:
        head = b"GET /" + b"u" * (200 << 10)
    pieces = [head[i:i + 1024] for i in range(0, len(head), 1024)]

    async def talk(port):
        return await exchange(port, *pieces, pause=0.002)
    answer = serve(module, talk, calls)
    status = b"HTTP/1.1 431" if parser == "httptools" else b"HTTP/1.1 400"
    assert answer.startswith(status), answer[:200]
    assert calls == []


def test_a_head_under_the_cap_in_pieces_is_served(front):
    module, _ = front
    head = (b"GET /x HTTP/1.1\r\nHost: a\r\n" + b"X-Pad: " + b"p" * (12 << 10)
            + b"\r\nConnection: close\r\n\r\n")

    async def talk(port):
        return await exchange(port, *[head[i:i + 1024] for i in range(0, len(head), 1024)],
                              pause=0.002)
    assert serve(module, talk).startswith(b"HTTP/1.1 200")


def test_a_connection_sending_its_headers_too_slowly_is_closed(front, monkeypatch):
    module, _ = front
    monkeypatch.setattr(module, "HEADER_SECONDS", 0.3)

    async def talk(port):
        # Half a head, then nothing: the server closes it (read() returns what it got: none).
        return await exchange(port, b"GET / HTTP/1.1\r\nHost: a\r\n")
    assert serve(module, talk) == b""


def test_past_the_connection_cap_the_one_idle_longest_is_closed(front, monkeypatch):
    module, _ = front
    monkeypatch.setattr(module.Connection, "cap", 2)

    async def talk(port):
        first = await asyncio.open_connection("127.0.0.1", port)
        await asyncio.sleep(0.05)
        second = await asyncio.open_connection("127.0.0.1", port)
        second[1].write(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
        assert (await second[0].readuntil(b"ok ")).startswith(b"HTTP/1.1 200")
        third = await asyncio.open_connection("127.0.0.1", port)
        # The first never sent a request and is idle longest: closed to make room.
        closed = await first[0].read()
        third[1].write(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        served = await third[0].read()
        for _, writer in (first, second, third):
            writer.close()
        return closed, served
    closed, served = serve(module, talk)
    assert closed == b"" and served.startswith(b"HTTP/1.1 200"), (closed, served)


def test_a_header_value_is_read_without_the_whitespace_around_it(front):
    # RFC 9110 5.5: optional whitespace around a field value is not part of it. h11 strips it;
    # llhttp keeps what trails, and the 2026-07-28 suite's sep-2243 "whitespace header value"
    # case then read "Mcp-Name: tool  " as naming no tool (-32020). Both parsers read "a  b".
    module, _ = front
    heads = []
    answer = serve(module, lambda port: exchange(
        port, b"GET / HTTP/1.1\r\nHost: x\r\nMcp-Name: \t a  b \t \r\nConnection: close\r\n\r\n"),
        heads=heads)
    assert answer.startswith(b"HTTP/1.1 200")
    assert (b"mcp-name", b"a  b") in heads[0]
