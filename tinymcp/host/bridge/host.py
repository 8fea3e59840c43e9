# One host session: an MCP client of the bridge, its requests in flight and its requests to answer.
import asyncio
import itertools
import logging
import time

from tinymcp.protocol import (INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, LEVELS,
                              VERSION_META)

from tinymcp.host.bridge.wire import BoardAnswer, routable

BATCHES = "2025-03-26"   # the one revision with JSON-RPC batches
# Board log lines a host is sent at most: LOG_BURST at once, LOG_RATE a second after that; the
# rest are dropped and counted (logging: servers "SHOULD rate limit log messages"). A board that
# floods its log must not cost every host the time to take each line.
LOG_RATE = 100.0
LOG_BURST = 200

log = logging.getLogger("tinymcp.bridge.host")

# What the bridge offers before a board has ever answered (it is unplugged at start).
DEFAULT_CAPABILITIES = {"tools": {"listChanged": True},
                        "resources": {"subscribe": True, "listChanged": True}}


def err(code, message):
    return {"error": {"code": code, "message": message}}


def log_failure(task):
    # A done callback for a task (or future) nobody awaits: its failure is logged, never lost.
    if not task.cancelled() and task.exception() is not None:
        what = task.get_coro().__qualname__ if hasattr(task, "get_coro") else "a bridge call"
        log.error("%s ended: %r", what, task.exception())


def capabilities(init):
    # The capabilities hosts are told, from the boards' initialize result.
    caps = init.get("capabilities") or DEFAULT_CAPABILITIES
    return dict(caps, logging={})  # the bridge always answers logging/setLevel


def invalid(rid, why=None):
    return {"jsonrpc": "2.0", "id": rid, "error": {
        "code": INVALID_REQUEST, "message": "Invalid Request" + (": " + why if why else "")}}


def is_stateless(method, params):
    # Does this request open (or belong to) the 2026-07-28 revision?
    if method in ("server/discover", "subscriptions/listen"):
        return True
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and VERSION_META in meta


class HostBatch:
    # The answers to one JSON-RPC batch, gathered: deliver(list) once the last one is in.
    __slots__ = ("answers", "waiting", "deliver", "closed")

    def __init__(self, deliver):
        self.answers = []
        self.waiting = 0      # its requests still being served
        self.deliver = deliver
        self.closed = False   # every message of the batch has been taken in

    def add(self, answer):
        self.answers.append(answer)

    def done(self, answer):
        # One request of the batch has ended: answered, or cancelled (answer None).
        self.waiting -= 1
        if answer is not None:
            self.answers.append(answer)
        if self.closed:
            self.close()

    def close(self):
        self.closed = True
        if not self.waiting and self.deliver is not None:
            deliver, self.deliver = self.deliver, None
            deliver(self.answers)


class HostSession:
    # One MCP client. send(msg, related=None) delivers a message to it; related is the id of
    # the client's request a message belongs to (Streamable HTTP routes it to that stream).
    # hosts (a seams.SessionEvents): its eras (hosts.handshake, hosts.stateless: each a
    # seams.Era, serve(session, id, method, params) -> the reply to a request, in the revision
    # the request belongs to); notified(session, method, params) for a notification;
    # closed(session) once it has ended.

    def __init__(self, send, label, hosts, unanswered=None):
        self.send = send
        self.label = label
        self.hosts = hosts
        self.unanswered = unanswered or (lambda rid: None)
        self.initialized = False
        self.era = None            # "handshake" after initialize, or "stateless" (2026-07-28)
        self.log_levels = {}       # 2026-07-28: request id -> the logLevel it asked for
        self.initializing = None   # future while an initialize is being answered
        self.version = None
        self.client_caps = {}
        # Whose tasks this session's calls create and may fetch: the session itself, or (a
        # 2026-07-28 request over HTTP, a session that ends with it) the principal it came as.
        self.principal = self
        self.level = LEVELS.index("info")
        self.tasks = {}            # host request id -> task serving it
        self.outgoing = {}         # our id for a request sent to the host -> future
        self.batched = {}          # host request id -> the HostBatch its answer joins
        self._out_ids = itertools.count(1)
        self.closed = False
        self.logs_dropped = 0      # board log lines not sent since the last one that was
        self._log_allowance = float(LOG_BURST)
        self._log_at = time.monotonic()

    def receive(self, msg, line=None, routed=None):
        # One message from the host, already decoded (from line, its bytes, when the front has
        # them: a routed request may reach its board as it came; routed: its params as
        # wire.routable makes them, when made already). Malformed requests are answered with
        # Invalid Request; malformed notifications and responses have nobody to answer: dropped.
        try:
            self._receive(msg, line=line, routed=routed)
        except Exception:   # a bug must cost this message, never the session or the bridge
            log.exception("handling a message from %s", self.label)

    def receive_batch(self, items, deliver):
        # A JSON-RPC batch (a list): deliver(answer) is called once, with the list of the
        # answers to its requests ([] for notifications and responses only). Only a 2025-03-26
        # session takes one ("MUST support receiving JSON-RPC batches"); an empty batch, or one
        # in any other revision, is answered by one Invalid Request (an object, not a list).
        if not items or self.version != BATCHES or self.era != "handshake":
            deliver(invalid(None, "an empty batch" if not items else
                            "JSON-RPC batches are supported only in protocol " + BATCHES))
            return
        batch = HostBatch(deliver)
        for msg in items:
            try:
                self._receive(msg, batch)
            except Exception:
                log.exception("handling a message from %s", self.label)
        batch.close()

    def _receive(self, msg, batch=None, line=None, routed=None):
        rid = msg.get("id") if type(msg) is dict else None
        good_id = type(rid) in (int, str)
        method = msg.get("method") if type(msg) is dict else None
        answer = self.send if batch is None else batch.add
        if type(msg) is list and batch is None:
            self.receive_batch(msg, lambda answers: answers and self.send(answers))
            return
        if (type(msg) is not dict or msg.get("jsonrpc") != "2.0"
                or ("id" in msg and not good_id and method is not None)
                or (method is not None and type(method) is not str)):
            answer(invalid(rid if good_id else None))
            return
        if method is None:
            if good_id and ("result" in msg) != ("error" in msg):
                future = self.outgoing.pop(rid, None)
                if future is not None and not future.done():
                    future.set_result(msg)
            else:
                log.debug("dropped a malformed response from %s", self.label)
            return
        params = msg.get("params")
        if "id" not in msg:
            if params is None or type(params) is dict:
                self.hosts.notified(self, method, params or {})
            else:
                log.debug("dropped %s from %s: params is not an object", method, self.label)
            return
        if rid in self.tasks:
            answer(invalid(rid, "id %r is in use by a request still in flight" % (rid,)))
            return
        if batch is not None:
            if method == "initialize":   # 2025-03-26: "MUST NOT be part of a JSON-RPC batch"
                answer(invalid(rid, "initialize must not be part of a JSON-RPC batch"))
                return
            batch.waiting += 1
            self.batched[rid] = batch
        if self.era == "handshake" and type(params) is dict:
            # A routed request (a tools/call to one board): no task, its answer's future
            # stands in for one in self.tasks (cancel() abandons it).
            try:
                if line is not None and routed is None:
                    routed = routable(msg, line)
                future = self.hosts.handshake.start(self, rid, method, params if line is None
                                                    else routed,
                                                    lambda reply: self.served(rid, reply))
            except Exception as e:   # a bug costs this request, never the session
                log.exception("serving %s", method)
                self._answer(rid, err(INTERNAL_ERROR, "Internal error in the bridge: %s" % e))
                return
            if future is not None:
                self.tasks[rid] = future
                future.add_done_callback(self._routed_done)
                return
        task = asyncio.get_running_loop().create_task(self._serve(rid, method, params))
        self.tasks[rid] = task

    def _era(self, method, params):
        # The revision a request is served in: the session's, or what its first one carries.
        if self.era == "stateless" or (self.era is None and self.initializing is None
                                       and is_stateless(method, params)):
            return self.hosts.stateless
        return self.hosts.handshake

    async def _serve(self, rid, method, params):
        try:
            if params is not None and type(params) is not dict:
                reply = err(INVALID_PARAMS, 'Invalid params: "params" must be an object')
            else:
                reply = await self._era(method, params).serve(self, rid, method, params)
        except asyncio.CancelledError:
            self.unanswered(rid)   # the host cancelled it: no response goes out
            reply = None
        except Exception as e:
            log.exception("serving %s", method)
            reply = err(INTERNAL_ERROR, "Internal error in the bridge: %s" % e)
        finally:
            self.tasks.pop(rid, None)
        self._answer(rid, reply)

    def _routed_done(self, future):
        # A routed request's future is done: cancelled (its answer, which comes first, takes
        # this callback off: served).
        if future.cancelled():
            rid = next((rid for rid, task in self.tasks.items() if task is future), None)
            if rid is not None:
                self._cancelled(rid)

    def _cancelled(self, rid):
        # A request served without a task was cancelled (by the host, or as the session ends).
        self.tasks.pop(rid, None)
        self.unanswered(rid)
        self._answer(rid, None)

    def served(self, rid, reply):
        # A request served without a task has its reply (a cancelled one never gets here):
        # answered (express.py's lane answers through here what it does not send as it came).
        future = self.tasks.pop(rid, None)
        if future is not None:
            future.remove_done_callback(self._routed_done)
        try:
            self._answer(rid, reply, spliced=True)
        except Exception as e:   # a bug costs this request its answer, never the session
            log.exception("answering request %r", rid)
            self._answer(rid, err(INTERNAL_ERROR, "Internal error in the bridge: %s" % e))

    def _answer(self, rid, reply, spliced=False):
        # The response to the host's request rid (reply None: cancelled, none goes out).
        # spliced: a board's answer (a wire.BoardAnswer) that reaches the host unchanged but for its
        # id (a routed tools/call: nothing on its way changes it) is not encoded again: its
        # bytes go, the host's id spliced in.
        batch = self.batched.pop(rid, None)
        out = None
        if reply is not None and not self.closed:
            out = {"jsonrpc": "2.0", "id": rid}
            out["error" if "error" in reply else "result"] = reply.get("error",
                                                                       reply.get("result"))
            if spliced and type(reply) is BoardAnswer:
                out = reply.answer(out)
        if batch is not None:
            batch.done(out)
        elif out is not None:
            self.send(out, rid)

    def send_log(self, msg, related=None):
        # A board's notifications/message to this host, within its rate (LOG_RATE, LOG_BURST).
        # Once lines are dropped, none passes until half the burst is allowed again; the next
        # that passes then is preceded by one warning saying how many were dropped.
        now = time.monotonic()
        self._log_allowance = min(LOG_BURST, self._log_allowance + (now - self._log_at) * LOG_RATE)
        self._log_at = now
        if self._log_allowance < (LOG_BURST / 2 if self.logs_dropped else 1):
            if not self.logs_dropped:
                log.warning("%s: board logs arrive faster than %d a second: dropping the rest",
                            self.label, LOG_RATE)
            self.logs_dropped += 1
            return
        self._log_allowance -= 1
        if self.logs_dropped:
            self.send({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "warning", "logger": "tinymcp-bridge",
                                  "data": {"dropped": self.logs_dropped,
                                           "why": "board logs came faster than %d a second"
                                                  % LOG_RATE}}}, related)
            self.logs_dropped = 0
        self.send(msg, related)

    def cancel(self, rid):
        task = self.tasks.get(rid) if type(rid) in (int, str) else None
        if task is not None:
            task.cancel()

    def ask(self, method, params, related):
        # Send a request to the host on the board's behalf -> (our id, future of its response).
        oid = next(self._out_ids)
        future = asyncio.get_running_loop().create_future()
        self.outgoing[oid] = future
        msg = {"jsonrpc": "2.0", "id": oid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg, related)
        return oid, future

    def close(self):
        if self.closed:
            return
        self.closed = True
        for task in list(self.tasks.values()):
            task.cancel()
        for future in self.outgoing.values():
            if not future.done():
                future.set_result(err(INTERNAL_ERROR, "the host went away"))
        self.hosts.closed(self)
