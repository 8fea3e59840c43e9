# The bridge's own MCP session with the board: initialize, requests with deadlines, reset recovery.
import asyncio
import collections
import itertools
import json
import logging
import re

from tinymcp import protocol
from tinymcp.host.bridge.methods import CLIENT_NOTIFICATIONS
from tinymcp.host.bridge.wire import Encoded, HostParams, reason

log = logging.getLogger("tinymcp.bridge.board")

PROTOCOL = "2025-11-25"
DISCONNECTED = -32000    # JSON-RPC "server error" range: the bridge's own errors
RESET = -32000
NOT_SERVING = -32000
TIMEOUT = -32001
DEFAULT_MAX_FRAME = 4096  # what a board that does not say reads at most (tinymcp's default)
ANSWER_TOO_LONG = "answer-too-long"   # error.data's reason: the answer outgrew the board's link
                                      # (an MQTT board's, ports/mqtt.py; tinymcp/protocol.py)
# What a board prints when it (re)boots; any of these on the line means the session is gone.
BOOT_MARKS = (b"MicroPython v", b"soft reboot", b"rst:0x")
# What only a board at its Python REPL prints (besides its ">>>" prompt): our JSON evaluated
# as Python (true/false/null are not Python names), the raw REPL's greeting.
REPL_SIGNS = (b"NameError: name 'true'", b"NameError: name 'false'", b"NameError: name 'null'",
              b"raw REPL; CTRL-B to exit")
# What makes a ready board suspect: it may have fallen to its REPL (issue 26). Then nothing from
# hosts is written until a ping written as a JSON line (at a REPL: a dict display, harmless)
# shows a serving board (its answer) or a REPL (its echo, a prompt, silence).
SUSPECT_SIGNS = (b"Traceback (most recent call last)", b"raw REPL; CTRL-B to exit")
_BANNER = re.compile(rb"MicroPython \S+ on \d")   # v1.24.1 or a build's hash: its REPL's banner
# Notifications only a client sends: seen from the board, they are an echo, not news.
CLIENT_CAPABILITIES = {"roots": {"listChanged": True}, "sampling": {},
                       "elicitation": {"form": {}, "url": {}}}
LINK_KEY = protocol.LINK_KEY  # the board's link offer, in initialize's capabilities.experimental
LINK_MODES = ("json", "auto", "cbor")
MAX_GONE = 64   # requests the board was asked to drop but never answered, before it is reset
FAULT_AFTER = 3  # unusable initialize answers in a row before hosts are refused, not kept waiting
MAX_INIT_WAITING = 8   # initialize attempts whose answer is still taken: a slow board answers an
                       # earlier one (it reads in order, so the oldest kept is answered first)


def error(code, message, reason):
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message,
                                        "data": {"bridge": reason}}}


def _bridge_reason(msg):
    # The reason of an error the bridge made itself ("timeout", "malformed", ...), or None.
    err = msg.get("error")
    data = err.get("data") if type(err) is dict else None
    return data.get("bridge") if type(data) is dict else None


def not_initialized(msg):
    return reason(msg) == protocol.NOT_INITIALIZED


def _other_era(msg):
    # The board's answer to initialize when its serve loop is locked into 2026-07-28.
    err = msg.get("error")
    data = err.get("data") if type(err) is dict else None
    supported = data.get("supported") if type(data) is dict else None
    return type(supported) is list and PROTOCOL not in supported


def _no_cbor(msg):
    return msg.get("id") is None and reason(msg) == protocol.LINK_UNAVAILABLE


def _restore_uri(msg, params):
    # A CBOR link leaves the requested uri out of the contents it reads (docs/cbor-link.md).
    result = msg.get("result")
    if type(result) is dict and type(result.get("contents")) is list and type(params) is dict:
        for item in result["contents"]:
            if type(item) is dict and "uri" not in item:
                item["uri"] = params.get("uri")


def _malformed(msg):
    # What is wrong with a response from the board (MCP results are objects), or None.
    if ("result" in msg) == ("error" in msg):
        return ("it has both a result and an error" if "result" in msg else
                "it has neither a result nor an error")
    if "result" in msg:
        return None if type(msg["result"]) is dict else "its result is not an object"
    e = msg["error"]
    if type(e) is dict and type(e.get("code")) is int and type(e.get("message")) is str:
        return None
    return "its error is not a JSON-RPC error object"


def _init_problem(result):
    # What makes an initialize result unusable, or None.
    for key, kind in (("capabilities", dict), ("serverInfo", dict), ("protocolVersion", str)):
        if type(result.get(key)) is not kind:
            return "%s is not %s" % (key, "an object" if kind is dict else "a string")
    return None


def _is_repl(line):
    return line.lstrip().startswith(b">>>") or any(sign in line for sign in REPL_SIGNS)


def _suspect(line):
    return (_is_repl(line) or line.rstrip().endswith(b">>>")
            or any(sign in line for sign in SUSPECT_SIGNS) or _BANNER.search(line) is not None)


class Pending:
    # One request to the board. sent: on the wire to the current board (frame: what the link
    # queued, so a frame not yet written can be taken back); limbo: sent before a reset, fate
    # unknown until the re-initialize answer shows the board answered all before it; gone: the
    # caller stopped waiting (timeout, cancel) after it was written, so the board may still run it.
    __slots__ = ("id", "method", "params", "future", "owner", "retry", "internal", "sent",
                 "limbo", "frame", "gone", "done", "timer", "then")

    def __init__(self, rid, method, params, owner, retry, internal, loop=None):
        self.id = rid
        self.method = method
        self.params = params
        self.future = (loop or asyncio.get_running_loop()).create_future()
        self.owner = owner
        self.retry = retry
        self.internal = internal
        self.sent = False
        self.limbo = False
        self.frame = None
        self.gone = False
        self.done = False
        self.timer = None   # what settles the future at its deadline (BoardSession.begin)
        self.then = None    # called with the answer as it settles the future, just before

    def message(self):
        params = self.params
        if type(params) is HostParams:   # the host's line, our id in it (wire.py)
            msg = Encoded(jsonrpc="2.0", id=self.id, method=self.method, params=params)
            msg.data = params.frame(self.id)
            return msg
        msg = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if params is not None:
            msg["params"] = params
        return msg

    def settle(self, msg):
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if not self.future.done():
            then, self.then = self.then, None
            if then is None:
                self.future.set_result(msg)
                return
            # A routed call's answer: to its host at once. Before the future is done, so what
            # waits on it only for a cancel lets go of it first (no turn of the loop for them).
            try:
                then(msg)
            finally:
                self.future.set_result(msg)


class Unheard:
    # The listener of a board session nobody listens to (a seams.BoardEvents): a lone check.
    def on_notification(self, msg):
        pass

    def on_request(self, msg):
        pass

    async def on_ready(self):
        pass

    def on_lost(self):
        pass


QUIET = Unheard()


class BoardSession:
    init_interval = 1.0   # seconds before a silent board gets another initialize attempt,
    init_interval_max = 2.0      # doubled per silent attempt up to this: a serial line may
                                 # lose an attempt, so it is not long before the next
    network_interval_max = 8.0   # or this on a network link, which loses none: a silent board
                                 # there is more likely slow (a loaded fleet), not to be flooded
    restart_every_s = 30.0  # at most one restart of a board that does not serve per this long
    restart_settle_s = 3.0  # after a restart: the board's main.py has this long to start serving
    repl_probe_s = 5.0      # at the REPL without a restart: an empty line this often, to notice

    def __init__(self, connect, timeout=10.0, link_mode="json", restart=True, client_info=None,
                 events=None):
        # connect(events) -> the link to the board (a seams.BoardLink), which tells this session
        # what it sees (the session is its seams.LinkEvents). events (a seams.BoardEvents) is
        # told: on_notification(msg) and on_request(msg) for what the board sends; async
        # on_ready() after each initialize (before requests flow: the replay); on_lost() when a
        # ready session ends (a reset, an unplug).
        self.link = connect(self)
        self.timeout = timeout
        self.link_mode = link_mode  # json | auto (CBOR if the board offers it) | cbor (same, or warn)
        self.restart_boards = restart  # False (--no-restart): never send the board 0x03 / Ctrl-D
        self.board_link = False     # the board offered CBOR frames in its last initialize
        self.max_frame = DEFAULT_MAX_FRAME  # the longest frame the board reads, as it said
        self.identity = None        # who the board says it is (its link offer's "id")
        self.client_info = client_info or {"name": "tinymcp-bridge", "version": "0.1.0"}
        self.events = events or QUIET
        # A link opening for the first time (a board on the network) is worth waiting for.
        self.state = "connected" if self.link.connected or self.link.first_try else "disconnected"
        self.ready = asyncio.Event()
        self.init_result = None
        self.fault = None           # why the board's initialize answers are unusable
        self._bad_inits = 0         # unusable initialize answers in a row
        self.at_repl = False        # the board shows its Python REPL (main.py is not serving)
        self.suspect = None         # why a ready board may be at its REPL: hosts wait meanwhile
        self._typed = False         # host frames may sit on the REPL's line: never send it a CR
        self.pending = {}
        self._order = collections.deque()  # requests written to the board, oldest first
        self._deadlines = collections.deque()   # (when, Pending, limit), the usual timeout
        self._sweep = None          # the timer that ends them (_swept)
        self._loop = None           # the event loop it serves on, once known (begin)
        self._ids = itertools.count(1)
        self._init_task = None
        self._probe_task = None
        self._check_task = None     # the ping that tells a serving board from a REPL
        self._probe_mark = None     # its id as a REPL would print it back
        self._woken = asyncio.Event()      # a soft reboot while the initialize loop waits
        self._init_wake = None      # what the initialize loop awaits: set to wake it early
        self._init_rewind = False   # the board rebooted: attempts come init_interval apart again
        self.resets = 0
        self._late = 0              # answers that came after their caller stopped waiting
        self._repl_warned = False
        self._restarted_at = None
        self.restarts = 0

    # -- requests -------------------------------------------------------------------------

    async def call(self, method, params=None, owner=None, retry=False, internal=False,
                   timeout=None):
        # -> the board's response message (with "result" or "error"), never raises for board
        # trouble: a timeout, a reset, a missing port or a frame too long become JSON-RPC errors.
        p = self.begin(method, params, owner, retry, internal, timeout)
        if type(p) is not Pending:
            return p   # refused at once
        try:
            return await p.future
        except asyncio.CancelledError:
            self.abandon(p, "cancelled by the client")
            raise

    def begin(self, method, params=None, owner=None, retry=False, internal=False,
              timeout=None):
        # A request on its way -> its Pending (whose future gets the response message, or the
        # error a timeout, a reset or a missing port makes), or the error that refuses it now.
        # No task and no wait_for per request: a timer settles the future at its deadline.
        # Whoever stops waiting before then (a cancelled host call) calls abandon(p).
        if self.state == "disconnected":
            return error(DISCONNECTED, "Board disconnected: %s is not available; the bridge "
                         "reopens it when it comes back" % self.link.device, "disconnected")
        why = None if internal else self.not_serving()
        if why is not None:
            return error(NOT_SERVING, "Board not serving: %s" % why, "not-serving")
        loop = self._loop
        if loop is None:   # a session serves on one loop: asked once (CPython asks the OS)
            loop = self._loop = asyncio.get_running_loop()
        p = Pending(next(self._ids), method, params, owner, retry, internal, loop)
        self.pending[p.id] = p
        if (self.state == "ready" and self.suspect is None) or internal:
            self._send(p)
        else:  # held until the board is ready, but refused now if it can never be sent
            frame = self._encode(p)
            if frame is not None:
                self._check_size(p, frame)
        if not p.future.done():
            self._time(p, loop, self.timeout if timeout is None else timeout)
        return p

    def relay(self, params, owner, now=False):
        # begin("tools/call", params, owner, retry=True) for a host's call whose line goes to
        # the board as it came (params: a wire.HostParams) -> its Pending, or the error that
        # refuses it now. On a ready board with a JSON line link (the express lane's usual
        # case, express.py) the same steps in one call: the frame made from the host's bytes,
        # queued (now: written at once, Link.write), timed; anything else the general way.
        loop = self._loop
        link = self.link
        if (self.state != "ready" or self.suspect is not None or loop is None
                or link.mode != "json"):
            return self.begin("tools/call", params, owner, True)
        rid = next(self._ids)
        # what _encode makes of it: a line, or (a broker's topic) the message alone
        frame = params.head + b"%d" % rid + params.tail + link.frame_end
        # Written first, then recorded: the board starts on it sooner. Nothing runs between.
        written = (link.write(frame, False, now) if len(frame) <= self.max_frame + 1
                   else None)   # (as _check_size counts)
        p = Pending(rid, "tools/call", params, owner, True, False, loop)
        self.pending[rid] = p
        if written is None and not self._check_size(p, frame):
            return p   # answered: too long for the board
        p.frame = written
        if written is not None:
            p.sent = True
            self._order.append(p)
        self._time(p, loop, self.timeout)
        return p

    def _time(self, p, loop, limit):
        # p's deadline, limit seconds from now.
        when = loop.time() + limit
        deadlines = self._deadlines
        while deadlines and deadlines[0][1].future.done():   # answered: forgotten
            deadlines.popleft()
        if limit == self.timeout and (not deadlines or when >= deadlines[-1][0]):
            deadlines.append((when, p, limit))   # in order: one timer serves them all
            if self._sweep is None:
                self._sweep = loop.call_at(deadlines[0][0], self._swept)
        else:
            p.timer = loop.call_at(when, self._expire, p, limit)

    def _swept(self):
        # The oldest deadline of the usual length has come: the requests whose have passed
        # end, and the timer waits for the next one. One timer for all of them, not one per
        # request (each would cost the loop a heap entry made and cancelled per call).
        self._sweep = None
        deadlines = self._deadlines
        if not deadlines:
            return
        loop = deadlines[0][1].future.get_loop()
        now = loop.time()
        while deadlines:
            when, p, limit = deadlines[0]
            if not p.future.done() and when > now:
                break
            deadlines.popleft()
            if not p.future.done():
                self._expire(p, limit)
        if deadlines:
            self._sweep = loop.call_at(deadlines[0][0], self._swept)

    def _expire(self, p, limit):
        # p's deadline has passed: its caller gets a timeout; a board that has it is asked to
        # drop it, and probed (silence means a hang or a dead board).
        p.timer = None
        if p.future.done():
            return
        if self._abandon(p, "timed out in the bridge", settle=False):
            self._probe()
            p.settle(error(TIMEOUT, "Request timed out: the board did not answer %s within "
                           "%g s" % (p.method, limit), "timeout"))
        else:
            p.settle(error(TIMEOUT, "Request timed out: the board was not ready within %g s"
                           % limit, "timeout"))

    def abandon(self, p, reason):
        # The caller stops waiting for p (cancelled): the board is asked to drop it.
        self._abandon(p, reason)

    def _send(self, p):
        frame = self._encode(p)
        if frame is None or (len(frame) > self.max_frame and not self._check_size(p, frame)):
            return
        p.frame = self.link.write(frame, urgent=p.method == "ping")
        p.sent = p.frame is not None
        p.limbo = False
        if p.sent and p.method != "ping":   # a ping is answered in passing, not in turn
            self._order.append(p)

    def _encode(self, p):
        # -> p as the board's link writes it, or None with p answered: what cannot be encoded
        # (text that is no Unicode, a value no link carries) is refused, never left pending.
        try:
            return self.link.encode(p.message())
        except (ValueError, TypeError, RecursionError) as e:   # UnicodeEncodeError is one
            self.pending.pop(p.id, None)
            p.settle({"jsonrpc": "2.0", "error": {
                "code": protocol.INVALID_PARAMS,
                "message": "Invalid params: %s cannot be sent to the board (%s)"
                           % (p.method, str(e)[:120] or e.__class__.__name__)}})
            return None

    def _check_size(self, p, frame):
        # A frame longer than the board reads is refused here, before it reaches the link.
        size = len(frame) - 1   # the newline is not counted
        if size <= self.max_frame:
            return True
        self.pending.pop(p.id, None)
        p.settle({"jsonrpc": "2.0", "error": {
            "code": protocol.INVALID_REQUEST,
            "message": "Invalid Request: %s is %d bytes on the board's link, and the board "
                       "reads frames of at most %d bytes" % (p.method, size, self.max_frame),
            "data": {protocol.REASON: protocol.FRAME_TOO_LONG, "limit": self.max_frame}}})
        return False

    def _abandon(self, p, reason, settle=True):
        # The caller stops waiting for p -> True when the board has it (and may still run it).
        if p.timer is not None:
            p.timer.cancel()
            p.timer = None
        self.pending.pop(p.id, None)
        if p.sent and self.link.withdraw(p.frame):
            p.sent = False
            if p in self._order:
                self._order.remove(p)
        if p.sent and not p.done:
            p.gone = True
            self._cancel_on_board(p, reason)
            if sum(q.gone for q in self._order) > MAX_GONE:
                self.reset("it leaves the requests it is sent unanswered")
        if settle:
            p.settle(error(TIMEOUT, "Request abandoned: " + reason, "timeout"))
        return p.sent

    def _cancel_on_board(self, p, reason):
        if self.at_repl:
            return
        self.link.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": p.id, "reason": reason}}, urgent=True)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return not self._quiet() and self.link.send(msg) is not None

    def respond(self, msg):
        # A response to a request the board sent us (sampling, elicitation, roots).
        return not self._quiet() and self.link.send(msg, urgent=True) is not None

    def _quiet(self):
        # Nothing from hosts goes to a board that shows, or may show, its REPL.
        return self.at_repl or self.suspect is not None

    def running(self):
        # The request the board is working on now, or None: it serves one at a time, in the
        # order written, so that is the oldest one written and not yet known to be finished.
        # It may be gone (its caller stopped waiting): then whatever the board asks or logs
        # belongs to nobody who still waits for it.
        order = self._order
        while order and order[0].done:
            order.popleft()
        return order[0] if order else None

    def _finished(self, p):
        # p was answered: it, and every request written before it, is done with.
        order = self._order
        if order and order[0] is p:   # the usual: the oldest one written
            order.popleft()
            p.done = True
            return
        if p not in order:   # a Pending equals only itself
            p.done = True
            return
        while True:
            q = self._order.popleft()
            q.done = True
            if q is p:
                return

    def not_serving(self):
        # -> why requests would wait for nothing now (the board answers, but not as an MCP
        # server), or None. A board still booting, or rebooting after a restart, is worth
        # waiting for.
        if self.state != "connected":
            return None
        if self.fault is not None:
            return "its initialize answer is unusable (%s)" % self.fault
        if self.at_repl:   # refused until it serves again, even while it is being restarted
            return ("it is at its Python REPL (main.py is not serving)" +
                    ("; --no-restart leaves it there" if not self.restart_boards else
                     "; the bridge restarts it every %g s" % self.restart_every_s))
        return None

    # -- input from the link --------------------------------------------------------------

    def on_message(self, msg):
        # The usual frame first: a result (an object) of the oldest request written, from a
        # board that serves with nothing suspect; what the general way below would do for it.
        rid = msg.get("id")
        if (type(rid) is int and "result" in msg and "error" not in msg and "method" not in msg
                and self.suspect is None and not self.at_repl):
            p = self.pending.get(rid)
            order = self._order
            if (p is not None and order and order[0] is p and type(msg["result"]) is dict
                    and (p.method != "resources/read" or self.link.mode != "cbor")):
                del self.pending[rid]
                order.popleft()
                p.done = True
                p.settle(msg)
                return
        if "method" in msg:
            self._board_message(msg)
            return
        rid = msg.get("id")
        if rid is not None and type(rid) not in (int, str):
            log.debug("dropped an answer with an id that is no id: %s", str(msg)[:200])
            return
        failed = "error" in msg   # else none of the errors below, which answers seldom are
        if failed and self.link.mode == "cbor" and _no_cbor(msg):
            # The board offered CBOR frames but was deployed without the module that reads them.
            log.warning("the board cannot read CBOR frames (%s); back to JSON lines",
                        msg["error"].get("message"))
            self.link_mode = "json"
            self.reset("its CBOR link is missing")
            return
        p = self.pending.get(rid)
        if failed and not_initialized(msg):
            # The board has restarted: this request never ran, so it is safe to send again.
            if p is not None and not p.internal:
                p.sent = p.limbo = False
            self.reset("the board answered 'Server not initialized'")
            return
        self.at_repl = False   # an answer: an MCP server is there, not a REPL
        if self.suspect is not None:
            self._serving_after_all()
        if failed and rid is None and reason(msg) == protocol.FRAME_TOO_LONG:
            self._board_limit(msg)
            return
        if p is None:
            gone = next((q for q in self._order if q.id == rid), None)
            if gone is not None:
                self._finished(gone)
                self._late += 1   # slow, not silent: the probe resets it not
            log.debug("late or unknown answer: %s", str(msg)[:200])
            return
        del self.pending[p.id]
        self._finished(p)
        why = _malformed(msg)
        if why is not None:
            log.warning("the board's answer to %s is malformed (%s): %s", p.method, why,
                        str(msg)[:200])
            msg = error(protocol.INTERNAL_ERROR, "The board's answer to %s is malformed: %s"
                        % (p.method, why), "malformed")
        elif p.method == "resources/read" and self.link.mode == "cbor":
            _restore_uri(msg, p.params)
        elif failed and reason(msg) == ANSWER_TOO_LONG:   # an error already: said here too
            log.warning("board %s could not send its answer to %s: longer than its link "
                        "carries (%s bytes)", self.link.device, p.method,
                        msg["error"]["data"].get("limit"))
        p.settle(msg)

    def _board_message(self, msg):
        # A request or notification from the board.
        method = msg["method"]
        params = msg.get("params")
        rid = msg.get("id")
        if type(method) is not str or (params is not None and type(params) is not dict) or (
                "id" in msg and type(rid) not in (int, str)):
            log.debug("dropped a malformed message from the board: %s", str(msg)[:200])
            return
        mine = self.pending.get(rid) if "id" in msg else None
        if mine is not None and mine.method == method:
            # Our own frame coming back: a REPL (not the MCP server) is echoing the line.
            self._saw_repl("it echoes the bridge's frames")
        elif "id" in msg:
            self.events.on_request(msg)
        elif method not in CLIENT_NOTIFICATIONS:
            self.events.on_notification(msg)

    def _board_limit(self, msg):
        # The board discarded a frame as too long, so its limit is lower than the bridge
        # thought: the request it was times out; the next ones that long are refused here.
        limit = msg["error"].get("data", {}).get("limit")
        if type(limit) is int and 0 < limit < self.max_frame:
            self.max_frame = limit
        log.warning("the board discarded a frame longer than %s bytes", limit)

    def on_noise(self, line):
        for mark in BOOT_MARKS:
            if mark in line:
                self.reset("boot banner %r" % line[:60])
                if b"soft reboot" in line:
                    self.at_repl = False   # main.py runs next
                    self._typed = False    # a new REPL line, if any
                    self._woken.set()
                break
        if self.state == "connected" and _is_repl(line):
            self._saw_repl("it shows %r" % line.strip()[:40])
        elif self.state == "ready" and self._probe_mark is not None and self._probe_mark in line:
            self._saw_repl("it ran the bridge's ping as Python")
        elif self.state == "ready" and _suspect(line):
            self._suspect("it printed %r" % line.strip()[:60])

    def _suspect(self, why):
        # A ready board printed what its REPL prints: hosts' frames wait (those not yet written
        # are taken back) until a JSON ping tells a serving board from a REPL.
        if self.suspect is not None or self.at_repl:
            return
        self.suspect = why
        log.info("the board may be at its REPL (%s); holding hosts' requests", why)
        for p in list(self._order):
            if not p.internal and self.link.withdraw(p.frame):
                p.sent = False
                self._order.remove(p)
        self._check_task = asyncio.get_running_loop().create_task(self._check_serving(why))

    async def _check_serving(self, why):
        # A string id: a REPL that runs the line prints it back in Python's quotes, which a
        # serving board's JSON never holds.
        p = Pending("repl-probe-%d" % next(self._ids), "ping", None, None, False, True)
        self._probe_mark = ("'%s'" % p.id).encode()
        self.pending[p.id] = p
        p.frame = self.link.write(json.dumps(p.message(), separators=(",", ":")).encode()
                                  + b"\n", urgent=True)
        p.sent = p.frame is not None
        try:
            msg = await asyncio.wait_for(asyncio.shield(p.future), self.timeout)
        except asyncio.TimeoutError:
            msg = None
        finally:
            self.pending.pop(p.id, None)
            self._probe_mark = None
        if self.suspect is not why:
            return   # settled meanwhile: an answer, an echo, a reset
        if msg is not None and "result" in msg:
            self._serving_after_all()
        else:
            self._saw_repl("it printed what its REPL prints and does not answer a ping")

    def _serving_after_all(self):
        # An answer while suspect: main.py serves; what waited is written now.
        self.suspect = None
        if self.state != "ready":
            return
        log.info("the board answers: it is serving; sending what waited")
        for p in list(self.pending.values()):
            if not p.sent and not p.internal:
                self._send(p)

    def _saw_repl(self, why):
        # A board at its REPL cannot answer: main.py is not serving. Nothing more is typed at
        # its prompt; what hosts asked of it is answered now with an error; it is restarted
        # (at most every restart_every_s), or left alone.
        self.at_repl = True
        self.suspect = None
        for p in list(self._order):
            if self.link.withdraw(p.frame):   # a frame not yet written never is
                p.sent = False
        if self.state == "ready":
            self._typed = True   # hosts' frames went to it since it fell
            log.warning("the board fell to its Python REPL while serving (%s): nothing more "
                        "from hosts is written to it until main.py serves again", why)
            self.state = "connected"
            self.ready.clear()
            self._order.clear()
            self._start_init()
            self.events.on_lost()
        elif not self._repl_warned:
            log.warning("the board seems to be at its Python REPL (%s): does its main.py "
                        "serve MCP?", why)
        self._repl_warned = True
        self._rewind_init()
        self._fail_requests(why)
        if self.state == "connected":
            self.restart_board("it is at its REPL")

    def _fail_requests(self, why):
        # Every host request the board has, or would be sent, is answered: it is at its REPL.
        for p in list(self.pending.values()):
            if p.internal:
                continue
            del self.pending[p.id]
            if p.sent or p.limbo:
                p.settle(error(NOT_SERVING, "Board not serving: it fell to its Python REPL (%s) "
                               "while handling %s; it may or may not have completed"
                               % (why, p.method), "not-serving"))
            else:
                p.settle(error(NOT_SERVING, "Board not serving: it is at its Python REPL (%s)"
                               % why, "not-serving"))

    def restart_board(self, why):
        # Run the board's main.py again: 0x03 ends a tinymcp serve loop (or clears a REPL
        # line), then Ctrl-B leaves a raw REPL and Ctrl-D soft-resets from the friendly one;
        # the trailing newline ends that junk as a line for a board already serving again.
        # A board that keeps not serving is left alone between attempts. -> True if sent.
        if not self.restart_boards:
            return False
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self._restarted_at is not None and now - self._restarted_at < self.restart_every_s:
            return False
        self._restarted_at = now
        self.restarts += 1
        log.warning("restarting the board's main.py (%s): 0x03, then a soft reset", why)
        # 0x03 first, never a CR: a CR would run whatever sits on a REPL's line.
        self.link.send_raw(b"\x03")
        self._typed = False
        loop.call_later(0.3, self.link.send_raw, b"\x02\x04\n")
        return True

    def on_state(self, up):
        if up:
            log.info("board port %s up; initializing", self.link.device)
            self.state = "connected"
            self._start_init()
            return
        was_ready = self.state == "ready"
        self.state = "disconnected"
        self.ready.clear()
        self._order.clear()
        self.at_repl = False
        self.suspect = None
        self._typed = False
        self.fault = None
        self._bad_inits = 0
        for p in list(self.pending.values()):
            del self.pending[p.id]
            p.settle(error(DISCONNECTED, "Board disconnected: %s went away while the request "
                           "was in flight" % self.link.device, "disconnected"))
        if was_ready:
            self.events.on_lost()

    # -- lifecycle --------------------------------------------------------------------------

    async def run(self):
        # For as long as the bridge serves the board: its link, which initializes it each time
        # the port comes up.
        await self.link.run()

    def start(self):
        if self.link.connected:
            self._start_init()

    def reset(self, why):
        # The board lost its session (reboot, crash, restart): initialize it again.
        if self.state == "disconnected":
            return
        was_ready = self.state == "ready"
        if was_ready:
            self.resets += 1
            self._typed = True   # until a soft reboot: hosts' frames may sit on a REPL's line
            log.warning("board reset detected (%s); re-initializing", why)
        self.suspect = None
        self.state = "connected"
        self.ready.clear()
        self._order.clear()   # a new session runs nothing yet
        for p in self.pending.values():
            if p.sent:
                p.limbo = True
        # While an initialize is on the wire the board answers everything sent before it
        # first, so that one still settles the limbo; a reset during the replay starts over.
        self._start_init(restart=was_ready)
        self._rewind_init()
        if was_ready:
            self.events.on_lost()

    def _start_init(self, restart=True):
        # restart: abandon an initialize in progress (the board it was talking to is gone).
        if self._init_task is not None and not self._init_task.done():
            if not restart:
                return
            self._init_task.cancel()
        self._init_task = asyncio.get_running_loop().create_task(self._initialize())
        self._init_task.add_done_callback(self._init_ended)

    def _rewind_init(self):
        # The board rebooted (or fell to its REPL) while the initialize loop waits: it need
        # not wait out a long pause, nor pause long before the next attempt.
        self._init_rewind = True
        self._wake_init()

    def _init_ended(self, task):
        # The initialize loop must never die unseen: every host request would wait for it.
        if task.cancelled() or task.exception() is None:
            return
        log.error("initializing the board failed: %r; trying again", task.exception())
        if self.state == "connected":
            asyncio.get_running_loop().call_later(self.init_interval, self._start_init, False)

    async def _pause(self, seconds):
        # Sleep, but wake up early when the board soft-reboots.
        self._woken.clear()
        try:
            await asyncio.wait_for(self._woken.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def _wait_out_repl(self):
        # The board shows its REPL: never type JSON at its prompt. After a restart, main.py
        # gets its time to start; otherwise an empty line (harmless at a prompt) now and then
        # asks whether the prompt is still there.
        now = asyncio.get_running_loop().time()
        if self._restarted_at is not None and now - self._restarted_at < self.restart_settle_s:
            await self._pause(self._restarted_at + self.restart_settle_s - now)
            return
        if self.restart_board("it is at its REPL"):
            await self._pause(self.restart_settle_s)
            return
        if self._typed:   # a CR would run hosts' bytes on its line: wait for it to reboot
            self._refuse_waiting()
            await self._pause(self.repl_probe_s)
            return
        self.at_repl = False
        self.link.send_raw(b"\r\n")
        await self._pause(1.0)
        if self.at_repl:   # the prompt came back: stay quiet a while
            self._refuse_waiting()
            await self._pause(self.repl_probe_s)

    def _refuse_waiting(self):
        # Host requests held for a board that turned out not to serve: answered now.
        why = self.not_serving()
        for p in list(self.pending.values()):
            if why is not None and not p.sent and not p.internal:
                del self.pending[p.id]
                p.settle(error(NOT_SERVING, "Board not serving: %s" % why, "not-serving"))

    async def wait_ready(self, timeout):
        # Wait for the board to be ready, but not for one that answers without serving.
        end = asyncio.get_running_loop().time() + timeout
        while (not self.ready.is_set() and self.state != "disconnected"
               and self.not_serving() is None):
            left = end - asyncio.get_running_loop().time()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(self.ready.wait(), min(left, 0.25))
            except asyncio.TimeoutError:
                pass

    async def _initialize(self):
        # Until the board answers initialize usably: an attempt, then a pause that doubles
        # while the board is silent. Every attempt not yet answered (MAX_INIT_WAITING at most)
        # stays pending, so a slow board is served by whichever answer comes first.
        params = {"protocolVersion": PROTOCOL, "capabilities": CLIENT_CAPABILITIES,
                  "clientInfo": self.client_info}
        refused = False
        cbor_next = self.link_mode == "cbor"  # the kind the next attempt is written in
        plain = 0                             # JSON answers without a CBOR offer so far
        attempts = collections.OrderedDict()  # id -> (Pending, written as CBOR), oldest first
        pause = self.init_interval
        self._init_rewind = False
        try:
            while self.state == "connected":
                if self.at_repl:
                    self._drop_attempts(attempts)   # typed at a REPL: never answered
                    pause = self.init_interval
                    await self._wait_out_repl()
                    continue
                want_cbor = self.link_mode != "json"  # changes when the board cannot read CBOR
                cbor_next = cbor_next and want_cbor
                self.link.mode = "cbor" if cbor_next else "json"
                p = Pending(next(self._ids), "initialize", params, None, False, True)
                self.pending[p.id] = p
                attempts[p.id] = (p, cbor_next)
                if len(attempts) > MAX_INIT_WAITING:
                    self.pending.pop(attempts.popitem(last=False)[0], None)
                self._send(p)
                p, cbor_sent = await self._init_answer(attempts, pause)
                rewound, self._init_rewind = self._init_rewind, False
                if p is None:
                    most = (self.network_interval_max if self.link.network else
                            self.init_interval_max)
                    pause = self.init_interval if rewound else min(pause * 2, most)
                    if want_cbor:  # a JSON-only board ignores CBOR frames, a lost frame is lost
                        cbor_next = not cbor_next
                    continue
                self._drop_attempts(attempts)   # answered: the board is there, and current
                pause = self.init_interval
                msg = p.future.result()
                if self.state != "connected":
                    return
                problem = _init_problem(msg["result"]) if "result" in msg else None
                if _bridge_reason(msg) == "malformed":
                    problem = msg["error"]["message"]
                if problem is not None:
                    self._bad_inits += 1
                    log.log(logging.WARNING if self._bad_inits == FAULT_AFTER else logging.INFO,
                            "the board's initialize answer is unusable (%s); asking again",
                            problem)
                    if self._bad_inits >= FAULT_AFTER:   # not noise on the line: the board
                        self.fault = problem
                        self._refuse_waiting()
                    await asyncio.sleep(self.init_interval)
                    continue
                if "result" not in msg:
                    if not refused:
                        log.error("board refused initialize: %s", msg.get("error"))
                    refused = True
                    if _other_era(msg):  # an earlier client locked it into 2026-07-28
                        self.restart_board("an earlier client left it speaking 2026-07-28 only")
                    await asyncio.sleep(self.init_interval)
                    continue
                self.fault = None
                self._bad_inits = 0
                offer = self._take_offer(msg["result"])
                cbor = offer.get("cbor") is True
                self.identity = offer["id"] if type(offer.get("id")) is str else None
                cbor_next = cbor_sent   # what follows is decided by the kind answered
                if want_cbor and not cbor_next:
                    if cbor:
                        cbor_next = True  # once more as a CBOR frame: that answer passes a CRC
                        continue
                    plain += 1
                    if self.link_mode == "cbor" and plain < 3:
                        continue  # on a noisy wire the offer itself may have been mangled
                self.link.mode = "cbor" if cbor_next else "json"   # as the answered attempt
                self.init_result = msg["result"]
                self.board_link = cbor
                self.max_frame = self._frame_limit(offer)
                if cbor_next:
                    log.info("board link: CBOR frames with CRC-32")
                elif self.link_mode == "cbor":
                    log.warning("--link cbor: the board does not offer CBOR frames; "
                                "using JSON lines")
                self.notify("notifications/initialized")
                self._settle_limbo()
                self.state = "ready"
                info = self.init_result["serverInfo"]
                log.info("board ready: %s %s on %s, protocol %s, frames up to %d bytes",
                         info.get("name"), info.get("version"), self.link.device,
                         self.init_result.get("protocolVersion"), self.max_frame)
                try:
                    await self.events.on_ready()
                except Exception:
                    log.exception("replay after initialize failed")
                if self.state != "ready":
                    return  # reset or unplugged during the replay: a new attempt is under way
                for p in list(self.pending.values()):
                    if not p.sent:
                        self._send(p)
                self.ready.set()
                return
        finally:
            self._drop_attempts(attempts)

    async def _init_answer(self, attempts, pause):
        # -> (the first attempt answered, whether it was written as CBOR), or (None, None) once
        # pause has passed since the last one was written, or the board shows its REPL; a
        # reboot meanwhile (_rewind_init) shortens the pause to init_interval.
        loop = asyncio.get_running_loop()
        start = loop.time()
        while True:
            for p, cbor in attempts.values():
                if p.future.done():
                    return p, cbor
            left = start + (self.init_interval if self._init_rewind else pause) - loop.time()
            if left <= 0 or self.at_repl:
                return None, None
            wake = self._init_wake = loop.create_future()
            timer = loop.call_later(left, self._wake_init)
            for p, _ in attempts.values():
                p.future.add_done_callback(self._wake_init)
            try:
                await wake
            finally:
                timer.cancel()
                if self._init_wake is wake:
                    self._init_wake = None
                for p, _ in attempts.values():
                    p.future.remove_done_callback(self._wake_init)

    def _wake_init(self, _future=None):
        # An attempt answered, its pause passed, or the board rebooted: the loop looks again.
        if self._init_wake is not None and not self._init_wake.done():
            self._init_wake.set_result(None)

    def _drop_attempts(self, attempts):
        # Attempts no longer waited for: an answer to one of them is late (on_message).
        for rid in attempts:
            self.pending.pop(rid, None)
        attempts.clear()

    @staticmethod
    def _take_offer(result):
        # The board's link offer, taken out of its initialize result (the host sees plain MCP).
        caps = result["capabilities"]
        offer = None
        if type(caps.get("experimental")) is dict:
            offer = caps["experimental"].pop(LINK_KEY, None)
            if not caps["experimental"]:
                del caps["experimental"]
        return offer if type(offer) is dict else {}

    @staticmethod
    def _frame_limit(offer):
        limit = offer.get("maxFrame")
        if type(limit) is int and 64 <= limit <= 1 << 24:
            return limit
        if limit is not None:
            log.warning("ignored the board's frame limit %r; assuming %d bytes", limit,
                        DEFAULT_MAX_FRAME)
        return DEFAULT_MAX_FRAME

    def _settle_limbo(self):
        # Every request sent before the initialize that just succeeded was answered already
        # if the board was going to: the rest went down with the old session.
        for p in list(self.pending.values()):
            if not p.limbo:
                continue
            if p.retry and not p.internal:
                p.retry = False  # once
                p.sent = p.limbo = False
                log.info("retrying read-only %s after the reset", p.method)
                continue
            del self.pending[p.id]
            p.settle(error(RESET, "Board reset while handling %s; it may or may not have "
                           "completed" % p.method, "reset"))

    def _probe(self):
        # After a timeout: is the board there at all? Silence means a hang or a dead board.
        if self.state != "ready" or (self._probe_task and not self._probe_task.done()):
            return
        self._probe_task = asyncio.get_running_loop().create_task(self._ping())

    async def _ping(self):
        # A board that answers what it was sent, however late, is busy: a reset (initialize,
        # the replay) would only give it more to do.
        late = self._late
        msg = await self.call("ping", internal=True, timeout=min(self.timeout, 3.0))
        if _bridge_reason(msg) == "timeout" and self._late == late:
            self.reset("the board is silent")

    def close(self):
        # The bridge serves this board no more: what waits for it is answered now.
        for task in (self._init_task, self._probe_task, self._check_task):
            if task is not None:
                task.cancel()
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        self.link.close()
        if self.state != "disconnected":
            self.on_state(False)
