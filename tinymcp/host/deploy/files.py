# Which repo files a board runs: traced through its build() (trace_board.py), plus the MicroPython
# serve path its `__main__` block imports, closed over module-level imports.
import ast
import json
import os
import subprocess
import sys
import tempfile

from tinymcp.host.deploy import DeployError

ROOT_PACKAGES = ("tinymcp", "ports")   # what a board imports from the repo, besides its own dir
HOST_ONLY = ("ports/cpython/", "tinymcp/host/")   # never shipped: CPython-only code


def repo_root(start=None):
    # The checkout holding boards/: the working directory or one of its parents, else the one
    # this file lives in (an editable install).
    here = os.path.abspath(start or os.getcwd())
    while True:
        if os.path.isdir(os.path.join(here, "boards")) and os.path.isdir(os.path.join(here, "tinymcp")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    mine = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    if os.path.isdir(os.path.join(mine, "boards")):
        return mine
    raise DeployError("no tinymcp checkout here (boards/ not found): run from the repo root")


def boards(root):
    base = os.path.join(root, "boards")
    return sorted(n for n in os.listdir(base) if os.path.isfile(os.path.join(base, n, "main.py")))


def _module_file(root, dotted, board_dir=None):
    # -> repo-relative path of a module or package, or None when it is not ours.
    parts = dotted.split(".")
    bases = []
    if parts[0] in ROOT_PACKAGES:
        bases.append(root)
    elif board_dir:
        bases.append(board_dir)   # a sibling of the board's main.py
    for base in bases:
        path = os.path.join(base, *parts)
        for candidate in (path + ".py", os.path.join(path, "__init__.py")):
            if os.path.isfile(candidate):
                return os.path.relpath(candidate, root).replace(os.sep, "/")
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


def _closure(root, start, board_dir, everywhere):
    # Files reachable from `start` through imports; packages on the way count (they run too).
    files, todo = set(), list(start)
    while todo:
        rel = todo.pop()
        if rel in files or rel.startswith(HOST_ONLY):
            continue
        files.add(rel)
        with open(os.path.join(root, rel)) as f:
            tree = ast.parse(f.read(), rel)
        # The serve glue (ports/) picks its runtime inside functions: follow all of it.
        deep = everywhere or rel.startswith("ports/")
        for dotted in _imports(tree, deep):
            parts = dotted.split(".")
            for i in range(1, len(parts) + 1):
                found = _module_file(root, ".".join(parts[:i]), board_dir)
                if found:
                    todo.append(found)
    return files


def _serve_path(root, board):
    # What `if __name__ == "__main__":` in the board's main.py imports to serve on the device.
    path = os.path.join(root, "boards", board, "main.py")
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    names = []
    for node in tree.body:
        if (isinstance(node, ast.If) and isinstance(node.test, ast.Compare)
                and isinstance(node.test.left, ast.Name) and node.test.left.id == "__name__"):
            names.extend(_imports(node, True))
    found = set()
    for dotted in names:
        parts = dotted.split(".")
        for i in range(1, len(parts) + 1):
            rel = _module_file(root, ".".join(parts[:i]))
            if rel:
                found.add(rel)
    return found


TRACER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_board.py")


def _trace(root, board):
    # -> {"files": [...], "completions": bool} from trace_board.py in a fresh interpreter.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TINYMCP_")}
        proc = subprocess.run([sys.executable, TRACER, root, board, out], cwd=tmp, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if proc.returncode != 0 or not os.path.exists(out):
            last = (proc.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
            raise DeployError("build() failed under CPython: " + last)
        with open(out) as f:
            return json.load(f)


# What the optional CBOR link mode needs on the board (a JSON session never imports it).
CBOR_LINK = ("tinymcp/cborlink.py", "tinymcp/cbor.py")


# The stateless 2026-07-28 era: a board without it answers such requests with -32601 and
# clients fall back to initialize (the bridge always speaks the handshake era to a board).
STATELESS = "tinymcp/stateless.py"


def board_files(root, board, extra=(), leave_out=()):
    # -> (sorted repo-relative .py files the board runs, how they were found); extra: more
    # modules to ship (and what they import), e.g. CBOR_LINK; leave_out: modules not to ship.
    main = "boards/%s/main.py" % board
    if not os.path.isfile(os.path.join(root, main)):
        raise DeployError("no board %r (boards: %s)" % (board, ", ".join(boards(root))))
    board_dir = os.path.join(root, "boards", board)
    try:
        traced = _trace(root, board)
        start = [f for f in traced["files"] if f != main]
        if traced["completions"]:
            start.append("tinymcp/complete.py")   # reached lazily by completion/complete
        how = "traced"
        everywhere = False
    except (DeployError, subprocess.TimeoutExpired) as e:
        # Without a build we cannot tell which lazy imports run: take them all.
        start, how, everywhere = [], "static (%s)" % e, True
    start.append(main)
    start.extend(extra)
    start.extend(_serve_path(root, board))
    files = _closure(root, start, board_dir, everywhere) - set(leave_out)
    return sorted(files), how


def static_files(root, board):
    # Every file the board's main.py could import (function bodies included), whatever its
    # wiring constants say: what a mip install must offer before the user edits them.
    main = "boards/%s/main.py" % board
    start = [main] + sorted(_serve_path(root, board))
    return sorted(_closure(root, start, os.path.join(root, "boards", board), True))


def device_path(rel, board):
    # Where a repo file lives on the board: the board's directory is the device root.
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
    return sorted(folder + "/" + n for n in names if n.endswith(".py") and "/" not in n)


def core_files(root):
    # The core every board needs from mip: tinymcp/*.py and the MicroPython port.
    return _listed(root, "tinymcp") + _listed(root, "ports") + _listed(root, "ports/micropython")
