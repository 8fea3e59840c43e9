# Registries of tools, resources and prompts: entries kept as tuples keyed by their first item.


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


def head(name, title, description, era):
    # The fields a tool, prompt or resource entry of a list result starts with.
    d = {"name": name}
    if title and era >= 2:
        d["title"] = title
    if description:
        d["description"] = description
    return d
