# The emulated board in tests: firmwares built once per run (tests/firmware/images.py), QEMU
# processes that never outlive a test, and the board's raw REPL through mpremote.
import json
import os
import select
import time
import tty

import pytest

from tests.firmware import images
from tests.needs import missing
from tinymcp.host.deploy.board import Board

REPO = images.REPO


def _image(name):
    from tinymcp.host.firmware import FirmwareError
    if images.source() is None:
        missing("no MicroPython source for the emulated board: run .ci/install-firmware")
    try:
        return images.IMAGES[name]()
    except FirmwareError as e:
        missing("the emulated board's %s firmware cannot be built: %s" % (name, e))


@pytest.fixture(scope="session")
def plain_elf():
    # The board-like firmware with nothing of tinymcp in it.
    return _image("plain")


@pytest.fixture(scope="session")
def sim_elf():
    # tinymcp-firmware --board sim --target qemu: the sim board frozen as main.py.
    return _image("sim")


@pytest.fixture
def boot():
    # boot(elf, romfs=None) -> a running Emulator (.port is its UART); all end with the test.
    from tinymcp.host.firmware import FirmwareError
    from tinymcp.host.firmware.emulator import Emulator
    running = []

    def start(elf, romfs=None):
        try:
            board = Emulator(elf, romfs)
        except FirmwareError as e:
            missing(str(e))
        running.append(board)
        return board
    yield start
    for board in running:
        board.close()


class Repl(Board):
    # The board's raw REPL over mpremote's serial transport, as tinymcp-deploy reaches it.
    def enter(self, soft_reset=False):
        self.to_prompt(wait_s=20)   # a loaded emulator can take a while to leave serving
        self.t.enter_raw_repl(soft_reset=soft_reset, timeout_overall=20)
        return self

    def run(self, code, timeout=60):
        # -> what the code printed; a traceback on the board fails the test with it.
        out, err = self.t.exec_raw(code, timeout=timeout)
        assert not err, err.decode(errors="replace")
        return out.decode(errors="replace")


@pytest.fixture
def repl():
    opened = []

    def open_(port, soft_reset=False):
        r = Repl(port).enter(soft_reset)
        opened.append(r)
        return r
    yield open_
    for r in opened:
        r.close()


def compiled_tree(dest, rels):
    # The repo files rels compiled to .mpy under dest, in their package layout.
    from tinymcp.host.deploy.mpy import compile_mpy
    for rel in rels:
        compile_mpy(REPO, rel, os.path.join(dest, rel[:-3] + ".mpy"))
    return dest


def romfs_image(tree, path):
    # An image of tree that vfs.VfsRom mounts, as tinymcp-deploy --romfs builds it.
    from tinymcp.host.deploy.romfs import write_image
    write_image(tree, path)
    return path


def initialize(port, timeout=30):
    # One initialize straight on the UART: -> the result (the board must be serving).
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
    try:
        tty.setraw(fd)
        os.write(fd, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}}}).encode() + b"\n")
        seen, end = b"", time.monotonic() + timeout
        while time.monotonic() < end:
            if select.select([fd], [], [], 0.5)[0]:
                seen += os.read(fd, 4096)
            for line in seen.split(b"\n")[:-1]:
                if line.startswith(b"{"):
                    return json.loads(line)["result"]
        raise AssertionError("no answer to initialize; the board said: %r" % seen[-500:])
    finally:
        os.close(fd)
