# The shape of the tree: no module imports one that imports it back (directly or not), in the
# device core, the host programs, ports/, boards/ and tools/; device code never imports host code,
# and the vocabulary sits at the bottom.
import ast
import os

from tests.board_process import REPO
from tinymcp import later

TREE = ("tinymcp", "ports", "boards", "tools")   # all the code, tests aside

LATER = {entry[1] for entry in later.LATER}   # what loads later, by full dotted name


def modules(folder, skip=()):
    # {dotted name from the repository's root: path} of the .py files under folder.
    found = {}
    for root, dirs, files in os.walk(os.path.join(REPO, folder)):
        dirs[:] = [d for d in dirs if d not in skip + ("__pycache__", "node_modules")]
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, REPO)[:-3].replace(os.sep, ".")
                found[rel[:-len(".__init__")] if rel.endswith(".__init__") else rel] = path
    return found


def imports_of(path):
    # The modules path imports, at any depth (lazy imports in functions count), by dotted name. A
    # script's folder (one without __init__.py: tools/, a board's) is first on its sys.path, so a
    # plain `import simbench` there names its neighbour boards/sim/simbench.py. A string naming a
    # target of tinymcp/later.py's table ("tinymcp.listing.page") imports its module when it runs.
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    here = os.path.dirname(path)
    scripts = not os.path.exists(os.path.join(here, "__init__.py"))
    prefix = os.path.relpath(here, REPO).replace(os.sep, ".") + "."
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [node.module + "." + a.name for a in node.names]
        elif (isinstance(node, ast.Constant) and node.value in LATER
              and not path.endswith(os.path.join("tinymcp", "later.py"))):
            names = [node.value.rpartition(".")[0]]
        else:
            continue
        for name in names:
            found.add(name)
            if scripts and os.path.exists(os.path.join(here, name.split(".")[0] + ".py")):
                found.add(prefix + name)
    return found


def module_graph(*folders, skip=("host",)):
    # {"tinymcp.server": {"tinymcp.jsonrpc", ...}, ...}: the modules under folders (default: the
    # device core, tinymcp/ without host/), each with the modules of the same set it imports.
    paths = {}
    for folder in folders or ("tinymcp",):
        paths.update(modules(folder, skip))
    return {module: {m for m in imports_of(path) if m in paths and m != module}
            for module, path in paths.items()}


def cycle(graph):
    # One import cycle as a list of modules, or None. A package's face runs before any module of
    # the package, so a module's import of its own package (tinymcp.server's of tinymcp, the
    # deploy modules' of tinymcp.host.deploy) closes no circle.
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(graph[node]):
            if node.startswith(nxt + "."):
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
    graph = module_graph(os.path.join("tinymcp", "host"), skip=())
    assert "tinymcp.host.bridge.cli" in graph and "tinymcp.host.deploy.cli" in graph
    assert cycle(graph) is None, cycle(graph)


def test_no_import_cycle_anywhere_in_the_tree():
    # The core, the host programs, ports/, boards/ and tools/ as one graph: a circle through
    # two of them (ports -> tinymcp -> ports) counts as much as one inside either.
    graph = module_graph(*TREE, skip=())
    assert "tools.bench_tree" in graph["tools.bench"]          # a script's neighbour, by its
    assert "boards.sim.simbench" in graph["boards.sim.main"]   # plain name
    assert "ports.micropython.boot" in graph and "tinymcp.host.bridge.cli" in graph
    assert cycle(graph) is None, cycle(graph)


def test_device_code_never_imports_host_code():
    device = module_graph("tinymcp", "ports", "boards", skip=())
    for module, imported in device.items():
        if not module.startswith("tinymcp.host"):
            assert not [m for m in imported if m.startswith("tinymcp.host")], module


def test_the_vocabulary_imports_nothing_of_tinymcp():
    assert module_graph()["tinymcp.protocol"] == set()


def test_the_cycle_finder_finds_one():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"p": set(), "p.m": {"p"}}) is None   # a module's own package: its face
