# The emulated board running: QEMU's mps2-an385 with a firmware, its UART on a pseudo-terminal
# (the board's serial port, as a USB board's /dev/ttyACM0 would be). Optionally a ROMFS image
# placed in its ROMFS partition at power-on, as if flashed.
import os
import re
import select
import shutil
import subprocess
import time

from tinymcp.host.firmware import FirmwareError

MACHINE = "mps2-an385"
ROMFS_ADDRESS = 0x21000000   # qemu/mpconfigboard.h: TINYMCP_ROMFS_BASE


def qemu_command(elf, romfs=None):
    cmd = ["qemu-system-arm", "-machine", MACHINE, "-nographic", "-monitor", "none",
           "-semihosting", "-serial", "pty", "-kernel", elf]
    if romfs:
        cmd += ["-device", "loader,file=%s,addr=0x%x,force-raw=on" % (romfs, ROMFS_ADDRESS)]
    return cmd


class Emulator:
    # with Emulator(elf) as board: board.port is the pty; leaving the block ends QEMU.
    def __init__(self, elf, romfs=None, timeout=30.0):
        if shutil.which("qemu-system-arm") is None:
            raise FirmwareError("qemu-system-arm not found: install qemu-system-arm (Debian/Ubuntu)")
        if not os.path.isfile(elf):
            raise FirmwareError("no firmware at %s" % elf)
        self.proc = subprocess.Popen(qemu_command(elf, romfs), stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.port = None
        deadline = time.monotonic() + timeout
        said = b""
        while self.port is None:   # QEMU says "char device redirected to /dev/pts/N (label ...)"
            left = deadline - time.monotonic()
            ready = left > 0 and select.select([self.proc.stdout], [], [], left)[0]
            chunk = os.read(self.proc.stdout.fileno(), 4096) if ready else b""
            said += chunk
            found = re.search(rb"(/dev/pts/\d+)", said)
            if found:
                self.port = found.group(1).decode()
            elif not chunk:
                self.close()
                raise FirmwareError("QEMU did not start: %s"
                                    % (said.decode(errors="replace").strip()[-200:] or "no answer"))

    def running(self):
        return self.proc.poll() is None

    def close(self):
        # -> QEMU's exit status (machine.reset() ends it with 0).
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        return self.proc.returncode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
