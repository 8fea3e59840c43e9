# Which files a board runs: traced through its build() (trace_board.py), plus the MicroPython
# serve path its `__main__` block imports, closed over module-level imports, plus what loads
# later as tinymcp/later.py's table says.
import ast
import json
import os
import subprocess
import sys
import tempfile

from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy.tree import as_tree, device_tree
from tinymcp.later import LATER

ROOT_PACKAGES = ("tinymcp", "ports")   # what a board imports from the device tree, besides its own dir
HOST_ONLY = ("ports/cpython/", "tinymcp/host/", "tinymcp/joined.py")   # never shipped: CPython only


def repo_root(root=None):
    # The checkout's root, for what only a checkout has (--manifests rewrites its package*.json);
    # deploy and firmware use tree.device_tree, which also finds an installed tinymcp's tree.
    tree = device_tree(root)
    if tree.core != tree.device:
        raise DeployError("this needs a tinymcp checkout; this tinymcp is installed (%s)" % tree.core)
    return tree.core


def boards(root):
    return as_tree(root).boards()


def _module_file(tree, board, dotted, siblings=True):
    # -> the file-set name of a module or package, or None when it is not the device's.
    parts = dotted.split(".")
    if parts[0] in ROOT_PACKAGES:
        base = tree.core if parts[0] == "tinymcp" else tree.device
    elif siblings:
        base = board.dir   # a sibling of the board's main file
    else:
        return None
    path = os.path.join(base, *parts)
    for candidate in (path + ".py", os.path.join(path, "__init__.py")):
        if os.path.isfile(candidate):
            return tree.name_of(candidate, board)
    return None


def _imports(tree, everywhere):
    # Dotted names imported by a module: at module level (including `if`/`try` blocks), or
    # everywhere (function bodies too) when asked.
    if everywhere:
        nodes = ast.walk(tree)
    else:
        nodes, todo = [], list(tree.body)
        while todo:
            node = todo.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            nodes.append(node)
            todo.extend(ast.iter_child_nodes(node))
    names = []
    for node in nodes:
        if isinstance(node, ast.Import):
            names.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names.extend(node.module + "." + a.name for a in node.names)  # submodule imports
    return names


def _closure(tree, board, start, everywhere, pruned=()):
    # Files reachable from `start` through imports; packages on the way count (they run too).
    # pruned: files neither shipped nor followed (network code the configuration does not use).
    files, todo = set(), list(start)
    while todo:
        rel = todo.pop()
        if rel is None or rel in files or rel.startswith(HOST_ONLY) or rel in pruned:
            continue
        files.add(rel)
        with open(tree.source(rel, board)) as f:
            module = ast.parse(f.read(), rel)
        # The serve glue (ports/) picks its runtime inside functions: follow all of it.
        deep = everywhere or rel.startswith("ports/")
        for dotted in _imports(module, deep):
            parts = dotted.split(".")
            for i in range(1, len(parts) + 1):
                todo.append(_module_file(tree, board, ".".join(parts[:i])))
    return files


def _main_blocks(board):
    # The `if __name__ == "__main__":` blocks of the board's main file: how it serves.
    with open(board.main) as f:
        module = ast.parse(f.read(), board.main)
    return [node for node in module.body
            if isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
            and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"]


def _serve_path(tree, board):
    # What `if __name__ == "__main__":` in the board's main file imports to serve on the device.
    names = []
    for node in _main_blocks(board):
        names.extend(_imports(node, True))
    found = set()
    for dotted in names:
        parts = dotted.split(".")
        for i in range(1, len(parts) + 1):
            rel = _module_file(tree, board, ".".join(parts[:i]), siblings=False)
            if rel:
                found.add(rel)
    return found


TRACER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_board.py")


def _trace(tree, board):
    # -> {"files": [...], "completions": bool} from trace_board.py in a fresh interpreter.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TINYMCP_")}
        argv = [sys.executable, TRACER, out, board.main, board.dir, tree.core, tree.device]
        proc = subprocess.run(argv, cwd=tmp, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if proc.returncode != 0 or not os.path.exists(out):
            last = (proc.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
            raise DeployError("build() failed under CPython: " + last)
        with open(out) as f:
            traced = json.load(f)
    traced["files"] = [tree.name_of(path, board) for path in traced["files"]]
    return traced


def later_module(target):
    # A target of tinymcp/later.py ("tinymcp.listing.page") -> the file of its module.
    return module_file(target.rpartition(".")[0])


def module_file(module):
    # A device module's dotted name ("tinymcp.sensors.faults") -> its file-set name.
    return module.replace(".", "/") + ".py"


def later_files(condition):
    # The files of what loads later on that condition ("if cbor": the CBOR link mode).
    return tuple(sorted({later_module(t) for _trigger, t, shipped, _after in LATER
                         if shipped == condition}))


# What the optional CBOR link mode needs on the board (a JSON session never imports it; cbor.py
# comes with cborlink.py's imports).
CBOR_LINK = later_files("if cbor")


# The stateless 2026-07-28 era: a board without it answers such requests with -32601 and
# clients fall back to initialize (the bridge always speaks the handshake era to a board).
STATELESS = "tinymcp/stateless.py"


# The network code a board's boot reaches (ports/micropython/boot.py imports wifi only when the
# board holds network.json; wifi imports ports/tcp, whose listen() announces the board over mDNS
# with ports/mdns (and ports/mdnsrecords, loaded later), or ports/mqtt when the file has "mqtt":
# the broker is its discovery).
# The board's configuration, as network.json will say on it -> the network files it runs:
NETWORK_CODE = ("ports/micropython/wifi.py", "ports/tcp.py", "ports/mdns.py",
                "ports/mdnsrecords.py", "ports/mqtt.py", "ports/mqtt5.py")
NETWORK = {"usb": (), "tcp": NETWORK_CODE[:4], "mqtt": NETWORK_CODE[:2] + NETWORK_CODE[4:]}


# boot.start() loads its idle poll (ports/micropython/idle.py) only for a heartbeat LED or a
# watchdog: shipped ("if idle") when the board's __main__ block passes either (or arguments it
# cannot see).
def _wants_idle(board):
    for block in _main_blocks(board):
        starts = {"start"} | {a.asname for node in ast.walk(block) if isinstance(node, ast.ImportFrom)
                              for a in node.names if a.name == "start" and a.asname}
        for node in ast.walk(block):
            if not isinstance(node, ast.Call) or not (
                    (isinstance(node.func, ast.Name) and node.func.id in starts)
                    or (isinstance(node.func, ast.Attribute) and node.func.attr == "start")):
                continue   # only boot.start()'s arguments ask for it
            if len(node.args) > 3 or any(isinstance(a, ast.Starred) for a in node.args):
                return True   # start(build, button, flag, heartbeat, ...) or start(*args)
            for k in node.keywords:
                if k.arg is None or (k.arg in ("heartbeat", "watchdog_ms") and not (
                        isinstance(k.value, ast.Constant) and not k.value.value)):
                    return True
    return False


def network_mode(settings):
    # network.json's parsed contents (None: no such file) -> the NETWORK key it needs.
    if settings is None:
        return "usb"
    return "mqtt" if type(settings) is dict and "mqtt" in settings else "tcp"


def board_files(root, board, extra=(), leave_out=(), network=None):
    # -> (sorted .py files the board runs, how they were found), named tinymcp/..., ports/...
    # and boards/NAME/... (tree.source finds them); root: a DeviceTree or a checkout's root;
    # board: a BoardSource, or a NAME|PATH. extra: more modules to ship (and what they import), e.g.
    # CBOR_LINK; leave_out: modules not to ship. network: a NETWORK key (the board's
    # network.json), None for every network mode (a firmware, which network.json may follow).
    tree = as_tree(root)
    board = tree.board(board)
    main = board.prefix + "main.py"
    try:
        traced = _trace(tree, board)
        start = [f for f in traced["files"] if f != main]
        flags = traced["flags"]   # completions, long_tools, leases, context: tinymcp/later.py's
        flags["idle"] = _wants_idle(board)
        how = "traced"
        everywhere = False
    except (DeployError, subprocess.TimeoutExpired) as e:
        # Without a build we cannot tell which lazy imports run: take them all.
        start, how, everywhere, flags = [], "static (%s)" % e, True, None
    start.append(main)
    start.extend(extra)
    start.extend(_serve_path(tree, board))
    pruned = set() if network is None else set(NETWORK_CODE) - set(NETWORK[network])
    pruned |= set(leave_out)  # nor what ships only with them ("with M" in tinymcp/later.py)
    if flags is not None:   # what loads later on a condition the trace found false, if unseen
        pruned |= {later_module(t) for _trigger, t, shipped, _after in LATER
                   if shipped[:3] == "if " and not flags.get(shipped[3:])} - set(start)
    files = _closure(tree, board, start, everywhere, pruned)
    files = (files | _later(tree, board, files, flags, everywhere, pruned)) - set(leave_out)
    return sorted(files), how


def static_files(root, board):
    # Every file the board's main.py could import (function bodies included), whatever its
    # wiring constants say: what a mip install must offer before the user edits them.
    tree = as_tree(root)
    board = tree.board(board)
    start = [board.prefix + "main.py"] + sorted(_serve_path(tree, board))
    files = _closure(tree, board, start, True)
    return sorted(files | _later(tree, board, files, None, True))


def _later(tree, board, files, flags, everywhere, pruned=()):
    # What these files load later (tinymcp/later.py): each target shipped "with" a module among
    # them, or "if" a flag of the trace (flags None: all of them), with what it imports; again
    # for what those bring, until nothing more comes.
    found = set(files)
    while True:
        more = [later_module(t) for _trigger, t, shipped, _after in LATER
                if (shipped[:5] == "with " and module_file(shipped[5:]) in found)
                or (shipped[:3] == "if " and (flags is None or flags.get(shipped[3:])))]
        new = _closure(tree, board, [m for m in more if m not in found], everywhere, pruned)
        if not new - found:
            return found - set(files)
        found |= new


def device_path(rel, board):
    # Where a file-set name lives on the board (board: its name): the board's folder is the
    # device root.
    prefix = "boards/%s/" % board
    return rel[len(prefix):] if rel.startswith(prefix) else rel


def _listed(root, folder):
    # .py files directly in folder: the committed ones in a git checkout (what a GitHub URL
    # can serve), else whatever is on disk.
    try:
        proc = subprocess.run(["git", "ls-files", "--", folder], cwd=root, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=30)
        tracked = proc.stdout.decode().split() if proc.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired):
        tracked = []
    if tracked:
        names = [p[len(folder) + 1:] for p in tracked]
    else:
        names = os.listdir(os.path.join(root, folder))
    # (a set: in a merge, git lists an unmerged file once per stage)
    return sorted({folder + "/" + n for n in names if n.endswith(".py") and "/" not in n})


def core_files(root):
    # The core every board needs from mip: tinymcp/*.py and the MicroPython port.
    return [f for f in _listed(root, "tinymcp") + _listed(root, "ports")
            + _listed(root, "ports/micropython") if not f.startswith(HOST_ONLY)]
