# Registries of tools, resources and prompts, and the one layout of their entries: a tuple each
# (the least RAM an entry can take), read everywhere by these names, never by number
# (tests/test_entries.py holds that, and that the registries build this layout).
from tinymcp.jsonrpc import RpcError, INVALID_PARAMS, must
from tinymcp.protocol import const

# Every entry starts (key, fn, description, title); key is a tool's or a prompt's name, a
# resource's URI or URI template.
KEY = const(0)
FN = const(1)
DESCRIPTION = const(2)
TITLE = const(3)
# A tool goes on (inputs, outputs, hints, wants_ctx): inputs and outputs as declared (the compact
# form or a whole schema), hints its annotations and task support packed (tools.pack_hints).
INPUTS = const(4)
OUTPUTS = const(5)
HINTS = const(6)
CTX = const(7)
# A resource goes on (complete, name, mime, watch, parts), parts None for an exact URI, else the
# template's (literals, variables); a prompt on (complete, arguments), its arguments as listed.
COMPLETE = const(4)
NAME = const(5)
MIME = const(6)
WATCH = const(7)
PARTS = const(8)
ARGUMENTS = const(5)


class Registry:
    # Entries in registration order; a new entry replaces the one with its key.
    def __init__(self):
        self.items = []

    def put(self, entry):
        self.remove(entry[KEY])
        self.items.append(entry)

    def remove(self, key):
        entry = self.find(key)
        if entry is None:
            return False
        self.items.remove(entry)
        return True

    def find(self, key):
        for entry in self.items:
            if entry[KEY] == key:
                return entry
        return None

    def named(self, params, what):
        # The entry a request's "name" names, else the invalid-params error saying why.
        name = params.get("name")
        if type(name) is not str:
            raise RpcError(INVALID_PARAMS, must("name", "a string"))
        entry = self.find(name)
        if entry is None:
            raise RpcError(INVALID_PARAMS, "Unknown " + what + ": " + name)
        return entry

