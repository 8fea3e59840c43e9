# Which repo files a board runs: traces boards/NAME/main.py's build() on CPython, prints JSON.
#
#   python board_files.py NAME   ->  {"files": [...repo-relative .py paths], "how": "traced"|"static",
#                                     "lazy": [core modules imported only on demand, not in files]}
#
# Hardware modules (machine, network, ...) are stubbed so build() can run off the board. When
# build() still fails, the files are found statically from the import statements instead.
import ast
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HARDWARE = ("machine", "network", "rp2", "esp", "esp32", "neopixel", "onewire", "ds18x20",
            "dht", "bluetooth", "pyb", "micropython", "framebuf", "utime")
# The serve path on a board: the MicroPython port and what it imports.
SERVING = ("ports/__init__.py", "ports/micropython/__init__.py", "tinymcp/channel.py",
           "tinymcp/framing.py", "tinymcp/clock.py")


class _Stub:
    # Accepts any construction, call and attribute: enough for a board's wiring code.
    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Stub()

    def __getattr__(self, name):
        return _Stub()

    def __int__(self):
        return 0

    __index__ = __int__


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in HARDWARE:
            return importlib.machinery.ModuleSpec(name, self)
        return None

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__getattr__ = lambda attr: _Stub()
        module.const = lambda x: x
        return module

    def exec_module(self, module):
        pass


def traced(name):
    sys.meta_path.insert(0, _StubFinder())
    sys.path.insert(0, ROOT)
    path = os.path.join(ROOT, "boards", name, "main.py")
    spec = importlib.util.spec_from_file_location("board_main", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server = module.build()
    # The first requests of a session load whatever capabilities the board registered.
    for frame in (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                  b'"2025-11-25","capabilities":{}}}',
                  b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
                  b'{"jsonrpc":"2.0","id":3,"method":"resources/list"}',
                  b'{"jsonrpc":"2.0","id":4,"method":"prompts/list"}'):
        server.handle(frame)
    files = {"boards/" + name + "/main.py"}
    for mod in list(sys.modules.values()):
        where = getattr(mod, "__file__", None)
        if not isinstance(where, str):  # built-ins, and the hardware stubs
            continue
        rel = os.path.relpath(where, ROOT) if where.startswith(ROOT + os.sep) else ""
        if rel.split(os.sep)[0] in ("tinymcp", "ports", "boards") and rel.endswith(".py"):
            files.add(rel.replace(os.sep, "/"))
    return files


def _module_file(dotted):
    base = os.path.join(ROOT, *dotted.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.exists(candidate):
            return os.path.relpath(candidate, ROOT).replace(os.sep, "/")
    return None


def static(name):
    # Every tinymcp/ports import reachable from the board's main.py, lazy ones included.
    todo = ["boards/" + name + "/main.py"]
    files = set()
    while todo:
        rel = todo.pop()
        if rel in files:
            continue
        files.add(rel)
        with open(os.path.join(ROOT, rel)) as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [node.module + "." + a.name for a in node.names]
            for dotted in names:
                parts = dotted.split(".")
                if parts[0] not in ("tinymcp", "ports"):
                    continue
                for i in range(1, len(parts) + 1):  # packages on the way are imported too
                    found = _module_file(".".join(parts[:i]))
                    if found:
                        todo.append(found)
    return files


def main():
    name = sys.argv[1]
    try:
        files, how = traced(name), "traced"
    except Exception as e:  # noqa: BLE001  (any failure of a board's build: fall back)
        files, how = static(name), "static (build() failed off the board: %s)" % e
    files.update(f for f in SERVING if os.path.exists(os.path.join(ROOT, f)))
    for extra in static(name):
        if extra.startswith("ports/"):
            files.add(extra)
    files = {f for f in files if not f.startswith("ports/cpython/")}  # host-only
    # Loaded only when a request needs them (e.g. the 2026-07-28 era, completion): a deploy
    # that leaves them out saves their size and loses that feature.
    lazy = sorted(f for f in static(name) if f not in files and f.startswith("tinymcp/")
                  and not f.startswith("tinymcp/sensors/"))
    print(json.dumps({"files": sorted(files), "how": how, "lazy": lazy}))


if __name__ == "__main__":
    main()
