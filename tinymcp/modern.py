# The stateless 2026-07-28 revision: per-request _meta, server/discover, subscriptions/listen and
# input-required results. Imported only when a connection's first request speaks it.
from tinymcp import jsonrpc, server as core
from tinymcp.jsonrpc import RpcError
from tinymcp.protocol import (STATELESS, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND,
                              INTERNAL_ERROR, RESOURCE_NOT_FOUND, MISSING_CAPABILITY,
                              UNSUPPORTED_VERSION, HANDSHAKE_ONLY as _REMOVED,
                              VERSION_META as VERSION_KEY, CAPABILITIES_META as CAPABILITIES_KEY,
                              LOG_LEVEL_META as LOG_LEVEL_KEY,
                              SUBSCRIPTION_META as SUBSCRIPTION_KEY,
                              SERVER_INFO_META as SERVER_INFO_KEY)

VERSIONS = (STATELESS,)
_OFF = len(core.LEVELS)  # no notifications/message unless the request asks for a level
_LISTEN_FLAGS = (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                 ("resourcesListChanged", "resources"))


class InputRequired(BaseException):
    # Raised by ask() through the handler, past a tool's own `except Exception`, when the
    # answer can only come with the client's retry. `request` is None for a protocol error.
    def __init__(self, key, request, error=None):
        self.key = key
        self.request = request
        self.error = error


class Modern:
    list_ttl_ms = 60000   # tools/prompts/resources lists and discover: registries rarely change
    read_ttl_ms = 0       # resources/read: a sensor reading is stale at once
    max_listens = 4       # open subscriptions/listen streams

    def __init__(self, server):
        self.server = server
        self.listens = {}   # listen request id -> the notifications it was granted
        self.meta = {SERVER_INFO_KEY: server.info}
        # Ends an encoded result: reused for every tools/call answer.
        self._tail = (b',"resultType":"complete","_meta":' + jsonrpc.dumps(self.meta) + b"}")
        # The request being served, for input-required results:
        self.caps = None     # its client capabilities
        self.params = None   # its params, while it is a request that may ask (tools/call...)
        self.method = self.name = self.binding = None
        self.answers = None  # what the client answered so far
        self.asked = 0       # questions asked so far in this run of the handler

    # -- one request ------------------------------------------------------------------------

    def serve(self, rid, method, params):
        # -> an error frame, None or core._RESULT, like Server._request.
        server = self.server
        if server.initialized:  # the connection opened with initialize: that era it stays
            return jsonrpc.error_frame(rid, INVALID_REQUEST, "Invalid Request: this connection "
                                       "speaks the initialize era; no 2026-07-28 _meta here")
        if method in _REMOVED:
            # initialize names what this connection speaks, for clients that cannot fall forward.
            return jsonrpc.error_frame(rid, METHOD_NOT_FOUND, "Method not found: " + method
                                       + " is not part of protocol 2026-07-28",
                                       {"supported": list(VERSIONS)} if method == "initialize"
                                       else None)
        meta = params.get("_meta")
        problem = self._envelope(meta)
        if problem is not None:
            return jsonrpc.error_frame(rid, problem.code, problem.message, problem.data)
        if server.modern is not self:
            self._lock()
        fn = _METHODS.get(method)
        if fn is None:
            return jsonrpc.error_frame(rid, METHOD_NOT_FOUND, "Method not found: " + method)
        level = meta.get(LOG_LEVEL_KEY)
        if level is not None:
            if level not in core.LEVELS:
                return jsonrpc.error_frame(rid, INVALID_PARAMS, "Invalid params: " + LOG_LEVEL_KEY
                                           + " must be one of " + ", ".join(core.LEVELS))
            server.log_level = core.LEVELS.index(level)
        self.caps = meta[CAPABILITIES_KEY]
        try:
            return server._run(rid, fn, params)
        finally:
            server.log_level = _OFF
            self.caps = self.params = self.binding = self.answers = None

    def _envelope(self, meta):
        # -> None when _meta carries a supported version and the client's capabilities.
        if type(meta) is not dict or VERSION_KEY not in meta or CAPABILITIES_KEY not in meta:
            return RpcError(INVALID_PARAMS, "Invalid params: _meta must carry " + VERSION_KEY
                            + " and " + CAPABILITIES_KEY)
        version = meta[VERSION_KEY]
        if type(version) is not str:
            return RpcError(INVALID_PARAMS, "Invalid params: " + VERSION_KEY + " must be a string")
        if version not in VERSIONS:
            # Before the era is decided the client may still fall back to initialize.
            supported = list(VERSIONS)
            if self.server.modern is not self:
                supported.extend(core.VERSIONS)
            return RpcError(UNSUPPORTED_VERSION, "Unsupported protocol version",
                            {"supported": supported, "requested": version})
        if type(meta[CAPABILITIES_KEY]) is not dict:
            return RpcError(INVALID_PARAMS, "Invalid params: " + CAPABILITIES_KEY
                            + " must be an object")
        return None

    def _lock(self):
        # This connection now speaks 2026-07-28 only.
        server = self.server
        server.modern = self
        server.version = VERSIONS[0]
        server.era = len(core.VERSIONS)  # newer than every handshake version: all fields
        server.log_level = _OFF
        server.subscriptions = {}
        server._cache = {}

    # -- results --------------------------------------------------------------------------

    def complete(self, result, ttl_ms=None, scope=None):
        # A finished result with resultType and serverInfo (and cache hints when given).
        if type(result) is tuple:  # encoded pieces of one object: swap its closing brace
            last = result[-1]
            if len(result) == 5 and last == b"}":  # tools.shape's answer: one new tuple, no slices
                return (result[0], result[1], result[2], result[3], self._tail)
            return result[:-1] + (last[:-1], self._tail)
        if type(result) is bytes:
            if result == b"{}":
                return (b"{", self._tail[1:])
            return (result[:-1], self._tail)
        result["resultType"] = "complete"
        if ttl_ms is not None:
            result["ttlMs"] = ttl_ms
            result["cacheScope"] = scope
        meta = result.get("_meta")
        if type(meta) is dict:
            meta[SERVER_INFO_KEY] = self.meta[SERVER_INFO_KEY]
        else:
            result["_meta"] = self.meta
        return result

    # -- input-required results (multi round-trip requests) ---------------------------------

    def expect(self, method, params, name):
        # Before a handler that may ask the client something: remember which request this is.
        responses = params.get("inputResponses")
        if responses is not None and type(responses) is not dict:
            raise RpcError(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        self.method = method
        self.name = name
        self.params = params
        self.asked = 0

    def request(self, method, params):
        # ctx.request() during a 2026-07-28 request: the answer from the retry, or ask for it.
        if self.params is None:
            raise RpcError(INTERNAL_ERROR, method + " can only be asked during tools/call, "
                           "prompts/get or resources/read")
        need = core.CLIENT_NEEDS.get(method)
        if need is None:
            raise RpcError(INTERNAL_ERROR, method + " is not something a server can ask a client")
        if self.asked == 0:
            self._recall()
        self.asked += 1
        key = need + "-" + str(self.asked)
        answers = self.answers
        if answers and key in answers:
            return answers[key]
        if need not in self.caps:
            raise InputRequired(None, None, RpcError(
                MISSING_CAPABILITY, "Missing required client capability: " + need,
                {"requiredCapabilities": {need: {}}}))
        request = {"method": method}
        if params is not None:
            request["params"] = params
        raise InputRequired(key, request)

    def _recall(self):
        # The answers this request brings: those kept in its requestState plus the response
        # to the question asked last. The state holds only what this client answered, bound
        # to the request (arguments as the tool saw them): a client that edits it can do no
        # more than answer differently, so it needs no signature.
        params = self.params
        self.binding = [self.method, self.name, params.get("arguments")]
        responses = params.get("inputResponses")
        state = params.get("requestState")
        if state is None:
            self.answers = responses
            return
        try:
            saved = jsonrpc.loads(state) if type(state) is str else None
        except Exception:
            saved = None
        if (type(saved) is not dict or saved.get("for") != self.binding
                or type(saved.get("answers")) is not dict):
            raise InputRequired(None, None, RpcError(
                INVALID_PARAMS, "Invalid params: requestState does not belong to this request"))
        answers = saved["answers"]
        asked = saved.get("asked")
        if responses and asked in responses:
            answers[asked] = responses[asked]
        self.answers = answers

    def input_required(self, signal):
        if signal.error is not None:
            raise signal.error
        state = {"for": self.binding, "asked": signal.key, "answers": self.answers or {}}
        return {"resultType": "input_required", "inputRequests": {signal.key: signal.request},
                "requestState": jsonrpc.text(state), "_meta": self.meta}

    # -- subscriptions/listen -------------------------------------------------------------

    def listen(self, rid, wanted):
        server = self.server
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
        self.listens[rid] = granted
        # The acknowledgement is the stream's first message; the response comes only when
        # the stream ends, so this request gets none now.
        server.notify("notifications/subscriptions/acknowledged",
                      {"notifications": granted, "_meta": {SUBSCRIPTION_KEY: rid}})
        self._watch()
        return None

    def cancel(self, rid):
        if rid in self.listens:
            del self.listens[rid]
            self._watch()

    def _watch(self):
        # Server.poll() watches the union of the open streams' URIs.
        server = self.server
        was = server.subscriptions
        now = {}
        for rid in self.listens:
            for uri in self.listens[rid].get("resourceSubscriptions", ()):
                if uri in now:
                    continue
                if uri in was:
                    now[uri] = was[uri]
                    continue
                found = server.resources.resolve(uri)
                try:
                    now[uri] = found[0].watch(**found[1]) if found[0].watch else None
                except Exception:  # a failing watch (or a resource since removed) reads as None
                    now[uri] = None
        server.subscriptions = now

    def changed(self, kind):
        self.event("notifications/" + kind + "/list_changed", kind + "ListChanged")

    def resource_updated(self, uri):
        if uri in self.server.subscriptions:
            self.event("notifications/resources/updated", None, uri)

    def event(self, method, flag, uri=None):
        # A change notification to every stream that opted in, tagged with its id.
        for rid in self.listens:
            granted = self.listens[rid]
            if uri is None:
                if flag not in granted:
                    continue
                params = {"_meta": {SUBSCRIPTION_KEY: rid}}
            else:
                if uri not in granted.get("resourceSubscriptions", ()):
                    continue
                params = {"uri": uri, "_meta": {SUBSCRIPTION_KEY: rid}}
            self.server.notify(method, params)


# -- method handlers: fn(server, params), run by Server._run --------------------------------

def _discover(server, params):
    return server.cached("discover", _discover_result)


def _discover_result(server):
    result = {"supportedVersions": list(VERSIONS), "capabilities": server.capabilities()}
    if server.instructions:
        result["instructions"] = server.instructions
    modern = server.modern
    return modern.complete(result, modern.list_ttl_ms, "public")


def _tools_call(server, params):
    modern = server.modern
    modern.expect("tools/call", params, params.get("name"))
    try:
        return modern.complete(core._tools_call(server, params))
    except InputRequired as signal:
        return modern.input_required(signal)


def _prompts_get(server, params):
    modern = server.modern
    modern.expect("prompts/get", params, params.get("name"))
    try:
        return modern.complete(core._prompts_get(server, params))
    except InputRequired as signal:
        return modern.input_required(signal)


def _resources_read(server, params):
    modern = server.modern
    modern.expect("resources/read", params, params.get("uri"))
    try:
        result = core._resources_read(server, params)
    except InputRequired as signal:
        return modern.input_required(signal)
    except RpcError as e:
        if e.code == RESOURCE_NOT_FOUND:  # -32002 belongs to the handshake era
            raise RpcError(INVALID_PARAMS, e.message, e.data)
        raise
    return modern.complete(result, modern.read_ttl_ms, "private")


def _complete(server, params):
    return server.modern.complete(core._complete(server, params))


def _listen(server, params):
    return server.modern.listen(server.ctx.request_id, params.get("notifications"))


_METHODS = {
    "server/discover": _discover,
    "tools/list": core._tools_list,        # Server.page() adds the result fields when modern
    "tools/call": _tools_call,
    "resources/list": core._resources_list,
    "resources/templates/list": core._templates_list,
    "resources/read": _resources_read,
    "prompts/list": core._prompts_list,
    "prompts/get": _prompts_get,
    "completion/complete": _complete,
    "subscriptions/listen": _listen,
}
