# The bridge's host side in the stateless revision (2026-07-28): self-contained requests served
# over the bridge's handshake-era sessions with its boards.
import asyncio
import logging
import uuid

from tinymcp.echo import shown
from tinymcp.context import CLIENT_NEEDS as NEEDS, INPUT_META, missing
from tinymcp.protocol import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, LEVELS,
                              METHOD_NOT_FOUND, MISSING_CAPABILITY, RESOURCE_NOT_FOUND, STATELESS,
                              UNSUPPORTED_VERSION, VERSION_META,
                              VERSIONS as HANDSHAKE_VERSIONS)
from tinymcp.stateless import (CAPABILITIES_META, LOG_LEVEL_META, SERVER_INFO_META,
                               SUBSCRIPTION_META)
from tinymcp.tasks import RELATED

from tinymcp.host.bridge.host import capabilities, err, log_failure
from tinymcp.host.bridge.methods import (ASKING, FORWARDED, LISTS, REMOVED, STATELESS_TASKS,
                                         TASK_ROUTED)

log = logging.getLogger("tinymcp.bridge.stateless")

LIST_TTL_MS = 60000     # lists change only with the firmware (and then list_changed says so)
SEVERAL_LIST_TTL_MS = 5000   # with several boards, also as boards come and go
READ_TTL_MS = 0         # readings go stale at once
KEPT_STATES = 256       # requestStates kept for a retry, the oldest dropped first
DISCOVER_WAIT = 5.0     # seconds server/discover waits for a board that is still booting
# From the catalogue (methods.py): REMOVED, the handshake era's methods, are not found here;
# ASKING, whose board handler may ask the client, are answered input_required.
# The io.modelcontextprotocol/tasks extension, over the boards' 2025-11-25 tasks.
TASKS = "io.modelcontextprotocol/tasks"


def declares_tasks(caps):
    ext = caps.get("extensions")
    return type(ext) is dict and type(ext.get(TASKS)) is dict


def missing_tasks():
    reply = err(MISSING_CAPABILITY, "Missing required client capability: the %s extension"
                % TASKS)
    reply["error"]["data"] = {"requiredCapabilities": {"extensions": {TASKS: {}}}}
    return reply


def modern_task(task):
    # A 2025-11-25 Task as the extension spells it (ttlMs, pollIntervalMs).
    out = {k: v for k, v in task.items() if k not in ("ttl", "pollInterval")}
    if "ttl" in task:
        out["ttlMs"] = task["ttl"]
    if "pollInterval" in task:
        out["pollIntervalMs"] = task["pollInterval"]
    return out


def classify_envelope(params):
    # -> (code, message, data) when a request's _meta envelope is missing or names another
    # version, else None: the SDK's ladder (mcp.shared.inbound.classify_inbound_request) without
    # its header rung, in its words; tests/bridge_modern/test_envelope.py and
    # tests/bridge/test_light.py hold the two equal. Our own, so that the bridge on stdio loads no
    # part of the SDK (and no pydantic): the .mcpb bundle, a light process (issue 30).
    meta = params.get("_meta") if type(params) is dict else None
    if not isinstance(meta, dict):
        return (INVALID_PARAMS, "params._meta must be an object carrying the required %r and %r "
                "envelope keys" % (VERSION_META, CAPABILITIES_META), None)
    absent = [key for key in (VERSION_META, CAPABILITIES_META)
              if key not in meta]
    if absent:
        return (INVALID_PARAMS, "params._meta is missing the required envelope key(s): "
                + ", ".join(absent), None)
    version = meta[VERSION_META]
    if not isinstance(version, str):
        return INVALID_PARAMS, "the protocol-version envelope value must be a string", None
    if version != STATELESS:
        return (UNSUPPORTED_VERSION, "Unsupported protocol version",
                {"supported": [STATELESS], "requested": version and shown(version)})
    return None


def envelope_error(body, undecided):
    # -> an error reply when the request's _meta envelope is missing or names another version.
    verdict = classify_envelope(body.get("params"))
    if verdict is None:
        return None
    code, message, data = verdict
    if code == UNSUPPORTED_VERSION and undecided:
        # Before the revision is decided the client may still fall back to initialize.
        data = dict(data or {}, supported=[STATELESS] + list(HANDSHAKE_VERSIONS))
    reply = err(code, message)
    if data is not None:
        reply["error"]["data"] = data
    return reply


class Exchange:
    # One host request on a board. For a call whose board handler may ask the client
    # (tools/call, prompts/get, resources/read), the board's questions come here (ask) and
    # StatelessEra.ask_through answers them or hands them to the host. The router hands it
    # what the board says meanwhile.
    __slots__ = ("call", "asked", "group", "binding", "rounds", "session", "rid", "caps")

    def __init__(self, binding, session, rid):
        self.call = None          # task: the board's answer to the forwarded request
        self.asked = None         # future: the board's next requests to the client
        self.group = []           # those requests, as they come: (bid, method, params, reply, key)
        self.binding = binding    # (method, name or uri, arguments) a retry must repeat
        self.rounds = 0           # groups of questions the board asked in this run
        self.caps = None          # the host's capabilities, for the board (router._map_progress)
        self.session = session    # the host request of the current round (logs go there)
        self.rid = rid

    def notify(self, msg):
        self.session.send(msg, self.rid)

    def log(self, msg, rank, gone):
        wanted = self.session.log_levels.get(self.rid)
        if not self.session.closed and wanted is not None and rank >= wanted and not gone:
            self.session.send_log(msg, self.rid)

    def ask(self, msg, reply, ended):
        # The board asks the client during this call: the question goes back to the host in an
        # input_required result -> None when taken, else why not.
        # A board that asks several things at once (ctx.requests) names each question and how
        # many there are in _meta[INPUT_META]; the host gets them together.
        if msg["method"] not in NEEDS or not asyncio.isfuture(self.asked) or self.asked.done():
            return "the host request it belongs to cannot take it"
        params = msg.get("params")
        key, count = None, 1
        meta = params.get("_meta") if type(params) is dict else None
        named = meta.get(INPUT_META) if type(meta) is dict else None
        if (type(named) is list and len(named) == 2 and type(named[0]) is str
                and type(named[1]) is int):
            key, count = named
            meta = {k: v for k, v in meta.items() if k != INPUT_META}
            params = dict(params, _meta=meta) if meta else {
                k: v for k, v in params.items() if k != "_meta"}
        self.group.append((msg["id"], msg["method"], params, reply, key))
        if len(self.group) >= count:
            self.asked.set_result(self.group)
            self.group = []
        return None

    def cancel_ask(self, bid, params):
        pass   # the host is not waiting on it: its retry finds the call ended


class StatelessEra:
    # Serves 2026-07-28 requests of any host session through the router.

    def __init__(self, router, subs, timeout):
        self.router = router
        self.subs = subs
        self.timeout = timeout
        self.exchanges = {}   # requestState -> (binding, answers so far, keys asked)

    # -- requests ---------------------------------------------------------------------------

    async def serve(self, session, rid, method, params):
        if method in REMOVED:
            reply = err(METHOD_NOT_FOUND, "Method not found: %s is not part of protocol %s"
                        % (method, STATELESS))
            if method == "initialize":
                reply["error"]["data"] = {"supported": [STATELESS]}
            return reply
        params = params or {}
        problem = envelope_error({"method": method, "params": params}, session.era is None)
        if problem is not None:
            return problem
        if session.era is None:
            session.level = len(LEVELS)   # no notifications/message unless a request asks
        meta = params["_meta"]
        caps = meta.get(CAPABILITIES_META)
        if type(caps) is not dict:
            return err(INVALID_PARAMS, "Invalid params: %s must be an object"
                       % CAPABILITIES_META)
        level = meta.get(LOG_LEVEL_META)
        if level is not None:
            if level not in LEVELS:
                return err(INVALID_PARAMS, "Invalid params: %s must be one of %s"
                           % (LOG_LEVEL_META, ", ".join(LEVELS)))
            session.log_levels[rid] = LEVELS.index(level)
            if session.log_levels[rid] < session.level:
                session.level = session.log_levels[rid]   # the board must send that much
                self.router.set_level(session, session.level)
        try:
            reply = await self._serve(session, rid, method, params, caps)
        finally:
            session.log_levels.pop(rid, None)
        if session.era is None and "result" in reply:
            # Answered: this connection speaks 2026-07-28 now. Not before: a client whose probe
            # timed out falls back to initialize, and that must still work.
            session.era = "stateless"
        return reply

    async def _serve(self, session, rid, method, params, caps):
        if method == "server/discover":
            return await self.discover()
        if method == "subscriptions/listen":
            return await self.listen(session, rid, params)
        if method in TASK_ROUTED:
            return self.finish(method, params, await self.task(session, rid, method, params,
                                                               caps))
        if method == "tools/call" and type(params.get("name")) is str:
            support = self.router.routes.task_support(params["name"])
            if support is not None and declares_tasks(caps):   # the server decides: a task
                return self.finish(method, params, await self.create_task(session, rid, params,
                                                                          caps))
            if support == "required":
                return missing_tasks()
            if "task" in params:   # the handshake era's opt-in: this revision's server decides
                params = {k: v for k, v in params.items() if k != "task"}
        if method not in FORWARDED:
            return err(METHOD_NOT_FOUND, "Method not found: " + shown(method))
        if method in ASKING:
            reply = await self.ask_through(session, rid, method, params, caps)
        else:
            reply = await self.router.request(method, params, Exchange(None, session, rid))
        return self.finish(method, params, reply)

    # -- tasks: the extension's shape over the boards' 2025-11-25 tasks ---------------------

    async def create_task(self, session, rid, params, caps):
        # What the tool asks before its task is made comes back input_required (SEP-2322), as
        # for a plain call; what its task asks later, on tasks/get.
        meta = {k: v for k, v in params["_meta"].items() if k != "progressToken"}
        forward = dict(params, task={}, _meta=meta)   # no progress on a task in this revision
        reply = await self.ask_through(session, rid, "tools/call", forward, caps)
        task = (reply.get("result") or {}).get("task")
        if type(task) is not dict:
            return reply   # refused (an error), or the board answered plainly
        return {"result": dict(modern_task(task), resultType="task")}

    async def task(self, session, rid, method, params, caps):
        if method not in STATELESS_TASKS:   # tasks/result, tasks/list: the handshake era's
            return err(METHOD_NOT_FOUND, "Method not found: %s is not part of the %s extension"
                       % (shown(method), TASKS))
        if not declares_tasks(caps):
            return missing_tasks()
        exchange = Exchange(None, session, rid)
        tid = params.get("taskId")
        ask = {"taskId": tid}
        responses = params.get("inputResponses")
        if method == "tasks/update" and type(responses) is not dict:
            return err(INVALID_PARAMS, 'Invalid params: "inputResponses" must be an object')
        if params.get("requestState") is not None:   # the bridge issues none for a task
            return err(INVALID_PARAMS, "Invalid params: requestState was not issued for this "
                       "task")
        if method == "tasks/cancel":
            reply = await self.router.request("tasks/cancel", ask, exchange)
            terminal = ((reply.get("error") or {}).get("code") == INVALID_PARAMS
                        and "already" in reply["error"].get("message", ""))
            return {"result": {}} if "result" in reply or terminal else reply
        reply = await self.router.request("tasks/get", ask, exchange)   # its owner's alone
        if "error" in reply:
            return reply
        status = reply["result"].get("status")
        asked = self.router.task_questions(tid) if status == "input_required" else None
        if method == "tasks/update":
            if not asked:
                return err(INVALID_PARAMS, "Invalid params: the task is %s, not waiting for "
                           "input: there is nothing to answer"
                           % ("working" if status == "input_required" else status))
            return self.router.answer_task(tid, responses) or {"result": {}}
        task = modern_task(reply["result"])
        if status == "input_required":
            if asked:
                task["inputRequests"] = asked
            else:   # answered: the board runs it on at its next turn
                task["status"] = "working"
        if task.get("status") in ("completed", "failed"):
            # The extension inlines the outcome: a tool result (isError too) is "completed",
            # only a JSON-RPC error "failed".
            outcome = await self.router.request("tasks/result", ask, exchange)
            if "result" in outcome:
                result = dict(outcome["result"])
                meta = {k: v for k, v in (result.get("_meta") or {}).items()
                        if k != RELATED}
                result.pop("_meta", None)
                if meta:
                    result["_meta"] = meta
                task["status"], task["result"] = "completed", result
                task.pop("statusMessage", None)
            else:
                task["status"], task["error"] = "failed", outcome["error"]
        return {"result": task}

    async def discover(self):
        # Sooner than the SDK's 10 s probe timeout, so a booting board is not taken for a
        # server without server/discover.
        init = await self.router.info(DISCOVER_WAIT)
        caps = capabilities(init)
        if "tasks" in caps:   # the boards' tasks, offered as the extension
            caps = {k: v for k, v in caps.items() if k != "tasks"}
            caps["extensions"] = dict(caps.get("extensions") or {}, **{TASKS: {}})
        result = {"supportedVersions": [STATELESS], "capabilities": caps}
        if init.get("instructions"):
            result["instructions"] = init["instructions"]
        return self.finish("server/discover", {}, {"result": result})

    def finish(self, method, params, reply):
        # A board's answer as a 2026-07-28 result: resultType, serverInfo, cache hints.
        if "error" in reply:
            error = reply["error"]
            if method == "resources/read" and error.get("code") == RESOURCE_NOT_FOUND:
                uri = params.get("uri")
                error = dict(error, code=INVALID_PARAMS)   # its URI only when it could be one
                error.pop("data", None)
                if type(uri) is str and shown(uri) == uri:
                    error["data"] = {"uri": uri}
            return {"error": error}
        result = dict(reply["result"])
        result.setdefault("resultType", "complete")
        result["_meta"] = dict(result.get("_meta") or {},
                               **{SERVER_INFO_META: self.router.server_info()})
        if result["resultType"] == "complete":
            if method in LISTS or method == "server/discover":
                result["ttlMs"] = SEVERAL_LIST_TTL_MS if self.router.several else LIST_TTL_MS
                result["cacheScope"] = "public"
            elif method == "resources/read":
                result["ttlMs"], result["cacheScope"] = READ_TTL_MS, "private"
        return {"result": result}

    # -- input required: the board asks the client during a call ----------------------------

    async def ask_through(self, session, rid, method, params, caps):
        # The board's call runs; what it asks is answered from the answers the host gave so far
        # (kept under requestState) or goes back in an input_required result, and the board's
        # call is then ended (its questions refused), so the board is never held by a host
        # that does not retry. The retry runs the call again from the start.
        binding = [method, params.get(ASKING[method]), params.get("arguments")]
        state = params.get("requestState")
        responses = params.get("inputResponses")
        if responses is not None and type(responses) is not dict:
            return err(INVALID_PARAMS, "Invalid params: inputResponses must be an object")
        answers = dict(responses or {})
        if state is not None:
            # The state is a random key into what this bridge keeps: nothing in it to edit.
            saved = self.exchanges.get(state) if type(state) is str else None
            if saved is None or saved[0] != binding:
                return err(INVALID_PARAMS, "Invalid params: requestState does not belong to "
                           "this request (or has been used)")
            del self.exchanges[state]   # spent: each state answers one retry
            answers = dict(saved[1])
            for key in saved[2]:
                if responses and key in responses:
                    answers[key] = responses[key]
        forward = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
        exchange = Exchange(binding, session, rid)
        # The board's session holds the bridge's capabilities: the host's ride in _meta,
        # for a tool that asks only what the client can answer (ctx.can).
        exchange.caps = caps
        exchange.call = asyncio.get_running_loop().create_task(
            self.router.request(method, forward, exchange))
        while True:
            exchange.asked = asyncio.get_running_loop().create_future()
            try:
                await asyncio.wait((exchange.call, exchange.asked),
                                   return_when=asyncio.FIRST_COMPLETED)
            except asyncio.CancelledError:
                if not exchange.call.done():
                    exchange.call.cancel()
                raise
            if exchange.call.done():
                return exchange.call.result()
            group = exchange.asked.result()
            for bid, ask_method, ask_params, reply, key in group:
                lacks = missing(caps, ask_method, ask_params)
                if lacks is not None:   # never asked in a capability or mode the host lacks
                    return self._lacks(exchange, group, ask_method, lacks)
            exchange.rounds += 1
            wanted = {}
            for bid, ask_method, ask_params, reply, key in group:
                key = key or "%s-%d" % (NEEDS[ask_method], exchange.rounds)
                if key in answers and type(answers[key]) is not dict:
                    return self._end(exchange, group, err(
                        INVALID_PARAMS, "Invalid params: inputResponses[%s] must be an object"
                        % key))
                if key not in answers:
                    request = {"method": ask_method}
                    if ask_params is not None:
                        request["params"] = ask_params
                    wanted[key] = request
            if not wanted:   # all answered already: the call goes on
                for bid, ask_method, ask_params, reply, key in group:
                    key = key or "%s-%d" % (NEEDS[ask_method], exchange.rounds)
                    reply({"jsonrpc": "2.0", "id": bid, "result": answers[key]})
                continue
            state = uuid.uuid4().hex
            self.exchanges[state] = (binding, answers, list(wanted))
            while len(self.exchanges) > KEPT_STATES:   # the oldest unretried go first
                self.exchanges.pop(next(iter(self.exchanges)))
            return self._end(exchange, group, {"result": {
                "resultType": "input_required", "inputRequests": wanted,
                "requestState": state}})

    @staticmethod
    def _end(exchange, group, answer):
        # The board's questions are refused: its call ends on its own, unseen, and the host
        # gets `answer`.
        for bid, _method, _params, reply, _key in group:
            reply({"jsonrpc": "2.0", "id": bid, "error": {
                "code": INTERNAL_ERROR, "message": "asked through an input-required result; "
                "the client's retry runs the call again"}})
        exchange.call.add_done_callback(log_failure)
        return answer

    @staticmethod
    def _lacks(exchange, group, ask_method, lacks):
        need = NEEDS[ask_method]
        mode = list(lacks[need])
        what = need + (" mode " + mode[0] if mode else "")
        for bid, _method, _params, reply, _key in group:
            reply({"jsonrpc": "2.0", "id": bid, "error": {
                "code": INVALID_PARAMS if mode else METHOD_NOT_FOUND,
                "message": "the client does not support " + what,
                "data": {"requiredCapabilities": lacks}}})
        # The host gets its answer now; the board's call ends on its own, unseen.
        exchange.call.add_done_callback(log_failure)
        reply = err(MISSING_CAPABILITY, "Missing required client capability: " + what)
        reply["error"]["data"] = {"requiredCapabilities": lacks}
        return reply

    # -- subscriptions/listen ---------------------------------------------------------------

    async def listen(self, session, rid, params):
        wanted = params.get("notifications")
        if type(wanted) is not dict:
            return err(INVALID_PARAMS, "Invalid params: notifications must be an object")
        if (session, rid) in self.subs.streams:
            return err(INVALID_REQUEST, "Invalid Request: a listen stream with this id is open")
        uris = wanted.get("resourceSubscriptions")
        if uris is not None and type(uris) is not list:
            return err(INVALID_PARAMS, "Invalid params: resourceSubscriptions must be a list "
                       "of URIs")
        init = await self.router.info(self.timeout)
        try:
            granted = await self.subs.listen(session, rid, wanted,
                                             init.get("capabilities") or {})
            if session.era is None:
                session.era = "stateless"   # acknowledged: as good as an answer
            session.send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                          "params": {"notifications": granted,
                                     "_meta": {SUBSCRIPTION_META: rid}}}, rid)
            await asyncio.get_running_loop().create_future()   # until the client cancels
        finally:
            self.subs.end(session, rid)
