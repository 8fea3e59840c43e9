# The bridge's own wait_for_event, across every board behind it: one ring (tinymcp/events.py's,
# larger, read with tinymcp/eventtools.py) fed by what the bridge already hears from each board
# (its alert log lines, resources/updated, list_changed) and by boards arriving and leaving.
# Each host waits with its own cursor; a wait is an asyncio wait on the ring, at most 50 s, with
# progress every second.
#
# Fed from what the boards say rather than by calling each board's wait_for_event: that holds no
# request open on a board's line (a board serves its requests in turn), needs no ring on the
# board (a Pico board with history and no events is heard the same), and sends nothing more.
import asyncio
import json
import time

from tinymcp import schema
from tinymcp.events import Events
from tinymcp.eventtools import MAX_WAIT_S, STEP_MS, after, result, since

from tinymcp.host.bridge.routes import labelled_uri, slug
from tinymcp.host.bridge.methods import LIST_CHANGED

TOOL = "wait_for_event"
KEPT = 128             # events the bridge keeps
DEFAULT_WAIT_S = 25
INPUTS = {"after?": schema.string("The cursor a previous call returned"),
          "timeout_s?": schema.number("Longest wait in seconds", 0, MAX_WAIT_S)}
OUTPUTS = {"events": schema.array({"type": "object"}, "Oldest first; each has kind and board"),
           "cursor": schema.string("Pass as after to wait for the next ones"),
           "missed?": schema.boolean("Some events since the cursor were lost (the bridge "
                                     "restarted, or more than it keeps came)")}
DESCRIPTOR = {
    "name": TOOL, "title": "Wait for event",
    "description": "Wait for what any board behind this bridge notices: alert crossings "
                   "(set_alert), list changes, resource updates, and boards arriving or "
                   "leaving (kind board_added, board_removed); each event names its board. "
                   "Returns at once when there are events newer than `after` (the cursor the "
                   "last call returned; none: every event kept), else waits up to timeout_s "
                   "(default %d) and returns an empty list. Call again with the cursor to go on "
                   "waiting without repeats." % DEFAULT_WAIT_S,
    "inputSchema": schema.obj(INPUTS), "outputSchema": schema.obj(OUTPUTS),
    "annotations": {"title": "Wait for event", "readOnlyHint": True, "openWorldHint": False}}


def board_name(board):
    # The label hosts know the board by; a lone board given none: its name, as a label.
    if board.label:
        return board.label
    init = board.session.init_result or {}
    return slug((init.get("serverInfo") or {}).get("name"))


class BridgeEvents:
    def __init__(self, several):
        self.several = several
        self.ring = Events(KEPT, lambda: int(time.monotonic() * 1000))
        self.present = set()     # boards told as added and not yet as removed
        self.told = {}           # board -> the uri its last alert announced (its update is that)
        self.woken = asyncio.Event()

    def add(self, board, kind, uri=None, quantity=None, value=None, unit=None, more=None):
        more = dict(more or {}, board=board_name(board))
        self.ring.add(kind, uri, quantity, value, unit, None, more)
        self.told.pop(board, None)
        woken, self.woken = self.woken, asyncio.Event()
        woken.set()

    # -- what the bridge hears -------------------------------------------------------------

    def heard(self, board, method, params):
        # A notification from a board (before the router relays it).
        if type(params) is not dict:
            return
        if method == "notifications/message":
            data = params.get("data")
            if type(data) is dict and type(data.get("alert")) is str:
                uri = self._uri(board, "sensor://alerts")
                self.add(board, "alert", uri, data["alert"], data.get("value"), data.get("unit"),
                         {k: data[k] for k in ("crossed", "level") if k in data})
                self.told[board] = uri
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if type(uri) is str:
                uri = self._uri(board, uri)
                if self.told.get(board) == uri:   # the alert just added said it
                    del self.told[board]
                else:
                    self.add(board, "resource_updated", uri)
        elif method in LIST_CHANGED:
            self.add(board, LIST_CHANGED[method] + "_changed")

    def _uri(self, board, uri):
        return labelled_uri(board.label, uri) if self.several else uri

    def arrived(self, board):
        if board not in self.present:
            self.present.add(board)
            self.add(board, "board_added")

    def left(self, board):
        if board in self.present:
            self.present.discard(board)
            self.add(board, "board_removed")

    # -- what the hosts see ----------------------------------------------------------------

    def listed(self, method, params, reply):
        # tools/list as hosts see it: the bridge's wait_for_event after the boards' tools (on
        # the last page), in place of any board's own (one wait, across every board).
        result = reply.get("result") if method == "tools/list" else None
        if type(result) is not dict or type(result.get("tools")) is not list:
            return reply
        tools = [t for t in result["tools"] if not self._boards_own(t)]
        if not result.get("nextCursor"):
            tools.append(DESCRIPTOR)
        return dict(reply, result=dict(result, tools=tools))

    def _boards_own(self, tool):
        name = tool.get("name") if type(tool) is dict else None
        return name == TOOL or (self.several and type(name) is str
                                and name.endswith("_" + TOOL))

    async def call(self, params, call):
        # tools/call of wait_for_event -> the reply.
        args = params.get("arguments")
        args = {} if args is None else args
        problem = ("expected an object" if type(args) is not dict
                   else schema.arguments(INPUTS, args))
        if problem:
            return _error("Invalid arguments for %s: %s" % (TOOL, problem))
        try:
            first, missed = after(self.ring, args.get("after"))
        except ValueError as e:
            return _error("%s failed: %s" % (TOOL, e))
        timeout = args.get("timeout_s", DEFAULT_WAIT_S)
        meta = params.get("_meta")
        token = meta.get("progressToken") if type(meta) is dict else None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self.ring.seq < first and not missed:
            left = deadline - loop.time()
            if left <= 0:
                break
            woken = self.woken
            try:
                await asyncio.wait_for(woken.wait(), min(left, STEP_MS / 1000))
            except asyncio.TimeoutError:
                waited = timeout - (deadline - loop.time())
                if token is not None and call is not None and waited < timeout:
                    call.notify({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                        "progressToken": token, "progress": round(waited, 3), "total": timeout,
                        "message": "waiting for events"}})
        found = result(self.ring, first, missed)
        return {"result": {"content": [{"type": "text", "text": json.dumps(found)}],
                           "structuredContent": found}}

    def recent(self, count=20):
        # The newest events, newest first, each with "at" (epoch seconds): the dashboard's list.
        first = max(1, self.ring.seq - min(count, KEPT) + 1)
        now_ms = self.ring.clock() - self.ring.start
        wall = time.time()
        return [dict(e, at=wall - (now_ms - e["t_ms"]) / 1000)
                for e in reversed(since(self.ring, first))]


def _error(text):
    return {"result": {"content": [{"type": "text", "text": text}], "isError": True}}
