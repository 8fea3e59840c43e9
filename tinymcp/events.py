# What the board noticed, in one bounded ring every delivery path can read: alert crossings (from
# tinymcp/history.py), list changes, resource updates, task ends; `wait_for_event` hands them to
# any host, since tools are the one primitive every host shows.
#
#   events = attach(server)          -> the tool wait_for_event; server.events is the ring
#   events.add("alert", uri, quantity, value, unit, t_ms, {"crossed": "above", "level": 25.0})
#
# Each event gets the next sequence number; a cursor is "EPOCH.SEQ", the epoch drawn at boot, so
# a cursor from before a reset, or older than the ring still holds, gets everything the ring has
# with "missed": true rather than silently skipping what was lost.
from tinymcp.clock import ticks_diff, ticks_ms

try:
    from os import urandom
except ImportError:  # ports without os.urandom
    urandom = None

# An entry: (kind, t_ms, uri, quantity, value, unit, more): a tuple of the fields events have,
# `more` a dict of the rarer ones (or None); turned into the wire's dict only when read.
_NAMES = ("kind", "t_ms", "uri", "quantity", "value", "unit")
MAX_WAIT_S = 50      # under the 60 s most hosts give a tool call
STEP_MS = 1000       # how often a wait reports its progress


def _epoch():
    if urandom is not None:
        try:
            return "%02x%02x%02x" % tuple(urandom(3))
        except (OSError, NotImplementedError):
            pass
    from random import getrandbits
    return "%06x" % getrandbits(24)


class Events:
    size = 16            # events kept; a cursor older than that gets all and "missed"

    def __init__(self, size=None, clock=ticks_ms):
        self.ring = [None] * (size or self.size)   # allocated once; entry seq % size
        self.seq = 0         # sequence number of the newest event (0: none yet)
        self.epoch = _epoch()
        self.clock = clock
        self.start = clock()
        self._told = None    # the uri the newest event announced: its resource update is that event

    def add(self, kind, uri=None, quantity=None, value=None, unit=None, t_ms=None, more=None):
        if t_ms is None:
            t_ms = ticks_diff(self.clock(), self.start)  # ms since the ring was made (boot)
        self.seq += 1
        ring = self.ring
        ring[self.seq % len(ring)] = (kind, t_ms, uri, quantity, value, unit, more)
        self._told = uri
        return self.seq

    def changed(self, kind):
        # Server.changed: a list of tools/resources/prompts changed.
        self.add(kind + "_changed")

    def updated(self, uri):
        # Server.resource_updated: one event, unless the event just added already said it.
        if self._told == uri:
            self._told = None
            return
        self.add("resource_updated", uri)

    def task_ended(self, task_id, status):
        # For the task runner (tinymcp/tasks.py) to call where a task ends.
        self.add("task_ended", more={"taskId": task_id, "status": status})

    def cursor(self):
        return self.epoch + "." + str(self.seq)

    def after(self, cursor):
        # -> (first sequence number to give, missed) for a caller's cursor (None: all kept).
        oldest = self.seq - len(self.ring) + 1
        if oldest < 1:
            oldest = 1
        if cursor is None:
            return oldest, False
        epoch, dot, seq = cursor.partition(".")
        if not dot or not seq.isdigit():
            raise ValueError("after: not a cursor wait_for_event gave (\"" + cursor[:40] + "\")")
        seq = int(seq)
        if epoch != self.epoch or seq > self.seq:  # the board was reset since
            return oldest, True
        if seq + 1 < oldest:  # the ring went round past it
            return oldest, True
        return seq + 1, False

    def since(self, first):
        # The events from sequence number `first` on, oldest first, as the wire's dicts.
        found = []
        ring = self.ring
        for seq in range(first, self.seq + 1):
            entry = ring[seq % len(ring)]
            event = {}
            for i in range(len(_NAMES)):
                if entry[i] is not None:
                    event[_NAMES[i]] = entry[i]
            more = entry[6]
            if more:
                for key in more:
                    event[key] = more[key]
            found.append(event)
        return found

    def result(self, first, missed):
        out = {"events": self.since(first), "cursor": self.cursor()}
        if missed:
            out["missed"] = True
        return out

    def wait(self, after=None, timeout_s=None):
        # wait_for_event as a generator tool: stepped by the serve loop while the board keeps
        # answering; yields its progress once a second, returns the result.
        first, missed = self.after(after)
        if self.seq < first and not missed:
            timeout_ms = int((MAX_WAIT_S if timeout_s is None else timeout_s) * 1000)
            clock = self.clock
            began = clock()
            told = 0
            while self.seq < first:
                waited = ticks_diff(clock(), began)
                if waited >= timeout_ms:
                    break
                if waited - told >= STEP_MS:
                    told = waited
                    yield waited / timeout_ms
                else:
                    yield None
        return self.result(first, missed)


def attach(server, events=None, timeout_s=25):
    # The ring on this server (its changes and updates go in) and the tool that reads it.
    from tinymcp.schema import array, boolean, number, string
    events = events or Events()
    server.events = events

    @server.tool("wait_for_event", "Wait for what the board notices: alert crossings (set_alert), "
                 "list changes, resource updates. Returns at once when there are events newer "
                 "than `after` (the cursor the last call returned; none: every event kept), else "
                 "waits up to timeout_s (default " + str(timeout_s) + ") and returns an empty list. "
                 "Call again with the cursor to go on waiting without repeats.",
                 inputs={"after?": string("The cursor a previous call returned"),
                         "timeout_s?": number("Longest wait in seconds", 0, MAX_WAIT_S)},
                 outputs={"events": array({"type": "object"}, "Oldest first; each has kind"),
                          "cursor": string("Pass as after to wait for the next ones"),
                          "missed?": boolean("Some events since the cursor were lost "
                                             "(a reset, or more than the board keeps)")},
                 title="Wait for event", read_only=True, open_world=False)
    def wait_for_event(after=None, timeout_s=timeout_s):
        # Inside a JSON-RPC batch a long tool runs to its end inline: no wait there.
        return events.wait(after, 0 if server.batch is not None else timeout_s)

    return events
