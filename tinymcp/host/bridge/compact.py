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
        if label in self.targets:
            return label, self.targets[label], arguments
        labels = ", ".join(self.targets)
        if label is None:
            return None, "%s runs on boards %s: say which in its %r argument" % (
                self.tool["name"], labels, BOARD), None
        return None, "%s runs on no board %s; its %r is one of: %s" % (
            self.tool["name"], _quoted(label), BOARD, labels), None


def _quoted(value):
    return "%r" % (value,) if type(value) is not str else "'%s'" % value


def _fits(tool):
    # A tool can take the bridge's BOARD argument: a valid name, an object schema without one.
    schema = tool.get("inputSchema")
    props = schema.get("properties", {}) if type(schema) is dict else None
    return NAME.match(tool["name"]) is not None and type(props) is dict and BOARD not in props


def surface(boards):
    # boards: [(label, catalog)] of the boards hosts see now, in order -> {host name: Entry}.
    # A name whose boards all agree (SHARED) is one tool; otherwise each board's keeps its
    # labelled name (LABEL_TOOL, as without --compact).
    by_name = {}
    for label, catalog in boards:
        for tool in catalog.items["tools"] or ():
            if type(tool.get("name")) is str:
                by_name.setdefault(tool["name"], []).append((label, tool))
    entries, apart = {}, []
    for name, having in by_name.items():
        first = having[0][1]
        if all(_fits(tool) and all(tool.get(k) == first.get(k) for k in SHARED)
               for _label, tool in having):
            labels = [label for label, _tool in having]
            entries[name] = Entry(_shared(first, labels), {label: name for label in labels},
                                  True)
        else:
            apart += having
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
             "run it on (its schema lists the labels that have it); a tool whose boards "
             "differ in its schema is LABEL_TOOL, one per board. The tools:" % BOARD]
    for host, entry in entries.items():
        lines.append("- %s: %s" % (host, ", ".join(entry.targets)))
    return lines
