# tinymcp-firmware's command line: the freeze manifest, then the commands that build and flash a
# firmware with it from the user's own MicroPython checkout (rp2, esp32).
import argparse
import os
import sys

from tinymcp.host.args import Parser
from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy.tree import device_tree
from tinymcp.host.firmware import FirmwareError
from tinymcp.host.firmware.manifest import write_manifest

TARGETS = ("rp2", "esp32")
# MicroPython's board names per target: the firmware a user would otherwise download.
MICROPYTHON_BOARDS = {"rp2": ("RPI_PICO", "RPI_PICO_W"), "esp32": ("ESP32_GENERIC",)}
PLACEHOLDER = "<micropython>"
# The release the core suites run on (the unix port from PyPI); any v1.23 or later builds it.
TESTED_RELEASE = "1.28.0"


def build_commands(target, manifest, src):
    # -> the lines to print: how to build and flash a firmware with this manifest.
    mp = src or PLACEHOLDER
    port = "%s/ports/%s" % (mp, target)
    first = MICROPYTHON_BOARDS[target][0]
    lines = []
    if src is None:
        lines.append("%s: your MicroPython checkout (docs/firmware.md: git clone "
                     "https://github.com/micropython/micropython, then git checkout v%s; "
                     "v1.23 or later works)" % (PLACEHOLDER, TESTED_RELEASE))
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


def main(argv=None):
    p = Parser(prog="tinymcp-firmware",
               description="A MicroPython firmware with tinymcp frozen in: writes the freeze "
                           "manifest and prints the commands that build and flash it.")
    p.add_argument("--board", metavar="NAME|PATH",
                   help="a bundled board (rpi_pico, esp32, sim, ...), a folder holding main.py, "
                        "or a board's .py file")
    p.add_argument("--out", metavar="DIR", help="where manifest.py goes")
    p.add_argument("--target", choices=TARGETS,
                   help="rp2 (Pico, Pico W) or esp32 (default: esp32 for boards/esp32, else rp2)")
    p.add_argument("--micropython", metavar="SRC",
                   help="your MicroPython git checkout, named in the printed commands")
    p.add_argument("--root", help=argparse.SUPPRESS)
    try:
        a = p.parse_args(argv)
    except SystemExit as e:   # --help, or a bad argument (already reported on one line)
        return e.code
    out = sys.stdout
    try:
        tree = device_tree(a.root)
        if not a.board or not a.out:
            raise FirmwareError("--board and --out are required (boards: %s; or a folder holding "
                                "main.py, or a board's .py file)" % ", ".join(tree.boards()))
        board = tree.board(a.board)
        target = a.target or ("esp32" if board.name == "esp32" else "rp2")
        src = os.path.abspath(a.micropython) if a.micropython else None
        if src and not os.path.isdir(os.path.join(src, "ports", target)):
            raise FirmwareError("%s has no ports/%s: building for %s needs a MicroPython git "
                                "checkout (git clone https://github.com/micropython/micropython)"
                                % (src, target, target))
        manifest, files = write_manifest(tree, board, target, a.out)
        manifest = os.path.abspath(manifest)
        out.write("wrote %s: %d modules frozen, %s as main.py\n"
                  % (manifest, len(files), board.main))
        out.write("build and flash it:\n" + "\n".join(build_commands(target, manifest, src)) + "\n")
        return 0
    except (FirmwareError, DeployError, OSError) as e:   # OSError: an unwritable --out, a full disk
        out.flush()
        sys.stderr.write("tinymcp-firmware: %s\n" % e)
        return 2
