# The Streamable HTTP front (MCP 2025-03-26 .. 2026-07-28) on uvicorn: sessions (streamable.py), a
# 2026-07-28 request on its own, the caps per client.
import asyncio
import collections
import contextlib
import functools
import hashlib
import logging
import uuid

import uvicorn
from mcp.shared.inbound import (ERROR_CODE_HTTP_STATUS, InboundLadderRejection,
                                classify_inbound_request, decode_header_value,
                                find_duplicated_routing_header, validate_mcp_param_headers)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tinymcp.echo import shown
from tinymcp.protocol import (HEADER_MISMATCH, STATELESS, UNSUPPORTED_VERSION,
                              VERSION_META, VERSIONS)

from tinymcp.host.bridge.auth import ACT, READ, bearer
from tinymcp.host.bridge.guard import (CLIENT, MESSAGE, Connection, Guard, connection_cap,
                                       quiet_accept_errors, reject)
from tinymcp.host.bridge.host import is_stateless
from tinymcp.host.bridge.streamable import (Backlog, PING_SECONDS, SSE_HEADERS,
                                            StreamableSession, accepts, post_refusal)
from tinymcp.host.bridge.wire import dump

log = logging.getLogger("tinymcp.bridge.http")

IDLE_SECONDS = 30 * 60   # a session nobody used for this long is closed (its subscriptions too)
MAX_SESSIONS = 64        # open sessions; a new one closes the one idle longest (below)
CLIENT_SESSIONS = 24     # open sessions of one client; its next closes its own idlest
CLIENT_REQUESTS = 48     # requests of one client being served at once (streams too); more: 429
LISTEN_SECONDS = 15 * 60   # a subscriptions/listen stream is ended cleanly after this long
TASK_METHODS = frozenset(("tasks/get", "tasks/update", "tasks/cancel"))   # Mcp-Name: taskId


def modern_body(msg):
    # Whether a request body is in the 2026-07-28 shape: server/discover, or the _meta envelope.
    if type(msg) is not dict:
        return False
    params = msg.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    return msg.get("method") == "server/discover" or (
        type(meta) is dict and VERSION_META in meta)


class QuietServer(uvicorn.Server):
    # The bridge owns SIGINT/SIGTERM (exit 0 after a clean end); uvicorn must not re-raise them.
    @contextlib.contextmanager
    def capture_signals(self):
        yield


class Outbox(Backlog):
    # What waits to be written to one host, in order (what may wait: Backlog).

    def __init__(self, label):
        super().__init__(label)
        self.items = collections.deque()
        self._ready = asyncio.Event()

    def put(self, item, notification):
        if self.admits(len(self.items), notification):
            self.items.append(item)
            self._ready.set()

    async def get(self):
        while not self.items:
            self._ready.clear()
            await self._ready.wait()
        return self.items.popleft()


# Methods a token with tinymcp.read may call (a tools/call too, when its tool is read-only);
# any other needs tinymcp.act. Notifications and responses need tinymcp.read.
READ_METHODS = frozenset((
    "initialize", "ping", "server/discover", "tools/list", "resources/list",
    "resources/templates/list", "resources/read", "resources/subscribe", "resources/unsubscribe",
    "prompts/list", "prompts/get", "completion/complete", "logging/setLevel",
    "subscriptions/listen", "tasks/get", "tasks/list", "tasks/result", "tasks/cancel"))


class HttpFront:
    # ASGI app for /mcp, behind the Guard: checks the protocol version and the client's OAuth
    # scope, then hands the request to its session (streamable.py); a session is created by an
    # initialize. Who asks (scope[CLIENT], from the Guard) is the unit of the caps: sessions and
    # requests in flight per client, so no client can crowd out another.

    def __init__(self, hosts, auth=None):
        self.hosts = hosts
        self.auth = auth     # auth.py's front (its challenge() for a 403), None: no scopes
        self.sessions = {}   # session id -> its StreamableSession
        self.used = {}       # session id -> when a request last came for it
        self.busy = collections.Counter()   # session id -> its requests being served
        self.owner = {}      # session id -> the key of the client that opened it
        self.leased = {}     # session id -> until when it holds a lease it asked for (lease_s)
        self.serving = collections.Counter()   # client key -> its requests being served
        self.taken = 0       # tools/call served by the express lane (express())

    @contextlib.asynccontextmanager
    async def lifespan(self, app):
        sweeping = asyncio.ensure_future(self._sweep())
        try:
            yield
        finally:
            sweeping.cancel()
            await self.close_all()

    async def close_all(self):
        for session in list(self.sessions.values()):
            session.end()
        self.sessions.clear()

    async def _sweep(self):
        # A session with no request in flight (an open GET stream is one) for IDLE_SECONDS is
        # closed, its subscriptions with it.
        while True:
            await asyncio.sleep(max(0.05, IDLE_SECONDS / 8))
            now = loop_time()
            for sid, session in list(self.sessions.items()):
                if sid not in self.busy and now - self.used.get(sid, now) >= IDLE_SECONDS:
                    log.info("session %s idle %.0f s: closed", sid[:8], now - self.used[sid])
                    session.end()

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        client = scope.get(CLIENT)
        key = client.key if client is not None else None
        if self.serving[key] >= CLIENT_REQUESTS:
            log.warning("%s has %d requests in flight: refusing another", key, CLIENT_REQUESTS)
            await reject(429, "Too Many Requests: at most %d at once from one client"
                         % CLIENT_REQUESTS, headers={"Retry-After": "1"})(scope, receive, send)
            return
        self.serving[key] += 1
        try:
            await self._serve(client, scope, receive, send)
        finally:
            self.serving[key] -= 1
            if not self.serving[key]:
                del self.serving[key]

    def express(self, client, headers, msg, line, respond, hand_over):
        # A POST /mcp the Guard checked (who asks: client; headers: a mapping of the few the
        # checks read; msg decoded from line, the body), which the express lane may serve:
        # the checks of __call__, _serve and handle, then its session's express() -> True when
        # served so, else False: the general way serves it (nothing was done). respond(status,
        # headers, body) writes a whole response; hand_over(app) starts an ASGI app for it.
        key = client.key if client is not None else None
        if (client is not None and client.scopes is not None) or type(msg) is not dict:
            return False   # OAuth scopes: the general way checks them
        sid = headers.get("mcp-session-id")
        version = headers.get("mcp-protocol-version")
        session = self.sessions.get(sid) if sid is not None else None
        if (session is None or self.owner.get(sid) != key or self.serving[key] >= CLIENT_REQUESTS
                or (version is not None and version not in VERSIONS)):
            return False
        serving, busy = self.serving, self.busy
        # Counted as __call__ and _serve count a request, until its response is written.
        serving[key] += 1
        busy[sid] += 1
        ended = []

        def done():
            if ended:
                return
            ended.append(True)
            serving[key] -= 1
            if not serving[key]:
                del serving[key]
            busy[sid] -= 1
            if not busy[sid]:
                del busy[sid]
            self.used[sid] = loop_time()

        def responded(status, head, body):
            done()
            respond(status, head, body)

        async def poured(pour, scope, receive, send):
            try:
                await pour(receive, send)
            finally:
                done()
        try:
            taken = session.express(headers, msg, line, responded, lambda pour: hand_over(
                functools.partial(poured, pour)))
        except BaseException:
            done()
            raise
        if not taken:
            done()
            return False
        self.taken += 1
        self.used[sid] = loop_time()
        self._note_lease(sid, msg)
        return True

    def _needs(self, method, msg):
        # The OAuth scope a request needs: READ for reading, ACT for what changes a board.
        if method != "POST":
            return READ   # the GET stream, DELETE
        items = msg if type(msg) is list else [msg]
        for item in items:
            name = item.get("method") if type(item) is dict else None
            if name is None or "id" not in item or name in READ_METHODS:
                continue
            params = item.get("params")
            if (name == "tools/call" and type(params) is dict
                    and self.hosts.router.read_only(params)):
                continue
            return ACT
        return READ

    async def _serve(self, client, scope, receive, send):
        request = Request(scope, receive)
        msg = scope.get(MESSAGE)
        if client is not None and client.scopes is not None:
            needed = self._needs(request.method, msg)
            if needed not in client.scopes:
                rid = msg.get("id") if type(msg) is dict else None
                await reject(403, "Forbidden: this needs the OAuth scope %s" % needed,
                             rid=rid if type(rid) in (int, str) else None,
                             headers={"WWW-Authenticate": self.auth.challenge(
                                 "insufficient_scope", "this needs the scope " + needed,
                                 needed)})(scope, receive, send)
                return
        version = request.headers.get("mcp-protocol-version")
        if version is not None and version not in VERSIONS and version != STATELESS:
            # 2026-07-28: 400 with an UnsupportedProtocolVersionError listing what is spoken,
            # answering the request's id. A request in the 2026-07-28 shape (no session, its
            # _meta envelope or server/discover) is told what server/discover says.
            rid = msg.get("id") if type(msg) is dict else None
            supported = [STATELESS] + list(VERSIONS)
            if request.headers.get("mcp-session-id") is None and modern_body(msg):
                supported = [STATELESS]
            await reject(400, "Bad Request: unsupported MCP-Protocol-Version %s (supported: %s)"
                          % (shown(version, "'"), ", ".join(supported)), code=UNSUPPORTED_VERSION,
                          rid=rid if type(rid) in (int, str) else None,
                          data={"supported": supported, "requested": version and shown(version)})(
                              scope, receive, send)
            return
        sid = request.headers.get("mcp-session-id")
        if sid is None and version == STATELESS:
            # 2026-07-28: one self-contained POST per request; no session, no GET stream.
            if request.method != "POST":
                await Response(status_code=405, headers={"Allow": "POST"})(scope, receive, send)
                return
            await self._stateless(request, msg, scope, receive, send)
            return
        if sid is not None:
            session = self.sessions.get(sid)
            if session is None:
                await reject(404, "Session not found")(scope, receive, send)
                return
            if self.owner.get(sid) != (client.key if client is not None else None):
                await reject(404, "Session not found")(scope, receive, send)
                return   # another client's session: as good as unknown to this one
            self.used[sid] = loop_time()
            self._note_lease(sid, msg)
            self.busy[sid] += 1
            try:
                if type(msg) is list and request.method == "POST":
                    await self._batch(session.host, msg, scope, receive, send)
                else:
                    await session.handle(request.method, request.headers, msg, scope, receive,
                                         send)
            finally:
                self.busy[sid] -= 1
                if not self.busy[sid]:
                    del self.busy[sid]
                self.used[sid] = loop_time()
            return
        if request.method != "POST":
            await reject(400, "Bad Request: Missing session ID")(scope, receive, send)
            return
        await self._open_session(request, msg, scope, receive, send)

    def _note_lease(self, sid, msg):
        # A tools/call with lease_s: the session holds an output until then (tinymcp/leases.py
        # keeps the lease on the board; this is what the bridge knows of it, to spare it).
        params = (msg.get("params") if type(msg) is dict and msg.get("method") == "tools/call"
                  else None)
        args = params.get("arguments") if type(params) is dict else None
        lease = args.get("lease_s") if type(args) is dict else None
        if type(lease) in (int, float) and 0 < lease < 1e6:
            self.leased[sid] = max(self.leased.get(sid, 0), loop_time() + lease)

    def _ended(self, session):
        # A session has ended (DELETE, idle, closed for room, the bridge's end): forgotten.
        if self.sessions.get(session.sid) is session:
            self._forget(session.sid)

    def _forget(self, sid):
        self.sessions.pop(sid, None)
        self.used.pop(sid, None)
        self.owner.pop(sid, None)
        self.leased.pop(sid, None)

    def _leasing(self, sid):
        return self.leased.get(sid, 0) > loop_time()

    async def _make_room(self, key):
        # Room for a session of client `key`. At CLIENT_SESSIONS of its own, its own idlest
        # session is closed; at MAX_SESSIONS in all, its own idlest first, else the idlest of
        # another client's that holds no lease (a host coming back for a closed session gets
        # 404 and initializes again); one serving a request only when all are. -> False when
        # every other session is leasing: the new one is refused.
        while True:
            own = [s for s in self.sessions if self.owner.get(s) == key]
            if len(own) >= CLIENT_SESSIONS or (own and len(self.sessions) >= MAX_SESSIONS):
                pool = own
            elif len(self.sessions) >= MAX_SESSIONS:
                pool = [s for s in self.sessions if not self._leasing(s)]
                if not pool:
                    return False
            else:
                return True
            sid = min(pool, key=lambda s: (s in self.busy, self.used.get(s, 0)))
            log.info("%d sessions open: closing session %s, idle %.0f s (%d of this client's)",
                     len(self.sessions), sid[:8], loop_time() - self.used.get(sid, 0), len(own))
            self.sessions[sid].end()
            self._forget(sid)

    async def _open_session(self, request, msg, scope, receive, send):
        # Only an initialize may open a session; anything else without a session id is refused
        # before a session exists, so a probe (server/discover) leaves nothing behind.
        if type(msg) is dict and "id" in msg and is_stateless(msg.get("method"), msg.get("params")):
            # A 2026-07-28 request without its MCP-Protocol-Version header: the checks say so.
            await self._stateless(request, msg, scope, receive, send)
            return
        if type(msg) is list:
            await reject(400, "Invalid Request: a JSON-RPC batch needs a session (initialize, "
                          "alone, opens one)")(scope, receive, send)
            return
        if type(msg) is not dict or msg.get("method") != "initialize":
            await reject(400, "Bad Request: Missing session ID")(scope, receive, send)
            return
        refusal = post_refusal(request.headers, msg)
        if refusal is None and "id" not in msg:
            refusal = reject(400, "Invalid Request: initialize is a request (it needs an id)")
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        client = scope.get(CLIENT)
        key = client.key if client is not None else None
        if not await self._make_room(key):
            log.warning("%d sessions open, every other one holding a lease: refusing a new one",
                        len(self.sessions))
            await reject(503, "Service Unavailable: every session holds a lease; try later",
                         headers={"Retry-After": "10"})(scope, receive, send)
            return
        sid = uuid.uuid4().hex
        session = self.sessions[sid] = StreamableSession(sid, self.hosts, self._ended)
        self.owner[sid] = key
        self.used[sid] = loop_time()
        self.busy[sid] += 1
        try:
            await session.post(msg, request.headers, scope, receive, send)
        finally:
            self.busy[sid] -= 1
            if not self.busy[sid]:
                del self.busy[sid]
            self.used[sid] = loop_time()
        if not session.host.initialized:   # its initialize failed: it has no use
            session.end()

    async def _batch(self, session, items, scope, receive, send):
        # A JSON-RPC batch in a session's POST (2025-03-26): its requests served as any, their
        # answers in one JSON array; 202 when it holds none. Other revisions refuse it (-32600).
        answered = asyncio.get_running_loop().create_future()
        session.receive_batch(items, answered.set_result)
        if not answered.done():
            # 2025-03-26: "Disconnection SHOULD NOT be interpreted as the client cancelling its
            # request": a host that goes away leaves its requests to finish, unanswered.
            gone = asyncio.ensure_future(_disconnected(receive))
            try:
                await asyncio.wait((answered, gone), return_when=asyncio.FIRST_COMPLETED)
            finally:
                gone.cancel()
            if not answered.done():
                return
        answer = answered.result()
        if answer == []:
            await Response(status_code=202)(scope, receive, send)
            return
        await Response(dump(answer),
                       status_code=400 if type(answer) is dict else 200,
                       media_type="application/json")(scope, receive, send)

    async def _stateless(self, request, msg, scope, receive, send):
        # One 2026-07-28 request: its headers checked against its body, then served by a host
        # session of its own; the answer is JSON, or an SSE stream once a notification comes.
        has_json, has_sse = accepts(request.headers)
        if type(msg) is not dict or type(msg.get("method")) is not str:
            await reject(400, "Invalid Request: the body must be one JSON-RPC request or "
                          "notification")(scope, receive, send)
            return
        if "id" not in msg:   # cancellation is closing the response stream: nothing to do
            await Response(status_code=202)(scope, receive, send)
            return
        rid = msg["id"]
        if not has_json or (msg["method"] == "subscriptions/listen" and not has_sse):
            await Response("Not Acceptable: Accept must include application/json"
                           + (" and text/event-stream" if has_sse is False else ""),
                           status_code=406)(scope, receive, send)
            return
        duplicated = find_duplicated_routing_header(request.headers.items())
        verdict = classify_inbound_request(msg, headers=dict(request.headers))
        if duplicated is not None:
            await reject(400, "%s header appears more than once" % duplicated, code=HEADER_MISMATCH,
                          rid=rid)(scope, receive, send)
            return
        code = getattr(verdict, "code", None)
        if code is None:
            verdict = routing_mismatch(msg, request.headers, self.hosts)
            code = getattr(verdict, "code", None)
        if code is not None and (code == HEADER_MISMATCH or msg["method"] not in ("initialize", "ping")):
            await reject(ERROR_CODE_HTTP_STATUS.get(code, 400), verdict.message, code=code,
                          rid=rid, data=verdict.data)(scope, receive, send)
            return
        label = "http %s %s" % (STATELESS, str(rid)[:16])
        out = Outbox(label)
        session = self.hosts.open_session(lambda m, related=None: out.put(m, "id" not in m), label)
        session.era = "stateless"
        session.principal = principal(scope.get(CLIENT), request.headers)   # its tasks outlive it
        session.receive(msg)
        gone = asyncio.ensure_future(_disconnected(receive))
        streaming = False
        # A listen stream never ends by itself: it is ended, cleanly, after LISTEN_SECONDS (the
        # client listens again), so none is held for ever.
        until = loop_time() + LISTEN_SECONDS if msg["method"] == "subscriptions/listen" else None
        try:
            while True:
                if until is not None and loop_time() >= until:
                    if streaming:
                        await send({"type": "http.response.body", "body": b"",
                                    "more_body": False})
                    else:
                        await Response(status_code=204)(scope, receive, send)
                    return
                getter = asyncio.ensure_future(out.get())
                done, _ = await asyncio.wait((getter, gone), timeout=PING_SECONDS,
                                             return_when=asyncio.FIRST_COMPLETED)
                if gone in done:
                    getter.cancel()
                    return
                if getter not in done:
                    getter.cancel()
                    if has_sse:
                        if not streaming:
                            streaming = True
                            await send({"type": "http.response.start", "status": 200,
                                        "headers": SSE_HEADERS})
                        await send({"type": "http.response.body", "body": b": ping\r\n\r\n",
                                    "more_body": True})
                    continue
                item = getter.result()
                final = "method" not in item and item.get("id") == rid
                if final and not streaming:
                    status = 200
                    if "error" in item:
                        status = ERROR_CODE_HTTP_STATUS.get(item["error"].get("code"), 200)
                    await Response(dump(item), status_code=status,
                                   media_type="application/json")(scope, receive, send)
                    return
                if not has_sse:
                    continue   # a JSON-only client gets the answer alone
                if not streaming:
                    streaming = True
                    await send({"type": "http.response.start", "status": 200,
                                "headers": SSE_HEADERS})
                event = "event: message\r\ndata: %s\r\n\r\n" % dump(item)
                await send({"type": "http.response.body", "body": event.encode(),
                            "more_body": not final})
                if final:
                    return
        except OSError:
            return   # the client went away mid-stream
        finally:
            gone.cancel()
            session.close()


def routing_mismatch(msg, headers, hosts):
    # SEP-2243's checks the SDK's ladder leaves to the server, or None: a tasks/* request's
    # Mcp-Name against its taskId (SEP-2663; a client that sends none is let through, as the
    # SDK's own sends none), and a tools/call's Mcp-Param-* headers against the arguments its
    # tool's x-mcp-header annotations name (a header missing, extra, or not the body's value).
    params = msg.get("params")
    if type(params) is not dict:
        return None
    method = msg["method"]
    if method in TASK_METHODS:
        said = headers.get("mcp-name")
        if said is not None and decode_header_value(said) != params.get("taskId"):
            return InboundLadderRejection(HEADER_MISMATCH, "mcp-name header does not match the "
                                          "request body's 'taskId' parameter")
        return None
    if method == "tools/call":
        schema = hosts.router.input_schema(params)   # the router only where a tool is named
        arguments = params.get("arguments")
        if type(schema) is dict:
            return validate_mcp_param_headers(
                schema, arguments if type(arguments) is dict else {}, headers)
    return None


def principal(client, headers):
    # Who a 2026-07-28 request comes from, beyond the request: its OAuth subject, else the
    # bearer token it presents (a digest of it), else the peer's address. Its tasks are this
    # principal's: polled, cancelled and updated by it alone.
    if client is not None and client.scopes is not None:
        return client.key   # "oauth SUBJECT" (auth.py), whatever token it holds now
    token = bearer(headers)
    if token is not None:
        return "token " + hashlib.sha256(token.encode()).hexdigest()
    return client.key if client is not None else "peer ?"


def loop_time():
    return asyncio.get_running_loop().time()


async def _disconnected(receive):
    # Returns when the client closes the connection (for 2026-07-28 that cancels the request).
    while (await receive()).get("type") != "http.disconnect":
        pass


async def serve_http(hosts, boards, sock, host, port, auth, stopping):
    # Serve on an already bound socket until `stopping` (an asyncio.Event) is set; boards() ->
    # the boards the dashboard shows; auth: auth.py's Open, StaticToken or OAuth.
    from tinymcp.host.bridge.dashboard import Dashboard
    loop = asyncio.get_running_loop()
    quiet_accept_errors(loop)
    front = HttpFront(hosts, auth)
    dashboard = Dashboard(boards, hosts.router.events.recent)
    routes = [Route("/mcp", front)] + dashboard.routes()
    public = dashboard.public
    if getattr(auth, "oauth", False):   # RFC 9728 metadata, public; the page too
        routes = auth.routes() + routes
        public = lambda method, path: dashboard.public(method, path) or auth.public(method, path)  # noqa: E731
    app = Guard(Starlette(routes=routes, lifespan=front.lifespan), host, port, auth,
                public=public, mcp=front)
    Connection.cap = connection_cap()
    # No proxy headers: uvicorn would take a loopback client's X-Forwarded-For as its address,
    # and the per-client caps count by address (auth.peer).
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on",
                            timeout_graceful_shutdown=2, ws="none", http=Connection,
                            timeout_keep_alive=5, h11_max_incomplete_event_size=16 << 10,
                            proxy_headers=False)
    server = QuietServer(config)
    serving = loop.create_task(server.serve(sockets=[sock]))
    stop = loop.create_task(stopping.wait())
    await asyncio.wait((serving, stop), return_when=asyncio.FIRST_COMPLETED)
    stop.cancel()
    await dashboard.close()
    await front.close_all()
    log.debug("http: %d tools/call took the express lane", front.taken)
    server.should_exit = True
    await serving
    if getattr(auth, "oauth", False):
        await auth.close()
