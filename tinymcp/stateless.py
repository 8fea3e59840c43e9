# The stateless 2026-07-28 revision: per-request _meta, server/discover, subscriptions/listen and
# input-required results (those in tinymcp/asking.py, loaded at a first question). A revision
# strategy (see tinymcp/revision.py); loaded only when a connection's first request speaks it.
from tinymcp import once
from tinymcp.jsonrpc import RpcError, dumps
from tinymcp.protocol import (STATELESS, VERSIONS as HANDSHAKE_VERSIONS, LEVELS, INVALID_PARAMS,
                              INVALID_REQUEST, METHOD_NOT_FOUND, INTERNAL_ERROR, RESOURCE_NOT_FOUND,
                              UNSUPPORTED_VERSION, VERSION_META)

VERSIONS = (STATELESS,)
# Handshake-era methods this revision dropped (subscribe became subscriptions/listen).
HANDSHAKE_ONLY = ("initialize", "ping", "logging/setLevel", "resources/subscribe",
                  "resources/unsubscribe")
# Its per-request _meta keys (beside protocol.VERSION_META); kept here, not in tinymcp.protocol,
# so a board serving only the handshake era holds none of them.
CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
SUBSCRIPTION_META = "io.modelcontextprotocol/subscriptionId"
SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"
_OFF = len(LEVELS)  # no notifications/message unless the request asks for a level
# Requests whose handler may ask the client something, and the param naming what they run.
_ASKING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_LISTEN_FLAGS = (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                 ("resourcesListChanged", "resources"))


class Stateless:
    list_ttl_ms = 60000   # tools/prompts/resources lists and discover: registries rarely change
    read_ttl_ms = 0       # resources/read: a sensor reading is stale at once
    max_listens = 4       # open subscriptions/listen streams

    def __init__(self, server):
        self.listens = {}   # listen request id -> the notifications it was granted
        self.meta = {SERVER_INFO_META: server.info}
        # Ends every tools/call answer: encoded once.
        self.tail = b',"resultType":"complete","_meta":' + dumps(self.meta)
        # The request being served, for input-required results:
        self.caps = None     # its client capabilities
        self.params = None   # its params, while it is a request that may ask (tools/call...)
        self.method = None
        self.binding = None
        self.answers = None  # what the client answered so far
        self.asked = 0       # questions asked so far in this run of the handler

    # -- one request ------------------------------------------------------------------------

    def gate(self, server, method, params):
        session = server.session
        if session.initialized:  # the connection opened with initialize: that era it stays
            raise RpcError(INVALID_REQUEST, "Invalid Request: this connection speaks the "
                                            "initialize era; no 2026-07-28 _meta here")
        if method in HANDSHAKE_ONLY:
            # initialize names what this connection speaks, for clients that cannot fall forward.
            raise RpcError(METHOD_NOT_FOUND, "Method not found: " + method
                           + " is not part of protocol 2026-07-28",
                           {"supported": list(VERSIONS)} if method == "initialize" else None)
        meta = params.get("_meta")
        self._envelope(session, meta)
        if session.revision is not self:
            if method == "server/discover":  # a probe: initialize may still follow (Claude Code)
                return self._probe
            self._lock(session)
        handler = _OWN.get(method)
        if handler is None:
            handler = server.handlers.get(method)
            if handler is None:
                raise RpcError(METHOD_NOT_FOUND, "Method not found: "
                               + once("tinymcp.echo.shown", method))
            if method in _ASKING:
                self.method = method
                self.params = params
                self.asked = 0
                responses = params.get("inputResponses")
                if responses is not None and type(responses) is not dict:
                    raise RpcError(INVALID_PARAMS,
                                   "Invalid params: inputResponses must be an object")
                handler = _asking
        level = meta.get(LOG_LEVEL_META)
        if level is not None:
            if level not in LEVELS:
                raise RpcError(INVALID_PARAMS, "Invalid params: " + LOG_LEVEL_META
                               + " must be one of " + ", ".join(LEVELS))
            session.log_level = LEVELS.index(level)
        self.caps = meta[CAPABILITIES_META]
        return handler

    def _envelope(self, session, meta):
        # Raises unless _meta carries a supported version and the client's capabilities.
        if type(meta) is not dict or VERSION_META not in meta or CAPABILITIES_META not in meta:
            raise RpcError(INVALID_PARAMS, "Invalid params: _meta must carry " + VERSION_META
                           + " and " + CAPABILITIES_META)
        version = meta[VERSION_META]
        if type(version) is not str:
            raise RpcError(INVALID_PARAMS, "Invalid params: " + VERSION_META + " must be a string")
        if version not in VERSIONS:
            # Before the era is decided the client may still fall back to initialize. What was
            # asked is said back only if it could be a version (echo.py).
            supported = list(VERSIONS)
            if session.revision is not self:
                supported.extend(HANDSHAKE_VERSIONS)
            raise RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                           {"supported": supported,
                            "requested": version and once("tinymcp.echo.shown", version)})
        if type(meta[CAPABILITIES_META]) is not dict:
            raise RpcError(INVALID_PARAMS, "Invalid params: " + CAPABILITIES_META
                           + " must be an object")

    def _probe(self, server, params):
        # server/discover before the era is decided: answered as this revision would, uncached
        # and deciding nothing, so initialize (or another 2026-07-28 request) may come next.
        session = server.session
        era = session.era
        session.era = len(HANDSHAKE_VERSIONS)  # the capabilities this revision names
        try:
            return _discover_result(server)
        finally:
            session.era = era

    def _lock(self, session):
        # This connection now speaks 2026-07-28 only.
        session.revision = self
        session.version = STATELESS
        session.era = len(HANDSHAKE_VERSIONS)  # newer than every handshake version: all fields
        session.log_level = _OFF
        session.subscriptions = {}
        session.cache = {}

    def finish(self, server, method, result):
        # resultType and serverInfo on every result, cache hints on the cacheable ones.
        if type(result) is bytes or type(result) is tuple:  # encoded, finished before that
            return result
        if type(result) is list:  # a tool's dict (jsonrpc.py's structured reply): its tail
            result[2] = self.tail
            return result
        result.setdefault("resultType", "complete")
        if method == "list" or method == "server/discover":
            result["ttlMs"] = self.list_ttl_ms
            result["cacheScope"] = "public"
        elif method == "resources/read" and result["resultType"] == "complete":
            result["ttlMs"] = self.read_ttl_ms
            result["cacheScope"] = "private"
        meta = result.get("_meta")
        if type(meta) is dict:
            meta[SERVER_INFO_META] = self.meta[SERVER_INFO_META]
        else:
            result["_meta"] = self.meta
        return result

    def done(self, server):
        server.session.log_level = _OFF
        self.caps = self.params = self.binding = self.answers = None

    # -- input-required results (multi round-trip requests): tinymcp/asking.py ----------

    def ask(self, server, asks, timeout_ms):
        # ctx.request()/requests() during a 2026-07-28 request: the answers from the retry, or
        # an input-required result asking for those still missing.
        from tinymcp.asking import ask
        return ask(self, asks, _ASKING)

    # -- subscriptions/listen -------------------------------------------------------------

    def listen(self, server, rid, wanted):
        if type(wanted) is not dict:
            raise RpcError(INVALID_PARAMS, "Invalid params: notifications must be an object")
        if rid in self.listens:
            raise RpcError(INVALID_REQUEST, "Invalid Request: a listen stream with this id is open")
        if len(self.listens) >= self.max_listens:
            raise RpcError(INTERNAL_ERROR, "Subscription limit reached: "
                           + str(self.max_listens) + " open listen streams")
        granted = {}  # only what this board can ever send
        for flag, kind in _LISTEN_FLAGS:
            if wanted.get(flag) is True and getattr(server, kind) is not None:
                granted[flag] = True
        uris = wanted.get("resourceSubscriptions")
        if uris is not None:
            if type(uris) is not list:
                raise RpcError(INVALID_PARAMS, "Invalid params: resourceSubscriptions must be "
                               "a list of URIs")
            known = [u for u in uris if type(u) is str and server.resources is not None
                     and server.resources.resolve(u) is not None]
            if known:
                granted["resourceSubscriptions"] = known
        tids = wanted.get("taskIds")
        if tids is not None and server.tools is not None and server.tools.tasks:
            known = server.tasks().listen(server, self.caps, tids)  # the tasks extension's
            if known:
                granted["taskIds"] = known
        self.listens[rid] = granted
        # The acknowledgement is the stream's first message; the response comes only when
        # the stream ends, so this request gets none now.
        server.notify("notifications/subscriptions/acknowledged",
                      {"notifications": granted, "_meta": {SUBSCRIPTION_META: rid}})
        self._watch(server)
        return None

    def cancel(self, server, rid):
        if rid in self.listens:
            del self.listens[rid]
            self._watch(server)

    def _watch(self, server):
        # Server.poll() watches the union of the open streams' URIs.
        session = server.session
        was = session.subscriptions
        now = {}
        for rid in self.listens:
            for uri in self.listens[rid].get("resourceSubscriptions", ()):
                if uri not in now:
                    now[uri] = was[uri] if uri in was else server.resources.watch(uri)
        session.subscriptions = now

    def changed(self, server, kind):
        self._event(server, "notifications/" + kind + "/list_changed", kind + "ListChanged")

    def updated(self, server, uri):
        if uri in server.session.subscriptions:
            self._event(server, "notifications/resources/updated", None, uri)

    def _event(self, server, method, flag, uri=None):
        # A change notification to every stream that opted in, tagged with its id.
        for rid in self.listens:
            granted = self.listens[rid]
            if uri is None:
                if flag not in granted:
                    continue
                params = {"_meta": {SUBSCRIPTION_META: rid}}
            else:
                if uri not in granted.get("resourceSubscriptions", ()):
                    continue
                params = {"uri": uri, "_meta": {SUBSCRIPTION_META: rid}}
            server.notify(method, params)


# -- this revision's own handlers, and the one around the handlers that may ask --------------

def _discover(server, params):
    return server.cached("server/discover", _discover_result)


def _discover_result(server):
    result = once("tinymcp.declare.discover", server)
    result["supportedVersions"] = list(VERSIONS)
    return result


def _listen(server, params):
    session = server.session
    return session.revision.listen(server, session.call.id, params.get("notifications"))


def _asking(server, params):
    revision = server.session.revision
    method = revision.method
    try:
        return server.handlers[method](server, params)
    except RpcError as e:
        if e.code == RESOURCE_NOT_FOUND:  # -32002 belongs to the handshake era
            raise RpcError(INVALID_PARAMS, e.message, e.data)
        raise
    except BaseException as signal:
        if revision.binding is None:  # nothing was asked (asking.py sets it): no question
            raise
        from tinymcp.asking import InputRequired, input_required
        if not isinstance(signal, InputRequired):
            raise
        return input_required(revision, signal)


_OWN = {"server/discover": _discover, "subscriptions/listen": _listen}
