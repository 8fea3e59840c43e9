# One handshake-era session of the HTTP front (2025-03-26 .. 2025-11-25): its POST, GET and DELETE,
# the SSE streams they open, and the recent events a client resumes from. The bridge's own code:
# the host's answers go out as the bytes they were made as (a board's, spliced), no models.
import asyncio
import collections
import logging

from tinymcp.protocol import VERSIONS

from tinymcp.host.bridge.express import ExpressLane
from tinymcp.host.bridge.guard import reject
from tinymcp.host.bridge.wire import Encoded, dump

log = logging.getLogger("tinymcp.bridge.http")

GET = None               # the key of the session's GET stream (a request's: str(its id))
RETRY_MS = 1000          # how soon a client whose SSE stream closed should come back for the rest
PING_SECONDS = 15.0      # an SSE comment this often keeps a silent stream open through proxies
HEAD_SECONDS = 0.5       # a POST's SSE headers wait this long for its first message: most answers
                         # come before, and go out with them in one write
MAX_WAITING = 256        # notifications waiting for a host that does not read; more are dropped
CANCELLED = -32800       # answers a request that ended without a reply (this era ends a stream
                         # only with a response; the SDK's REQUEST_CANCELLED)
RESUMABLE_SINCE = "2025-11-25"   # SEP-1699: priming events (an id, retry:) from this version on
SSE_HEADERS = [(b"content-type", b"text/event-stream"),
               (b"cache-control", b"no-cache, no-transform"),
               (b"connection", b"keep-alive"), (b"x-accel-buffering", b"no")]
PING = b": ping\r\n\r\n"


def accepts(headers):
    # -> (JSON, SSE) the Accept header allows, wildcards as RFC 9110 has them.
    kinds = [part.split(";", 1)[0].strip().lower()
             for part in headers.get("accept", "").split(",")]
    anything = "*/*" in kinds
    return (anything or "application/json" in kinds or "application/*" in kinds,
            anything or "text/event-stream" in kinds or "text/*" in kinds)


def post_refusal(headers, msg):
    # The checks of a session's POST before its message is taken (the SDK transport's, which
    # clients and the conformance suites rely on) -> the Response refusing it, or None.
    has_json, has_sse = accepts(headers)
    if not (has_json and has_sse):
        return reject(406, "Not Acceptable: Client must accept both application/json and "
                      "text/event-stream")
    kinds = [part.strip() for part in
             headers.get("content-type", "").split(";", 1)[0].split(",")]
    if "application/json" not in kinds:
        return reject(415, "Unsupported Media Type: Content-Type must be application/json")
    why = not_jsonrpc(msg)
    if why is not None:
        rid = msg.get("id") if type(msg) is dict else None
        return reject(400, "Invalid Request: " + why,
                      rid=rid if type(rid) in (int, str) else None)
    return None


def _is_id(value):
    return type(value) in (int, str)   # never a bool, a float or null


def not_jsonrpc(msg):
    # Why msg is no JSON-RPC 2.0 request, notification or response, or None when it is one.
    if type(msg) is not dict:
        return "the body must be one JSON-RPC message (an object)"
    if msg.get("jsonrpc") != "2.0":
        return '"jsonrpc" must be "2.0"'
    if "method" in msg:
        if type(msg["method"]) is not str:
            return '"method" must be a string'
        if msg.get("params") is not None and type(msg["params"]) is not dict:
            return '"params" must be an object'
        if "id" in msg and not _is_id(msg["id"]):
            return '"id" must be a string or an integer'
        return None
    if "result" in msg and "error" not in msg:
        if not _is_id(msg.get("id")):
            return '"id" must be a string or an integer'
        return None if type(msg["result"]) is dict else '"result" must be an object'
    if "error" in msg and "result" not in msg:
        error = msg["error"]
        if msg.get("id") is not None and not _is_id(msg["id"]):
            return '"id" must be a string, an integer or null'
        if (type(error) is not dict or type(error.get("code")) is not int
                or type(error.get("message")) is not str):
            return '"error" must be an object with an integer code and a string message'
        return None
    return "a message needs a method, or one of result and error"


def primes(version):
    # Whether a stream of a session at this version starts with a priming event.
    return version in VERSIONS and version >= RESUMABLE_SINCE


class RecentEvents:
    # The last events of one session's SSE streams, so a client that lost a stream resumes it
    # with Last-Event-ID. Bounded in count and bytes: a long-gone stream cannot be replayed, and
    # a session nobody reads costs little. An event: (stream key, its data or None for a
    # priming event, whether it ends its stream).
    keep = 128
    keep_bytes = 128 << 10

    def __init__(self):
        self.events = collections.OrderedDict()   # event id -> (stream key, data, final)
        self.size = 0
        self.next_id = 1

    def add(self, key, data, final=False):
        # -> the new event's id.
        event_id = self.next_id
        self.next_id += 1
        self.events[event_id] = (key, data, final)
        if data is not None:
            self.size += len(data)
        while len(self.events) > self.keep or (self.size > self.keep_bytes
                                                and len(self.events) > 1):
            dropped = self.events.popitem(last=False)[1][1]
            self.size -= len(dropped) if dropped is not None else 0
        return event_id

    def after(self, event_id):
        # -> (stream key, [(id, data, final)] of its events after event_id), or None when
        # event_id is not kept (too old, or never this session's).
        found = self.events.get(event_id)
        if found is None:
            return None
        key = found[0]
        return key, [(eid, data, final) for eid, (k, data, final) in self.events.items()
                     if eid > event_id and k == key and data is not None]


def message_event(event_id, data):
    return b"id: %d\r\nevent: message\r\ndata: %s\r\n\r\n" % (event_id, data)


class Backlog:
    # What a host has waiting, by one rule for every stream and outbox of the front: a host that
    # stops reading loses notifications beyond MAX_WAITING (counted, logged once per stall);
    # responses and requests always wait (as many as the host has requests in flight).
    __slots__ = ("label", "dropped")

    def __init__(self, label):
        self.label = label
        self.dropped = 0

    def admits(self, waiting, notification):
        # -> whether one more message may wait beside the `waiting` ones.
        if notification and waiting >= MAX_WAITING:
            if not self.dropped:
                log.warning("%s is not reading: dropping its notifications", self.label)
            self.dropped += 1
            return False
        if self.dropped and not waiting:
            log.info("%s reads again; %d notifications were dropped", self.label, self.dropped)
            self.dropped = 0
        return True


class SseStream(Backlog):
    # What waits to go out on one open SSE response, in order, and whether its last message
    # (the response to its request) is among it; the response always waits (Backlog).
    __slots__ = ("chunks", "final", "closed", "waiter")

    def __init__(self, label):
        super().__init__(label)
        self.chunks = []
        self.final = False
        self.closed = False    # the session ended, or another response took this stream over
        self.waiter = None

    def put(self, chunk, final=False):
        if not self.admits(len(self.chunks), not final):
            return
        self.chunks.append(chunk)
        self.final = self.final or final
        self._wake()

    def close(self):
        self.closed = True
        self._wake()

    def _wake(self, _=None):
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def take(self, timeout):
        # -> what waits (maybe nothing, after timeout seconds, or once closed).
        if not self.chunks and not self.closed:
            loop = asyncio.get_running_loop()
            self.waiter = loop.create_future()
            timer = loop.call_later(timeout, self._wake)
            try:
                await self.waiter
            finally:
                timer.cancel()
                self.waiter = None
        chunks, self.chunks = self.chunks, []
        return chunks


class LaneStream(SseStream):
    # The stream of a POST the express lane holds (StreamableSession.express): whatever comes for
    # it is told to told() while its response has not begun, and waits as on any stream after.
    __slots__ = ("told",)

    def _wake(self, _=None):
        told = self.told
        if told is None:
            SseStream._wake(self)
        else:
            told()


class StreamableSession:
    # One session: hosts.open_session's HostSession (self.host) behind POST, GET and DELETE.
    # ended(session) is called once it has ended (DELETE, idle, or closed for room).

    def __init__(self, sid, hosts, ended):
        self.sid = sid
        self.ended = False
        self._on_end = ended
        self.events = RecentEvents()
        self.streams = {}   # stream key (str(request id), or GET) -> its open SseStream
        self.head = [(b"mcp-session-id", sid.encode())]
        self.label = "http session " + sid[:8]
        self.host = hosts.open_session(self._deliver, "http " + sid[:8], self._unanswered)
        self.lane = ExpressLane(self.host, hosts.router, self.answered)
        self._late = collections.deque()   # (when, LaneStream, slow) of the lane's held POSTs
        self._late_timer = None

    # -- the host's messages, to the stream each belongs to -------------------------------------

    def _deliver(self, msg, related=None):
        # A response goes to its request's stream; a request or notification about one of the
        # host's requests to that request's stream; the rest (and what belongs to a batch's
        # request, which has no stream) to the GET stream. Each is kept for a resume whether or
        # not its stream is open now.
        if self.ended:
            return
        final = "method" not in msg
        if final:
            rid = msg.get("id")
            key = GET if rid is None else str(rid)
        elif related is not None and related not in self.host.batched:
            key = str(related)
        else:
            key = GET
        data = msg.data if type(msg) is Encoded else None
        if data is None or b"\r" in data:   # a CR would end an SSE line
            data = dump(msg).encode()
        self._add(key, data, final and key != GET)

    def _add(self, key, data, final):
        # One message's JSON to the stream `key`, kept for a resume whether it is open or not.
        event_id = self.events.add(key, data, final)
        stream = self.streams.get(key)
        if stream is not None:
            stream.put(message_event(event_id, data), final)

    def answered(self, rid, data):
        # The express lane's answer to request rid: its JSON, made (no CR: express.py).
        if not self.ended:
            self._add(str(rid), data, True)

    def _unanswered(self, rid):
        # The host's request ended without a reply (cancelled): this era's stream ends with a
        # response, so it gets one. A batch's request has no stream: its batch says enough.
        if not self.ended and rid not in self.host.batched:
            self._deliver({"jsonrpc": "2.0", "id": rid,
                           "error": {"code": CANCELLED, "message": "Request cancelled"}})

    def end(self):
        # The session ends: its host session closes, its open streams end.
        if self.ended:
            return
        self.ended = True
        self.host.close()
        for stream in list(self.streams.values()):
            stream.close()   # a held POST's too: its response is written now (express)
        self.streams.clear()
        if self._late_timer is not None:
            self._late_timer.cancel()
            self._late_timer = None
        self._late.clear()
        self._on_end(self)

    # -- HTTP -----------------------------------------------------------------------------------

    async def handle(self, method, headers, msg, scope, receive, send):
        if method == "POST":
            refusal = post_refusal(headers, msg)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
            await self.post(msg, headers, scope, receive, send)
        elif method == "GET":
            await self.get(headers, scope, receive, send)
        elif method == "DELETE":
            self.end()
            await self._plain(send, 200)
        else:
            await reject(405, "Method Not Allowed", headers={
                "Allow": "GET, POST, DELETE", "mcp-session-id": self.sid})(scope, receive, send)

    async def _plain(self, send, status):
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", b"0")] + self.head})
        await send({"type": "http.response.body", "body": b""})

    async def post(self, msg, headers, scope, receive, send):
        # One checked message: a notification or a response is taken (202); a request is
        # answered on an SSE stream of its own, which ends with its response.
        if "method" not in msg or "id" not in msg:
            await self._plain(send, 202)
            self.host.receive(msg)
            return
        rid = msg["id"]
        key = str(rid)
        if key in self.streams:
            await reject(400, "Invalid Request: id %r is in use by a request still in flight"
                         % (rid,), rid=rid)(scope, receive, send)
            return
        version = self.host.version
        if version is None:
            params = msg.get("params")
            asked = params.get("protocolVersion") if msg["method"] == "initialize" and type(
                params) is dict else None
            version = asked if type(asked) is str else headers.get("mcp-protocol-version")
        stream = self.streams[key] = SseStream(self.label)
        first = self._priming(key, version)
        self.host.receive(msg)
        await self._pour(key, stream, first, HEAD_SECONDS, receive, send)

    def express(self, headers, msg, line, respond, hand_over):
        # A POST of this session's that the express lane may serve (express.py), headers (a
        # mapping of the few the checks read) and msg (decoded from line) checked by the Guard
        # and the front as they check any -> True when it is served so, False when it takes the
        # general way (nothing was done). Its answer is written as _pour would write it: by
        # respond(status, headers, body), the whole stream at once; or, when it takes longer
        # than HEAD_SECONDS, by _pour itself, in the ASGI app hand_over(pour) starts
        # (pour(receive, send) -> what it awaits).
        lane = self.lane
        if self.ended or post_refusal(headers, msg) is not None:
            return False
        route = lane.route(msg, line)
        if route is None:
            return False
        rid = msg["id"]
        key = str(rid)
        if key in self.streams:
            return False   # the general way refuses it
        stream = self.streams[key] = LaneStream(self.label)
        first = self._priming(key, self.host.version)

        def told():
            # Something for the stream: its end (the response, or the session's end) writes it
            # whole; anything else (a notification about the call) starts it as _pour would.
            if not (stream.final or stream.closed):
                slow()
                return
            stream.told = None
            chunks, stream.chunks = stream.chunks, []
            body = b"".join([first] + chunks) if first else b"".join(chunks)
            if self.streams.get(key) is stream:
                del self.streams[key]
            respond(200, SSE_HEADERS + self.head + [(b"content-length", b"%d" % len(body))],
                    body)

        def slow():
            # No answer within HEAD_SECONDS: the stream goes on as any (its headers now).
            stream.told = None
            hand_over(lambda receive, send: self._pour(key, stream, first, 0, receive, send))
        stream.told = told
        self._held(stream, slow)
        # Its frame joins whatever else this turn of the loop sends the board, as on the
        # general way (a serial board's: Link.write).
        lane.relay(rid, route, False)
        return True

    def _held(self, stream, slow):
        # slow() is called HEAD_SECONDS from now unless the stream's response was written by
        # then (stream.told None): one timer for the session's held POSTs, not one each (they
        # all wait as long, so they are due in the order they came).
        late = self._late
        while late and late[0][1].told is None:   # answered: forgotten
            late.popleft()
        loop = asyncio.get_running_loop()
        late.append((loop.time() + HEAD_SECONDS, stream, slow))
        if self._late_timer is None:
            self._late_timer = loop.call_at(late[0][0], self._due)

    def _due(self):
        self._late_timer = None
        late = self._late
        loop = asyncio.get_running_loop()
        now = loop.time()
        while late:
            when, stream, slow = late[0]
            if stream.told is not None and when > now:
                self._late_timer = loop.call_at(when, self._due)
                return
            late.popleft()
            if stream.told is not None:
                slow()

    def _priming(self, key, version):
        # The SSE priming event of a stream (SEP-1699): an id to resume from and how soon to
        # come back, for a client whose version reads it; else nothing.
        if not primes(version):
            return b""
        return b"id: %d\r\ndata: \r\nretry: %d\r\n\r\n" % (self.events.add(key, None), RETRY_MS)

    async def get(self, headers, scope, receive, send):
        # The standalone stream (one per session), or a resumed one (Last-Event-ID).
        if not accepts(headers)[1]:
            await reject(406, "Not Acceptable: Client must accept text/event-stream")(
                scope, receive, send)
            return
        last = headers.get("last-event-id")
        if last:   # empty: no event seen yet
            await self._resume(last, headers, scope, receive, send)
            return
        if GET in self.streams:
            await reject(409, "Conflict: Only one SSE stream is allowed per session")(
                scope, receive, send)
            return
        stream = self.streams[GET] = SseStream(self.label)
        await self._pour(GET, stream, b"", 0, receive, send)

    async def _resume(self, last, headers, scope, receive, send):
        # What the stream of event `last` carried after it, then the stream itself when it
        # has not ended (its response not yet sent): the client lost its connection to it.
        found = self.events.after(int(last)) if last.isdigit() and len(last) <= 18 else None
        if found is None:
            await reject(400, "Bad Request: Last-Event-ID %r names no event this session still "
                         "keeps (the last %d are kept)" % (last[:40], RecentEvents.keep))(
                             scope, receive, send)
            return
        key, backlog = found
        stream = SseStream(self.label)
        stream.chunks = [message_event(eid, data) for eid, data, _final in backlog]
        stream.final = any(final for _eid, _data, final in backlog)
        if not stream.final:
            old = self.streams.get(key)
            if old is not None:
                old.close()   # the client says it lost it: this one carries it on
            self.streams[key] = stream
            stream.chunks.append(self._priming(key, self.host.version))
        await self._pour(key, stream, b"", 0, receive, send)

    async def _pour(self, key, stream, first, head_wait, receive, send):
        # Write stream out as SSE until its response (or the session's end, or the client's).
        # The headers wait up to head_wait for the first message, to go out in one write
        # with it; then a disconnect is watched for, and a ping sent when nothing else is.
        started = False
        gone = None
        wait = head_wait
        try:
            while True:
                chunks = await stream.take(wait)
                done = stream.final or stream.closed
                if not started:
                    started = True
                    chunks = [first] + chunks if first else chunks
                    if done:   # the whole stream is here: its length is known, no chunking
                        body = b"".join(chunks)
                        await send({"type": "http.response.start", "status": 200,
                                    "headers": SSE_HEADERS + self.head + [
                                        (b"content-length", b"%d" % len(body))]})
                        await send({"type": "http.response.body", "body": body})
                        return
                    await send({"type": "http.response.start", "status": 200,
                                "headers": SSE_HEADERS + self.head})
                    if not done:
                        gone = asyncio.ensure_future(_disconnected(receive))
                        gone.add_done_callback(lambda _: stream.close())
                elif not chunks and not done:
                    chunks = [PING]
                await send({"type": "http.response.body", "body": b"".join(chunks),
                            "more_body": not done})
                if done:
                    return
                wait = PING_SECONDS
        except OSError:
            return   # the client went away mid-stream; its events stay kept for a resume
        finally:
            if gone is not None:
                gone.cancel()
            if self.streams.get(key) is stream:
                del self.streams[key]


async def _disconnected(receive):
    # Returns when the client closes the connection.
    while (await receive()).get("type") != "http.disconnect":
        pass
