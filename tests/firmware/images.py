# The emulated board's firmwares the tests boot, built once into build/firmware/ (git-ignored) and
# rebuilt by make only when the MicroPython source, the board (tinymcp/host/firmware/qemu) or a
# frozen file changed. .ci/install-firmware builds them ahead: python -m tests.firmware.images
#   plain   the board-like build with nothing of tinymcp in it: deploy, ROMFS and the suites
#   sim     tinymcp-firmware --board sim --target qemu: serves from power-on
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CACHE = os.path.join(REPO, "build", "firmware")
WORK = os.path.join(CACHE, "work")   # one build copy of the source for every image


def source():
    from tinymcp.host.firmware.source import default_source
    return default_source(REPO)


def plain():
    from tinymcp.host.firmware.build import BOARD_DIR, build_qemu
    return build_qemu(source(), os.path.join(BOARD_DIR, "manifest.py"),
                      os.path.join(CACHE, "plain"), WORK)


def sim():
    # Through the command line a user runs (quietly), sharing the one build copy.
    import contextlib
    import io
    from tinymcp.host.firmware import FirmwareError
    from tinymcp.host.firmware.cli import main
    out, said = os.path.join(CACHE, "sim"), io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(said):
        status = main(["--board", "sim", "--target", "qemu", "--out", out, "--micropython",
                       source(), "--work", WORK, "--root", REPO])
    if status != 0:
        raise FirmwareError(said.getvalue().strip())
    return os.path.join(out, "firmware.elf")


def tree():
    # -> the build copy of MicroPython's source (with mpy-cross and tools/manifestfile.py).
    from tinymcp.host.firmware.build import tree_for
    return tree_for(source(), WORK)


IMAGES = {"plain": plain, "sim": sim}


if __name__ == "__main__":
    from tinymcp.host.firmware import FirmwareError
    for name, make in IMAGES.items():
        try:
            print("%s: %s" % (name, make()), file=sys.stderr)
        except FirmwareError as e:
            sys.exit("%s: %s" % (name, e))
