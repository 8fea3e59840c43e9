# Registries of tools, resources and prompts: entries kept as tuples keyed by their first item.
from tinymcp.jsonrpc import RpcError, INVALID_PARAMS, must


class Registry:
    # Entries in registration order; a new entry replaces the one with its key.
    def __init__(self):
        self.items = []

    def put(self, entry):
        self.remove(entry[0])
        self.items.append(entry)

    def remove(self, key):
        entry = self.find(key)
        if entry is None:
            return False
        self.items.remove(entry)
        return True

    def find(self, key):
        for entry in self.items:
            if entry[0] == key:
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

