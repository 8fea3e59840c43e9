# The emulated board's firmware: MicroPython's qemu port for mps2-an385 with our board (qemu/)
# and a freeze manifest, built in a build copy of the source. make keeps it incremental: a rebuild
# with nothing changed takes a couple of seconds.
import os
import shutil
import subprocess

from tinymcp.host.firmware import FirmwareError
from tinymcp.host.firmware import source

BOARD = "TINYMCP_AN385"
BOARD_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qemu")
# Copied to ports/qemu/boards/BOARD; main.c and mphalport.c replace the port's own.
BOARD_FILES = ("mpconfigboard.mk", "mpconfigboard.h", "flash.c", "_boot.py", "manifest.py")
PORT_FILES = ("main.c", "mphalport.c")


def _same(path, data):
    try:
        with open(path, "rb") as f:
            return f.read() == data
    except OSError:
        return False


def _put(path, data):
    # Write only what changed: make goes by modification times.
    if not _same(path, data):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def _read(name):
    with open(os.path.join(BOARD_DIR, name), "rb") as f:
        return f.read()


def _make(args, log, what):
    # make, its output appended to log; a failure names its first error line.
    with open(log, "ab") as out:
        done = subprocess.run(["make"] + args, stdout=out, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        with open(log, "rb") as f:
            tail = [l for l in f.read().decode(errors="replace").splitlines() if l.strip()]
        last = next((l for l in tail if "error" in l.lower()), tail[-1] if tail else "?")
        raise FirmwareError("%s failed (see %s): %s" % (what, log, last.strip()[:200]))


def check_tools():
    missing = [t for t in ("make", "gcc", "arm-none-eabi-gcc") if shutil.which(t) is None]
    if missing:
        raise FirmwareError("%s not found: install make, gcc, gcc-arm-none-eabi and "
                            "libnewlib-arm-none-eabi (Debian/Ubuntu), or run .ci/install-firmware"
                            % ", ".join(missing))


def tree_for(src, work):
    # -> the build copy of src under work, unpacked again only when src changed, with mpy-cross
    # built and our board laid over ports/qemu.
    tree = os.path.join(work, "micropython")
    stamp = os.path.join(work, "source-identity")
    ident = source.identity(src)
    if not (os.path.isdir(tree) and _same(stamp, ident.encode())):
        source.unpack(src, tree)
        _put(stamp, ident.encode())
    log = os.path.join(work, "build.log")
    if not os.path.exists(os.path.join(tree, "mpy-cross", "build", "mpy-cross")):
        _make(["-C", os.path.join(tree, "mpy-cross"), "-j%d" % (os.cpu_count() or 1)], log,
              "building mpy-cross")
    port = os.path.join(tree, "ports", "qemu")
    for name in BOARD_FILES:
        _put(os.path.join(port, "boards", BOARD, name), _read(name))
    for name in PORT_FILES:
        _put(os.path.join(port, name), _read(name))
    # The freezing rule wants micropython-lib to be there; tinymcp requires nothing from it.
    _put(os.path.join(work, "no-micropython-lib", "README.md"),
         b"tinymcp's firmware requires no micropython-lib package.\n")
    return tree


def build_qemu(src, manifest, out_dir, work=None):
    # -> out_dir/firmware.elf for QEMU's mps2-an385, with what manifest freezes. work holds the
    # build copy of the source (default out_dir/work; share one between outputs to build once).
    check_tools()
    out_dir = os.path.abspath(out_dir)
    work = os.path.abspath(work or os.path.join(out_dir, "work"))
    os.makedirs(work, exist_ok=True)
    os.makedirs(out_dir, exist_ok=True)
    tree = tree_for(src, work)
    objects = os.path.join(out_dir, "obj")
    log = os.path.join(out_dir, "build.log")
    open(log, "wb").close()
    _make(["-C", os.path.join(tree, "ports", "qemu"), "-j%d" % (os.cpu_count() or 1),
           "BOARD=" + BOARD, "BUILD=" + objects, "FROZEN_MANIFEST=" + os.path.abspath(manifest),
           "MPY_LIB_DIR=" + os.path.join(work, "no-micropython-lib")],
          log, "building the qemu firmware")
    elf = os.path.join(out_dir, "firmware.elf")
    shutil.copyfile(os.path.join(objects, "firmware.elf"), elf)
    return elf
