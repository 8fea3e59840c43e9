# The router: one entry per board behind the bridge. It takes each host request to its board (by
# the label in a tool's name or a resource's URI when there are several), answers the lists from
# what each board offers, maps progress tokens, keeps each board's subscriptions and logging level
# across its resets, and hands what a board says during a host's call to that call only.
import asyncio
import itertools
import logging

from tinymcp.context import CLIENT_NEEDS as NEEDS
from tinymcp.protocol import (INVALID_PARAMS, LEVELS, METHOD_NOT_FOUND, OWNER_ENDED, OWNER_META,
                              RESOURCE_NOT_FOUND)
from tinymcp.templates import TemplateRefused, match as template_match, \
    parse as template_parse

from tinymcp.host.bridge import compact as compact_surface
from tinymcp.host.bridge.catalog import (KINDS, OFFERS, Catalog, labelled_uri, outward, slug,
                                         split_name, split_uri)
from tinymcp.host.bridge.events import TOOL as WAIT_TOOL, BridgeEvents
from tinymcp.host.bridge.host import err, log_failure
from tinymcp.host.bridge.methods import HANDSHAKE_TASKS, LIST_CHANGED, LISTS, RETRIED
from tinymcp.host.bridge.pins import trust_command

log = logging.getLogger("tinymcp.bridge.router")

LIST_CHANGED_GAP = 0.25   # seconds: a burst of list changes is told once per gap
MAX_PAGES = 100           # pages of one list the bridge follows (a board may loop its cursors)
LIST_WAIT = 5.0           # seconds a list waits for boards that are starting when none is ready
SETTLE = 2.0              # seconds a host's initialize waits for the other boards once one is ready
BRIDGE_INFO = {"name": "tinymcp-bridge", "version": "0.1.0"}
# What hosts are told with several boards: boards come and go, and their lists with them.
SEVERAL_CAPABILITIES = {"tools": {"listChanged": True}, "prompts": {"listChanged": True},
                        "resources": {"subscribe": True, "listChanged": True}}
TASK_WAIT = 3600.0        # seconds a tasks/result may wait for its task to end on the board
LONG_CALL = 660.0         # seconds a plain call of a tool that can run as a task may take
TERMINAL = ("completed", "failed", "cancelled")
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


class Router:
    # several: tools are LABEL_TOOL and resources LABEL+URI (two or more boards, or --port auto);
    # compact (with several): a tool the boards share is one, with a "board" argument (compact.py).
    # hosts (a seams.HostEvents) is told on_list_changed(method), on_updated(uri, params) and
    # on_log(msg): what no single host call owns.

    def __init__(self, several, hosts, compact=False, pins=None):
        self.several = several
        self.pins = pins          # pins.PinBook: what each board declared, as the user accepted it
        self.compact = several and compact
        self.hosts = hosts
        self.boards = []
        self.tokens = {}          # bridge progress token -> (board, host call, host's token)
        self.levels = {}          # host -> the level it asked for (an index in LEVELS)
        self.level = None         # the level the boards are set to (None: never asked)
        self.subs = {}            # label -> the board's own URIs subscribed there: replayed after
                                  # its resets, and when it comes back (unplugged, found again)
        self.known = {}           # board identity -> its label: a board comes back under it
        self.telling = {}         # list kind -> True when it changed again while being told
        self.events = BridgeEvents(several)   # what every board noticed: wait_for_event
        self.task_owners = {}     # task id -> [board, host session, bridge progress token]
        self.owners = set()       # hosts named as the owner of a tools/call (their leases)
        self.labels_seen = set()  # every label a board had in this run (names that read as
                                  # LABEL_TOOL or LABEL+URI of one are its, never another's)
        self._tokens = itertools.count(1)

    # -- the boards -------------------------------------------------------------------------

    def add(self, label, make_session, origin=None, pin_label=None):
        # A board served from now on; make_session(events) -> its BoardSession, telling events
        # (the RoutedBoard) what the board says. origin: what identifies it besides its label
        # (its sim path, its port), else the link's.
        board = RoutedBoard(label, self)
        board.origin, board.pin_label = origin, pin_label
        if label is not None:
            self.labels_seen.add(label)
            self._refuse_foreign()
        board.session = make_session(board)
        self.boards.append(board)
        board.run(board.session.run())
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
        if board.listed:
            board.listed = False
            self._changed_all()

    async def close(self):
        for board in list(self.boards):
            await self.remove(board)

    def listing(self):
        # Every board (the dashboard's list): each has .label and .session.
        return list(self.boards)

    def _labelled(self, label):
        return next((b for b in self.boards if b.label == label and label is not None), None)

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
            "boards:\n" % (("prompt's", "LABEL_PROMPT") if self.compact else
                           ("tool's or prompt's", "LABEL_TOOL"))
            + "\n".join(lines or ["- none connected now"]))
        if self.compact:
            instructions += "\n" + "\n".join(compact_surface.instructions(self._surface()))
        return {"protocolVersion": "2025-11-25", "capabilities": caps,
                "serverInfo": self.server_info(), "instructions": instructions}

    def server_info(self):
        if not self.several:
            init = self.boards[0].session.init_result or {}
            return init.get("serverInfo") or BRIDGE_INFO
        labels = [b.label for b in self.boards if b.listed]
        return dict(BRIDGE_INFO, title="tinymcp boards: " + (", ".join(labels) or "none yet"))

    async def _settle(self, wait):
        waits = [asyncio.ensure_future(b.session.wait_ready(wait)) for b in self.boards]
        try:
            pending = waits
            while pending and not any(b.listed for b in self.boards):
                _done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            if pending:
                await asyncio.wait(pending, timeout=SETTLE)
        finally:
            for task in waits:
                task.cancel()

    # -- host requests ----------------------------------------------------------------------

    async def request(self, method, params, call=None):
        # A host's request (params a dict) -> the reply: {"result": ...} or {"error": ...}.
        # call: the host's call it belongs to (what the board asks or logs meanwhile goes there).
        if method == "tools/call" and params.get("name") == WAIT_TOOL:
            return await self.events.call(params, call)   # the bridge's own, across the boards
        if method in HANDSHAKE_TASKS:   # to the board that owns the task
            return await self._task_request(method, params, call)
        if not self.several:
            board = self.boards[0]
            refused = self._withheld(board, method, params)
            if refused is not None:
                return refused
            reply = await self._forward(board, method, params, call)
            if method in LISTS and board.pinned is not None:
                reply = self._screened(board, LISTS[method], reply)
            return self.events.listed(method, params, reply)
        if method in LISTS:
            if not any(b.listed for b in self.boards):   # a 2026-07-28 host has no initialize
                await self._settle(LIST_WAIT)           # to wait in: its first list waits
            return self.events.listed(method, params, self._list(LISTS[method], params))
        board, params = self._target(method, params)
        if board is None:
            return params   # the error
        refused = self._withheld(board, method, params)
        if refused is not None:
            return refused
        reply = await self._forward(board, method, params, call)
        if "result" in reply:
            reply = {"result": outward(board.label, method, reply["result"])}
        return reply

    def _list(self, kind, params):
        # With several boards a list is answered from what the boards offered: at once, in one
        # page, whatever any board is doing.
        if params.get("cursor") is not None:
            return err(INVALID_PARAMS, "Invalid params: this list has one page; no cursor")
        if kind == "tools" and self.compact:
            return {"result": {"tools": [e.tool for e in self._surface().values()]}}
        items = []
        for board in self.boards:
            if board.listed:
                items += board.catalog.listing(kind, board.label)
        return {"result": {KINDS[kind][1]: items}}

    def _surface(self):
        return compact_surface.surface([(b.label, b.catalog) for b in self.boards if b.listed])

    def _compact_target(self, params):
        # A call by its compact name -> (the board, params in its names) or (None, the reply);
        # None when the name is not one (LABEL_TOOL still reaches a board's tool).
        name = params.get("name")
        entries = self._surface()
        entry = entries.get(name)
        label = split_name(name)[0] if type(name) is str else None
        if entry is not None and label in self.labels_seen and set(entry.targets) != {label}:
            entry = None   # LABEL_TOOL is the board LABEL's tool, whatever another board lists
        if entry is None:
            if type(name) is not str or label in self.labels_seen:
                return None
            for board in self.boards:
                why = board.pinned.withheld("tools", name) if board.pinned is not None else None
                if why is not None and board.listed:
                    return None, {"result": {"content": [{"type": "text", "text": why}],
                                             "isError": True}}
            return None, err(INVALID_PARAMS, "Unknown tool: %s (the tools: %s)"
                             % (name, ", ".join(entries) or "none while no board is ready"))
        arguments = params.get("arguments")
        label, own, arguments = entry.route(arguments if type(arguments) is dict else {})
        if label is None:
            return None, {"result": {"content": [{"type": "text", "text": own}],
                                     "isError": True}}
        return self._labelled(label), dict(params, name=own, arguments=arguments)

    def _target(self, method, params):
        # -> (the board, params in its own names), or (None, an error reply).
        if method == "tools/call" and self.compact:
            found = self._compact_target(params)
            if found is not None:
                return found
        if method in ("tools/call", "prompts/get"):
            return self._by_name("tools" if method == "tools/call" else "prompts", params,
                                 params.get("name"), lambda own: dict(params, name=own))
        if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            return self._by_uri(params.get("uri"), lambda own: dict(params, uri=own))
        if method == "completion/complete":
            ref = params.get("ref")
            kind = ref.get("type") if type(ref) is dict else None
            if kind == "ref/prompt":
                return self._by_name("prompts", params, ref.get("name"),
                                     lambda own: dict(params, ref=dict(ref, name=own)))
            if kind == "ref/resource":
                return self._by_uri(ref.get("uri"),
                                    lambda own: dict(params, ref=dict(ref, uri=own)))
            return None, err(INVALID_PARAMS, "Invalid params: ref must be a ref/prompt or a "
                             "ref/resource")
        return None, err(METHOD_NOT_FOUND, "Method not found: " + method)

    def read_only(self, params):
        # Whether a tools/call reaches a tool its board marks readOnlyHint (the HTTP front's
        # OAuth scopes, http.py); an unknown tool is not.
        if params.get("name") == WAIT_TOOL:
            return True   # the bridge's own: it waits for what the boards noticed
        if not self.several:
            board, forward = (self.boards[0] if self.boards else None), params
        else:
            board, forward = self._target("tools/call", params)
        return board is not None and board.catalog.read_only.get(forward.get("name")) is True

    def _by_name(self, kind, params, name, rename):
        what = "tool" if kind == "tools" else "prompt"
        if type(name) is not str:
            return None, err(INVALID_PARAMS, "Invalid params: the %s's name must be a string"
                             % what)
        for board in self.boards:
            own = board.catalog.names[kind].get(name)
            if own is not None:
                return board, rename(own)
        label, own = split_name(name)
        board = self._labelled(label)
        if board is None:
            return None, err(INVALID_PARAMS, "Unknown %s: %s (a %s's name starts with its "
                             "board's label: %s)" % (what, name, what, self._labels()))
        return board, rename(own)

    def _by_uri(self, uri, rename):
        if type(uri) is not str:
            return None, err(INVALID_PARAMS, "Invalid params: uri must be a string")
        label, own = split_uri(uri)
        board = self._labelled(label)
        if board is None:
            return None, err(RESOURCE_NOT_FOUND, "Resource not found: %s (a resource's URI "
                             "starts with its board's label and a plus: %s)"
                             % (uri, self._labels()))
        return board, rename(own)

    # -- what hosts may not use: entries withheld by the pins, or reading as another board's --

    def _withheld(self, board, method, params):
        # -> the reply to a host's use of an entry it may not use now, else None. params: in
        # the board's own names. Nothing of such a request reaches the board.
        kind, name = _entry(method, params)
        if kind is None or type(name) is not str:
            return None
        why = board.catalog.hidden[kind].get(name)
        if why is None and board.pinned is not None:
            why = board.pinned.withheld(kind, name)
        if why is None and kind == "resources":
            why = self._from_template(board, name)
        if why is None:
            return None
        if method == "tools/call":
            return {"result": {"content": [{"type": "text", "text": why}], "isError": True}}
        return err(RESOURCE_NOT_FOUND if kind == "resources" else INVALID_PARAMS, why)

    def _from_template(self, board, uri):
        # A resource no visible entry offers, read through a template hosts may not use -> why.
        catalog = board.catalog
        if any(r["uri"] == uri for r in catalog.visible("resources")) or any(
                _matches(t["uriTemplate"], uri) for t in catalog.visible("templates")):
            return None
        barred = dict(catalog.hidden["templates"])
        if board.pinned is not None:
            for template in {name for kind, name in board.pinned.pending if kind == "templates"}:
                barred.setdefault(template, board.pinned.withheld("templates", template))
        for template, why in barred.items():
            if why is not None and _matches(template, uri):
                return why
        return None

    def _screened(self, board, kind, reply):
        # A page of a lone board's list, less what its pins withhold.
        result = reply.get("result")
        key = KINDS[kind][1]
        if type(result) is not dict or type(result.get(key)) is not list:
            return reply
        return {"result": dict(result, **{key: [item for item in result[key]
                                               if board.pinned.accepts(kind, item)]})}

    def _refuse_foreign(self, boards=None):
        # With several boards, a board's own tool or prompt name that reads as another board's
        # LABEL_NAME, or its URI as LABEL+URI, is hidden from hosts and never reached: those
        # names are the other board's (issue 26). boards: those whose lists changed (None: all,
        # when a label is new).
        if not self.several:
            return
        for board in self.boards if boards is None else boards:
            for kind, (_method, _key, field) in KINDS.items():
                sep = "+" if kind in ("resources", "templates") else "_"
                hidden = {}
                for item in board.catalog.items[kind] or ():
                    own = item.get(field)
                    label, mark, rest = own.partition(sep) if type(own) is str else ("", "", "")
                    label = label.lower()
                    if mark and rest and label != board.label and label in self.labels_seen:
                        hidden[own] = ("The bridge refuses %s %s of board %s: it reads as board "
                                       "%s's, and %s%s... names are board %s's only."
                                       % (kind[:-1], own, board.name, label, label, sep, label))
                for own in set(hidden) - set(board.catalog.hidden[kind]):
                    log.warning("board %s lists %s %r, which reads as board %s's: refused "
                                "(not listed, never reached)", board.name, kind[:-1], own,
                                own.partition(sep)[0])
                board.catalog.hidden[kind] = hidden

    def _labels(self):
        return ", ".join("%s+..., %s_..." % (b.label, b.label) for b in self.boards
                         if b.label) or "no board is connected"

    async def _forward(self, board, method, params, call):
        forward, token = self._map_progress(params, board, call)
        retry = method in RETRIED or (method == "tools/call" and
                                        board.catalog.read_only.get(params.get("name")) is True)
        if method == "tools/call" and not retry:   # a tool that may switch an output
            forward = self._owned(forward, call)
        try:
            long = (method == "tools/call" and "task" not in params
                    and params.get("name") in board.catalog.task_support)
            reply = await board.session.call(method, forward, owner=call, retry=retry,
                                             timeout=LONG_CALL if long else None)
            task = (reply.get("result") or {}).get("task") if method == "tools/call" else None
            if type(task) is dict and type(task.get("taskId")) is str:
                # A task: its id is the board's (unguessable); the bridge keeps whose it is,
                # and the progress token stays valid for the task's lifetime.
                self.task_owners[task["taskId"]] = [board, getattr(call, "session", None), token]
                token = None
            return reply
        finally:
            if token is not None:
                self.tokens.pop(token, None)

    def task_support(self, name):
        # The execution.taskSupport of the tool hosts call `name`, or None.
        board, params = (self.boards[0], {"name": name}) if not self.several else \
            self._by_name("tools", {"name": name}, name, lambda own: {"name": own})
        return board.catalog.task_support.get(params.get("name")) if board else None

    async def _task_request(self, method, params, call):
        # tasks/* of a host: to the board that owns the task, and only for the host whose call
        # created it (to any other host the task does not exist).
        session = getattr(call, "session", None)
        if method == "tasks/list":
            if params.get("cursor") is not None:
                return err(INVALID_PARAMS, "Invalid params: unknown cursor")
            found = []
            for board in [b for b in self.boards if any(
                    e[0] is b and e[1] is session for e in self.task_owners.values())]:
                reply = await board.session.call("tasks/list", None, owner=call)
                for task in (reply.get("result") or {}).get("tasks") or ():
                    entry = self.task_owners.get(task.get("taskId"))
                    if entry is not None and entry[1] is session:
                        found.append(task)
            return {"result": {"tasks": found}}
        tid = params.get("taskId")
        entry = self.task_owners.get(tid) if type(tid) is str else None
        if entry is None or entry[1] is not session:
            return err(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        board = entry[0]
        reply = await board.session.call(method, {"taskId": tid}, owner=call,
                                         timeout=TASK_WAIT if method == "tasks/result" else None)
        error = reply.get("error")
        if error is not None and error.get("code") == INVALID_PARAMS and method != "tasks/cancel":
            self._task_gone(tid)   # the board has forgotten it (its ttl ran out)
        elif method in ("tasks/result", "tasks/cancel") and error is None:
            self._task_over(tid)
        return reply

    def _task_over(self, tid):
        entry = self.task_owners.get(tid)
        if entry is not None and entry[2] is not None:
            self.tokens.pop(entry[2], None)
            entry[2] = None

    def _task_gone(self, tid):
        self._task_over(tid)
        self.task_owners.pop(tid, None)

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

    def _resource(self, uri):
        if not self.several:
            return self.boards[0], uri
        board, params = self._by_uri(uri, lambda own: own)
        return board, params

    async def subscribe(self, uri):
        # The first host interested in a resource -> the board's reply.
        board, own = self._resource(uri)
        if board is None:
            return own   # the error
        refused = self._withheld(board, "resources/subscribe", {"uri": own})
        if refused is not None:
            return refused
        reply = await board.session.call("resources/subscribe", {"uri": own}, retry=True)
        if "result" in reply:
            self.subs.setdefault(board.label, set()).add(own)
        return reply

    def unsubscribe(self, uri):
        # The last host interested in a resource has gone: not subscribed again when its board
        # comes back, whether or not the board is here now.
        if self.several:
            label, own = split_uri(uri)
            board = self._labelled(label)
        else:
            board, own = self.boards[0], uri
            label = board.label
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
        level = LEVELS[min(min(self.levels.values()), LEVELS.index("warning"))] if self.levels \
            else "info"   # what a host that never asked gets
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
        if board.label is not None and board.label not in self.labels_seen:
            self.labels_seen.add(board.label)
            self._refuse_foreign()
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
        elif "tools" in changed:   # a different firmware came back after the reset
            self._changed("tools")

    def board_lost(self, board):
        # The board's session ended (a reset, an unplug): with several, its tools go meanwhile.
        self.events.left(board)
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
        self._refuse_foreign([board])
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
                if self.several:
                    uri = labelled_uri(board.label, uri)
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
                host = entry[1]
                if host is not None and not host.closed and host.era == "handshake":
                    host.send(msg)
        else:
            log.debug("dropped %s from the board: not one the bridge relays", method)

    def _board_log(self, board, msg, params):
        # A log line of the board goes to the host call the board is running (at the level that
        # host asked for), never to others; while it runs no host's call, to every host that
        # wants that level. With several boards the logger names the board.
        if self.several:
            logger = params.get("logger")
            msg = dict(msg, params=dict(params, logger=board.label + (
                "/%s" % logger if type(logger) is str and logger else "")))
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
        if type(why) is not dict:
            why = {"code": METHOD_NOT_FOUND,
                   "message": "%s cannot reach a client: %s" % (method, why)}
        log.info("refused the board's %s: %s", method, why["message"])
        session.respond({"jsonrpc": "2.0", "id": bid, "error": why})

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


def board_says(name, text):
    # A board's instructions as hosts get them: at most MAX_INSTRUCTIONS bytes, marked as the
    # board's words, so that a host's model can tell them from the bridge's.
    data = text.encode("utf-8", "replace")
    if len(data) > MAX_INSTRUCTIONS:
        text = data[:MAX_INSTRUCTIONS].decode("utf-8", "ignore") + CUT
    return "Board %s says: %s" % (name, text)


def _entry(method, params):
    # A host's request -> (the kind, the board's own name or URI) of the entry it uses.
    if method in ("tools/call", "prompts/get"):
        return ("tools" if method == "tools/call" else "prompts"), params.get("name")
    if method in ("resources/read", "resources/subscribe"):
        return "resources", params.get("uri")
    ref = params.get("ref") if method == "completion/complete" else None
    if type(ref) is dict and ref.get("type") == "ref/prompt":
        return "prompts", ref.get("name")
    if type(ref) is dict and ref.get("type") == "ref/resource":
        return "templates", ref.get("uri")
    return None, None


def _matches(template, uri):
    # A value the template refuses (a path, a bad escape) still names this template's entry:
    # the pins screen it as such, and the board answers the refusal (-32602) itself.
    if type(template) is not str:
        return False
    try:
        return template_match(template_parse(template), uri) is not None
    except TemplateRefused:
        return True
