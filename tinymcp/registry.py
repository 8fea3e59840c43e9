# Registries of tools, resources and prompts: entries kept as tuples keyed by their first item,
# in the one layout tinymcp/entries.py names, never read by number (tests/test_entries.py).
from tinymcp import once
from tinymcp.jsonrpc import RpcError, INVALID_PARAMS, must
from tinymcp.protocol import const

# The entry slot read here: a private copy (mpy-cross folds it away, no RAM) of the layout
# tinymcp/entries.py owns; tests/test_entries.py checks it against the owner's.
_KEY = const(0)


class Registry:
    # Entries in registration order; a new entry replaces the one with its key.
    def __init__(self):
        self.items = []

    def put(self, entry):
        self.remove(entry[_KEY])
        self.items.append(entry)

    def remove(self, key):
        entry = self.find(key)
        if entry is None:
            return False
        self.items.remove(entry)
        return True

    def find(self, key):
        for entry in self.items:
            if entry[_KEY] == key:
                return entry
        return None

    def named(self, params, what):
        # The entry a request's "name" names, else the invalid-params error saying why.
        name = params.get("name")
        if type(name) is not str:
            raise RpcError(INVALID_PARAMS, must("name", "a string"))
        entry = self.find(name)
        if entry is None:
            raise RpcError(INVALID_PARAMS, "Unknown " + what + ": "
                           + once("tinymcp.echo.shown", name))
        return entry

