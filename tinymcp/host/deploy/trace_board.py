# Run by files.py in a fresh interpreter: python trace_board.py OUT.JSON MAIN BOARD_DIR CORE DEVICE
#
# Imports the board's main file (MAIN) under CPython with the hardware modules stubbed, calls build(), plays
# the first requests of a session in each protocol era, and writes the files of the modules that
# got imported (files.py keeps the device's: tinymcp/ from CORE, ports/ from DEVICE, the board's). Registrations import capabilities lazily (tools, resources, prompts), so this is exactly
# what the board's code path reaches.
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types

# The first requests of a connection in each era; what they load, a board must carry.
TOOLS_LIST = '{"jsonrpc":"2.0","id":3,"method":"tools/list"}'
HANDSHAKE = (
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    '"capabilities":{}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '{"jsonrpc":"2.0","id":2,"method":"ping"}',
    TOOLS_LIST,
    '{"jsonrpc":"2.0","id":4,"method":"resources/list"}',
    '{"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}',
    '{"jsonrpc":"2.0","id":6,"method":"prompts/list"}',
    '{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"info"}}',
)
STATELESS = (   # the 2026-07-28 revision: no handshake, any client may open with it
    '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}',
    '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":'
    '{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}',
)
BATCHED = (   # the 2025-03-26 revision, whose JSON-RPC carries batches (tinymcp/batch.py)
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26",'
    '"capabilities":{}}}',
    '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    '[{"jsonrpc":"2.0","id":2,"method":"ping"}]',
)


class Stub:
    # Any construction, call or attribute: enough for a board's wiring code (Pin.OUT, ADC(4)...).
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return Stub()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Stub()

    def __int__(self):
        return 0

    __index__ = __int__

    def __iter__(self):
        return iter(())


class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    # Last on the meta path: any module CPython lacks (machine, rp2, esp32, network...) is a stub.
    def find_spec(self, name, path, target=None):
        return importlib.machinery.ModuleSpec(name, self)

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__getattr__ = lambda attr: Stub().__getattr__(attr)
        module.const = lambda x: x   # micropython.const
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def main():
    out, path, board_dir, core, device = sys.argv[1:6]
    del sys.path[0]        # this directory: its modules are not the board's
    del sys.argv[1:]       # a board may read its own flags (the sim's --bench)
    sys.meta_path.append(StubFinder())
    sys.path[:0] = [board_dir, core, device]
    # Every module imported, those the core releases after a session's first requests included
    # (tinymcp.server.release): what ran once must be on the board too.
    imported = {}
    sys.addaudithook(lambda event, args: event == "import" and imported.setdefault(args[0]))
    spec = importlib.util.spec_from_file_location("main", path)
    board_main = importlib.util.module_from_spec(spec)
    sys.modules["main"] = board_main
    spec.loader.exec_module(board_main)
    server = board_main.build()
    answers = [server.handle(frame.encode()) for frame in HANDSHAKE]
    stateless = board_main.build()   # a second connection, opening in the 2026-07-28 revision
    for frame in STATELESS:
        stateless.handle(frame.encode())
    batched = board_main.build()   # a third, from a 2025-03-26 client that sends a batch
    for frame in BATCHED:
        batched.handle(frame.encode())
    files = []
    for module in list(sys.modules.values()):
        where = getattr(module, "__file__", None)
        if isinstance(where, str) and where.endswith(".py"):
            files.append(os.path.abspath(where))
    for name in imported:
        if name not in sys.modules:   # released: found again where it was imported from
            spec = importlib.util.find_spec(name)
            if spec is not None and isinstance(spec.origin, str) and spec.origin.endswith(".py"):
                files.append(os.path.abspath(spec.origin))
    # The conditions tinymcp/later.py ships a module on ("if F"), as this board answers them.
    flags = {"completions": bool(getattr(server, "completions", False)),
             "long_tools": _long_tools(server),
             "context": _wants_ctx(server),
             "leases": _leased(server, answers[HANDSHAKE.index(TOOLS_LIST)]),
             "jsonschema": "tinymcp.jsonschema" in imported}
    with open(out, "w") as f:
        json.dump({"files": sorted(set(files)), "flags": flags}, f)


def _leased(server, answer):
    # Does a listed tool take lease_s (tinymcp/leases.py holds it, loaded at its first lease)?
    # answer: tools/list's first page; later pages are asked for.
    while answer:
        page = json.loads(answer).get("result", {})
        if any("lease_s" in t.get("inputSchema", {}).get("properties", {})
               for t in page.get("tools", ())):
            return True
        cursor = page.get("nextCursor")
        answer = cursor and server.handle(json.dumps(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list",
             "params": {"cursor": cursor}}).encode())
    return False


def _long_tools(server):
    # Does the board have a generator tool (tinymcp/tasks.py steps it, loaded at its first call)?
    import inspect
    from tinymcp.entries import FN
    tools = getattr(server, "tools", None)
    return any(inspect.isgeneratorfunction(entry[FN]) for entry in getattr(tools, "items", ()))


def _wants_ctx(server):
    # Does a tool take ctx (tinymcp/context.py makes it, loaded at the first such call; the
    # trace calls no tool)?
    tools = getattr(server, "tools", None)
    if tools is None:
        return False
    from tinymcp.entries import CTX
    return any(entry[CTX] for entry in tools.items)


if __name__ == "__main__":
    main()
