# The bridge's 2026-07-28 host side: stateless requests served over its handshake-era board session.
import asyncio
import logging
import uuid

from mcp.shared.inbound import classify_inbound_request
from mcp_types import (CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY, PROTOCOL_VERSION_META_KEY,
                       SERVER_INFO_META_KEY)

from tinymcp.protocol import (CLIENT_NEEDS as NEEDS, LEVELS, MISSING_CAPABILITY, HANDSHAKE_ONLY,
                              RESOURCE_NOT_FOUND, STATELESS as MODERN, SUBSCRIPTION_META,
                              UNSUPPORTED_VERSION, VERSIONS as HANDSHAKE_VERSIONS)

from tinymcp.host.bridge.host import err, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND

log = logging.getLogger("tinymcp.bridge.modern")

SUBSCRIPTION_KEY = SUBSCRIPTION_META
LIST_TTL_MS = 60000     # lists change only with the firmware (and then list_changed says so)
READ_TTL_MS = 0         # readings go stale at once
DISCOVER_WAIT = 5.0     # seconds server/discover waits for a board that is still booting
# Methods of the handshake era only: a 2026-07-28 request for them is not found.
REMOVED = frozenset(HANDSHAKE_ONLY)
LISTS = frozenset(("tools/list", "prompts/list", "resources/list", "resources/templates/list"))
# Requests whose board handler may ask the client something: answered input_required.
ASKING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
FORWARDED = LISTS | frozenset(ASKING) | {"completion/complete"}
LISTEN_FLAGS = (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                ("resourcesListChanged", "resources"))


def is_modern(method, params):
    # Does this request open (or belong to) the 2026-07-28 era?
    if method in ("server/discover", "subscriptions/listen"):
        return True
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and PROTOCOL_VERSION_META_KEY in meta


def envelope_error(body, undecided):
    # -> an error reply when the request's _meta envelope is missing or names another version.
    verdict = classify_inbound_request(body)
    code = getattr(verdict, "code", None)
    if code is None:
        return None
    data = verdict.data
    if code == UNSUPPORTED_VERSION and undecided:
        # Before the era is decided the client may still fall back to initialize.
        data = dict(data or {}, supported=[MODERN] + list(HANDSHAKE_VERSIONS))
    reply = err(code, verdict.message)
    if data is not None:
        reply["error"]["data"] = data
    return reply


class Exchange:
    # One board call (tools/call, prompts/get, resources/read) whose board handler may ask the
    # client: the call keeps running on the board while the host answers through retries.
    __slots__ = ("call", "owner", "asked", "binding", "key", "bid", "rounds", "session", "rid")

    def __init__(self, binding):
        self.call = None          # task: the board's answer to the forwarded request
        self.owner = ("modern", id(self))   # what the board session files the call under
        self.asked = None         # future: the board's next request to the client
        self.binding = binding    # (method, name or uri, arguments) a retry must repeat
        self.key = None           # the inputRequests key the host must answer
        self.bid = None           # the board's id of the request waiting for that answer
        self.rounds = 0
        self.session = None       # the host request of the current round (logs go there)
        self.rid = None


class Modern:
    # Serves 2026-07-28 requests of any host session, sharing the hub's board session.

    def __init__(self, hub):
        self.hub = hub
        self.exchanges = {}   # requestState -> Exchange waiting for the host's retry
        self.running = {}     # (session, host id) -> Exchange while its board call runs

    # -- requests ---------------------------------------------------------------------------

    async def serve(self, session, rid, method, params):
        if method in REMOVED:
            reply = err(METHOD_NOT_FOUND, "Method not found: %s is not part of protocol %s"
                        % (method, MODERN))
            if method == "initialize":
                reply["error"]["data"] = {"supported": [MODERN]}
            return reply
        if params is not None and type(params) is not dict:
            return err(INVALID_PARAMS, 'Invalid params: "params" must be an object')
        params = params or {}
        problem = envelope_error({"method": method, "params": params}, session.era is None)
        if problem is not None:
            return problem
        if session.era is None:
            session.level = len(LEVELS)   # no notifications/message unless a request asks
        meta = params["_meta"]
        caps = meta.get(CLIENT_CAPABILITIES_META_KEY)
        if type(caps) is not dict:
            return err(INVALID_PARAMS, "Invalid params: %s must be an object"
                       % CLIENT_CAPABILITIES_META_KEY)
        level = meta.get(LOG_LEVEL_META_KEY)
        if level is not None:
            if level not in LEVELS:
                return err(INVALID_PARAMS, "Invalid params: %s must be one of %s"
                           % (LOG_LEVEL_META_KEY, ", ".join(LEVELS)))
            session.log_levels[rid] = LEVELS.index(level)
            if session.log_levels[rid] < session.level:
                session.level = session.log_levels[rid]   # the board must send that much
                await self.hub.push_level()
        try:
            reply = await self._serve(session, rid, method, params, caps)
        finally:
            session.log_levels.pop(rid, None)
        if session.era is None and "result" in reply:
            # Answered: this connection speaks 2026-07-28 now. Not before: a client whose probe
            # timed out falls back to initialize, and that must still work.
            session.era = "modern"
        return reply

    async def _serve(self, session, rid, method, params, caps):
        if method == "server/discover":
            return await self.discover()
        if method == "subscriptions/listen":
            return await self.listen(session, rid, params)
        if method not in FORWARDED:
            return err(METHOD_NOT_FOUND, "Method not found: " + method)
        if method in ASKING:
            reply = await self.ask_through(session, rid, method, params, caps)
        else:
            reply = await self.hub.forward(session, rid, method, params)
        return self.finish(method, params, reply)

    async def discover(self):
        # Sooner than the SDK's 10 s probe timeout, so a booting board is not taken for a
        # server without server/discover.
        init = await self.hub.board_init(DISCOVER_WAIT)
        result = {"supportedVersions": [MODERN],
                  "capabilities": self.hub.capabilities(init)}
        if init.get("instructions"):
            result["instructions"] = init["instructions"]
        return self.finish("server/discover", {}, {"result": result})

    def server_info(self):
        init = self.hub.board.init_result or {}
        return init.get("serverInfo") or {"name": "tinymcp-bridge", "version": "0.1.0"}

    def finish(self, method, params, reply):
        # A board answer as a 2026-07-28 result: resultType, serverInfo, cache hints.
        if "error" in reply:
            error = reply["error"]
            if method == "resources/read" and error.get("code") == RESOURCE_NOT_FOUND:
                error = dict(error, code=INVALID_PARAMS, data={"uri": params.get("uri")})
            return {"error": error}
        result = dict(reply["result"])
        result.setdefault("resultType", "complete")
        result["_meta"] = dict(result.get("_meta") or {},
                               **{SERVER_INFO_META_KEY: self.server_info()})
        if result["resultType"] == "complete":
            if method in LISTS or method == "server/discover":
                result["ttlMs"], result["cacheScope"] = LIST_TTL_MS, "public"
            elif method == "resources/read":
                result["ttlMs"], result["cacheScope"] = READ_TTL_MS, "private"
        return {"result": result}

    # -- input required: the board asks the client during a call ----------------------------

    async def ask_through(self, session, rid, method, params, caps):
        binding = [method, params.get(ASKING[method]), params.get("arguments")]
        state = params.get("requestState")
        if state is not None:
            exchange = self.exchanges.get(state) if type(state) is str else None
            if exchange is None or exchange.binding != binding:
                return err(INVALID_PARAMS, "Invalid params: requestState does not belong to "
                           "this request (or its call has ended)")
            responses = params.get("inputResponses")
            if type(responses) is not dict or exchange.key not in responses:
                # Nothing for the question asked: ask it again, under the same state.
                return self._input_required(exchange, state)
            del self.exchanges[state]
            self.hub.board.respond({"jsonrpc": "2.0", "id": exchange.bid,
                                    "result": responses[exchange.key]})
            exchange.bid = None
        else:
            forward = {k: v for k, v in params.items()
                       if k not in ("inputResponses", "requestState")}
            exchange = Exchange(binding)
            exchange.call = asyncio.get_running_loop().create_task(
                self.hub.forward(session, rid, method, forward, owner=exchange.owner))
        owner = exchange.owner
        exchange.session, exchange.rid = session, rid
        exchange.asked = asyncio.get_running_loop().create_future()
        self.running[owner] = exchange
        try:
            await asyncio.wait((exchange.call, exchange.asked),
                               return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            self._abandon(owner, exchange)
            raise
        if exchange.call.done():
            self.running.pop(owner, None)
            return exchange.call.result()
        bid, ask_method, ask_params = exchange.asked.result()
        need = NEEDS[ask_method]
        if need not in caps:
            self.running.pop(owner, None)
            self.hub.board.respond({"jsonrpc": "2.0", "id": bid, "error": {
                "code": METHOD_NOT_FOUND, "message": "the client does not support " + need}})
            self._drain(exchange)
            reply = err(MISSING_CAPABILITY, "Missing required client capability: " + need)
            reply["error"]["data"] = {"requiredCapabilities": {need: {}}}
            return reply
        exchange.rounds += 1
        exchange.key = "%s-%d" % (need, exchange.rounds)
        exchange.bid = bid
        request = {"method": ask_method}
        if ask_params is not None:
            request["params"] = ask_params
        exchange.asked = request
        state = uuid.uuid4().hex
        self.exchanges[state] = exchange
        exchange.call.add_done_callback(lambda _t: self._forget(state, owner))
        return self._input_required(exchange, state)

    def _input_required(self, exchange, state):
        return {"result": {"resultType": "input_required",
                           "inputRequests": {exchange.key: exchange.asked},
                           "requestState": state}}

    def board_asks(self, owner, msg):
        # The board sent a request while running an exchange's call -> True when taken.
        exchange = self.running.get(owner)
        if exchange is None or msg["method"] not in NEEDS:
            return False
        if asyncio.isfuture(exchange.asked) and not exchange.asked.done():
            exchange.asked.set_result((msg["id"], msg["method"], msg.get("params")))
            return True
        return False

    def _forget(self, state, owner):
        # The board call ended (answered, timed out, reset): its state is no longer retryable.
        self.exchanges.pop(state, None)
        self.running.pop(owner, None)

    def _abandon(self, owner, exchange):
        self.running.pop(owner, None)
        if not exchange.call.done():
            exchange.call.cancel()

    def _drain(self, exchange):
        # The host got its answer already; the board's call ends on its own, unseen.
        exchange.call.add_done_callback(lambda t: t.cancelled() or t.exception())

    # -- subscriptions/listen ---------------------------------------------------------------

    async def listen(self, session, rid, params):
        wanted = params.get("notifications")
        if type(wanted) is not dict:
            return err(INVALID_PARAMS, "Invalid params: notifications must be an object")
        if rid in session.listens:
            return err(INVALID_REQUEST, "Invalid Request: a listen stream with this id is open")
        init = await self.hub.board_init()
        caps = init.get("capabilities") or {}
        granted = {}
        for flag, kind in LISTEN_FLAGS:
            if wanted.get(flag) is True and kind in caps:
                granted[flag] = True
        uris = wanted.get("resourceSubscriptions")
        if uris is not None:
            if type(uris) is not list:
                return err(INVALID_PARAMS, "Invalid params: resourceSubscriptions must be a "
                           "list of URIs")
            known = []
            for uri in uris:
                if type(uri) is str and uri not in known and await self.hub.subscribe(session,
                                                                                      uri):
                    known.append(uri)
            if known:
                granted["resourceSubscriptions"] = known
        session.listens[rid] = granted
        if session.era is None:
            session.era = "modern"   # acknowledged: as good as an answer
        session.send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                      "params": {"notifications": granted, "_meta": {SUBSCRIPTION_KEY: rid}}},
                     rid)
        try:
            await asyncio.get_running_loop().create_future()   # until the client cancels
        finally:
            session.listens.pop(rid, None)
            for uri in granted.get("resourceSubscriptions", ()):
                if not any(uri in g.get("resourceSubscriptions", ())
                           for g in session.listens.values()):
                    self.hub.unsubscribe(session, uri)

    def event(self, session, method, params, flag=None, uri=None):
        # A change notification to each of a session's listen streams that asked for it.
        for rid, granted in list(session.listens.items()):
            if uri is None and flag not in granted:
                continue
            if uri is not None and uri not in granted.get("resourceSubscriptions", ()):
                continue
            tagged = dict(params or {}, _meta={SUBSCRIPTION_KEY: rid})
            session.send({"jsonrpc": "2.0", "method": method, "params": tagged}, rid)
