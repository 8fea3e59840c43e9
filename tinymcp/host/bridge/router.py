# The router: one entry per board behind the bridge, from its arrival to its end (added, ready,
# lost, removed). It forwards each host request to the board routes.py names, maps progress
# tokens, keeps each board's subscriptions and logging level across its resets, and hands what a
# board says during a host's call to that call only.
import asyncio
import itertools
import logging

from tinymcp.context import CAPABILITIES_META, CLIENT_NEEDS as NEEDS, INPUT_META
from tinymcp.protocol import (INTERNAL_ERROR, INVALID_PARAMS, LEVELS, METHOD_NOT_FOUND,
                              OWNER_ENDED, OWNER_META)
from tinymcp.tasks import RELATED   # _meta naming the task a board's request is for

from tinymcp.host.bridge import pictures
from tinymcp.host.bridge.routes import (KINDS, OFFERS, Catalog, Routes, slug,
                                        surface_instructions)
from tinymcp.host.bridge.events import TOOL as WAIT_TOOL, BridgeEvents
from tinymcp.host.bridge.host import HostSession, err, log_failure
from tinymcp.host.bridge.methods import HANDSHAKE_TASKS, LIST_CHANGED, LISTS, RETRIED
from tinymcp.host.bridge.pins import trust_command

log = logging.getLogger("tinymcp.bridge.router")

LIST_CHANGED_GAP = 0.25   # seconds: a burst of list changes is told once per gap
MAX_PAGES = 100           # pages of one list the bridge follows (a board may loop its cursors)
LIST_WAIT = 5.0           # seconds a list waits for boards that are starting when none is ready
SETTLE = 2.0              # seconds a host's initialize waits for the other boards once one is ready
LOOK_AGAIN = 0.25         # seconds between looks at boards starting, while a list waits for them
BRIDGE_INFO = {"name": "tinymcp-bridge", "version": "0.1.0"}
# What hosts are told with several boards: boards come and go, and their lists with them.
SEVERAL_CAPABILITIES = {"tools": {"listChanged": True}, "prompts": {"listChanged": True},
                        "resources": {"subscribe": True, "listChanged": True}}
TASK_WAIT = 3600.0        # seconds a tasks/result may wait for its task to end on the board
LONG_CALL = 660.0         # seconds a plain call of a tool that can run as a task may take
TERMINAL = ("completed", "failed", "cancelled")
MAX_TASK_OWNERS = 1024    # tasks whose owner the bridge keeps (the oldest forgotten first)
UNCLAIMED_WAIT = 10.0     # seconds a task's question waits for the answer that made the task
MAX_UNCLAIMED = 64        # tasks whose questions wait so at once (more: refused at once)
MAX_INSTRUCTIONS = 2048   # bytes of a board's instructions that reach hosts
CUT = " [...the bridge cut the rest: a board's instructions reach hosts up to 2 KiB]"


def background(coro):
    asyncio.get_running_loop().create_task(coro).add_done_callback(log_failure)


class RoutedBoard:
    # One board behind the bridge: its label, the bridge's session with it, what it offers. It
    # is its session's listener (a seams.BoardEvents): what the board says goes to the router.
    def __init__(self, label, router=None):
        self.router = router
        self.label = label        # None while unknown (a board found by --port auto)
        self.named = label is not None   # given on the command line, not taken from the board
        self.identity = None      # who the board said it was when it got its label
        self.session = None
        self.catalog = Catalog()
        self.listed = False       # hosts see its tools (with several boards: while it is ready)
        self.asks = {}            # the board's request id -> the host call it was put to
        self.stale = {}           # list kind -> True when it changed again while being learned
        self.tasks = []
        self.origin = None        # what identifies it besides its label (pins.py), if known
        self.pin_label = None     # the name its pins go by when it has no label (a lone board)
        self.pinned = None        # its pins (pins.BoardPins), from its first initialize
        self.instructions = None  # its instructions as hosts get them (bounded, marked)

    @property
    def name(self):
        # The board as the bridge names it to the user and to hosts.
        return self.label or self.pin_label or "board"

    def pending(self):
        # What the pins withhold from hosts now (the dashboard's list).
        return self.pinned.changes() if self.pinned is not None else []

    def on_notification(self, msg):
        self.router.board_notification(self, msg)

    def on_request(self, msg):
        self.router.board_request(self, msg)

    async def on_ready(self):
        await self.router.board_ready(self)

    def on_lost(self):
        self.router.board_lost(self)

    def run(self, coro):
        # A task that lives as long as this board is served (its link, its simulated process).
        task = asyncio.get_running_loop().create_task(coro)
        task.add_done_callback(log_failure)
        self.tasks.append(task)
        return task


def principal(call):
    # Who owns the tasks a host call creates (host.HostSession.principal), None for the
    # bridge's own calls.
    session = getattr(call, "session", None)
    return getattr(session, "principal", session)


class Router:
    # several: tools are LABEL_TOOL and resources LABEL+URI (two or more boards, or --port auto);
    # compact (with several): a tool the boards share is one, with a "board" argument: the
    # names are routes.py's (self.routes). hosts (a seams.HostEvents) is told
    # on_list_changed(method), on_updated(uri, params) and on_log(msg): what no single host
    # call owns.

    def __init__(self, several, hosts, compact=False, pins=None):
        self.several = several
        self.pins = pins          # pins.PinBook: what each board declared, as the user accepted it
        self.hosts = hosts
        self.boards = []
        self.routes = Routes(self.boards, several, compact)
        self.tokens = {}          # bridge progress token -> (board, host call, host's token)
        self._drawing = set()     # routed calls' answers whose SVG pictures are being drawn
        self.levels = {}          # host -> the level it asked for (an index in LEVELS)
        self.level = None         # the level the boards are set to (None: never asked)
        self.subs = {}            # label -> the board's own URIs subscribed there: replayed after
                                  # its resets, and when it comes back (unplugged, found again)
        self.known = {}           # board identity -> its label: a board comes back under it
        self.telling = {}         # list kind -> True when it changed again while being told
        self.events = BridgeEvents(several)   # what every board noticed: wait_for_event
        self.task_owners = {}     # task id -> [board, host session, bridge progress token]
        self.unclaimed = {}       # task id -> [(board, request)] asked before its task was known
        self.task_asks = {}       # task id -> {key: (board request id, request)}: what a board's
                                  # task asks a 2026-07-28 host, kept for its tasks/get
        self.owners = set()       # hosts named as the owner of a tools/call (their leases)
        self.finders = []         # what is still finding boards when asked (finding(): a broker)
        self._change = asyncio.Event()   # set when a board is added, listed or lost
        self._tokens = itertools.count(1)

    # -- the boards -------------------------------------------------------------------------

    def add(self, label, make_session, origin=None, pin_label=None):
        # A board served from now on; make_session(events) -> its BoardSession, telling events
        # (the RoutedBoard) what the board says. origin: what identifies it besides its label
        # (its sim path, its port), else the link's.
        board = RoutedBoard(label, self)
        board.origin, board.pin_label = origin, pin_label
        self.routes.seen(label)
        board.session = make_session(board)
        self.boards.append(board)
        board.run(board.session.run())
        self._change.set()
        return board

    async def remove(self, board):
        # The board is served no more (unplugged, for --port auto): its tools go.
        if board in self.boards:
            self.boards.remove(board)
        board.session.close()
        for task in board.tasks:
            task.cancel()
        await asyncio.gather(*board.tasks, return_exceptions=True)
        for token in [t for t, entry in self.tokens.items() if entry[0] is board]:
            del self.tokens[token]
        self.events.left(board)
        for tid in [t for t, entry in self.task_owners.items() if entry[0] is board]:
            del self.task_owners[tid]
            self.task_asks.pop(tid, None)
        if board.listed:
            board.listed = False
            self._changed_all()

    async def close(self):
        for board in list(self.boards):
            await self.remove(board)

    def listing(self):
        # Every board (the dashboard's list): each has .label and .session.
        return list(self.boards)

    def _name_for(self, board, identity):
        # A label for a board that was given none: the one its identity had before, else one
        # made from its name ("tinymcp-rpi-pico" -> "rpi-pico", then "rpi-pico-2", ...).
        session = board.session
        taken = {b.label for b in self.boards if b is not board} | {
            label for who, label in self.known.items() if who != identity}
        label = self.known.get(identity)
        if label is None or label in taken:
            base = slug(((session.init_result or {}).get("serverInfo") or {}).get("name"))
            label, n = base, 1
            while label in taken:
                n += 1
                label = "%s-%d" % (base, n)
            self.known[identity] = label
        return label

    # -- what the hosts see -----------------------------------------------------------------

    async def info(self, wait):
        # The server hosts see -> an initialize result: a lone board's own, or the boards'
        # together. Waits for boards that are starting (not for those that are unplugged).
        if not self.several:
            board = self.boards[0]
            await board.session.wait_ready(wait)
            init = dict(board.session.init_result or {})
            init.pop("instructions", None)
            if init and board.instructions:
                init["instructions"] = board.instructions
            return init
        await self._settle(wait)
        caps = dict(SEVERAL_CAPABILITIES)
        lines = []
        for board in self.boards:
            init = board.session.init_result if board.listed else None
            if init is None:
                if board.label is not None:
                    lines.append("- %s: not ready now (%s)" % (board.label, board.session.state))
                continue
            if "completions" in init.get("capabilities", {}):
                caps["completions"] = {}
            if "tasks" in init.get("capabilities", {}):
                caps["tasks"] = init["capabilities"]["tasks"]
            server = init.get("serverInfo") or {}
            line = "- %s: %s %s" % (board.label, server.get("title") or server.get("name"),
                                    server.get("version") or "")
            if board.instructions:
                line += ". " + board.instructions
            lines.append(line)
        instructions = (
            "This bridge serves several boards. A %s name starts with its board's label and an "
            "underscore (%s), a resource's URI with the label and a plus (LABEL+URI). The "
            "boards:\n" % (("prompt's", "LABEL_PROMPT") if self.routes.compact else
                           ("tool's or prompt's", "LABEL_TOOL"))
            + "\n".join(lines or ["- none connected now"]))
        if self.routes.compact:
            instructions += "\n" + "\n".join(surface_instructions(self.routes.surface()))
        return {"protocolVersion": "2025-11-25", "capabilities": caps,
                "serverInfo": self.server_info(), "instructions": instructions}

    def server_info(self):
        if not self.several:
            init = self.boards[0].session.init_result or {}
            return init.get("serverInfo") or BRIDGE_INFO
        labels = [b.label for b in self.boards if b.listed]
        return dict(BRIDGE_INFO, title="tinymcp boards: " + (", ".join(labels) or "none yet"))

    def finding(self, finder):
        # finder.finding() -> True while it is still finding boards that are there (a broker's
        # first look at its presences): until then they count as boards starting.
        self.finders.append(finder)

    def _starting(self):
        # Boards hosts do not see yet and may soon: being initialized or learned, or not yet
        # found by a finder (not those unplugged, nor those that answer without serving).
        return any(finder.finding() for finder in self.finders) or any(
            not b.listed and b.session.state != "disconnected" and b.session.not_serving() is None
            for b in self.boards)

    async def _settle(self, wait):
        # Until a board is listed (at most wait) while boards are starting; then up to SETTLE
        # more for the others that are.
        loop = asyncio.get_running_loop()
        end = loop.time() + wait
        while not any(b.listed for b in self.boards):
            if not self._starting() or loop.time() >= end:
                return
            await self._next_change(end)
        end = loop.time() + SETTLE
        while self._starting() and loop.time() < end:
            await self._next_change(end)

    async def _next_change(self, end):
        # Until a board is added, listed or lost, or LOOK_AGAIN passes (what a board session
        # does not tell: unplugged, not serving; a finder's progress).
        self._change.clear()
        left = min(LOOK_AGAIN, end - asyncio.get_running_loop().time())
        try:
            await asyncio.wait_for(self._change.wait(), max(left, 0.0))
        except asyncio.TimeoutError:
            pass

    # -- host requests ----------------------------------------------------------------------

    async def request(self, method, params, call=None):
        # A host's request (params a dict) -> the reply: {"result": ...} or {"error": ...}.
        # call: the host's call it belongs to (what the board asks or logs meanwhile goes there).
        if method == "tools/call" and params.get("name") == WAIT_TOOL:
            return await self.events.call(params, call)   # the bridge's own, across the boards
        if method in HANDSHAKE_TASKS:   # to the board that owns the task
            return await self._task_request(method, params, call)
        if self.several and method in LISTS:
            if not any(b.listed for b in self.boards):   # a 2026-07-28 host has no initialize
                await self._settle(LIST_WAIT)           # to wait in: its first list waits
            return self.events.listed(method, params,
                                      self.routes.list_of(LISTS[method], params))
        board, forward = self.routes.target(method, params)
        if board is None:
            return forward   # refused: the reply
        reply = self.routes.outward_reply(board, method,
                                          await self._forward(board, method, forward, call))
        if method == "tools/call":   # a board's SVG pictures as PNG (pictures.py)
            return await pictures.for_hosts(reply, board.name)
        return self.events.listed(method, params, reply) if method in LISTS else reply

    def read_only(self, params):
        # Whether a tools/call reaches a tool its board marks readOnlyHint (the HTTP front's
        # OAuth scopes, http.py); an unknown tool is not.
        if params.get("name") == WAIT_TOOL:
            return True   # the bridge's own: it waits for what the boards noticed
        return self.routes.read_only(params)

    def input_schema(self, params):
        # The inputSchema of the board tool a tools/call reaches, or None (http.py checks the
        # call's Mcp-Param-* headers against it).
        return self.routes.input_schema(params)

    async def _forward(self, board, method, params, call):
        p, token = self._begin(board, method, params, call)
        if type(p) is dict:   # refused at once
            return self._end(method, params, call, board, p, token)
        try:
            reply = await p.future
        except asyncio.CancelledError:
            board.session.abandon(p, "cancelled by the client")
            self._end(method, params, call, board, None, token)
            raise
        return self._end(method, params, call, board, reply, token)

    def start(self, method, params, call, then):
        # A host's tools/call to one board, served without a task: -> the future of the board's
        # answer (cancel() it to abandon the call), with then(reply) called when it ends
        # (answered, timed out, refused; not when cancelled); or None when this request takes
        # the general way (request()).
        if method != "tools/call" or params.get("name") == WAIT_TOOL:
            return None
        board, forward = self.routes.target(method, params)
        if board is None:
            return None   # refused: request() says why
        p, token = self._begin(board, method, forward, call)
        if type(p) is dict:
            future = asyncio.get_running_loop().create_future()
            future.set_result(p)
        else:
            future = p.future

        told = []   # once the call has ended: the board's answer settled p (p.then), or the
                    # done callback below came first (a cancel, a refusal made at once)

        def ended(future):
            if told:
                return
            told.append(True)
            if future.cancelled():
                if type(p) is not dict:
                    board.session.abandon(p, "cancelled by the client")
                self._end(method, forward, call, board, None, token)
                return
            answered(future.result())

        def settled(result):   # p.then: the board's answer or the deadline, p.future not done yet
            if told:
                return
            told.append(True)
            future.remove_done_callback(ended)   # nothing left for it to do: no turn of the loop
            answered(result)

        def answered(result):
            self.answer_routed(board, method, forward, call, token, result, then)
        if type(p) is not dict:   # the board's answer (or the deadline) answers the host in
            p.then = settled      # that turn of the loop, not the next
        future.add_done_callback(ended)
        return future

    def answer_routed(self, board, method, forward, call, token, result, then):
        # A routed call's board answer (or the error that ended it) -> then(the reply as hosts
        # get it): its task kept, its pictures drawn.
        try:
            reply = self.routes.outward_reply(
                board, method, self._end(method, forward, call, board, result, token))
        except Exception as e:   # a bug costs this call, never the host's session
            log.exception("answering %s", method)
            reply = err(INTERNAL_ERROR, "Internal error in the bridge: %s" % e)
        if pictures.svg_items(reply):   # its SVG drawn first (pictures.py), off this turn
            self._draw_then(reply, board.name, then)
        else:
            then(reply)

    def _draw_then(self, reply, board_name, then):
        # A routed call's answer holding SVG pictures -> then(the answer as hosts get it), once
        # drawn; the board's own answer if drawing ends any other way.
        drawing = asyncio.ensure_future(pictures.for_hosts(reply, board_name))
        self._drawing.add(drawing)

        def drawn(done):
            self._drawing.discard(done)
            ok = not done.cancelled() and done.exception() is None
            then(done.result() if ok else reply)
        drawing.add_done_callback(drawn)

    def _begin(self, board, method, params, call):
        # -> (the board's Pending, or the error that refused it at once; the bridge's progress
        # token for it, or None).
        forward, token = self._map_progress(params, board, call)
        name = params.get("name")
        if type(name) is not str:   # a list is no key: the board says "name" must be a string
            name = None
        retry = method in RETRIED or (method == "tools/call" and
                                        board.catalog.read_only.get(name) is True)
        if method == "tools/call" and not retry:   # a tool that may switch an output
            forward = self._owned(forward, call)
        long = (method == "tools/call" and "task" not in params
                and name in board.catalog.task_support)
        return board.session.begin(method, forward, owner=call, retry=retry,
                                   timeout=LONG_CALL if long else None), token

    def _end(self, method, params, call, board, reply, token):
        # The board's reply (None: the call was abandoned) -> the reply; its task, if it made
        # one, is the host's.
        if reply is not None and method == "tools/call":
            task = (reply.get("result") or {}).get("task")
            if type(task) is dict and type(task.get("taskId")) is str:
                # A task: its id is the board's (unguessable); the bridge keeps whose it is,
                # and the progress token stays valid for the task's lifetime.
                self.task_owners[task["taskId"]] = [board, principal(call), token]
                self._claimed(task["taskId"])
                while len(self.task_owners) > MAX_TASK_OWNERS:   # nobody came back for them
                    self._task_gone(next(iter(self.task_owners)))
                token = None
        if token is not None:
            self.tokens.pop(token, None)
        return reply

    async def _task_request(self, method, params, call):
        # tasks/* of a host: to the board that owns the task, and only for the host whose call
        # created it (to any other host the task does not exist).
        session = principal(call)
        if method == "tasks/list":
            if params.get("cursor") is not None:
                return err(INVALID_PARAMS, "Invalid params: unknown cursor")
            found = []
            for board in [b for b in self.boards if any(
                    e[0] is b and e[1] == session for e in self.task_owners.values())]:
                reply = await board.session.call("tasks/list", None, owner=call)
                for task in (reply.get("result") or {}).get("tasks") or ():
                    entry = self.task_owners.get(task.get("taskId"))
                    if entry is not None and entry[1] == session:
                        found.append(task)
            return {"result": {"tasks": found}}
        tid = params.get("taskId")
        entry = self.task_owners.get(tid) if type(tid) is str else None
        if entry is None or entry[1] != session:
            return err(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        board = entry[0]
        reply = await board.session.call(method, {"taskId": tid}, owner=call,
                                         timeout=TASK_WAIT if method == "tasks/result" else None)
        error = reply.get("error")
        if error is not None and error.get("code") == INVALID_PARAMS and method != "tasks/cancel":
            self._task_gone(tid)   # the board has forgotten it (its ttl ran out)
        elif method in ("tasks/result", "tasks/cancel") and error is None:
            self._task_over(tid)
        if method == "tasks/result":   # a task's tool result: its pictures as a call's are
            reply = await pictures.for_hosts(reply, board.name)
        return reply

    def _task_over(self, tid):
        self.task_asks.pop(tid, None)
        entry = self.task_owners.get(tid)
        if entry is not None and entry[2] is not None:
            self.tokens.pop(entry[2], None)
            entry[2] = None

    def _task_gone(self, tid):
        self._task_over(tid)
        entry = self.task_owners.pop(tid, None)
        asks = self.task_asks.pop(tid, None)
        if asks and entry is not None:   # nobody will answer them now
            for bid, _request in asks.values():
                entry[0].session.respond({"jsonrpc": "2.0", "id": bid, "error": {
                    "code": INVALID_PARAMS, "message": "the task's host is gone"}})

    # -- tasks that ask their host (2026-07-28: tasks/get shows the questions, tasks/update
    #    answers them) ---------------------------------------------------------------------

    def _task_question(self, board, msg):
        # A board's request tied to one of its tasks (_meta related-task) -> None when kept for
        # the task's 2026-07-28 host, else why it cannot be asked.
        params = msg.get("params")
        meta = params.get("_meta") if type(params) is dict else None
        related = meta.get(RELATED) if type(meta) is dict else None
        tid = related.get("taskId") if type(related) is dict else None
        entry = self.task_owners.get(tid) if type(tid) is str else None
        if entry is None and type(tid) is str and len(self.unclaimed) < MAX_UNCLAIMED:
            # A task's first step may ask before the bridge has read the answer that made it
            # (the board's line is read ahead of the call awaiting it): held until it is.
            if tid not in self.unclaimed:
                self.unclaimed[tid] = []
                asyncio.get_running_loop().call_later(UNCLAIMED_WAIT, self._unclaimed, tid)
            self.unclaimed[tid].append((board, msg))
            return None
        if entry is None or entry[0] is not board:
            return "it names no task of this board's that a host is running"
        if getattr(entry[1], "era", None) == "handshake":
            return "its task belongs to a 2025-11-25 host, which the bridge does not relay to"
        named = meta.get(INPUT_META)
        key = named[0] if type(named) is list and named and type(named[0]) is str else None
        asks = self.task_asks.setdefault(tid, {})
        key = key or "%s-%s" % (NEEDS[msg["method"]], msg["id"])
        if key in asks:
            return "its task already asks %r" % key
        meta = {k: v for k, v in meta.items() if k not in (RELATED, INPUT_META)}
        params = dict(params, _meta=meta) if meta else {
            k: v for k, v in params.items() if k != "_meta"}
        asks[key] = (msg["id"], {"method": msg["method"], "params": params})
        return None

    def _claimed(self, tid):
        # The task is known now: the questions it asked before, as if they came now.
        for board, msg in self.unclaimed.pop(tid, ()):
            why = self._task_question(board, msg)
            if why is not None:
                self._refuse(board, msg, why)

    def _unclaimed(self, tid):
        for board, msg in self.unclaimed.pop(tid, ()):
            self._refuse(board, msg, "it names no task of this board's that a host is running")

    def task_questions(self, tid):
        # The questions a task waits for: its inputRequests.
        return {key: ask[1] for key, ask in (self.task_asks.get(tid) or {}).items()}

    def answer_task(self, tid, responses):
        # tasks/update's answers to the board; keys not asked are ignored. -> an error reply
        # when an answer is not an object (nothing is sent then), else None.
        asks = self.task_asks.get(tid) or {}
        for key, answer in responses.items():
            if key in asks and type(answer) is not dict:
                return err(INVALID_PARAMS, "Invalid params: inputResponses[%s] must be an "
                           "object" % key)
        board = self.task_owners[tid][0]
        for key, answer in responses.items():
            if key in asks:
                bid, _request = asks.pop(key)
                board.session.respond({"jsonrpc": "2.0", "id": bid, "result": answer})
        if not asks:
            self.task_asks.pop(tid, None)
        return None

    def _map_progress(self, params, board, call):
        # Progress tokens are the host's: two hosts may pick the same one, so the board sees ours.
        # The 2026-07-28 envelope keys are dropped: a fresh board that saw one first would lock
        # itself into that era, and the bridge's session with a board is a handshake session.
        meta = params.get("_meta")
        if type(meta) is not dict:
            return params, None
        forward = dict(params)
        forward["_meta"] = meta = {k: v for k, v in meta.items()
                                   if not k.startswith("io.modelcontextprotocol/")}
        caps = getattr(call, "caps", None)
        if caps is not None:   # a 2026-07-28 host's capabilities, for a tool that asks (ctx.can)
            meta[CAPABILITIES_META] = caps
        if "progressToken" not in meta or call is None:
            meta.pop("progressToken", None)
            return forward, None
        token = "p%d" % next(self._tokens)
        self.tokens[token] = (board, call, meta["progressToken"])
        meta["progressToken"] = token
        return forward, token

    def _owned(self, params, call):
        # The board is told which host a tools/call is for: the boards share one session with
        # the bridge, and a host's leased outputs must end with that host (tinymcp/leases.py).
        # A host's own claim to the key is dropped; a stateless call names no owner.
        owner = getattr(call, "owner", None)
        meta = params.get("_meta")
        if owner is None and not (type(meta) is dict and OWNER_META in meta):
            return params
        meta = dict(meta) if type(meta) is dict else {}
        meta.pop(OWNER_META, None)
        if owner is not None:
            meta[OWNER_META] = owner
            self.owners.add(owner)
        return dict(params, _meta=meta)

    def owner_ended(self, owner):
        # A host session has ended: every board puts the outputs that host leased back to
        # their safe state, and no other host's.
        if owner in self.owners:
            self.owners.discard(owner)
            self.notify_boards(OWNER_ENDED, {"owner": owner})

    def notify_boards(self, method, params=None):
        # A host's notification every board must hear (roots/list_changed).
        for board in self.boards:
            board.session.notify(method, params)

    # -- subscriptions and the logging level (the bridge's own requests) -------------------

    async def subscribe(self, uri):
        # The first host interested in a resource -> the board's reply.
        board, params = self.routes.target("resources/subscribe", {"uri": uri})
        if board is None:
            return params   # refused: the reply
        reply = await board.session.call("resources/subscribe", params, retry=True)
        if "result" in reply:
            self.subs.setdefault(board.label, set()).add(params["uri"])
        return reply

    def unsubscribe(self, uri):
        # The last host interested in a resource has gone: not subscribed again when its board
        # comes back, whether or not the board is here now.
        label, board, own = self.routes.resource(uri)
        subs = self.subs.get(label)
        if subs is None or own not in subs:
            return
        subs.discard(own)
        if board is not None:
            background(board.session.call("resources/unsubscribe", {"uri": own}))

    def set_level(self, host, rank):
        # A board has one logging level: the most verbose any host asked for. Each board is
        # told on its own line, so a busy board holds up no other (nor the host's answer).
        self.levels[host] = rank
        self._push_level()

    def forget(self, host):
        if self.levels.pop(host, None) is not None:
            self._push_level()
        for tid in [t for t, entry in self.task_owners.items() if entry[1] is host]:
            self._task_gone(tid)   # its tasks run on, unseen: nobody else may fetch them

    def _push_level(self):
        # Never above warning: the boards' alert lines feed wait_for_event (events.py); each
        # host still gets only the levels it asked for.
        level = (LEVELS[min(min(self.levels.values()), LEVELS.index("warning"))] if self.levels
                 else "info")   # what a host that never asked gets
        if level == self.level:
            return
        self.level = level   # a board that is not ready gets it when it is
        for board in self.boards:
            if board.session.state == "ready":
                background(board.session.call("logging/setLevel", {"level": level}))

    # -- a board's lifecycle ----------------------------------------------------------------

    async def board_ready(self, board):
        # After every (re)initialize: the board forgot our level and subscriptions; what it
        # offers is learned again.
        session = board.session
        identity = session.identity or session.link.device
        if self.several and not board.named and identity != board.identity:
            if board.listed:   # another board on the same port: the one before it has gone
                board.listed = False
                self._changed_all()
            board.label, board.identity = self._name_for(board, identity), identity
        self.routes.seen(board.label)
        self._pin(board, identity)
        if self.level is not None:
            await session.call("logging/setLevel", {"level": self.level}, internal=True)
        for uri in list(self.subs.get(board.label, ())):
            reply = await session.call("resources/subscribe", {"uri": uri}, internal=True)
            if "error" in reply:
                log.warning("could not re-subscribe %s: %s", uri, reply["error"])
        caps = (session.init_result or {}).get("capabilities", {})
        offered = [kind for cap, kinds in OFFERS.items() if cap in caps for kind in kinds]
        kinds = offered
        if not self.several and board.pinned is None:
            kinds = [kind for kind in kinds if kind == "tools"]   # for the read-only hints
        changed = await self._learn(board, kinds)
        if board.pinned is not None:   # what it does not offer is pinned as nothing
            for kind in KINDS:
                if kind not in offered:
                    board.catalog.learn(kind, board.pinned.review(kind, []), board.label)
        if session.state != "ready":
            return   # reset or unplugged meanwhile: a new initialize is under way
        self.events.arrived(board)
        if self.several and not board.listed:
            board.listed = True
            log.info("board %s ready: its tools are %s_*", board.label, board.label)
            self._changed_all()
            self._change.set()
        elif "tools" in changed:   # a different firmware came back after the reset
            self._changed("tools")

    def board_lost(self, board):
        # The board's session ended (a reset, an unplug): with several, its tools go meanwhile.
        self.events.left(board)
        self._change.set()
        for tid in [t for t, e in self.task_owners.items() if e[0] is board]:
            self.task_asks.pop(tid, None)   # its requests died with its session
        if self.several and board.listed:
            board.listed = False
            log.info("board %s is gone: its tools are withdrawn", board.label)
            self._changed_all()

    async def _learn(self, board, kinds):
        # Learn the board's whole lists of these kinds -> the kinds that changed.
        changed = set()
        for kind in kinds:
            method, key, _field = KINDS[kind]
            items, cursor = [], None
            for _ in range(MAX_PAGES):
                reply = await board.session.call(method, {"cursor": cursor} if cursor else None,
                                                  internal=True)
                result = reply.get("result")
                if not result or type(result.get(key)) is not list:
                    if board.session.state == "ready":   # not a reset meanwhile: said
                        log.warning("board %s: %s failed (%s); hosts see none of its %s",
                                    board.name, method, str(reply.get("error") or reply)[:200],
                                    kind)
                    items = None
                    break
                items += result[key]
                cursor = result.get("nextCursor")
                if not cursor:
                    break
            if items is not None and board.pinned is not None:
                items = board.pinned.review(kind, items)
            if items is not None and board.catalog.learn(kind, items, board.label):
                changed.add(kind)
        self.routes.refuse_foreign([board])
        return changed

    def _pin(self, board, identity):
        # The board's pins (by its label and its origin) and its instructions as hosts get
        # them: bounded, marked as the board's words, withheld when they changed.
        session = board.session
        if self.pins is not None:
            where = board.origin or (session.link.device if board.named else identity)
            pinned = board.pinned
            if pinned is None or pinned.label != board.name or pinned.where != where:
                board.pinned = self.pins.board(board.name, where)
        text = (session.init_result or {}).get("instructions")
        text = text if type(text) is str and text else None
        if board.pinned is not None:
            before = text
            text = board.pinned.review_instructions(text)
            if before is not None and text is None:
                board.instructions = ("(The bridge withholds board %s's instructions: they "
                                      "changed since the user accepted this board; `%s` "
                                      "accepts them.)" % (board.name, trust_command(board.name)))
                return
        board.instructions = board_says(board.name, text) if text else None

    # -- what a board says ------------------------------------------------------------------

    def board_notification(self, board, msg):
        method = msg["method"]
        params = msg.get("params") or {}
        self.events.heard(board, method, params)
        if method == "notifications/progress":
            token = params.get("progressToken")
            entry = self.tokens.get(token) if type(token) is str else None
            if entry is not None and entry[0] is board:
                entry[1].notify(dict(msg, params=dict(params, progressToken=entry[2])))
        elif method == "notifications/message":
            if params.get("level") in LEVELS and "data" in params:
                self._board_log(board, msg, params)
        elif method == "notifications/resources/updated":
            uri = params.get("uri")
            if type(uri) is str:
                uri = self.routes.outward_uri(board, uri)
                self.hosts.on_updated(uri, dict(params, uri=uri))
        elif method == "notifications/cancelled":
            rid = params.get("requestId")
            call = board.asks.pop(rid, None) if type(rid) in (int, str) else None
            if call is not None:
                call.cancel_ask(rid, params)
        elif method in LIST_CHANGED:
            self._board_list_changed(board, LIST_CHANGED[method])
        elif method == "notifications/tasks/status":
            # To the host whose call created the task, and no other.
            tid = params.get("taskId")
            entry = self.task_owners.get(tid) if type(tid) is str else None
            if entry is not None and entry[0] is board:
                if params.get("status") in TERMINAL:
                    self._task_over(tid)
                host = entry[1]   # a session, or a principal that polls (no session to tell)
                if type(host) is HostSession and not host.closed and host.era == "handshake":
                    host.send(msg)
        else:
            log.debug("dropped %s from the board: not one the bridge relays", method)

    def _board_log(self, board, msg, params):
        # A log line of the board goes to the host call the board is running (at the level that
        # host asked for), never to others; while it runs no host's call, to every host that
        # wants that level. With several boards the logger names the board.
        msg = self.routes.outward_log(board, msg)
        running = board.session.running()
        if running is None or running.owner is None:   # none of a host's: the bridge's own
            self.hosts.on_log(msg)
        else:
            running.owner.log(msg, LEVELS.index(params["level"]), running.gone)

    def board_request(self, board, msg):
        # A request of the board to a host: only to the host call the board is running, and
        # refused at once when there is none, when it has ended, or when it cannot answer.
        bid = msg["id"]
        method = msg["method"]
        session = board.session
        if method == "ping":
            session.respond({"jsonrpc": "2.0", "id": bid, "result": {}})
            return
        running = session.running()
        if NEEDS.get(method) is None:
            why = "the bridge relays only %s to hosts" % ", ".join(sorted(NEEDS))
        elif _related(msg):   # a task's question: its host finds it on tasks/get
            why = self._task_question(board, msg)
            if why is None:
                return
        elif bid in board.asks:
            why = "request id %r is already waiting for a host" % (bid,)
        elif running is None or running.owner is None:
            why = "no host request is running on the board, so no host may be asked"
        elif running.gone:
            why = "the host request it belongs to has ended (timed out or cancelled)"
        else:
            call = running.owner
            why = call.ask(msg, session.respond, running.future)
            if why is None:
                board.asks[bid] = call
                running.future.add_done_callback(lambda _f: board.asks.pop(bid, None))
                return
        self._refuse(board, msg, why)

    @staticmethod
    def _refuse(board, msg, why):
        method = msg["method"]
        if type(why) is not dict:
            why = {"code": METHOD_NOT_FOUND,
                   "message": "%s cannot reach a client: %s" % (method, why)}
        log.info("refused the board's %s: %s", method, why["message"])
        board.session.respond({"jsonrpc": "2.0", "id": msg["id"], "error": why})

    # -- list changes -----------------------------------------------------------------------

    def _board_list_changed(self, board, kind):
        # One refresh in flight per board and list: a storm of list_changed from a board becomes
        # at most one listing at a time, and one notification to the hosts per gap.
        if kind in board.stale:
            board.stale[kind] = True
            return
        board.stale[kind] = False
        background(self._relearn(board, kind))

    async def _relearn(self, board, kind):
        try:
            while True:
                if self.several:   # hosts get the lists from here: learn, then tell
                    await self._learn(board, OFFERS.get(kind, (kind,)))
                    self._changed(kind)
                else:              # hosts list the board itself (each page screened by its
                    self._changed(kind)   # pins): tell at once
                    if board.pinned is not None:   # what is withheld now
                        await self._learn(board, OFFERS.get(kind, (kind,)))
                    elif kind == "tools":   # its read-only hints
                        await self._learn(board, ("tools",))
                await asyncio.sleep(LIST_CHANGED_GAP)
                if not board.stale[kind]:
                    return
                board.stale[kind] = False
        finally:
            del board.stale[kind]

    def _changed_all(self):
        for kind in ("tools", "prompts", "resources"):
            self._changed(kind)

    def _changed(self, kind):
        # Hosts hear of a changed list at once, then at most once per gap.
        if kind in self.telling:
            self.telling[kind] = True
            return
        self.telling[kind] = False
        self.hosts.on_list_changed("notifications/%s/list_changed" % kind)
        background(self._told(kind))

    async def _told(self, kind):
        try:
            while True:
                await asyncio.sleep(LIST_CHANGED_GAP)
                if not self.telling[kind]:
                    return
                self.telling[kind] = False
                self.hosts.on_list_changed("notifications/%s/list_changed" % kind)
        finally:
            del self.telling[kind]


def _related(msg):
    params = msg.get("params")
    meta = params.get("_meta") if type(params) is dict else None
    return type(meta) is dict and RELATED in meta


def board_says(name, text):
    # A board's instructions as hosts get them: at most MAX_INSTRUCTIONS bytes, marked as the
    # board's words, so that a host's model can tell them from the bridge's.
    data = text.encode("utf-8", "replace")
    if len(data) > MAX_INSTRUCTIONS:
        text = data[:MAX_INSTRUCTIONS].decode("utf-8", "ignore") + CUT
    return "Board %s says: %s" % (name, text)
