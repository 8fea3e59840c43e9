# The shape of the core: no module of tinymcp/ imports one that imports it back (directly or not),
# device code never imports host code, and the vocabulary sits at the bottom.
import ast
import os

from tests.board_process import REPO
from tinymcp import later


LATER = {entry[1] for entry in later.LATER}   # what loads later, by full dotted name


def imports_of(path):
    # Modules of tinymcp (and ports) that path imports, at any depth (lazy imports in functions
    # count), and those it loads later by a target of tinymcp/later.py's table (a string naming
    # "tinymcp.listing.page" imports tinymcp.listing when it runs).
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(node.module + "." + a.name for a in node.names)
        elif (isinstance(node, ast.Constant) and node.value in LATER
              and not path.endswith(os.path.join("tinymcp", "later.py"))):
            found.add(node.value.rpartition(".")[0])
    return {name for name in found if name.startswith(("tinymcp", "ports"))}


def module_graph(*folders):
    # {"tinymcp.server": {"tinymcp.jsonrpc", ...}, ...} over the device modules (folders: of
    # the device core by default).
    graph = {}
    for folder in folders or ("tinymcp",):
        base = os.path.join(REPO, folder)
        for root, dirs, files in os.walk(base):
            dirs[:] = [d for d in dirs if d not in ("host", "cpython", "__pycache__")]
            for name in files:
                if name.endswith(".py"):
                    rel = os.path.relpath(os.path.join(root, name), REPO)[:-3].replace(os.sep, ".")
                    module = rel[:-len(".__init__")] if rel.endswith(".__init__") else rel
                    graph[module] = imports_of(os.path.join(root, name))
    for module in graph:  # keep edges to modules, not to names inside them
        graph[module] = {m for m in graph[module] if m in graph and m != module}
    return graph


def cycle(graph):
    # One import cycle as a list of modules, or None.
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if nxt == "tinymcp":  # the package face: importing a submodule runs it first
                continue
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node, [node])
            if found:
                return found
    return None


def test_the_device_core_has_no_import_cycle():
    # What loads later counts (history -> historytools by "tinymcp.historytools.read_history").
    graph = module_graph()
    assert "tinymcp.historytools" in graph["tinymcp.history"]
    assert cycle(graph) is None, cycle(graph)


def test_the_device_tree_with_its_ports_has_no_import_cycle():
    # ports/ (the board's serve glue, safe boot) with the core: boot loads safeboot later
    # ("ports.micropython.safeboot.ready"), and safeboot imports nothing of boot.
    graph = module_graph("tinymcp", "ports")
    assert "ports.micropython.safeboot" in graph["ports.micropython.boot"]
    assert cycle(graph) is None, cycle(graph)


def test_the_host_programs_have_no_import_cycle():
    # tinymcp/host (bridge, deploy, firmware), lazy imports included: the bridge's command line
    # (options.py) sits below both the bridge (cli.py) and --install (install.py).
    # A package's face (tinymcp.host.deploy's DeployError and its lazy main) runs before any
    # module of the package, so a module's import of its own package closes no circle.
    graph = module_graph(os.path.join("tinymcp", "host"))
    assert "tinymcp.host.bridge.cli" in graph and "tinymcp.host.deploy.cli" in graph
    for module, imported in graph.items():
        graph[module] = {m for m in imported if not module.startswith(m + ".")}
    assert cycle(graph) is None, cycle(graph)


def test_device_code_never_imports_host_code():
    for module, imported in module_graph().items():
        assert not [m for m in imported if m.startswith("tinymcp.host")], module


def test_the_vocabulary_imports_nothing_of_tinymcp():
    assert module_graph()["tinymcp.protocol"] == set()


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
