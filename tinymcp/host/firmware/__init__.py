# tinymcp-firmware: MicroPython firmware with tinymcp frozen in, so its bytecode stays in flash.
#
#   tinymcp-firmware --board rpi_pico --out build/pico         manifest.py + the rp2 build command
#   tinymcp-firmware --board sim --target qemu --out build/qemu --run
#                                     builds build/qemu/firmware.elf and boots it behind a pty
#
# manifest: the freeze manifest (the file set tinymcp-deploy ships); source: finding and
# unpacking MicroPython's source; build: the emulated board's firmware; emulator: QEMU behind a
# pty; cli: the command line. qemu/ is the emulated board itself (C and frozen Python).


class FirmwareError(Exception):
    # One line for the user; the command exits 2.
    pass


def main(argv=None):
    from tinymcp.host.firmware.cli import main as run
    return run(argv)
