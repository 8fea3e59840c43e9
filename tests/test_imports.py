# The shape of the core: no module of tinymcp/ imports one that imports it back (directly or not),
# device code never imports host code, and the vocabulary sits at the bottom.
import ast
import os

from tests.board_process import REPO


def imports_of(path):
    # Modules of tinymcp that path imports, at any depth (lazy imports in functions count).
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(node.module + "." + a.name for a in node.names)
    return {name for name in found if name.startswith("tinymcp")}


def module_graph(folder="tinymcp"):
    # {"tinymcp.server": {"tinymcp.jsonrpc", ...}, ...} over the device modules.
    graph = {}
    base = os.path.join(REPO, folder)
    for root, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d not in ("host", "__pycache__")]
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
    assert cycle(module_graph()) is None, cycle(module_graph())


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
