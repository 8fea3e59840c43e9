# One byte stream carrying one MCP session: bytes -> frames -> Server.handle -> frames out.
#
# A port supplies the stream: .buf (a bytearray), .recv(timeout_ms) -> bytes placed at the
# start of .buf (0 on timeout, -1 at end of input), .write(piece) for bytes or str pieces of
# a frame, and .end() which ends the frame with b"\n" and flushes.
from tinymcp import framing
from tinymcp.clock import ticks_ms, ticks_diff
from tinymcp.jsonrpc import error_frame
from tinymcp.protocol import (INVALID_REQUEST, PARSE_ERROR, REASON, FRAME_TOO_LONG,
                              LINK_UNAVAILABLE)

NO_CBOR = "Parse error: CBOR frames need tinymcp/cborlink.py, which this board lacks"


def _cbor_link():
    # tinymcp.cborlink.CborLink, or None on a board deployed without the CBOR link mode.
    try:
        from tinymcp.cborlink import CborLink
        return CborLink
    except ImportError:
        return None


class Channel:
    poll_ms = 200  # how often subscribed resources are checked for changes
    cbor = True    # False: JSON lines only, even when tinymcp/cborlink.py is on the board

    def __init__(self, server, stream, max_frame=None):
        self.server = server
        self.stream = stream
        self.framer = framing.LineFramer(max_frame)
        self.pos = 0
        self.end = 0
        self.stopped = None
        limit = self.framer.max_frame
        # Checked once: a board advertises only the link modes it has.
        self.cbor_link = _cbor_link() if self.cbor else None
        self.link = None  # the CborLink, once a CBOR frame arrives
        self.link_modes = {"maxFrame": limit}
        if self.cbor_link is not None:
            self.link_modes["cbor"] = True
        self._oversize = error_frame(None, INVALID_REQUEST, "Invalid Request: frame longer than "
                                     + str(limit) + " bytes, discarded",
                                     {REASON: FRAME_TOO_LONG, "limit": limit})
        self._send = self.send  # bound once: the server calls it for every notification
        server.write = self._send
        server.pump = self.pump
        server.link_modes = self.link_modes

    def run(self):
        # Serve until the input ends ("eof") or a 0x03 byte arrives ("interrupt").
        server = self.server
        stream = self.stream
        last_poll = ticks_ms()
        while self.stopped is None:
            n = stream.recv(self.poll_ms)
            if n < 0:
                self.stopped = "eof"
                break
            self.pos = 0
            self.end = n
            self._drain()
            self._serve_backlog()
            now = ticks_ms()
            if ticks_diff(now, last_poll) >= self.poll_ms:
                last_poll = now
                server.poll()
        if self.stopped == "eof":
            self._serve_backlog()  # the client may close its side right after its last request
        server.write = None
        server.pump = None
        return self.stopped

    def _serve_backlog(self):
        backlog = self.server.backlog
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
                self.send(self._oversize)
            elif event == framing.INTERRUPT:
                self.stopped = "interrupt"

    def _dispatch(self, frame):
        server = self.server
        if 0xA0 <= frame[0] <= 0xBF and self.link is not False:  # CBOR map; JSON starts ASCII
            if self.link is None:
                if self.cbor_link is None:  # deployed without it: said once, then JSON only
                    self.link = False
                    self.send(error_frame(None, PARSE_ERROR, NO_CBOR,
                                          {REASON: LINK_UNAVAILABLE, "link": "cbor"}))
                    return
                self.link = self.cbor_link(self)
            if self.link.dispatch(frame):
                return  # else garbage before any CBOR frame: answered as JSON would be
        if server.write is not self._send and frame[0] == 0x7B:
            server.write = self._send  # a JSON frame ("{"): unsolicited output is JSON again
        if server.busy:
            server.interject(frame)
            return
        stream = self.stream
        if server.respond(frame, stream.write):
            stream.end()

    def send(self, frame):
        self.stream.write(frame)
        self.stream.end()

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
