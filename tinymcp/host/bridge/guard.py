# The HTTP front's limits, around the SDK transport: who may ask (Host, Origin, then a token or an
# OAuth access token: tinymcp/host/bridge/auth.py), how much and how slowly (header and body size
# and time, strict JSON), and how many connections, for how long.
import functools
import ipaddress
import itertools
import json
import logging
from urllib.parse import urlsplit

import anyio
from starlette.datastructures import Headers
from starlette.responses import Response

try:
    # uvicorn's protocol on httptools (llhttp, in C) parses a request for less CPU than h11's.
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as Parsing
except ImportError:
    from uvicorn.protocols.http.h11_impl import H11Protocol as Parsing
try:   # what the express lane writes a response with (Connection._respond)
    from uvicorn.protocols.http.httptools_impl import STATUS_LINE
except ImportError:
    STATUS_LINE = None   # h11's protocol, or a uvicorn without it: no request is held

from tinymcp.host.bridge.wire import MAX_MESSAGE, decode

log = logging.getLogger("tinymcp.bridge.http")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
ANY_ADDRESS = ("0.0.0.0", "::")
HEADER_SECONDS = 10      # a connection has this long for a request's headers (after the last)
BODY_SECONDS = 10        # and then this long for its body
MAX_CONNECTIONS = 128    # open connections; fewer when the process may open few files
MAX_HEADERS = 16 << 10   # the bytes of one request's header lines (names and values)
MAX_HEAD = MAX_HEADERS + (8 << 10)   # and of its whole head as it streams in (request line too)
ACCEPT_LOG_SECONDS = 10  # "cannot accept" is logged at most once per this long
MESSAGE = "tinymcp.message"   # the scope key the decoded JSON body travels under
CLIENT = "tinymcp.client"     # the scope key of who asks (auth.Caller), once the Guard knows
# The headers the express lane's checks read (Guard.express), by their names as uvicorn has them.
LANE_HEADERS = {name.encode(): name for name in (
    "host", "origin", "authorization", "accept", "content-type", "content-length",
    "transfer-encoding", "mcp-session-id", "mcp-protocol-version")}


def is_loopback(host):
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def reject(status, message, code=-32600, headers=None, rid=None, data=None):
    # A Response carrying one JSON-RPC error, with an HTTP status.
    body = {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}
    if data is not None:
        body["error"]["data"] = data
    return Response(json.dumps(body), status_code=status, media_type="application/json",
                    headers=headers)


@functools.lru_cache(maxsize=256)   # every request's Host header: parsed once per spelling
def _address(name):
    # A host name as it compares: an IP address in its one canonical spelling, a name lowercased.
    name = name.strip("[]").lower()
    try:
        return ipaddress.ip_address(name).compressed
    except ValueError:
        return name


def _host_port(value, default_port):
    # "Name:port", "[::1]:port" or "name" -> (lowercased name, port), or None.
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else (None if not rest else "x")
    else:
        name, _, port = value.partition(":")
        port = port if _ else None
    if port is None:
        return name, default_port
    return (name, int(port)) if port.isdigit() else None


class Guard:
    # ASGI middleware: checks the size of the headers, Host and Origin, then who asks (auth:
    # auth.py's static token, OAuth or none; its Client lands in scope[CLIENT]) on every path,
    # reads a POST body to /mcp (capped while it streams, timed) and decodes it strictly; the
    # app gets the message in scope[MESSAGE] and the body again from receive(). Other paths take
    # no POST (the dashboard answers 405 without reading one).

    def __init__(self, app, host, port, auth, public=None, mcp=None):
        self.app = app
        # mcp: what serves /mcp, reached straight from here: through Starlette's router and its
        # two middlewares each request cost a sixth of the bridge's time on HTTP (py-spy).
        self.mcp = mcp
        self.port = port
        self.auth = auth
        self.public = public  # fn(method, path) -> True where no token is needed (a page)
        self.any_host = host in ANY_ADDRESS
        # The loopback names, and the bound address itself (127.0.0.2 is its own Host too).
        self.names = {_address(name) for name in LOOPBACK_NAMES}
        if not self.any_host:
            self.names.add(_address(host))

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        public = self.public is not None and self.public(scope["method"], scope["path"])
        refusal = self._check(scope, headers)
        if refusal is None:
            client, refusal = await self.auth.authenticate(headers, scope, public)
            scope[CLIENT] = client
        if refusal is None and scope["method"] == "POST" and scope["path"] == "/mcp":
            body, refusal = await self._body(headers, receive)
            if refusal is None:
                msg, problem = decode(body)
                if problem is not None:
                    refusal = reject(400, problem["error"]["message"], problem["error"]["code"],
                                     rid=problem["id"])
                else:
                    scope[MESSAGE] = msg
                    receive = _replay(body, receive)
        if refusal is not None:
            # Who was refused, never with what (no token, no body): for a person reading logs.
            log.info("http: refused %s %s (%d; Origin %s)", scope["method"], scope["path"],
                     refusal.status_code, (headers.get("origin") or "none")[:80])
            await refusal(scope, receive, send)
            return
        if self.mcp is not None and scope["path"] == "/mcp":
            await self.mcp(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def express(self, scope, body, respond, hand_over):
        # A POST /mcp whose body came with its head or in the read after (Connection), for the
        # HTTP front's express lane (HttpFront.express), checked as __call__ checks any request
        # -> True when the lane serves it; False when it takes the general way (nothing was
        # done), which answers whatever these checks would refuse. An OAuth token is checked
        # the general way only (auth.py's OAuth has no caller()).
        caller = getattr(self.auth, "caller", None)
        if self.mcp is None or caller is None or body.find(b"\n") >= 0:
            return False   # a newline would end the board's line (express.py)
        headers = scope["headers"]
        size = sum(map(len, itertools.chain.from_iterable(headers)))
        fields = {}
        for name, value in headers:
            key = LANE_HEADERS.get(name)
            if key is not None:
                if key in fields:
                    return False   # said twice: the general way reads the first
                fields[key] = value.decode("latin-1")
        length = fields.get("content-length")
        if ("transfer-encoding" in fields or length is None or not length.isdigit()
                or int(length) != len(body) or len(body) > MAX_MESSAGE
                or self._refusal(size, fields.get("host", ""), fields.get("origin")) is not None):
            return False
        client = caller(fields, scope, self.public is not None and self.public("POST", "/mcp"))
        if client is None:
            return False
        msg, problem = decode(body)
        if problem is not None:
            return False
        return self.mcp.express(client, fields, msg, body, respond, hand_over)

    def _check(self, scope, headers):
        size = sum(len(name) + len(value) for name, value in scope.get("headers", ()))
        return self._refusal(size, headers.get("host", ""), headers.get("origin"))

    def _refusal(self, size, host, origin):
        # The headers' size (the connection bounds only a head arriving in pieces: h11 by its
        # max_incomplete_event_size, httptools by Connection's MAX_HEAD), then the
        # DNS-rebinding defence (Host and Origin name this bridge, port included). Names compare
        # without case, addresses in any spelling; a missing port is the scheme's default.
        if size > MAX_HEADERS:
            return Response("Request Header Fields Too Large: at most %d bytes" % MAX_HEADERS,
                            status_code=431, headers={"connection": "close"})
        host = _host_port(host, 80)
        if not self.any_host and (host is None or _address(host[0]) not in self.names
                                  or host[1] != self.port):
            return reject(421, "Misdirected Request: the Host header must name this bridge")
        if origin is not None and not self._origin_ok(origin):
            return reject(403, "Forbidden: Origin %s may not use this bridge" % origin[:100])
        return None

    def _origin_ok(self, origin):
        try:
            parts = urlsplit(origin)
            port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
        except ValueError:
            return False
        return (parts.scheme in ("http", "https") and parts.hostname is not None
                and _address(parts.hostname) in self.names
                and port == self.port and parts.path in ("", "/"))

    async def _body(self, headers, receive):
        # -> (the body, None) or (None, the refusal): 413 past MAX_MESSAGE (counted as it
        # arrives, or known from Content-Length), 408 when it comes too slowly.
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_MESSAGE):
            return None, reject(413, "Payload Too Large: a message is at most %d bytes"
                                % MAX_MESSAGE)
        body = bytearray()
        with anyio.move_on_after(BODY_SECONDS):
            while True:
                message = await receive()
                if message["type"] != "http.request":   # the client went away
                    return None, reject(400, "Bad Request: the body ended early")
                body += message.get("body", b"")
                if len(body) > MAX_MESSAGE:
                    return None, reject(413, "Payload Too Large: a message is at most %d "
                                        "bytes" % MAX_MESSAGE)
                if not message.get("more_body", False):
                    return bytes(body), None
        return None, reject(408, "Request Timeout: the body took longer than %d s"
                            % BODY_SECONDS)


def _replay(body, receive):
    # receive() for the app: the body once, then the connection's own events (disconnect).
    given = False

    async def replay():
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()
    return replay


def connection_cap():
    # At most MAX_CONNECTIONS, and fewer when the process may open only a few files: the
    # board's port, the sim board's process and the bridge itself need some too. Windows has no
    # such limit on sockets (nor the resource module): the fixed cap.
    try:
        import resource
    except ImportError:
        return MAX_CONNECTIONS
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_CONNECTIONS
    return max(4, min(MAX_CONNECTIONS, (soft - 32) // 2))


class JoinedWrites:
    # A connection's transport whose writes in one turn of the loop go out as one send: uvicorn
    # writes a response's head, its body and its end each on its own, a syscall (and on
    # loopback, the whole TCP delivery) apiece. The rest is the transport's own.
    __slots__ = ("transport", "loop", "pending")

    def __init__(self, transport, loop):
        self.transport = transport
        self.loop = loop
        self.pending = []

    def write(self, data):
        if data:
            if not self.pending:
                self.loop.call_soon(self.flush)
            self.pending.append(bytes(data))

    def write_now(self, data):
        # data out at once, after what waits (one whole response: nothing joins it).
        if self.pending:
            self.pending.append(data)
            self.flush()
        elif not self.transport.is_closing():
            self.transport.write(data)

    def flush(self):
        if self.pending:
            data = b"".join(self.pending)
            self.pending.clear()
            if not self.transport.is_closing():
                self.transport.write(data)

    def close(self):
        self.flush()
        self.transport.close()

    def __getattr__(self, name):
        return getattr(self.transport, name)


class Connection(Parsing):
    # uvicorn's HTTP protocol (httptools' when installed, else h11's) with a deadline for each
    # request's headers, a cap on their bytes as they stream in, and a cap on open connections:
    # when it is reached, the connection idle longest (between requests, or never sending one)
    # is closed to make room; when none is idle, the new one gets 503. Its writes are joined
    # (JoinedWrites). The hooks used (cycle, data_received, on_response_complete) are both's.
    # A POST /mcp that comes in one read (or its head in one, its body in the next) may be
    # served by the express lane (the app's express(), Guard.express) without the app: held
    # from its headers to its end (_start_asgi_task, uvicorn's httptools protocol's since
    # 0.3x; with h11 or an older uvicorn nothing is held, and the app serves every request).
    cap = MAX_CONNECTIONS
    _head = None   # bytes received of a request head not yet complete (httptools), else None
    _heading = False   # in on_headers_complete
    _held = None   # (cycle, app) of a request held for the express lane
    _waiting = None   # the timer that lets it go to the app when its body is slow

    def connection_made(self, transport):
        super().connection_made(JoinedWrites(transport, self.loop))
        self.express = getattr(self.app, "express", None) if STATUS_LINE is not None else None
        self.idle_since = self.loop.time()
        self._seen = None
        self._deadline = None
        self._arm()
        if len(self.connections) > self.cap:
            self._make_room()

    def _idle(self):
        return self.cycle is None or self.cycle.response_complete

    def _make_room(self):
        idle = [c for c in self.connections if c is not self and isinstance(c, Connection)
                and c._idle() and not c.transport.is_closing()]
        if idle:
            oldest = min(idle, key=lambda c: c.idle_since)
            log.info("%d connections open: closing the one idle longest", len(self.connections))
            oldest.transport.close()
            return
        log.warning("%d connections open, all busy: refusing a new one", len(self.connections))
        self.transport.write(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n"
                             b"connection: close\r\n\r\n")
        self.transport.close()

    def _arm(self):
        self._disarm()
        self._deadline = self.loop.call_later(HEADER_SECONDS, self._too_slow)

    def _disarm(self):
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _too_slow(self):
        self._deadline = None
        if self._idle() and not self.transport.is_closing():
            log.debug("closed a connection that sent no request headers in %d s", HEADER_SECONDS)
            self.transport.close()

    def data_received(self, data):
        if self._head is not None:
            self._head += len(data)
        super().data_received(data)
        if self._held is not None:   # its body is still to come: one more read for it (a
            if self._waiting is None:   # client may write its head and body apart), no longer
                self._waiting = self.loop.call_later(BODY_SECONDS, self._let_go)
            else:
                self._let_go()
        if self.cycle is not self._seen:   # a request's headers are in
            self._seen = self.cycle
            self._disarm()
        if self._head is not None and self._head > MAX_HEAD and not self.transport.is_closing():
            # httptools keeps a head's URL and header pieces until it is complete, with no
            # bound of its own (h11 refuses past h11_max_incomplete_event_size): cut here. A
            # head that completes in one read is counted by the Guard instead (431 too).
            log.info("http: refused a request head past %d bytes", MAX_HEAD)
            self._head = None
            self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\n"
                                 b"content-length: 0\r\nconnection: close\r\n\r\n")
            self.transport.close()

    # httptools' parser callbacks (h11's protocol has none: there _head stays None). Counting
    # starts at a head's first byte the parser sees; the read it arrives in is not counted,
    # so a head holds at most MAX_HEAD bytes and one read before it is refused.
    def on_message_begin(self):
        super().on_message_begin()
        self._head = 0

    def on_headers_complete(self):
        self._head = None
        self._heading = True
        try:
            super().on_headers_complete()
        finally:
            self._heading = False

    def _start_asgi_task(self, cycle, app):
        # uvicorn starts the app for a request whose headers are in, or (pipelined) once the
        # one before it is answered. A POST /mcp whose headers came now is held for its body.
        scope = cycle.scope
        if (self._heading and self.express is not None and app is self.app
                and scope["method"] == "POST"
                and scope["path"] == "/mcp" and not cycle.waiting_for_100_continue
                and not self.flow.write_paused):
            self._held = (cycle, app)
            return
        super()._start_asgi_task(cycle, app)

    def on_message_complete(self):
        super().on_message_complete()
        held = self._held
        if held is not None:
            self._held = None
            if self._waiting is not None:
                self._waiting.cancel()
                self._waiting = None
            cycle = held[0]
            try:
                taken = self.express(cycle.scope, bytes(cycle.body),
                                     functools.partial(self._respond, cycle),
                                     functools.partial(self._hand_over, cycle))
            except Exception:   # a bug costs the lane this request: the app serves it
                log.exception("http: the express lane")
                taken = False
            if not taken:
                Parsing._start_asgi_task(self, *held)

    def _let_go(self):
        # The held request's body comes slowly: the app reads it (and times it, Guard._body).
        held, self._held = self._held, None
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None
        if held is not None:
            Parsing._start_asgi_task(self, *held)

    def _respond(self, cycle, status, headers, body):
        # The whole response to a request the express lane served, written as uvicorn's cycle
        # writes one whose length is known (RequestResponseCycle.send): the server's default
        # headers, the response's, "connection: close" when the connection is not kept.
        if cycle.response_complete or cycle.disconnected:
            return
        content = [STATUS_LINE[status]]
        for name, value in cycle.default_headers + headers:
            content += (name, b": ", value, b"\r\n")
        if not cycle.keep_alive:
            content.append(b"connection: close\r\n")
        content += (b"\r\n", body)
        cycle.response_started = cycle.response_complete = True
        cycle.message_event.set()
        self.transport.write_now(b"".join(content))
        if not cycle.keep_alive:
            self.transport.close()
        cycle.on_response()

    def _hand_over(self, cycle, app):
        # The express lane's request goes on in the ASGI app `app` (its answer is late), even
        # when its client has gone: the app then ends at once, and so does what it counts.
        Parsing._start_asgi_task(self, cycle, app)

    def on_header(self, name, value):
        # httptools (llhttp) hands a field's value with its trailing whitespace, which is not
        # part of it (RFC 9110, 5.5; h11 strips it): "Mcp-Name: tool  " names "tool" (SEP-2243).
        # Only httptools calls this.
        super().on_header(name, value.rstrip(b" \t"))

    def on_response_complete(self):
        super().on_response_complete()
        self.idle_since = self.loop.time()
        if self._idle():
            self._arm()

    def connection_lost(self, exc):
        self._disarm()
        if self._held is not None:   # gone before its body came: nobody to answer
            self._held = None
            if self._waiting is not None:
                self._waiting.cancel()
                self._waiting = None
        super().connection_lost(exc)


def quiet_accept_errors(loop):
    # At the open-files limit asyncio logs every failed accept with a traceback (hundreds of
    # MB of stderr in a minute): said once per ACCEPT_LOG_SECONDS instead, with a count.
    fallback = loop.get_exception_handler()
    state = {"last": None, "count": 0}

    def handler(loop, context):
        if str(context.get("message", "")).startswith("socket.accept() out of system"):
            state["count"] += 1
            now = loop.time()
            if state["last"] is None or now - state["last"] >= ACCEPT_LOG_SECONDS:
                log.warning("cannot accept connections (%s); %d refused so far",
                            context.get("exception"), state["count"])
                state["last"] = now
            return
        handle = context.get("handle")
        if (isinstance(context.get("exception"), ValueError)
                and getattr(getattr(handle, "_callback", None), "__name__", "") == "_start_serving"):
            # asyncio schedules a retry of accept() for each accept that failed at the limit
            # (up to its backlog, 2048, per wake-up); once the listening socket is closed at
            # shutdown each fires on fd -1. Nothing is left to serve: not worth a traceback each.
            return
        if fallback is not None:
            fallback(loop, context)
        else:
            loop.default_exception_handler(context)
    loop.set_exception_handler(handler)
