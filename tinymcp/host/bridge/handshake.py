# The bridge's host side in the handshake era (2024-11-05 to 2025-11-25): initialize, the logging
# level, subscriptions, and every other request through the router, fitted to the host's version.
import asyncio
import logging

from tinymcp.echo import shown
from tinymcp.context import CLIENT_NEEDS as NEEDS, missing
from tinymcp.protocol import INVALID_PARAMS, INVALID_REQUEST, LEVELS, METHOD_NOT_FOUND, VERSIONS

from tinymcp.host.bridge.host import capabilities, err, log_failure
from tinymcp.host.bridge.methods import NEEDS_INITIALIZE

log = logging.getLogger("tinymcp.bridge.handshake")


class HostCall:
    # One request of a handshake-era host on a board. The router hands it what the board says
    # while running it: progress, log lines, and requests to the client (relayed to this host).
    __slots__ = ("session", "rid", "asks")

    def __init__(self, session, rid):
        self.session = session
        self.rid = rid
        self.asks = {}   # the board's request id -> (relay task, our id for it to the host)

    @property
    def owner(self):
        # Who the board is told a tools/call is for (_meta["io.tinymcp/owner"]).
        return getattr(self.session, "owner", None)

    def notify(self, msg):
        self.session.send(msg, self.rid)

    def log(self, msg, rank, gone):
        if not self.session.closed and rank >= self.session.level:
            self.session.send_log(msg, None if gone else self.rid)

    def ask(self, msg, reply, ended):
        # -> None when the host is asked (its answer goes to reply()), else why it is not: a
        # reason, or the error itself. Never asked in a mode it did not declare (2025-11-25:
        # "Servers MUST NOT send elicitation requests with modes that are not supported").
        session = self.session
        need = NEEDS[msg["method"]]
        if session.closed:
            return "the host it belongs to has gone"
        lacks = missing(session.client_caps, msg["method"], msg.get("params"))
        if lacks is not None and lacks[need]:   # the error the host itself would answer
            mode = list(lacks[need])[0]
            return {"code": INVALID_PARAMS, "message": "the host does not support %s mode %s"
                    % (need, mode), "data": {"requiredCapabilities": lacks}}
        if lacks is not None:   # said as data too: a board may fall back (tinymcp/confirm.py)
            return {"code": METHOD_NOT_FOUND, "message": "%s cannot reach a client: the host "
                    "does not support %s" % (msg["method"], need),
                    "data": {"requiredCapabilities": lacks}}
        oid, answer = session.ask(msg["method"], msg.get("params"), self.rid)
        task = asyncio.get_running_loop().create_task(self._relay(msg["id"], oid, answer, reply,
                                                                  ended))
        task.add_done_callback(log_failure)
        self.asks[msg["id"]] = (task, oid)
        return None

    async def _relay(self, bid, oid, answer, reply, ended):
        # The question ends with the call that raised it.
        try:
            await asyncio.wait((answer, ended), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.asks.pop(bid, None)
            self.session.outgoing.pop(oid, None)
        if not answer.done():
            self.session.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": {"requestId": oid, "reason": "the board's call ended"}})
            response = err(METHOD_NOT_FOUND, "the host request it belongs to has ended")
        else:
            response = answer.result()
        out = {"jsonrpc": "2.0", "id": bid}
        if "error" in response:
            out["error"] = response["error"]
        else:
            out["result"] = response.get("result", {})
        reply(out)

    def cancel_ask(self, bid, params):
        # The board withdrew its request: so is the question to the host.
        task, oid = self.asks.pop(bid, (None, None))
        if task is not None:
            task.cancel()
            self.session.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                               "params": dict(params, requestId=oid)})


class HandshakeEra:
    # Serves handshake-era requests of any host session through the router.

    def __init__(self, router, subs, timeout):
        self.router = router
        self.subs = subs
        self.timeout = timeout   # how long initialize waits for a board that is starting

    async def serve(self, session, rid, method, params):
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
            if method in NEEDS_INITIALIZE:   # else not found before initialize
                return err(INVALID_REQUEST, "Server not initialized: send initialize first")
            return err(METHOD_NOT_FOUND, "Method not found: " + shown(method))
        if method == "logging/setLevel":
            if params.get("level") not in LEVELS:
                return err(INVALID_PARAMS, "Invalid params: level must be one of "
                           + ", ".join(LEVELS))
            session.level = LEVELS.index(params["level"])
            self.router.set_level(session, session.level)
            return {"result": {}}
        if method in ("resources/subscribe", "resources/unsubscribe"):
            uri = params.get("uri")
            if type(uri) is not str:
                return err(INVALID_PARAMS, "Invalid params: uri must be a string")
            if method == "resources/unsubscribe":
                self.subs.remove(session, uri)
                return {"result": {}}
            return await self.subs.add(session, uri)
        if session.version < TASKS_SINCE:   # no tasks before 2025-11-25
            if method.startswith("tasks/"):
                return err(METHOD_NOT_FOUND, "Method not found: %s (tasks need protocol %s)"
                           % (shown(method), TASKS_SINCE))
            if method == "tools/call" and "task" in params:   # ignored, as the spec says
                params = {k: v for k, v in params.items() if k != "task"}
        reply = await self.router.request(method, params, HostCall(session, rid))
        if "result" in reply:
            reply = {"result": fit_result(method, reply["result"], session.version)}
        return reply

    def start(self, session, rid, method, params, then):
        # A routed request (a tools/call to one board) of an initialized session, served
        # without a task -> the future to cancel() to abandon it, then(reply) called with its
        # reply; or None: serve() it.
        if not session.initialized or method != "tools/call" or not isinstance(params, dict):
            return None
        if session.version < TASKS_SINCE and "task" in params:
            params = {k: v for k, v in params.items() if k != "task"}   # ignored, as serve()
        version = session.version

        def fitted(reply):
            if "result" in reply:
                result = fit_result(method, reply["result"], version)
                if result is not reply["result"]:
                    reply = {"result": result}
            then(reply)
        return self.router.start(method, params, HostCall(session, rid), fitted)

    async def initialize(self, session, params):
        asked = params.get("protocolVersion")
        if type(asked) is not str:
            return err(INVALID_PARAMS, 'Invalid params: "protocolVersion" must be a string')
        init = await self.router.info(self.timeout)
        session.era = "handshake"
        session.version = asked if asked in VERSIONS else VERSIONS[0]
        session.client_caps = params.get("capabilities") or {}
        session.initialized = True
        result = {"protocolVersion": session.version, "capabilities": capabilities(init),
                  "serverInfo": self.router.server_info()}
        if init.get("instructions"):
            result["instructions"] = init["instructions"]
        if not init:
            log.warning("answering initialize for %s before the board answered", session.label)
        return {"result": fit_initialize(result, session.version)}


# -- the board's answers (protocol 2025-11-25) fitted to a host that negotiated an older version:
#    fields a version does not define are left out rather than sent to a client that may reject
#    them -------------------------------------------------------------------------------------

RESULT_LISTS = ("tools", "resources", "resourceTemplates", "prompts")
SINCE_2025_06_18 = ("title", "outputSchema", "icons")


TASKS_SINCE = "2025-11-25"
CALLS_AS_IS = "2025-06-18"   # from this version on, a tools/call result reaches hosts unchanged


def fit_result(method, result, version):
    if version >= TASKS_SINCE or type(result) is not dict:
        return result
    if version >= CALLS_AS_IS:   # only tasks are newer: no tool says how it runs as one
        if method == "tools/list" and type(result.get("tools")) is list:
            result = dict(result, tools=[_untasked(t) for t in result["tools"]])
        return result
    result = dict(result)
    if method == "tools/call":
        result.pop("structuredContent", None)  # its text mirror stays in "content"
    for key in RESULT_LISTS:
        if type(result.get(key)) is list:
            result[key] = [_fit_entry(entry, version) for entry in result[key]]
    return result


def _untasked(entry):
    return {k: v for k, v in entry.items() if k != "execution"} if type(entry) is dict else entry


def _fit_entry(entry, version):
    if type(entry) is not dict:
        return entry
    entry = {k: v for k, v in entry.items() if k not in SINCE_2025_06_18 and k != "execution"}
    if version < "2025-03-26":
        entry.pop("annotations", None)
    return entry


def fit_initialize(result, version):
    if version >= TASKS_SINCE:
        return result
    result = dict(result)
    result["capabilities"] = {k: v for k, v in (result.get("capabilities") or {}).items()
                              if k != "tasks"}
    if version >= "2025-06-18":
        return result
    info = result.get("serverInfo")
    if type(info) is dict:
        result["serverInfo"] = {k: v for k, v in info.items() if k in ("name", "version")}
    if version < "2025-03-26":
        result["capabilities"] = {k: v for k, v in (result.get("capabilities") or {}).items()
                                  if k != "completions"}
    return result
