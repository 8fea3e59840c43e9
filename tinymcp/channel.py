# One byte stream carrying one MCP session (the Session it holds): bytes -> frames -> the link's
# decoder -> the server -> the link's encoder -> one write per message. The serve loop owns the
# I/O and the idle time.
#
# A port supplies the stream: .buf (a bytearray), .recv(timeout_ms) -> the count of bytes placed
# at the start of .buf (0 on timeout, -1 at end of input), and .write(buf, n), which sends
# buf[:n], called once per message (a message longer than the output buffer: once per
# full-buffer chunk); buf may be the output buffer, to be consumed before write returns.
# MicroPython's streams take write(buf, n) themselves (sys.stdout.buffer, machine.UART, sockets):
# no slice of the buffer is made per message.
from tinymcp import framing, once
from tinymcp.clock import ticks_ms, ticks_diff
from tinymcp.jsonrpc import JsonLink, loads
from tinymcp.protocol import (INVALID_REQUEST, PARSE_ERROR, INTERNAL_ERROR, REASON,
                              FRAME_TOO_LONG)
from tinymcp.revision import HANDSHAKE
from tinymcp.server import describe

class Channel:
    poll_ms = 200      # how often the idle work runs (subscribed resources checked)
    step_ms = 10       # the idle period while a generator tool runs (tinymcp/tasks.py)
    offer_cbor = True  # False: JSON lines only, even when tinymcp/cborlink.py is on the board

    def __init__(self, server, stream, max_frame=None):
        self.server = server
        self.stream = stream
        self.framer = framing.LineFramer(max_frame)
        self.out = framing.Out(stream.write)
        self.json = JsonLink(self.out)
        self.pos = 0
        self.end = 0
        self.stopped = None
        self.cbor = None  # the CborLink from the first CBOR frame on; False: it has none
        offer = once("tinymcp.linkmode.offer", server, self)  # released after (tinymcp/later.py)
        session = self.session = server.open_session()  # one stream, one session
        session.link = self.json
        session.pump = self.pump
        session.link_modes = offer

    def run(self):
        # Serve until the input ends ("eof") or a 0x03 byte arrives ("interrupt").
        server = self.server
        stream = self.stream
        session = self.session
        server.enter(session)
        last_poll = ticks_ms()
        while self.stopped is None:
            work = session.work
            stepping = work is not None and work.live
            n = stream.recv(self.step_ms if stepping else self.poll_ms)
            if n < 0:
                self.stopped = "eof"
                break
            self.pos = 0
            self.end = n
            self._drain()
            self._serve_backlog()
            if stepping:  # long tools: one step each, then the input again
                work.step(server)
            now = ticks_ms()
            if ticks_diff(now, last_poll) >= self.poll_ms:
                last_poll = now
                server.poll()
        if self.stopped == "eof":
            self._serve_backlog()  # the client may close its side right after its last request
        server.end_session(session)  # the link is gone: its outputs fail safe
        session.link = None
        session.pump = None
        return self.stopped

    def _serve_backlog(self):
        backlog = self.session.backlog
        while backlog and self.stopped != "interrupt":
            self._dispatch(backlog.pop(0))

    def _drain(self):
        # Frames from the unread part of stream.buf; self.pos moves before each dispatch, so
        # a handler that pumps continues from the right place.
        framer = self.framer
        buf = self.stream.buf
        while self.pos < self.end and self.stopped is None:
            self.pos = framer.feed(buf, self.pos, self.end)
            event = framer.event
            if event == framing.FRAME:
                self._dispatch(framer.frame())
            elif event == framing.OVERSIZE:
                limit = framer.max_frame
                self.json.error(None, INVALID_REQUEST, "Invalid Request: frame longer than "
                                + str(limit) + " bytes, discarded",
                                {REASON: FRAME_TOO_LONG, "limit": limit})
            elif event == framing.INTERRUPT:
                self.stopped = "interrupt"

    def _dispatch(self, frame):
        busy = self.session.call.busy
        raw = bytearray(frame) if busy else None  # for the backlog, before decoding
        link = self.json
        if 0xA0 <= frame[0] <= 0xBF and self.cbor is not False:  # a CBOR map; JSON is ASCII
            link = self._cbor()
            if not link:
                return
            dropped = link.dropped
            try:
                msg = link.decode(frame)  # unescapes the line buffer in place
            except ValueError:
                if link.dropped == dropped:  # intact, but not CBOR we accept
                    link.error(None, PARSE_ERROR, "Parse error: not valid CBOR")
                elif not link.frames:  # garbage before any good CBOR frame: answered as JSON
                    self.json.error(None, PARSE_ERROR, "Parse error: not valid UTF-8 JSON")
                return  # else dropped and counted: the bridge's timeout handles the loss
        else:
            try:
                msg = loads(frame)
            except Exception:  # ValueError or UnicodeError, by runtime
                link.error(None, PARSE_ERROR, "Parse error: not valid UTF-8 JSON")
                return
        self.session.link = link  # unsolicited output follows the last good frame's kind
        try:
            if not busy or not self._interject(raw, msg, link):
                self.server.answer(msg, link)
        except Exception as e:  # outside any handler: a module missing from the board, memory
            rid = msg.get("id") if type(msg) is dict else None
            link.error(rid if type(rid) is int or type(rid) is str else None, INTERNAL_ERROR,
                       "Internal error: " + describe(e))

    def _cbor(self):
        if self.cbor is None:  # the first CBOR frame: the link, or an error said once
            self.cbor = once("tinymcp.linkmode.cbor", self.server, self)
        return self.cbor

    def _interject(self, raw, msg, link):
        # A message that arrived while a handler runs: cancellations and responses are served
        # now (-> False: the server answers them), pings answered here, other requests wait in
        # the backlog (as their raw frames).
        if type(msg) is dict:
            method = msg.get("method")
            if method is None or "id" not in msg:
                return False
            rid = msg.get("id")
            if (method == "ping" and self.session.revision is HANDSHAKE
                    and (type(rid) is int or type(rid) is str)):
                # Answered here, not through answer(): that would reset the running request's
                # state (its id, its cancel flag) under the handler's feet.
                link.result(rid, b"{}")
                return True
        self.session.backlog.append(raw)
        return True

    def pump(self, timeout_ms):
        # Called from inside a handler: route whatever input is waiting (cancellations,
        # responses to our requests, pings); other requests are queued for later.
        if self.stopped is not None:
            return
        if self.pos >= self.end:
            n = self.stream.recv(timeout_ms)
            if n < 0:
                self.stopped = "eof"
                return
            self.pos = 0
            self.end = n
        self._drain()
