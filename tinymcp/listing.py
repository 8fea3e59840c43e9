# The pages of list results: tools/list, resources/list, resources/templates/list and
# prompts/list. A page is built once a session (it is kept encoded, Server.page), so this module
# is imported for that and released after it (tinymcp.once, tinymcp/later.py).
from tinymcp import schema
from tinymcp.jsonrpc import dumps
from tinymcp.protocol import const

# The entry slots read here: private copies (mpy-cross folds them away, no RAM) of the layout
# tinymcp/entries.py owns; tests/test_entries.py checks each against the owner's.
_KEY = const(0)
_DESCRIPTION = const(2)
_TITLE = const(3)
_INPUTS = const(4)      # a tool's
_OUTPUTS = const(5)
_HINTS = const(6)
_NAME = const(5)        # a resource's
_MIME = const(6)
_PARTS = const(8)
_ARGUMENTS = const(5)   # a prompt's

# A page this long or shorter is kept as one bytes object: in pieces, each would cost its own
# object and block rounding (0.2 KiB on the benchmark's reference board, three tools). A longer
# page stays in pieces, so that no block of its whole size is needed (docs/ram.md, session 10).
_JOINED = const(2048)

# The tool hints, in the order tinymcp.tools.pack_hints packs them.
_HINT_NAMES = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")


def page(server, key, items, start):
    # The page of items from start, encoded entry by entry (one entry's dicts at a time, never
    # the whole page's) and kept as its pieces, or joined when short (_JOINED): a long page
    # joined would want one block of its whole size (4.6 KB for the sim board's tools), and the
    # pieces alive beside it while it is made.
    # A link whose messages have a bounded size (MQTT: its room) gets pages that fit it: a page
    # ends before the entry that would not fit, with one entry at least.
    describe = tool if key == "tools" else prompt if key == "prompts" else resource
    count = len(items)
    room = getattr(server.session.link, "room", 0)
    if room:  # less what the longest tail takes (a cursor has at most the digits of count - 1)
        room -= len(_tail(server, count - 1, count))
    last = min(count, start + server.page_size)
    era = server.session.era
    parts = [b'{"' + key.encode() + b'":[']
    size = len(parts[0])
    end = start
    while end < last:
        entry = dumps(describe(items[end], era))
        size += len(entry) + 1
        if end > start:
            if room and size > room:
                break
            parts.append(b",")
        parts.append(entry)
        end += 1
    parts.append(_tail(server, end, count))
    if size + len(parts[-1]) <= _JOINED:
        return b"".join(parts)
    return tuple(parts)


def _tail(server, end, count):
    # What closes a page: its cursor, if more follow, and the revision's fields.
    more = {"nextCursor": str(end)} if end < count else {}
    more = dumps(server.session.revision.finish(server, "list", more))
    return b"]," + more[1:] if len(more) > 2 else b"]}"


def head(name, title, description, era):
    # The fields a tool, prompt or resource entry of a list result starts with.
    d = {"name": name}
    if title and era >= 2:
        d["title"] = title
    if description:
        d["description"] = description
    return d


def tool(entry, era):
    title = entry[_TITLE]
    d = head(entry[_KEY], title, entry[_DESCRIPTION], era)
    d["inputSchema"] = schema.obj(entry[_INPUTS])
    if entry[_OUTPUTS] is not None and era >= 2:
        d["outputSchema"] = schema.obj(entry[_OUTPUTS])
    hints = entry[_HINTS]
    if hints >> 8 and era == 3:  # 2025-11-25; 2026-07-28 tasks are server-directed
        d["execution"] = {"taskSupport": "required" if hints >> 8 == 2 else "optional"}
    hints &= 0xFF
    if era >= 1 and (hints or title):
        notes = {}
        if title:
            notes["title"] = title
        for i in range(len(_HINT_NAMES)):
            bits = (hints >> (2 * i)) & 3
            if bits:
                notes[_HINT_NAMES[i]] = bits == 2
        d["annotations"] = notes
    return d


def resource(entry, era):
    # A static resource or a template (resources/templates/list).
    d = head(entry[_NAME], entry[_TITLE], entry[_DESCRIPTION], era)
    d["uriTemplate" if entry[_PARTS] else "uri"] = entry[_KEY]
    if entry[_MIME]:
        d["mimeType"] = entry[_MIME]
    return d


def prompt(entry, era):
    d = head(entry[_KEY], entry[_TITLE], entry[_DESCRIPTION], era)
    if entry[_ARGUMENTS]:
        d["arguments"] = entry[_ARGUMENTS]
    return d
