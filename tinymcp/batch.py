# JSON-RPC batches, in a 2025-03-26 session only: an array of requests and notifications is
# answered with one array of their answers, one frame that leaves through the channel's output
# buffer answer by answer, never built whole. Loaded with the first batch.
from tinymcp.jsonrpc import JsonLink
from tinymcp.protocol import INVALID_REQUEST


class Batch:
    # An Out over the channel's Out: each answer is written as always, with "[" or "," before it
    # and no newline after it; close() ends the array. While it is open nothing else may be
    # written on the line, so what the server sends meanwhile (log messages, list changes) is
    # held and sent after it, at most max_held messages; and no input is read (the session's
    # pump is put away), since a ping answered then would land inside the array.
    max_held = 8

    def __init__(self, session, link, answer, send):
        # answer(msg, link): serves one message (Server.answer); send(msg): what the server
        # sent meanwhile, once the array is closed (Server.send).
        self.out = link.out
        self.error = link.error   # for a batch refused whole
        self.answer = answer
        self.send = send
        self.sep = b"["
        self.fresh = True   # the next write starts an answer
        self.held = []
        self.link = JsonLink(self)  # what the answers inside the array go through
        self.session = session
        self.pump = session.pump
        session.pump = None
        session.batch = self

    def _start(self):
        if self.fresh:
            self.fresh = False
            self.out.put(self.sep)

    def put(self, piece):
        self._start()
        self.out.put(piece)

    def json(self, value):
        self._start()
        self.out.json(value)

    def mirror(self, value, middle, again):
        self._start()
        return self.out.mirror(value, middle, again)

    def end(self):
        self.out.end(b"")
        self.sep = b","
        self.fresh = True

    def reset(self):  # drop the answer half written; its separator goes out again with the next
        self.out.reset()
        self.fresh = True

    def hold(self, msg):
        if len(self.held) < self.max_held:
            self.held.append(msg)

    def serve(self, messages):
        # Each message in order, their answers one array.
        if not messages:
            self._restore()
            self.error(None, INVALID_REQUEST, "Invalid Request: an empty batch")
            return
        try:
            for msg in messages:
                if type(msg) is dict and (msg.get("method") != "initialize" or "id" not in msg):
                    self.answer(msg, self.link)
                else:  # what a batch may not hold: its error is that answer
                    self.refuse(msg)
        finally:
            self.close()
        for held in self.held:
            self.send(held)

    def refuse(self, msg):
        # The answer, in the array, to a message a batch may not hold.
        if type(msg) is list:
            self.link.error(None, INVALID_REQUEST, "Invalid Request: a batch cannot hold a batch")
        elif type(msg) is dict:  # initialize, as a request
            rid = msg["id"]
            self.link.error(rid if type(rid) is int or type(rid) is str else None,
                            INVALID_REQUEST, "Invalid Request: initialize must not be part of "
                                             "a JSON-RPC batch")
        else:
            self.link.error(None, INVALID_REQUEST, "Invalid Request: expected a JSON object")

    def close(self):
        self._restore()
        if self.sep == b",":  # at least one answer was written: the frame ends
            self.out.put(b"]")
            self.out.end()

    def _restore(self):
        session = self.session
        session.batch = None
        session.pump = self.pump
