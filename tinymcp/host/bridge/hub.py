# The hub: one board session shared by every host session (ids, tokens, subscriptions, logs).
import asyncio
import itertools
import json
import logging

from tinymcp.protocol import CLIENT_NEEDS as NEEDS, LEVELS, VERSIONS

from tinymcp.host.bridge.fit import fit_initialize, fit_result
from tinymcp.host.bridge.host import (HostSession, err, INVALID_PARAMS, INVALID_REQUEST,
                                      METHOD_NOT_FOUND)
from tinymcp.host.bridge.modern import Modern, is_modern

log = logging.getLogger("tinymcp.bridge.hub")

# Methods that only read: answered again after a board reset without side effects.
READ_ONLY = frozenset(("tools/list", "resources/list", "resources/templates/list",
                       "resources/read", "resources/subscribe", "prompts/list", "prompts/get",
                       "completion/complete"))
KNOWN = READ_ONLY | {"initialize", "ping", "logging/setLevel", "tools/call",
                     "resources/unsubscribe"}
# Notifications of the board that every host may hear (the rest belong to one host, or to none).
LIST_CHANGED = frozenset(("notifications/tools/list_changed", "notifications/prompts/list_changed",
                          "notifications/resources/list_changed"))
LIST_CHANGED_GAP = 0.25   # seconds: a burst of list_changed from the board is told once per gap
MAX_PAGES = 100           # tools/list pages the bridge follows (a board may loop its cursors)
# What the host is told before the board has ever answered (it is unplugged at start).
DEFAULT_CAPABILITIES = {"logging": {}, "tools": {"listChanged": True},
                        "resources": {"subscribe": True, "listChanged": True}}


class Hub:
    # Shares one BoardSession among host sessions: ids, progress tokens, subscriptions, logs.

    def __init__(self, board):
        self.board = board
        self.sessions = []
        self.subs = {}             # uri -> sessions subscribed to it
        self.progress = {}         # bridge progress token -> (session, host token, host id)
        self.board_requests = {}   # board's request id -> (session, our id to the host, task)
        self.read_only = {}        # tool name -> readOnlyHint, from the board's tools/list
        self.tools_digest = None
        self.board_level = None    # the logging level last set on the board
        self.list_changed = {}     # method -> True when it came again while being told
        self._tokens = itertools.count(1)
        self.modern = Modern(self)  # 2026-07-28 hosts, served over the same board session
        board.on_notification = self.board_notification
        board.on_request = self.board_request
        board.on_ready = self.replay

    def open_session(self, send, label, unanswered=None):
        session = HostSession(self, send, label, unanswered)
        self.sessions.append(session)
        log.info("host session %s opened", label)
        return session

    def session_closed(self, session):
        if session in self.sessions:
            self.sessions.remove(session)
        for token in [t for t, v in self.progress.items() if v[0] is session]:
            del self.progress[token]
        for uri in list(self.subs):
            self.subs[uri].discard(session)
            if not self.subs[uri]:
                del self.subs[uri]
                self._background(self.board.call("resources/unsubscribe", {"uri": uri}))
        self._background(self.push_level())
        log.info("host session %s closed", session.label)

    def _background(self, coro):
        task = asyncio.get_running_loop().create_task(coro)
        task.add_done_callback(lambda t: t.cancelled() or t.exception())

    # -- host -> board ----------------------------------------------------------------------

    async def dispatch(self, session, rid, method, params):
        if params is not None and type(params) is not dict:
            return err(INVALID_PARAMS, 'Invalid params: "params" must be an object')
        if session.era == "modern" or (session.era is None and session.initializing is None
                                       and is_modern(method, params)):
            return await self.modern.serve(session, rid, method, params)
        params = params or {}
        if method == "initialize":
            session.initializing = asyncio.get_running_loop().create_future()
            try:
                return await self.initialize(session, params)
            finally:
                session.initializing.set_result(None)
        if method == "ping":
            return {"result": {}}
        if not session.initialized and session.initializing is not None:
            await session.initializing   # a client that did not wait for its initialize
        if not session.initialized:
            if method in KNOWN:
                return err(INVALID_REQUEST, "Server not initialized: send initialize first")
            return err(METHOD_NOT_FOUND, "Method not found: " + method)
        if method == "logging/setLevel":
            if params.get("level") not in LEVELS:
                return err(INVALID_PARAMS, "Invalid params: level must be one of "
                           + ", ".join(LEVELS))
            session.level = LEVELS.index(params["level"])
            await self.push_level()
            return {"result": {}}
        if method == "resources/unsubscribe":
            uri = params.get("uri")
            subscribers = self.subs.get(uri, set())
            subscribers.discard(session)
            if subscribers:
                return {"result": {}}
            self.subs.pop(uri, None)
        reply = await self.forward(session, rid, method, params)
        if "result" in reply:
            if method == "resources/subscribe":
                self.subs.setdefault(params.get("uri"), set()).add(session)
            elif method == "tools/list":
                self._learn_tools(reply["result"])
            reply = dict(reply, result=fit_result(method, reply["result"], session.version))
        return reply

    async def forward(self, session, rid, method, params, owner=None):
        # One host request to the board, under the bridge's own id and progress token.
        owner = owner or (session, rid)
        forward, token = self._map_progress(params, session, rid)
        retry = method in READ_ONLY or (method == "tools/call"
                                        and self.read_only.get(params.get("name")) is True)
        try:
            reply = await self.board.call(method, forward, owner=owner, retry=retry)
        finally:
            if token is not None:
                self.progress.pop(token, None)
        if method == "tools/list" and "result" in reply:
            self._learn_tools(reply["result"])
        return reply

    async def subscribe(self, session, uri):
        # A session's interest in a resource -> True when the board accepted it.
        if uri not in self.subs:
            reply = await self.board.call("resources/subscribe", {"uri": uri}, retry=True)
            if "result" not in reply:
                return False
        self.subs.setdefault(uri, set()).add(session)
        return True

    def unsubscribe(self, session, uri):
        subscribers = self.subs.get(uri)
        if subscribers is None:
            return
        subscribers.discard(session)
        if not subscribers:
            del self.subs[uri]
            self._background(self.board.call("resources/unsubscribe", {"uri": uri}))

    def _map_progress(self, params, session, rid):
        # Progress tokens are the host's: two hosts may pick the same one, so the board sees ours.
        # The 2026-07-28 envelope keys are dropped: a fresh board that saw one first would lock
        # itself into that era, and the bridge's session with the board is a handshake session.
        meta = params.get("_meta")
        if type(meta) is not dict:
            return params, None
        forward = dict(params)
        forward["_meta"] = meta = {k: v for k, v in meta.items()
                                   if not k.startswith("io.modelcontextprotocol/")}
        if "progressToken" not in meta:
            return forward, None
        token = "p%d" % next(self._tokens)
        self.progress[token] = (session, meta["progressToken"], rid)
        meta["progressToken"] = token
        return forward, token

    async def board_init(self, wait=None):
        # The board's initialize result, waiting for a board that is still booting (not for
        # one that answers, but not as an MCP server: the host hears the defaults at once).
        await self.board.wait_ready(wait or self.board.timeout)
        return self.board.init_result or {}

    def capabilities(self, init):
        caps = init.get("capabilities") or DEFAULT_CAPABILITIES
        return dict(caps, logging={})  # the bridge always answers logging/setLevel

    async def initialize(self, session, params):
        asked = params.get("protocolVersion")
        if type(asked) is not str:
            return err(INVALID_PARAMS, 'Invalid params: "protocolVersion" must be a string')
        init = await self.board_init()
        caps = self.capabilities(init)
        session.era = "handshake"
        session.version = asked if asked in VERSIONS else VERSIONS[0]
        session.client_caps = params.get("capabilities") or {}
        session.initialized = True
        result = {"protocolVersion": session.version, "capabilities": caps,
                  "serverInfo": init.get("serverInfo") or {"name": "tinymcp-bridge",
                                                           "version": "0.1.0"}}
        if init.get("instructions"):
            result["instructions"] = init["instructions"]
        if not init:
            log.warning("answering initialize for %s before the board answered", session.label)
        return {"result": fit_initialize(result, session.version)}

    def host_notification(self, session, method, params):
        if method == "notifications/initialized":
            return
        if method == "notifications/cancelled":
            session.cancel(params.get("requestId"))
            return
        if method == "notifications/roots/list_changed":
            self.board.notify(method, params or None)
            return
        log.debug("dropped %s from %s", method, session.label)

    async def push_level(self):
        # The board has one logging level: the most verbose any host asked for.
        if not self.sessions:
            return
        level = LEVELS[min(min(s.level for s in self.sessions), len(LEVELS) - 1)]
        if level == self.board_level:
            return
        self.board_level = level   # a board that is not ready gets it in the replay
        if self.board.state == "ready":
            await self.board.call("logging/setLevel", {"level": level})

    async def replay(self):
        # After every (re)initialize: the board forgot our subscriptions and log level.
        board = self.board
        if self.board_level is not None:
            await board.call("logging/setLevel", {"level": self.board_level}, internal=True)
        for uri in list(self.subs):
            reply = await board.call("resources/subscribe", {"uri": uri}, internal=True)
            if "error" in reply:
                log.warning("could not re-subscribe %s: %s", uri, reply["error"])
        caps = (board.init_result or {}).get("capabilities", {})
        if "tools" in caps:
            await self._refresh_tools()

    async def _refresh_tools(self, announce=True):
        tools, cursor = [], None
        for _ in range(MAX_PAGES):
            reply = await self.board.call("tools/list", {"cursor": cursor} if cursor else None,
                                          internal=True)
            result = reply.get("result")
            if not result or type(result.get("tools")) is not list:
                return
            tools += result["tools"]
            cursor = result.get("nextCursor")
            if not cursor:
                break
        digest = json.dumps(tools, sort_keys=True)
        changed = self.tools_digest is not None and digest != self.tools_digest
        self._learn_tools({"tools": tools})
        self.tools_digest = digest
        if changed and announce:  # a different firmware came back after the reset
            self.broadcast({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})

    def _learn_tools(self, result):
        tools = result.get("tools")
        for tool in tools if type(tools) is list else ():
            if type(tool) is dict and type(tool.get("name")) is str:
                hints = tool.get("annotations")
                self.read_only[tool["name"]] = type(hints) is dict and \
                    hints.get("readOnlyHint") is True

    # -- board -> host ----------------------------------------------------------------------

    def broadcast(self, msg):
        for session in list(self.sessions):
            if session.initialized:
                session.send(msg)

    def board_notification(self, msg):
        method = msg["method"]
        params = msg.get("params") or {}
        if method == "notifications/progress":
            token = params.get("progressToken")
            entry = self.progress.get(token) if type(token) is str else None
            if entry is not None:
                session, token, rid = entry
                session.send(dict(msg, params=dict(params, progressToken=token)), rid)
        elif method == "notifications/message":
            if params.get("level") in LEVELS and "data" in params:
                self._board_log(msg, params)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            for session in list(self.subs.get(uri, ()) if type(uri) is str else ()):
                if session.era != "handshake":
                    self.modern.event(session, method, params, uri=params.get("uri"))
                else:
                    session.send(msg)
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            entry = self.board_requests.pop(rid, None) if type(rid) in (int, str) else None
            if entry is not None:
                session, oid, task = entry
                task.cancel()
                session.send(dict(msg, params=dict(params, requestId=oid)))
        elif method in LIST_CHANGED:
            if method in self.list_changed:
                self.list_changed[method] = True   # told again once the current telling ends
            else:
                self.list_changed[method] = False
                self._tell_list_changed(method, params)
                self._background(self._after_list_changed(method, params))
        else:
            log.debug("dropped %s from the board: not one the bridge relays", method)

    def _tell_list_changed(self, method, params):
        self.broadcast({"jsonrpc": "2.0", "method": method})
        flag = method[len("notifications/"):].split("/")[0] + "ListChanged"
        for session in list(self.sessions):
            if session.listens:
                self.modern.event(session, method, params, flag=flag)

    async def _after_list_changed(self, method, params):
        # One refresh in flight per list: a storm of list_changed from the board becomes at most
        # one tools/list at a time, and one notification to the hosts per LIST_CHANGED_GAP.
        try:
            while True:
                if method == "notifications/tools/list_changed":
                    await self._refresh_tools(announce=False)   # which tools only read
                await asyncio.sleep(LIST_CHANGED_GAP)
                if not self.list_changed[method]:
                    return
                self.list_changed[method] = False
                self._tell_list_changed(method, params)
        finally:
            del self.list_changed[method]

    def _board_log(self, msg, params):
        # A log line of the board goes to the host whose request the board is running (at the
        # level that host asked for), never to the others; while the board runs no host's
        # request, to every handshake-era host that wants that level.
        rank = LEVELS.index(params["level"])
        running = self.board.running()
        if running is None or running.owner is None:   # none of a host's: the bridge's own
            for session in list(self.sessions):
                if session.initialized and session.era == "handshake" and rank >= session.level:
                    session.send(msg)
            return
        session, rid = self.owner_of(running.owner)
        if session is None or session.closed:
            return
        if session.era == "handshake":
            if rank >= session.level:
                session.send(msg, None if running.gone else rid)
        else:
            wanted = session.log_levels.get(rid)
            if wanted is not None and rank >= wanted and not running.gone:
                session.send(msg, rid)

    def owner_of(self, owner):
        # (host session, host request id) of a board request's owner, or (None, None).
        if owner and owner[0] == "modern":
            exchange = self.modern.running.get(owner)
            return (exchange.session, exchange.rid) if exchange else (None, None)
        return owner if owner else (None, None)

    def board_request(self, msg):
        # A request of the board to a host: only to the host whose request the board is running,
        # and refused at once when there is none, when it is gone, or when it cannot answer.
        bid = msg["id"]
        method = msg["method"]
        if method == "ping":
            self.board.respond({"jsonrpc": "2.0", "id": bid, "result": {}})
            return
        running = self.board.running()
        need = NEEDS.get(method)
        if need is None:
            why = "the bridge relays only %s to hosts" % ", ".join(sorted(NEEDS))
        elif bid in self.board_requests:
            why = "request id %r is already waiting for a host" % (bid,)
        elif running is None or running.owner is None:
            why = "no host request is running on the board, so no host may be asked"
        elif running.gone:
            why = "the host request it belongs to has ended (timed out or cancelled)"
        elif running.owner[0] == "modern":
            # A 2026-07-28 host's call: the question goes back in an input_required result.
            why = None if self.modern.board_asks(running.owner, msg) else \
                "the host request it belongs to cannot take it"
            if why is None:
                return
        else:
            session, related = running.owner
            if session.closed:
                why = "the host it belongs to has gone"
            elif need not in session.client_caps:
                why = "the host does not support " + need
            else:
                self._background(self._relay(session, bid, method, msg.get("params"), related,
                                             running))
                return
        log.info("refused the board's %s: %s", method, why)
        self.board.respond({"jsonrpc": "2.0", "id": bid, "error": {
            "code": METHOD_NOT_FOUND, "message": "%s cannot reach a client: %s" % (method, why)}})

    async def _relay(self, session, bid, method, params, related, running):
        # Ask the host; the question ends with the request that raised it.
        oid, future = session.ask(method, params, related)
        self.board_requests[bid] = (session, oid, asyncio.current_task())
        try:
            await asyncio.wait((future, running.future), return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            return  # the board cancelled its request; the host was told
        finally:
            self.board_requests.pop(bid, None)
            session.outgoing.pop(oid, None)
        if not future.done():
            session.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                          "params": {"requestId": oid, "reason": "the board's call ended"}})
            reply = err(METHOD_NOT_FOUND, "the host request it belongs to has ended")
        else:
            reply = future.result()
        out = {"jsonrpc": "2.0", "id": bid}
        if "error" in reply:
            out["error"] = reply["error"]
        else:
            out["result"] = reply.get("result", {})
        self.board.respond(out)
