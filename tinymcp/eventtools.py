# Reading the ring of events (tinymcp/events.py): cursors, wait_for_event's wait, the wire's
# dicts, and the tool's registration. Loaded for each call and released after it (tinymcp.once);
# the bridge's own wait_for_event (tinymcp/host/bridge/events.py) reads its ring with these too.
#
# Each event gets the next sequence number; a cursor is "EPOCH.SEQ", the epoch drawn once a boot, so
# a cursor from before a reset, or older than the ring still holds, gets everything the ring has
# with "missed": true rather than silently skipping what was lost.
from tinymcp import once
from tinymcp.clock import ticks_diff

try:
    from os import urandom
except ImportError:  # ports without os.urandom
    urandom = None

_NAMES = ("kind", "t_ms", "uri", "quantity", "value", "unit")   # an entry's fields, in order
MAX_WAIT_S = 50      # under the 60 s most hosts give a tool call
STEP_MS = 1000       # how often a wait reports its progress


def register(server, body, timeout_s):
    # At build: the tool, its body a stub in events.py that loads this module.
    from tinymcp.schema import array, boolean, number, string
    server.tool("wait_for_event", "Wait for what the board notices: alert crossings (set_alert), "
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
                title="Wait for event", read_only=True, open_world=False)(body)


def epoch(events):
    # The ring's epoch, drawn once per boot (on its first use): no cursor exists before it.
    if events.epoch is None:
        events.epoch = _draw()
    return events.epoch


def _draw():
    if urandom is not None:
        try:
            return "%02x%02x%02x" % tuple(urandom(3))
        except (OSError, NotImplementedError):
            pass
    from random import getrandbits
    return "%06x" % getrandbits(24)


def cursor(events):
    return epoch(events) + "." + str(events.seq)


def after(events, cursor):
    # -> (first sequence number to give, missed) for a caller's cursor (None: all kept).
    oldest = events.seq - len(events.ring) + 1
    if oldest < 1:
        oldest = 1
    if cursor is None:
        return oldest, False
    given, dot, seq = cursor.partition(".")
    if not dot or not seq.isdigit():
        raise ValueError("after: not a cursor wait_for_event gave ("
                         + once("tinymcp.echo.shown", cursor, '"') + ")")
    seq = int(seq)
    if given != epoch(events) or seq > events.seq:  # the board was reset since
        return oldest, True
    if seq + 1 < oldest:  # the ring went round past it
        return oldest, True
    return seq + 1, False


def since(events, first):
    # The events from sequence number `first` on, oldest first, as the wire's dicts.
    found = []
    ring = events.ring
    for seq in range(first, events.seq + 1):
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


def result(events, first, missed):
    out = {"events": since(events, first), "cursor": cursor(events)}
    if missed:
        out["missed"] = True
    return out


def wait(server, events, given=None, timeout_s=None):
    # wait_for_event as a generator tool: stepped by the serve loop while the board keeps
    # answering; yields its progress once a second, returns the result.
    first, missed = after(events, given)
    if events.seq < first and not missed:
        timeout_ms = int((MAX_WAIT_S if timeout_s is None else timeout_s) * 1000)
        clock = events.clock
        began = clock()
        told = 0
        while events.seq < first:
            waited = ticks_diff(clock(), began)
            if waited >= timeout_ms:
                break
            if waited - told >= STEP_MS:
                told = waited
                yield waited / timeout_ms
            else:
                yield None
    return result(events, first, missed)
