# JSON-RPC batches, in a 2025-03-26 session only: an array of requests and notifications is
# answered with one array of their answers, one frame that leaves through the channel's output
# buffer answer by answer, never built whole. Loaded with the first batch.
from tinymcp.jsonrpc import JsonLink
from tinymcp.protocol import INVALID_REQUEST


class Batch:
    # An Out over the channel's Out: each answer is written as always, with "[" or "," before it
    # and no newline after it; close() ends the array. While it is open nothing else may be
    # written on the line, so what the server sends meanwhile (log messages, list changes) is
    # held and sent after it, at most max_held messages.
    max_held = 8

    def __init__(self, out):
        self.out = out
        self.sep = b"["
        self.fresh = True   # the next write starts an answer
        self.held = []

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

    def close(self):
        if self.sep == b",":  # at least one answer was written: the frame ends
            self.out.put(b"]")
            self.out.end()


def answer(server, messages, link):
    # Serve each message of the batch in order, their answers written through link's Out.
    if not messages:
        link.error(None, INVALID_REQUEST, "Invalid Request: an empty batch")
        return
    batch = Batch(link.out)
    inner = JsonLink(batch)
    pump = server.pump
    server.pump = None   # no input is read meanwhile: a ping answered now would land inside
    server.batch = batch
    try:
        for msg in messages:
            if type(msg) is list:
                inner.error(None, INVALID_REQUEST, "Invalid Request: a batch cannot hold a batch")
            elif type(msg) is dict and msg.get("method") == "initialize" and "id" in msg:
                rid = msg["id"]
                inner.error(rid if type(rid) is int or type(rid) is str else None,
                            INVALID_REQUEST, "Invalid Request: initialize must not be part of "
                                             "a JSON-RPC batch")
            else:
                server.answer(msg, inner)
    finally:
        server.batch = None
        server.pump = pump
        batch.close()
    for msg in batch.held:
        server.send(msg)
