# What the board noticed, in one bounded ring every delivery path can read: alert crossings (from
# tinymcp/history.py), list changes, resource updates, task ends; `wait_for_event` hands them to
# any host, since tools are the one primitive every host shows.
#
#   events = attach(server)          -> the tool wait_for_event; server.events is the ring
#   events.add("alert", uri, quantity, value, unit, t_ms, {"crossed": "above", "level": 25.0})
#
# This module is what runs all the time: the ring and what goes into it. Reading it (cursors,
# the wait, the wire's dicts) is tinymcp/eventtools.py, loaded for each wait_for_event call.
from tinymcp import once
from tinymcp.clock import ticks_diff, ticks_ms


class Events:
    size = 16            # events kept; a cursor older than that gets all and "missed"

    def __init__(self, size=None, clock=ticks_ms):
        # An entry: (kind, t_ms, uri, quantity, value, unit, more): the fields events have,
        # `more` a dict of the rarer ones (or None); turned into the wire's dict only when read.
        self.ring = [None] * (size or self.size)   # allocated once; entry seq % size
        self.seq = 0         # sequence number of the newest event (0: none yet)
        self.epoch = None    # drawn by eventtools when a cursor is first given or read
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


def attach(server, events=None, timeout_s=25):
    # The ring on this server (its changes and updates go in) and the tool that reads it
    # (registered by eventtools, which is released again once it has).
    events = events or Events()
    server.attach(events=events)

    def wait_for_event(after=None, timeout_s=timeout_s):
        # Inside a JSON-RPC batch a long tool runs to its end inline: no wait there. (Called
        # outside any request, by the board's own code, it waits as in one.)
        session = server.session
        return once("tinymcp.eventtools.wait", server, events, after,
                    0 if session is not None and session.batch is not None else timeout_s)

    once("tinymcp.eventtools.register", server, wait_for_event, timeout_s)
    return events
