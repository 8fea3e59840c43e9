# tinymcp-firmware: a freeze manifest that puts tinymcp into a MicroPython firmware, so its
# bytecode stays in flash, and the commands that build and flash it from the user's own
# MicroPython checkout (docs/firmware.md).
#
#   tinymcp-firmware --board rpi_pico --out build/pico         manifest.py + the rp2 build commands
#
# manifest: the freeze manifest (the file set tinymcp-deploy ships); cli: the command line.


class FirmwareError(Exception):
    # One line for the user; the command exits 2.
    pass


def main(argv=None):
    from tinymcp.host.firmware.cli import main as run
    return run(argv)
