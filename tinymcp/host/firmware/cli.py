# tinymcp-firmware's command line: the manifest, then the build command (rp2, esp32) or the
# build itself (qemu), and --run to boot the emulated board behind a pty.
import argparse
import os
import signal
import sys

from tinymcp.host.args import Parser
from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy.files import boards, repo_root
from tinymcp.host.firmware import FirmwareError, source
from tinymcp.host.firmware.manifest import write_manifest

TARGETS = ("rp2", "esp32", "qemu")
# MicroPython's board names per target: the firmware a user would otherwise download.
MICROPYTHON_BOARDS = {"rp2": ("RPI_PICO", "RPI_PICO_W"), "esp32": ("ESP32_GENERIC",)}
PLACEHOLDER = "<micropython>"


def build_commands(target, manifest, src):
    # -> the lines to print: how to build and flash a firmware with this manifest.
    mp = src or PLACEHOLDER
    port = "%s/ports/%s" % (mp, target)
    first = MICROPYTHON_BOARDS[target][0]
    lines = []
    if src is None:
        lines.append("%s: a clone of https://github.com/micropython/micropython (v1.23 or later; "
                     "git checkout v%s)" % (PLACEHOLDER, source.VERSION))
    if target == "esp32":
        lines.append("  . $IDF_PATH/export.sh          # the ESP-IDF version ports/esp32/README.md names")
    lines.append("  make -C %s/mpy-cross" % mp)
    lines.append("  make -C %s BOARD=%s submodules" % (port, first))
    lines.append("  make -C %s BOARD=%s FROZEN_MANIFEST=%s" % (port, first, manifest))
    if target == "rp2":
        lines.append("then hold BOOTSEL while plugging the Pico in and copy "
                     "%s/build-%s/firmware.uf2 to the RPI-RP2 drive." % (port, first))
        lines.append("Pico W: the same with BOARD=RPI_PICO_W (build-RPI_PICO_W/firmware.uf2).")
    else:
        lines.append("then: make -C %s BOARD=%s PORT=/dev/ttyUSB0 deploy" % (port, first))
    return lines


def run_board(elf, out):
    # Boot the emulated board and wait until Ctrl-C (or machine.reset(), which ends QEMU).
    from tinymcp.host.firmware.emulator import Emulator
    board = Emulator(elf)
    out.write("the emulated board is on %s (Ctrl-C ends it):\n  tinymcp-bridge --port %s\n"
              "  mpremote connect %s repl\n" % (board.port, board.port, board.port))
    out.flush()
    previous = signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        board.proc.wait()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        board.close()


def main(argv=None):
    p = Parser(prog="tinymcp-firmware",
               description="A MicroPython firmware with tinymcp frozen in: writes the freeze "
                           "manifest and prints the build command (rp2, esp32), or builds it (qemu).")
    p.add_argument("--board", help="a directory under boards/ (rpi_pico, esp32, sim, ...)")
    p.add_argument("--out", metavar="DIR", help="where manifest.py (and firmware.elf for qemu) go")
    p.add_argument("--target", choices=TARGETS,
                   help="rp2 (Pico, Pico W), esp32, or qemu: the emulated board, built here "
                        "(default: esp32 for boards/esp32, else rp2)")
    p.add_argument("--micropython", metavar="SRC",
                   help="MicroPython's source: a git checkout, or for qemu also a release "
                        "tarball (default for qemu: the pinned %s)" % source.TARBALL)
    p.add_argument("--run", action="store_true",
                   help="qemu: boot the firmware behind a pseudo-terminal until Ctrl-C")
    p.add_argument("--root", help=argparse.SUPPRESS)
    p.add_argument("--work", help=argparse.SUPPRESS)   # the source's build copy (default DIR/work)
    try:
        a = p.parse_args(argv)
    except SystemExit as e:   # --help, or a bad argument (already reported on one line)
        return e.code
    out = sys.stdout
    try:
        root = repo_root(a.root)
        if not a.board or not a.out:
            raise FirmwareError("--board and --out are required (boards: %s)" % ", ".join(boards(root)))
        target = a.target or ("esp32" if a.board == "esp32" else "rp2")
        if a.run and target != "qemu":
            raise FirmwareError("--run boots the emulated board: it needs --target qemu")
        src = os.path.abspath(a.micropython) if a.micropython else None
        if src and not os.path.exists(src):
            raise FirmwareError("no MicroPython source at %s" % src)
        if src and target != "qemu" and not os.path.isdir(os.path.join(src, "ports", target)):
            raise FirmwareError("%s has no ports/%s: building for %s needs a MicroPython git "
                                "checkout (git clone https://github.com/micropython/micropython)"
                                % (src, target, target))
        manifest, files = write_manifest(root, a.board, target, a.out)
        manifest = os.path.abspath(manifest)
        out.write("wrote %s: %d modules frozen, boards/%s/main.py as main.py\n"
                  % (manifest, len(files), a.board))
        if target != "qemu":
            out.write("build and flash it:\n" + "\n".join(build_commands(target, manifest, src)) + "\n")
            return 0
        from tinymcp.host.firmware.build import build_qemu
        from tinymcp.host.firmware.emulator import qemu_command
        src = src or source.default_source(root)
        if src is None:
            raise FirmwareError("no MicroPython source: pass --micropython SRC (a v%s checkout or "
                                "tarball) or run .ci/install-firmware" % source.VERSION)
        out.write("building the emulated board's firmware from %s ...\n" % src)
        out.flush()
        elf = build_qemu(src, manifest, a.out, a.work)
        out.write("built %s (QEMU mps2-an385); boot it with --run, or:\n  %s\n"
                  % (elf, " ".join(qemu_command(elf))))
        if a.run:
            run_board(elf, out)
        return 0
    except (FirmwareError, DeployError, OSError) as e:   # OSError: an unwritable --out, a full disk
        out.flush()
        sys.stderr.write("tinymcp-firmware: %s\n" % e)
        return 2
