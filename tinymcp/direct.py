# A server driven without a channel, as tests, hosts and the benchmarks do: Server.handle() (one
# JSON frame in, its encoded answer out) and the outbox that keeps what the server sends
# meanwhile. A board's serve loop (tinymcp/channel.py) never loads it.
from tinymcp.framing import Out
from tinymcp.jsonrpc import JsonLink, loads
from tinymcp.protocol import PARSE_ERROR


class Direct:
    # One per server, made with its first handle() or send() without a channel. The answers and
    # the outbox share one link and its Out (one message is written whole before the next
    # starts): Direct is the outbox's link, which marks what it writes as kept.
    keeping = False  # a message for server.outbox is being written

    def __init__(self, server):
        self.server = server
        # What handle() answers through. 384 B buffers, not the serve loop's 512: each answer is
        # copied out whole anyway, so a smaller one only sends a longer answer in more pieces
        # (joined once) or makes its text mirror a str; the benchmark boards' answers fit, and a
        # session driven through handle() holds 256 B less (docs/ram.md, "Cuts (session 9)").
        self.link = JsonLink(Out(self._write, 384))
        self.outbox = self                      # everything else: into server.outbox
        self.answer = None
        self.parts = []  # the pieces of the outbox's message being written

    def handle(self, frame):
        if self.server.session is None:  # the first frame: a session of handle()'s own
            self.server.open_session()
        self.answer = []
        try:
            msg = loads(frame)
        except Exception:  # ValueError or UnicodeError, by runtime
            self.link.error(None, PARSE_ERROR, "Parse error: not valid UTF-8 JSON")
        else:
            self.server.answer(msg, self.link)
        answer = self.answer
        self.answer = None
        if not answer:
            return None
        answer[-1] = answer[-1][:-1]  # the newline the link ended it with
        return answer[0] if len(answer) == 1 else b"".join(answer)

    # -- the outbox's link: notifications, requests to the client, a task's late answer (each
    # written out in full here: a bound method or an argument tuple would be allocated per message)

    def send(self, msg):
        self.keeping = True
        try:
            self.link.send(msg)
        finally:
            self._kept()

    def result(self, rid, result):
        self.keeping = True
        try:
            self.link.result(rid, result)
        finally:
            self._kept()

    def error(self, rid, code, message, data=None):
        self.keeping = True
        try:
            self.link.error(rid, code, message, data)
        finally:
            self._kept()

    def _kept(self):
        # One outbox entry per message, however many pieces the Out sent it in (a message longer
        # than its buffer leaves in full-buffer chunks).
        self.keeping = False
        parts = self.parts
        if parts:
            self.server.outbox.append(parts[0] if len(parts) == 1 else b"".join(parts))
            del parts[:]

    def _write(self, data, n):
        (self.parts if self.keeping else self.answer).append(_copy(data, n))


def _copy(data, n):
    # data[:n] as bytes of its own: the output buffer is reused, a cached page is not.
    if type(data) is bytes and n == len(data):
        return data
    return bytes(memoryview(data)[:n])
