# The bridge's own MCP session with the board: initialize, requests with deadlines, reset recovery.
import asyncio
import itertools
import logging

from tinymcp import protocol

log = logging.getLogger("tinymcp.bridge.board")

PROTOCOL = "2025-11-25"
DISCONNECTED = -32000    # JSON-RPC "server error" range: the bridge's own errors
RESET = -32000
TIMEOUT = -32001
# What a board prints when it (re)boots; any of these on the line means the session is gone.
BOOT_MARKS = (b"MicroPython v", b"soft reboot", b"rst:0x")
# Notifications only a client sends: seen from the board, they are an echo, not news.
CLIENT_NOTIFICATIONS = ("notifications/initialized", "notifications/roots/list_changed")
CLIENT_CAPABILITIES = {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {}}
LINK_KEY = protocol.LINK_KEY  # the board's link offer, in initialize's capabilities.experimental
LINK_MODES = ("json", "auto", "cbor")


def error(code, message, reason):
    return {"jsonrpc": "2.0", "error": {"code": code, "message": message,
                                        "data": {"bridge": reason}}}


def not_initialized(msg):
    return protocol.reason(msg) == protocol.NOT_INITIALIZED


def _other_era(msg):
    # The board's answer to initialize when its serve loop is locked into 2026-07-28.
    err = msg.get("error")
    data = err.get("data") if type(err) is dict else None
    supported = data.get("supported") if type(data) is dict else None
    return type(supported) is list and PROTOCOL not in supported


def _no_cbor(msg):
    return msg.get("id") is None and protocol.reason(msg) == protocol.LINK_UNAVAILABLE


def _restore_uri(msg, params):
    # A CBOR link leaves the requested uri out of the contents it reads (docs/cbor-link.md).
    result = msg.get("result")
    if type(result) is dict and type(result.get("contents")) is list and type(params) is dict:
        for item in result["contents"]:
            if type(item) is dict and "uri" not in item:
                item["uri"] = params.get("uri")


class Pending:
    # One request to the board. sent: on the wire to the current board; limbo: sent before a
    # reset, fate unknown until the re-initialize answer shows the board answered all before it.
    __slots__ = ("id", "method", "params", "future", "owner", "retry", "internal", "sent",
                 "limbo")

    def __init__(self, rid, method, params, owner, retry, internal):
        self.id = rid
        self.method = method
        self.params = params
        self.future = asyncio.get_running_loop().create_future()
        self.owner = owner
        self.retry = retry
        self.internal = internal
        self.sent = False
        self.limbo = False

    def frame(self):
        msg = {"jsonrpc": "2.0", "id": self.id, "method": self.method}
        if self.params is not None:
            msg["params"] = self.params
        return msg

    def settle(self, msg):
        if not self.future.done():
            self.future.set_result(msg)


class BoardSession:
    init_interval = 1.0   # seconds between initialize attempts while the board is silent
    restart_every_s = 30.0  # at most one restart of a board that does not serve per this long
    restart_boards = True   # --no-restart: never send the board 0x03 / Ctrl-D

    def __init__(self, link, timeout=10.0, client_info=None, link_mode="json"):
        self.link = link
        self.timeout = timeout
        self.link_mode = link_mode  # json | auto (CBOR if the board offers it) | cbor (same, or warn)
        self.board_link = False     # the board offered CBOR frames in its last initialize
        self.client_info = client_info or {"name": "tinymcp-bridge", "version": "0.1.0"}
        link.on_message = self._message
        link.on_noise = self._noise
        link.on_state = self._link_state
        self.state = "connected" if link.connected else "disconnected"
        self.ready = asyncio.Event()
        self.init_result = None
        self.pending = {}
        self._ids = itertools.count(1)
        self._init_task = None
        self._probe_task = None
        self.resets = 0
        self._repl_warned = False
        self._restarted_at = None
        self.restarts = 0
        self.on_notification = lambda msg: None
        self.on_request = lambda msg: None
        self.on_ready = None    # async fn(): replays subscriptions etc. after each initialize

    # -- requests -------------------------------------------------------------------------

    async def call(self, method, params=None, owner=None, retry=False, internal=False,
                   timeout=None):
        # -> the board's response message (with "result" or "error"), never raises for board
        # trouble: a timeout, a reset or a missing port become JSON-RPC errors.
        if self.state == "disconnected":
            return error(DISCONNECTED, "Board disconnected: %s is not available; the bridge "
                         "reopens it when it comes back" % self.link.device, "disconnected")
        p = Pending(next(self._ids), method, params, owner, retry, internal)
        self.pending[p.id] = p
        if self.state == "ready" or internal:
            self._send(p)
        limit = self.timeout if timeout is None else timeout
        try:
            return await asyncio.wait_for(asyncio.shield(p.future), limit)
        except asyncio.TimeoutError:
            self.pending.pop(p.id, None)
            if p.sent:
                self._cancel_on_board(p, "timed out in the bridge")
                self._probe()
                return error(TIMEOUT, "Request timed out: the board did not answer %s within "
                             "%g s" % (method, limit), "timeout")
            return error(TIMEOUT, "Request timed out: the board was not ready within %g s"
                         % limit, "timeout")
        except asyncio.CancelledError:
            self.pending.pop(p.id, None)
            if p.sent:
                self._cancel_on_board(p, "cancelled by the client")
            raise

    def _send(self, p):
        p.sent = self.link.send(p.frame())
        p.limbo = False

    def _cancel_on_board(self, p, reason):
        self.link.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": p.id, "reason": reason}})

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        return self.link.send(msg)

    def respond(self, msg):
        # A response to a request the board sent us (sampling, elicitation, roots).
        return self.link.send(msg)

    def current_owner(self):
        # The board serves one request at a time, in order: the oldest on the wire is running.
        for p in self.pending.values():
            if p.sent and not p.internal:
                return p.owner
        return None

    # -- input from the link --------------------------------------------------------------

    def _message(self, msg):
        if "method" in msg:
            mine = self.pending.get(msg.get("id"))
            if mine is not None and mine.method == msg["method"]:
                # Our own frame coming back: a REPL (not the MCP server) is echoing the line.
                self._repl("it echoes the bridge's frames")
            elif "id" in msg:
                self.on_request(msg)
            elif msg["method"] not in CLIENT_NOTIFICATIONS:
                self.on_notification(msg)
            return
        p = self.pending.get(msg.get("id"))
        if self.link.mode == "cbor" and _no_cbor(msg):
            # The board offered CBOR frames but was deployed without the module that reads them.
            log.warning("the board cannot read CBOR frames (%s); back to JSON lines",
                        msg["error"].get("message"))
            self.link_mode = "json"
            self.reset("its CBOR link is missing")
            return
        if not_initialized(msg):
            # The board has restarted: this request never ran, so it is safe to send again.
            if p is not None and not p.internal:
                p.sent = p.limbo = False
            self.reset("the board answered 'Server not initialized'")
            return
        if p is None:
            log.debug("late or unknown answer: %s", str(msg)[:200])
            return
        del self.pending[p.id]
        if p.method == "resources/read" and self.link.mode == "cbor":
            _restore_uri(msg, p.params)
        p.settle(msg)

    def _noise(self, line):
        for mark in BOOT_MARKS:
            if mark in line:
                self.reset("boot banner %r" % line[:60])
                return
        if line.strip() == b">>>":
            self._repl("it shows the '>>> ' prompt")

    def _repl(self, why):
        # Said once per run: a board at its REPL cannot answer; main.py is not serving.
        if not self._repl_warned:
            self._repl_warned = True
            log.warning("the board seems to be at its Python REPL (%s): does its main.py "
                        "serve MCP?", why)
        if self.state == "connected":  # not answering initialize: main.py is not serving
            self.restart_board("it is at its REPL")

    def restart_board(self, why):
        # Run the board's main.py again: 0x03 ends a tinymcp serve loop (or clears a REPL
        # line), then Ctrl-B leaves a raw REPL and Ctrl-D soft-resets from the friendly one;
        # the trailing newline ends that junk as a line for a board already serving again.
        # A board that keeps not serving is left alone between attempts.
        if not self.restart_boards:
            return
        loop = asyncio.get_running_loop()
        now = loop.time()
        if self._restarted_at is not None and now - self._restarted_at < self.restart_every_s:
            return
        self._restarted_at = now
        self.restarts += 1
        log.warning("restarting the board's main.py (%s): 0x03, then a soft reset", why)
        self.link.send_raw(b"\r\x03")
        loop.call_later(0.3, self.link.send_raw, b"\x02\x04\n")

    def _link_state(self, up):
        if up:
            log.info("board port up; initializing")
            self.state = "connected"
            self._start_init()
            return
        self.state = "disconnected"
        self.ready.clear()
        for p in list(self.pending.values()):
            del self.pending[p.id]
            p.settle(error(DISCONNECTED, "Board disconnected: %s went away while the request "
                           "was in flight" % self.link.device, "disconnected"))

    # -- lifecycle --------------------------------------------------------------------------

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
            log.warning("board reset detected (%s); re-initializing", why)
        self.state = "connected"
        self.ready.clear()
        for p in self.pending.values():
            if p.sent:
                p.limbo = True
        # While an initialize is on the wire the board answers everything sent before it
        # first, so that one still settles the limbo; a reset during the replay starts over.
        self._start_init(restart=was_ready)

    def _start_init(self, restart=True):
        # restart: abandon an initialize in progress (the board it was talking to is gone).
        if self._init_task is not None and not self._init_task.done():
            if not restart:
                return
            self._init_task.cancel()
        self._init_task = asyncio.get_running_loop().create_task(self._initialize())

    async def _initialize(self):
        params = {"protocolVersion": PROTOCOL, "capabilities": CLIENT_CAPABILITIES,
                  "clientInfo": self.client_info}
        refused = False
        cbor_next = self.link_mode == "cbor"  # the kind the next attempt is written in
        plain = 0                             # JSON answers without a CBOR offer so far
        while self.state == "connected":
            want_cbor = self.link_mode != "json"  # changes when the board cannot read CBOR
            cbor_next = cbor_next and want_cbor
            self.link.mode = "cbor" if cbor_next else "json"
            p = Pending(next(self._ids), "initialize", params, None, False, True)
            self.pending[p.id] = p
            self._send(p)
            try:
                msg = await asyncio.wait_for(asyncio.shield(p.future), self.init_interval)
            except asyncio.TimeoutError:
                if want_cbor:  # a JSON-only board ignores CBOR frames, a lost frame is lost
                    cbor_next = not cbor_next
                continue
            finally:
                self.pending.pop(p.id, None)
            if self.state != "connected":
                return
            if "result" not in msg:
                if not refused:
                    log.error("board refused initialize: %s", msg.get("error"))
                refused = True
                if _other_era(msg):  # an earlier client locked it into 2026-07-28
                    self.restart_board("an earlier client left it speaking 2026-07-28 only")
                await asyncio.sleep(self.init_interval)
                continue
            offer = self._take_offer(msg["result"])
            if want_cbor and not cbor_next:
                if offer:
                    cbor_next = True  # once more as a CBOR frame: that answer passes a CRC
                    continue
                plain += 1
                if self.link_mode == "cbor" and plain < 3:
                    continue  # on a noisy wire the offer itself may have been mangled
            self.init_result = msg["result"]
            self.board_link = offer
            if cbor_next:
                log.info("board link: CBOR frames with CRC-32")
            elif self.link_mode == "cbor":
                log.warning("--link cbor: the board does not offer CBOR frames; using JSON lines")
            self.notify("notifications/initialized")
            self._settle_limbo()
            self.state = "ready"
            info = self.init_result.get("serverInfo", {})
            log.info("board ready: %s %s, protocol %s", info.get("name"), info.get("version"),
                     self.init_result.get("protocolVersion"))
            if self.on_ready is not None:
                try:
                    await self.on_ready()
                except Exception:
                    log.exception("replay after initialize failed")
            if self.state != "ready":
                return  # reset or unplugged during the replay: a new attempt is under way
            for p in list(self.pending.values()):
                if not p.sent:
                    self._send(p)
            self.ready.set()
            return

    @staticmethod
    def _take_offer(result):
        # The board's link offer, taken out of its initialize result (the host sees plain MCP):
        # True when it offers CBOR frames.
        caps = result.get("capabilities")
        offer = None
        if type(caps) is dict and type(caps.get("experimental")) is dict:
            offer = caps["experimental"].pop(LINK_KEY, None)
            if not caps["experimental"]:
                del caps["experimental"]
        return type(offer) is dict and offer.get("cbor") is True

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
        msg = await self.call("ping", internal=True, timeout=min(self.timeout, 3.0))
        if "error" in msg and msg["error"].get("data", {}).get("bridge") == "timeout":
            self.reset("the board is silent")

    def close(self):
        for task in (self._init_task, self._probe_task):
            if task is not None:
                task.cancel()
