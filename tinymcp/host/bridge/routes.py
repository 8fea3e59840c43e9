# Label and URI routing: what each board offers (its Catalog, learned once per (re)initialize or
# list_changed), the names hosts see for it, and a host's request taken to its board in the
# board's own names, and the reply back. With several boards behind the bridge a tool or prompt
# is LABEL_NAME and a resource URI LABEL+URI (docs/bridge.md, "Several boards"), or with
# --compact a tool the boards share is one, with a "board" argument; a board's own name never
# takes another board's (issue 26), nor reaches what its pins withhold. The router (router.py)
# adds and removes boards; Routes only reads them.
import hashlib
import logging
import re

from tinymcp.echo import shown
from tinymcp.protocol import INVALID_PARAMS, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND
from tinymcp.templates import (TemplateRefused, match as template_match,
                               parse as template_parse)

from tinymcp.host.bridge.host import err
from tinymcp.host.bridge.methods import LISTS

log = logging.getLogger("tinymcp.bridge.routes")

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")   # what a host may rely on for a tool name
LABEL = re.compile(r"^[a-z][a-z0-9-]{0,23}$")  # a letter first: LABEL+URI keeps a valid scheme
# kind -> (the board's list method, the result's key, the field that names an item); the list
# methods are the catalogue's (methods.py).
_SHAPES = {"tools": ("tools", "name"), "prompts": ("prompts", "name"),
           "resources": ("resources", "uri"), "templates": ("resourceTemplates", "uriTemplate")}
_METHOD = {kind: method for method, kind in LISTS.items()}
KINDS = {kind: (_METHOD[kind],) + shape for kind, shape in _SHAPES.items()}
# A board capability -> the kinds it lists.
OFFERS = {"tools": ("tools",), "prompts": ("prompts",), "resources": ("resources", "templates")}


def slug(text, default="board"):
    # A board's name as a label: "tinymcp-rpi-pico" -> "rpi-pico".
    text = re.sub(r"[^a-z0-9]+", "-", str(text or "").lower())
    if text.startswith("tinymcp-"):
        text = text[len("tinymcp-"):]
    text = text.strip("-")[:20].strip("-")
    return text if text and text[0].isalpha() else default


def labelled_name(label, name):
    # LABEL_NAME, within the pattern hosts rely on: other characters become "_", and a name
    # too long keeps its start and a short hash of the whole.
    joined = "%s_%s" % (label, re.sub(r"[^a-zA-Z0-9_-]", "_", name))
    if len(joined) <= 64 and joined[len(label) + 1:] == name:
        return joined
    digest = hashlib.sha1(name.encode()).hexdigest()[:6]
    return (joined[:57] + "-" + digest) if len(joined) > 64 else joined


def labelled_uri(label, uri):
    return "%s+%s" % (label, uri)


def split_name(name):
    # "a_read_adc" -> ("a", "read_adc"); labels hold no "_", so the first one ends the label.
    label, sep, rest = name.partition("_")
    return (label, rest) if sep and rest else (None, name)


def split_uri(uri):
    # "a+sensor://temperature" -> ("a", "sensor://temperature"); labels hold no "+".
    label, sep, rest = uri.partition("+")
    return (label, rest) if sep and rest else (None, uri)


TASK_MODES = ("optional", "required")


class Catalog:
    # One board's lists, and (with a label) the names hosts see for its tools and prompts.
    def __init__(self):
        self.items = dict.fromkeys(KINDS)   # kind -> the board's items (None: not learned)
        self.names = {"tools": {}, "prompts": {}}   # kind -> {host's name: board's name}
        self.hidden = {kind: {} for kind in KINDS}   # kind -> {board's name or URI: why}: an
                                            # entry that reads as another board's (router.py)
        self.read_only = {}                 # board tool name -> readOnlyHint
        self.task_support = {}              # board tool name -> execution.taskSupport, if any
        self.input_schema = {}              # board tool name -> inputSchema

    def learn(self, kind, items, label=None):
        # The board's whole list of one kind -> True when it differs from what was known.
        items = [item for item in items if type(item) is dict]
        changed = self.items[kind] is not None and items != self.items[kind]
        self.items[kind] = items
        if kind == "tools":
            self.read_only = {}
            self.task_support = {}
            self.input_schema = {}
            for tool in items:
                self.input_schema[tool.get("name")] = tool.get("inputSchema")
                hints = tool.get("annotations")
                self.read_only[tool.get("name")] = (type(hints) is dict
                                                    and hints.get("readOnlyHint") is True)
                execution = tool.get("execution")
                if type(execution) is dict and execution.get("taskSupport") in TASK_MODES:
                    self.task_support[tool.get("name")] = execution["taskSupport"]
        if kind in self.names:
            self.names[kind] = {}
            if label is not None:
                taken = self.names[kind]
                for item in items:
                    if type(item.get("name")) is str:
                        shown, n = labelled_name(label, item["name"]), 1
                        while shown in taken:   # "a.b" and "a_b" both became "a_b"
                            n += 1
                            shown = labelled_name(label, "%s-%d" % (item["name"], n))
                        taken[shown] = item["name"]
        return changed

    def visible(self, kind):
        # The board's items of one kind that hosts may see (none that is hidden).
        field = KINDS[kind][2]
        return [item for item in self.items[kind] or ()
                if type(item.get(field)) is str and item[field] not in self.hidden[kind]]

    def listing(self, kind, label):
        # The board's items of one kind as hosts see them.
        field = KINDS[kind][2]
        mapped = {board: host for host, board in self.names.get(kind, {}).items()}
        shown = []
        for item in self.visible(kind):
            value = item[field]
            if kind in ("tools", "prompts"):
                value = mapped.get(value) or labelled_name(label, value)
            else:
                value = labelled_uri(label, value)
            shown.append(dict(item, **{field: value}))
        return shown


def outward(label, method, result):
    # A board's result as hosts see it: the URIs it names carry the board's label.
    if type(result) is not dict:
        return result
    if method == "resources/read" and type(result.get("contents")) is list:
        result = dict(result, contents=[_uri_in(label, c) for c in result["contents"]])
    elif method == "tools/call" and type(result.get("content")) is list:
        content = [_content(label, c) for c in result["content"]]
        if any(new is not old for new, old in zip(content, result["content"])):
            result = dict(result, content=content)   # else the same: the answer may be spliced
    elif method == "prompts/get" and type(result.get("messages")) is list:
        result = dict(result, messages=[
            dict(m, content=_content(label, m["content"])) if type(m) is dict and "content" in m
            else m for m in result["messages"]])
    return result


def _uri_in(label, item):
    if type(item) is dict and type(item.get("uri")) is str:
        return dict(item, uri=labelled_uri(label, item["uri"]))
    return item


def _content(label, block):
    # resource_link blocks name a URI; embedded resources carry one.
    if type(block) is not dict:
        return block
    if block.get("type") == "resource_link":
        return _uri_in(label, block)
    if block.get("type") == "resource":
        return dict(block, resource=_uri_in(label, block.get("resource")))
    return block


# -- the compact tool surface (--compact): a tool that several boards share appears once, under
#    the boards' own name, with a "board" argument (an enum of the labels that have it), so four
#    boards of eight tools are eight tools, not 32 (docs/bridge.md, "A compact tool surface") ---

BOARD = "board"   # the argument the bridge adds; a tool that has its own keeps LABEL_TOOL names
# What boards must agree on for a tool to be one: what a host validates and relies on. The
# description and title may differ (a newer firmware words it better): the first board's show.
SHARED = ("inputSchema", "outputSchema", "annotations", "execution")


class Entry:
    # One tool as hosts see it: the tool, and {label: the board's own name} of the boards it
    # reaches; chooses: whether the call names its board in BOARD.
    def __init__(self, tool, targets, chooses):
        self.tool = tool
        self.targets = targets
        self.chooses = chooses

    def route(self, arguments):
        # A call's arguments -> (label, own name, the arguments for the board), or (None, the
        # reason, None) when the board is missing or has no such tool.
        if not self.chooses:
            (label, own), = self.targets.items()
            return label, own, arguments
        arguments = dict(arguments)
        label = arguments.pop(BOARD, None)
        if label is None and len(self.targets) == 1:
            label = next(iter(self.targets))
        if type(label) is str and label in self.targets:   # a list or an object is no label
            return label, self.targets[label], arguments
        labels = ", ".join(self.targets)
        if label is None:
            return None, "%s runs on boards %s: say which in its %r argument" % (
                self.tool["name"], labels, BOARD), None
        return None, "%s runs on no board %s; its %r is one of: %s" % (
            self.tool["name"], _quoted(label), BOARD, labels), None


def _quoted(value):
    return "%r" % (value,) if type(value) is not str else "'%s'" % value


def _agree(one, other):
    return all(one.get(key) == other.get(key) for key in SHARED)


def _fits(tool):
    # A tool can take the bridge's BOARD argument: a valid name, an object schema without one.
    schema = tool.get("inputSchema")
    props = schema.get("properties", {}) if type(schema) is dict else None
    return NAME.match(tool["name"]) is not None and type(props) is dict and BOARD not in props


def surface(boards):
    # boards: [(label, catalog)] of the boards hosts see now, in order -> {host name: Entry}.
    # Of the boards having a tool of one name, the most that agree (SHARED; the first board's
    # kind on a tie) share it under that name; every other keeps its labelled name (LABEL_TOOL,
    # as without --compact), so one odd board splits nothing off the others.
    by_name = {}
    for label, catalog in boards:
        for tool in catalog.visible("tools"):
            by_name.setdefault(tool["name"], []).append((label, tool))
    entries, apart = {}, []
    for name, having in by_name.items():
        kinds = []   # [[(label, tool), ...] of one signature], in the order first seen
        for label, tool in having:
            same = next((kind for kind in kinds if _agree(kind[0][1], tool)), None)
            if same is None:   # agreeing tools fit alike: the same name and inputSchema
                kinds.append([(label, tool)])
            else:
                same.append((label, tool))
        shared = max((kind for kind in kinds if _fits(kind[0][1])), key=len, default=())
        for kind in kinds:
            if kind is not shared:
                apart += kind
        if shared:
            labels = [label for label, _tool in shared]
            entries[name] = Entry(_shared(shared[0][1], labels),
                                  {label: name for label in labels}, True)
    shown = {label: {own: host for host, own in catalog.names["tools"].items()}
             for label, catalog in boards}
    for label, tool in apart:
        host, n = shown[label].get(tool["name"]) or labelled_name(label, tool["name"]), 1
        while host in entries:   # a board's own name, shared, that reads like LABEL_TOOL
            n += 1
            host = labelled_name(label, "%s-%d" % (tool["name"], n))
        entries[host] = Entry(dict(tool, name=host), {label: tool["name"]}, False)
    return entries


def _shared(tool, labels):
    # The tool with a BOARD property first (required when more than one board has it), and its
    # description saying where it runs.
    schema = tool["inputSchema"]
    choice = {"type": "string", "enum": labels,
              "description": "the board to run it on: " + ", ".join(labels)}
    shared = dict(schema, properties=dict({BOARD: choice}, **schema.get("properties", {})))
    if len(labels) > 1:
        required = schema.get("required")
        shared["required"] = [BOARD] + (required if type(required) is list else [])
    where = "Runs on board%s %s (its %r argument)." % ("s" if len(labels) > 1 else "",
                                                       ", ".join(labels), BOARD)
    description = tool.get("description")
    return dict(tool, inputSchema=shared,
                description="%s\n\n%s" % (description, where) if description else where)


def surface_instructions(entries):
    # The instructions' lines on tools: how the surface is made, and where each tool runs.
    lines = ["A tool several boards have appears once, with a %r argument naming the board to "
             "run it on (its schema lists the labels that have it); a board whose tool differs "
             "from the one most boards have (its schema, annotations) has it as LABEL_TOOL. "
             "The tools:" % BOARD]
    for host, entry in entries.items():
        lines.append("- %s: %s" % (host, ", ".join(entry.targets)))
    return lines


# -- a host's request to its board, and the reply back ------------------------------------------

class Routes:
    # How the names hosts use reach the boards: boards is the router's list (router.py adds and
    # removes them; each has .label, .catalog, .pinned, .listed, .name). several: tools are
    # LABEL_TOOL and resources LABEL+URI (two or more boards, or --port auto); compact (with
    # several): a tool the boards share is one, with a BOARD argument.

    def __init__(self, boards, several, compact=False):
        self.boards = boards
        self.several = several
        self.compact = several and compact
        self.labels_seen = set()  # every label a board had in this run (names that read as
                                  # LABEL_TOOL or LABEL+URI of one are its, never another's)

    def seen(self, label):
        # A board has this label now: from here on names that read as its are its only.
        if label is not None and label not in self.labels_seen:
            self.labels_seen.add(label)
            self.refuse_foreign()

    def labelled(self, label):
        return next((b for b in self.boards if b.label == label and label is not None), None)

    # -- inward: a host's request -> its board, in the board's own names -------------------

    def target(self, method, params):
        # -> (the board, params in its own names), or (None, the reply: an error, or what the
        # pins or a foreign name withhold). Nothing of a refused request reaches a board.
        board, params = self._find(method, params)
        if board is None:
            return None, params
        refused = self._withheld(board, method, params)
        return (board, params) if refused is None else (None, refused)

    def _find(self, method, params):
        if not self.several:
            return self.boards[0], params
        if method == "tools/call" and self.compact:
            found = self._compact(params)
            if found is not None:
                return found
        return self._labelled_target(method, params)

    def resource(self, uri):
        # A host's URI -> (its board's label, the board or None when not here now, its own URI).
        if not self.several:
            board = self.boards[0]
            return board.label, board, uri
        label, own = split_uri(uri)
        return label, self.labelled(label), own

    def read_only(self, params):
        # Whether a tools/call reaches a tool its board marks readOnlyHint (the HTTP front's
        # OAuth scopes, http.py); an unknown tool is not.
        board, own = self._called(params)
        return board is not None and board.catalog.read_only.get(own) is True

    def input_schema(self, params):
        # The inputSchema its board lists for the tool a tools/call reaches, or None (the HTTP
        # front checks the call's Mcp-Param-* headers against it, http.py).
        board, own = self._called(params)
        return board.catalog.input_schema.get(own) if board is not None else None

    def express(self, name):
        # The board a tools/call of the tool hosts call `name` goes to as it is but for the
        # name, and the board's own name for it -> (board, own), or None: the general way
        # routes it (compact names, a name no board lists).
        if not self.several:
            return (self.boards[0], name) if self.boards else None
        if self.compact:
            return None
        for board in self.boards:   # as _by_name finds it
            own = board.catalog.names["tools"].get(name)
            if own is not None:
                return board, own
        return None

    def _called(self, params):
        # A tools/call's params -> (its board or None, the tool's own name there).
        if not self.several:
            board, forward = (self.boards[0] if self.boards else None), params
        else:
            board, forward = self._find("tools/call", params)
        return board, (forward.get("name") if board is not None else None)

    def task_support(self, name):
        # The execution.taskSupport of the tool hosts call `name`, or None.
        if not self.several:
            board, own = self.boards[0], name
        else:
            board, own = self._by_name("tools", name, lambda own: own)
        return board.catalog.task_support.get(own) if board else None

    def _labelled_target(self, method, params):
        if method in ("tools/call", "prompts/get"):
            return self._by_name("tools" if method == "tools/call" else "prompts",
                                 params.get("name"), lambda own: dict(params, name=own))
        if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
            return self._by_uri(params.get("uri"), lambda own: dict(params, uri=own))
        if method == "completion/complete":
            ref = params.get("ref")
            kind = ref.get("type") if type(ref) is dict else None
            if kind == "ref/prompt":
                return self._by_name("prompts", ref.get("name"),
                                     lambda own: dict(params, ref=dict(ref, name=own)))
            if kind == "ref/resource":
                return self._by_uri(ref.get("uri"),
                                    lambda own: dict(params, ref=dict(ref, uri=own)))
            return None, err(INVALID_PARAMS, "Invalid params: ref must be a ref/prompt or a "
                             "ref/resource")
        return None, err(METHOD_NOT_FOUND, "Method not found: " + shown(method))

    def _compact(self, params):
        # A call by its compact name -> (the board, params in its names) or (None, the reply);
        # None when the name is not one (LABEL_TOOL still reaches a board's tool).
        name = params.get("name")
        entries = self.surface()
        entry = entries.get(name) if type(name) is str else None   # a list is no key: -32602 below
        label = split_name(name)[0] if type(name) is str else None
        if entry is not None and label in self.labels_seen and set(entry.targets) != {label}:
            entry = None   # LABEL_TOOL is the board LABEL's tool, whatever another board lists
        if entry is None:
            if type(name) is not str or label in self.labels_seen:
                return None
            for board in self.boards:
                why = board.pinned.withheld("tools", name) if board.pinned is not None else None
                if why is not None and board.listed:
                    return None, _tool_error(why)
            return None, err(INVALID_PARAMS, "Unknown tool: %s (the tools: %s)"
                             % (shown(name), ", ".join(entries) or "none while no board is ready"))
        arguments = params.get("arguments")
        label, own, arguments = entry.route(arguments if type(arguments) is dict else {})
        if label is None:
            return None, _tool_error(own)
        return self.labelled(label), dict(params, name=own, arguments=arguments)

    def _by_name(self, kind, name, rename):
        what = "tool" if kind == "tools" else "prompt"
        if type(name) is not str:
            return None, err(INVALID_PARAMS, "Invalid params: the %s's name must be a string"
                             % what)
        for board in self.boards:
            own = board.catalog.names[kind].get(name)
            if own is not None:
                return board, rename(own)
        label, own = split_name(name)
        board = self.labelled(label)
        if board is None:
            return None, err(INVALID_PARAMS, "Unknown %s: %s (a %s's name starts with its "
                             "board's label: %s)" % (what, shown(name), what, self._labels()))
        return board, rename(own)

    def _by_uri(self, uri, rename):
        if type(uri) is not str:
            return None, err(INVALID_PARAMS, "Invalid params: uri must be a string")
        label, own = split_uri(uri)
        board = self.labelled(label)
        if board is None:
            return None, err(RESOURCE_NOT_FOUND, "Resource not found: %s (a resource's URI "
                             "starts with its board's label and a plus: %s)"
                             % (shown(uri), self._labels()))
        return board, rename(own)

    def _labels(self):
        return ", ".join("%s+..., %s_..." % (b.label, b.label) for b in self.boards
                         if b.label) or "no board is connected"

    # -- outward: what hosts see ------------------------------------------------------------

    def outward_reply(self, board, method, reply):
        # A board's reply as hosts see it: a lone board's list page less what its pins
        # withhold; with several, the URIs it names carry the board's label.
        if not self.several:
            if method in LISTS and board.pinned is not None:
                return _screened(board, LISTS[method], reply)
            return reply
        if "result" in reply:
            result = outward(board.label, method, reply["result"])
            # Nothing relabelled: the board's own answer (a wire.BoardAnswer goes as it came).
            return reply if result is reply["result"] else {"result": result}
        return reply

    def outward_uri(self, board, uri):
        # A URI the board names (a resource updated) as hosts know it.
        return labelled_uri(board.label, uri) if self.several else uri

    def outward_log(self, board, msg):
        # A log line of the board as hosts get it: with several boards the logger names it.
        if not self.several:
            return msg
        params = msg["params"]
        logger = params.get("logger")
        return dict(msg, params=dict(params, logger=board.label + (
            "/%s" % logger if type(logger) is str and logger else "")))

    def list_of(self, kind, params):
        # With several boards a list is answered from what the boards offered: at once, in one
        # page, whatever any board is doing.
        if params.get("cursor") is not None:
            return err(INVALID_PARAMS, "Invalid params: this list has one page; no cursor")
        if kind == "tools" and self.compact:
            return {"result": {"tools": [e.tool for e in self.surface().values()]}}
        items = []
        for board in self.boards:
            if board.listed:
                items += board.catalog.listing(kind, board.label)
        return {"result": {KINDS[kind][1]: items}}

    def surface(self):
        return surface([(b.label, b.catalog) for b in self.boards if b.listed])

    # -- what hosts may not use: entries withheld by the pins, or reading as another board's --

    def _withheld(self, board, method, params):
        # -> the reply to a host's use of an entry it may not use now, else None. params: in
        # the board's own names.
        kind, name = _entry(method, params)
        if kind is None or type(name) is not str:
            return None
        why = self.refusal(board, kind, name)
        if why is None:
            return None
        if method == "tools/call":
            return _tool_error(why)
        return err(RESOURCE_NOT_FOUND if kind == "resources" else INVALID_PARAMS, why)

    @staticmethod
    def refusal(board, kind, name):
        # -> why hosts may not use the board's entry of this kind and own name now, or None.
        why = board.catalog.hidden[kind].get(name)
        if why is None and board.pinned is not None:
            why = board.pinned.withheld(kind, name)
        if why is None and kind == "resources":
            why = _from_template(board, name)
        return why

    def refuse_foreign(self, boards=None):
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


def _tool_error(text):
    return {"result": {"content": [{"type": "text", "text": text}], "isError": True}}


def _screened(board, kind, reply):
    # A page of a lone board's list, less what its pins withhold.
    result = reply.get("result")
    key = KINDS[kind][1]
    if type(result) is not dict or type(result.get(key)) is not list:
        return reply
    return {"result": dict(result, **{key: [item for item in result[key]
                                           if board.pinned.accepts(kind, item)]})}


def _from_template(board, uri):
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
