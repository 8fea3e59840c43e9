# The pages of list results: tools/list, resources/list, resources/templates/list and
# prompts/list. A page is built once a session (it is kept encoded, Server.page), so this module
# is imported for that and released after it (tinymcp.once, tinymcp/later.py).
from tinymcp import schema
from tinymcp.jsonrpc import dumps
from tinymcp.protocol import const

# Where an entry keeps what its list entry says (the layouts are tools.py's, resources.py's and
# prompts.py's).
_TOOL_DESCRIPTION = const(2)
_TOOL_INPUTS = const(3)
_TOOL_OUTPUTS = const(4)
_TOOL_TITLE = const(5)
_TOOL_HINTS = const(6)
_RES_NAME = const(2)
_RES_DESCRIPTION = const(3)
_RES_MIME = const(4)
_RES_TITLE = const(5)
_RES_PARTS = const(8)
_HINTS = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")  # packed in order


def page(server, key, items, start):
    # The page of items from start, encoded entry by entry (one entry's dicts at a time, never
    # the whole page's) and kept as its pieces: a joined page would want one block of its whole
    # size (4.6 KB for the sim board's tools), and the pieces alive beside it while it is made.
    describe = tool if key == "tools" else prompt if key == "prompts" else resource
    end = start + server.page_size
    era = server.session.era
    parts = [b'{"' + key.encode() + b'":[']
    for item in items[start:end]:
        if len(parts) > 1:
            parts.append(b",")
        parts.append(dumps(describe(item, era)))
    parts.append(b"]")
    more = {"nextCursor": str(end)} if end < len(items) else {}
    more = dumps(server.session.revision.finish(server, "list", more))  # the revision's fields
    if len(more) > 2:
        parts.append(b"," + more[1:])
    else:
        parts.append(b"}")
    return tuple(parts)


def head(name, title, description, era):
    # The fields a tool, prompt or resource entry of a list result starts with.
    d = {"name": name}
    if title and era >= 2:
        d["title"] = title
    if description:
        d["description"] = description
    return d


def tool(entry, era):
    title = entry[_TOOL_TITLE]
    d = head(entry[0], title, entry[_TOOL_DESCRIPTION], era)
    d["inputSchema"] = schema.obj(entry[_TOOL_INPUTS])
    if entry[_TOOL_OUTPUTS] is not None and era >= 2:
        d["outputSchema"] = schema.obj(entry[_TOOL_OUTPUTS])
    hints = entry[_TOOL_HINTS]
    if hints >> 8 and era == 3:  # 2025-11-25; 2026-07-28 tasks are server-directed
        d["execution"] = {"taskSupport": "required" if hints >> 8 == 2 else "optional"}
    hints &= 0xFF
    if era >= 1 and (hints or title):
        notes = {}
        if title:
            notes["title"] = title
        for i in range(len(_HINTS)):
            bits = (hints >> (2 * i)) & 3
            if bits:
                notes[_HINTS[i]] = bits == 2
        d["annotations"] = notes
    return d


def resource(entry, era):
    # A static resource or a template (resources/templates/list).
    d = head(entry[_RES_NAME], entry[_RES_TITLE], entry[_RES_DESCRIPTION], era)
    d["uriTemplate" if entry[_RES_PARTS] else "uri"] = entry[0]
    if entry[_RES_MIME]:
        d["mimeType"] = entry[_RES_MIME]
    return d


def prompt(entry, era):
    d = head(entry[0], entry[4], entry[2], era)
    if entry[3]:
        d["arguments"] = [_argument(a) for a in entry[3]]
    return d


def _argument(arg):
    d = {"name": arg[0]}
    if arg[1]:
        d["description"] = arg[1]
    d["required"] = arg[2]
    return d
