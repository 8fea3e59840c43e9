# The board's one message loop, for every transport, and the byte stream's adapter in front of
# it with its line framer (here, not in framing.py: Server.handle() and MQTT, which load
# framing.py's output buffer, never read lines). An adapter reads its transport and hands the
# loop each whole message with the key of the client that sent it: a byte stream's lines (Lines,
# below: JSON, or CBOR link frames) come from one client, MQTT's topics from one per client id
# (ports/mqtt.py Topics). The loop finds or makes that client's Session, dispatches the message
# in it, and the answer leaves through the link the adapter gave that session. The loop owns the
# idle time too: long tools stepped, idle hooks run, subscribed resources watched.
#
# An adapter has:
#   read(channel, timeout_ms) -> None, or why serving ends ("eof", "interrupt"): waits at most
#       timeout_ms for input and calls channel.deliver(key, frame) for each whole message
#   opened(channel, key, session): a new client's session, whose link it sets
#   decode(channel, frame) -> the message, the session's link set to the one that answers it;
#       ValueError when the frame holds none (answered, or dropped and counted, already)
#
# A port supplies a byte stream: .buf (a bytearray), .recv(timeout_ms) -> the count of bytes
# placed at the start of .buf (0 on timeout, -1 at end of input), and .write(buf, n), which sends
# buf[:n], called once per message (a message longer than the output buffer: once per
# full-buffer chunk); buf may be the output buffer, to be consumed before write returns.
# MicroPython's streams take write(buf, n) themselves (sys.stdout.buffer, machine.UART, sockets):
# no slice of the buffer is made per message.
from tinymcp import framing, once
from tinymcp.clock import ticks_ms, ticks_diff
from tinymcp.jsonrpc import JsonLink, loads
from tinymcp.protocol import (INVALID_REQUEST, PARSE_ERROR, INTERNAL_ERROR, REASON,
                              FRAME_TOO_LONG, const)
from tinymcp.revision import HANDSHAKE
from tinymcp.server import describe


# What LineFramer.feed() found (its .event).
NOTHING = const(0)    # no complete frame yet (or a blank line)
FRAME = const(1)      # frame() holds one whole line
OVERSIZE = const(2)   # a line over the limit ended; its bytes were discarded as they came
INTERRUPT = const(3)  # a raw 0x03 byte: never valid inside JSON, means "give the REPL back"


class Channel:
    poll_ms = 200      # how often the idle work runs (subscribed resources checked)
    step_ms = 10       # the idle period while a generator tool runs (tinymcp/tasks.py)
    max_backlog = 8    # messages kept for a client while another client's handler runs

    def __init__(self, server, adapter):
        self.server = server
        self.adapter = adapter
        self.sessions = {}  # the adapter's key of a client -> its Session
        self.order = []     # those keys, oldest first (a list: it may grow while walked)
        self.stopped = None

    def run(self):
        # Serve until the input ends ("eof") or a 0x03 byte arrives ("interrupt"); an adapter
        # whose transport comes back (MQTT) raises instead, and its sessions are kept.
        adapter = self.adapter
        last_poll = ticks_ms()
        stepping = False
        self.stopped = None
        while self.stopped is None:  # (the client may close its side right after its last request)
            stopped = adapter.read(self, self.step_ms if stepping else self.poll_ms)
            if stopped is not None:
                self.stopped = stopped
            now = ticks_ms()
            polling = ticks_diff(now, last_poll) >= self.poll_ms
            if polling:
                last_poll = now
            stepping = self._turn(stepping, polling)
        for key in list(self.order):
            self.end(key)  # the link is gone: its outputs fail safe
        return self.stopped

    def pump(self, timeout_ms):
        # Session.pump, called from inside a handler: the input waiting is routed now
        # (cancellations, responses to our requests, pings); other requests wait their turn.
        if self.stopped is None:
            self.stopped = self.adapter.read(self, timeout_ms)

    def deliver(self, key, frame):
        # One message from the client the adapter knows by key (frame: valid until the next read).
        server = self.server
        current = server.session
        session = self.sessions.get(key)
        if session is None:  # a new client: a new session
            session = self.sessions[key] = server.open_session()
            self.order.append(key)
            session.pump = self.pump
            self.adapter.opened(self, key, session)
        if session is not current:
            if current is not None and current.call.busy:  # another client's handler runs:
                server.enter(current)  # this one waits its turn (opening a session entered it)
                if len(session.backlog) < self.max_backlog:
                    session.backlog.append(bytes(frame))
                return
            server.enter(session)
        self._dispatch(frame)

    def end(self, key):
        # The session of the client known by key ends (its link, or its goodbye): what it leased
        # goes back to its safe state.
        session = self.sessions.pop(key)
        self.order.remove(key)
        self.server.end_session(session)
        session.link = None
        session.pump = None
        del session.backlog[:]

    def _dispatch(self, frame):
        server = self.server
        session = server.session
        busy = session.call.busy
        raw = bytearray(frame) if busy else None  # for the backlog, before decoding
        try:
            msg = self.adapter.decode(self, frame)  # the session's link: the way back
        except ValueError:
            return  # answered or dropped by the adapter
        link = session.link
        if busy and (type(msg) is not dict or ("id" in msg and msg.get("method") is not None)):
            # A request while its session's handler runs: a ping is answered here (answer()
            # would reset the running request's id and cancel flag under the handler's feet),
            # others wait in the backlog as their raw frames. Cancellations and responses go on.
            rid = msg.get("id") if type(msg) is dict else None
            if (type(rid) is int or type(rid) is str) and msg["method"] == "ping" \
                    and session.revision is HANDSHAKE:
                link.result(rid, b"{}")
            else:
                session.backlog.append(raw)
            return
        try:
            server.answer(msg, link)
        except Exception as e:  # outside any handler: a module missing from the board, memory
            rid = msg.get("id") if type(msg) is dict else None
            link.error(rid if type(rid) is int or type(rid) is str else None, INTERNAL_ERROR,
                       "Internal error: " + describe(e))

    def _turn(self, stepping, polling):
        # The rest of a turn, each session entered in turn: what waited in its backlog served,
        # its long tools stepped (stepping), its subscribed resources watched (polling: the idle
        # hooks run once). -> whether a long tool is in progress: the next turn steps it.
        server = self.server
        sessions = self.sessions
        hooks = polling
        live = False
        for key in self.order:
            session = sessions[key]
            server.enter(session)
            backlog = session.backlog
            while backlog and self.stopped != "interrupt":
                self._dispatch(backlog.pop(0))
            work = session.work
            if work is not None and work.parked:  # a paused task whose answers came in runs on
                work.wake(server)
            if work is not None and work.live:
                if stepping:
                    work.step(server)
                live = live or work.live
            if polling:
                server.poll(hooks)
                hooks = False
        if hooks:  # nobody served yet
            server.poll()
        return live


class LineFramer:
    # A frame that arrives whole within one read is handed on as a view of the stream's own
    # buffer (no copy); one that spans reads is gathered into the line buffer, up to max_frame.
    max_frame = 4096

    def __init__(self, max_frame=None):
        if max_frame:
            self.max_frame = max_frame
        self.buf = bytearray(self.max_frame)
        self.view = memoryview(self.buf)
        self.fill = 0
        self.dropping = False
        self.event = NOTHING
        self._frame = None        # where the last frame lies: (view, start, end)
        self._start = 0
        self._stop = 0
        self._source = None       # the stream buffer last fed, and one view of it made once
        self._source_view = None

    def feed(self, data, pos, end):
        # Consume data[pos:end] up to and including the first newline; return the new
        # position and leave the outcome in self.event.
        self.event = NOTHING
        newline = data.find(b"\n", pos, end)
        stop = end if newline < 0 else newline
        if data.find(b"\x03", pos, stop) >= 0:
            self.event = INTERRUPT
            return end
        if data is not self._source:
            self._source = data
            self._source_view = memoryview(data)
        count = stop - pos
        if newline >= 0 and not self.fill and not self.dropping:
            if count > self.max_frame:
                self.event = OVERSIZE
            else:
                self._found(self._source_view, data, pos, stop)  # whole: no copy
            return newline + 1
        if count and not self.dropping:
            if self.fill + count > self.max_frame:
                self.dropping = True  # keep nothing of it; resume at the next newline
                self.fill = 0
            else:
                self.view[self.fill:self.fill + count] = self._source_view[pos:stop]
                self.fill += count
        if newline < 0:
            return end
        if self.dropping:
            self.dropping = False
            self.event = OVERSIZE
        else:
            self._found(self.view, self.buf, 0, self.fill)
        self.fill = 0
        return newline + 1

    def _found(self, view, data, start, stop):
        while stop > start and data[stop - 1] in b"\r \t":
            stop -= 1
        if stop > start:
            self._frame = view
            self._start = start
            self._stop = stop
            self.event = FRAME

    def frame(self):
        # The last frame, valid until the next feed() (a view of a buffer that is reused).
        return self._frame[self._start:self._stop]


class Lines:
    # A byte stream in front of the loop: its lines are the frames of one client, each JSON or,
    # once the client sends one, a CBOR link frame (tinymcp/cborlink.py); a frame is answered
    # the way it came.
    offer_cbor = True  # False: JSON lines only, even when tinymcp/cborlink.py is on the board

    def __init__(self, stream, max_frame=None):
        self.stream = stream
        self.framer = LineFramer(max_frame)
        self.json = JsonLink(framing.Out(stream.write))
        self.pos = 0
        self.end = 0
        self.cbor = None  # the CborLink from the first CBOR frame on; False: it has none

    def read(self, channel, timeout_ms):
        # Frames from the unread part of stream.buf, read again once all of it was; self.pos
        # moves before each delivery, so a handler that pumps continues from the right place.
        # A frame begun is read on while its bytes are there already: a cancel longer than
        # stream.buf (64 bytes on MicroPython's stdio) is seen by one pump, not half of it.
        framer = self.framer
        buf = self.stream.buf
        while True:
            if self.pos >= self.end:
                n = self.stream.recv(timeout_ms)
                if n < 0:
                    return "eof"
                self.pos = 0
                self.end = n
                if n == 0:
                    return None
            while self.pos < self.end and channel.stopped is None:
                self.pos = framer.feed(buf, self.pos, self.end)
                event = framer.event
                if event == FRAME:
                    channel.deliver(None, framer.frame())
                elif event == OVERSIZE:
                    limit = framer.max_frame
                    self.json.error(None, INVALID_REQUEST, "Invalid Request: frame longer than "
                                    + str(limit) + " bytes, discarded",
                                    {REASON: FRAME_TOO_LONG, "limit": limit})
                elif event == INTERRUPT:
                    return "interrupt"
            if not framer.fill or channel.stopped is not None:
                return None
            timeout_ms = 0

    def opened(self, channel, key, session):
        session.link = self.json
        session.link_modes = once("tinymcp.linkmode.offer", channel.server, self)  # released after

    def decode(self, channel, frame):
        session = channel.server.session
        link = self.json
        if 0xA0 <= frame[0] <= 0xBF and self.cbor is not False:  # a CBOR map; JSON is ASCII
            if self.cbor is None:  # the first CBOR frame: the link, or an error said once
                self.cbor = once("tinymcp.linkmode.cbor", channel.server, self)
                if not self.cbor:
                    raise ValueError
            link = self.cbor
            msg = link.decode(frame)  # unescapes the line buffer in place; answers what it refuses
        else:
            try:
                msg = loads(frame)
            except Exception:  # ValueError or UnicodeError, by runtime
                link.error(None, PARSE_ERROR, "Parse error: not valid UTF-8 JSON")
                raise ValueError
        session.link = link  # unsolicited output follows the last good frame's kind
        return msg
