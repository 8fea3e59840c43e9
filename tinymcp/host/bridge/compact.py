# The compact tool surface (tinymcp-bridge --compact): a tool that several boards share appears
# once, under the boards' own name, with a "board" argument (an enum of the labels that have it),
# so four boards of eight tools are eight tools, not 32 (docs/bridge.md, "A compact tool surface").
from tinymcp.host.bridge.catalog import NAME, labelled_name

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


def instructions(entries):
    # The instructions' lines on tools: how the surface is made, and where each tool runs.
    lines = ["A tool several boards have appears once, with a %r argument naming the board to "
             "run it on (its schema lists the labels that have it); a board whose tool differs "
             "from the one most boards have (its schema, annotations) has it as LABEL_TOOL. "
             "The tools:" % BOARD]
    for host, entry in entries.items():
        lines.append("- %s: %s" % (host, ", ".join(entry.targets)))
    return lines
