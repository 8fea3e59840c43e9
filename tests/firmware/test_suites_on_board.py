# The shared MicroPython suites (tests/mprun.py targets) on the emulated bare-metal board: 32-bit,
# single-precision floats, about 140 KiB of heap. The suites and the code under test sit compiled
# in the board's ROMFS (as if flashed with it); the working directory is its writable filesystem.
import os
import re

import pytest

from tests.firmware.conftest import REPO, compiled_tree, romfs_image

TARGETS = ("tests/core", "tests/sensors", "tests/cbor", "tests/cborlink")
PACKAGES = ("tinymcp", "ports", "boards", "tests/core", "tests/sensors", "tests/cbor",
            "tests/cborlink")


def _sources():
    found = ["tests/__init__.py", "tests/mprun.py"]
    for top in PACKAGES:
        for here, dirs, files in os.walk(os.path.join(REPO, top)):
            dirs[:] = [d for d in dirs if d not in ("__pycache__", "host", "cpython")]
            found += [os.path.relpath(os.path.join(here, f), REPO) for f in files if f.endswith(".py")]
    return sorted(found)


@pytest.fixture(scope="module")
def suites_romfs(tmp_path_factory):
    out = tmp_path_factory.mktemp("suites")
    tree = compiled_tree(str(out / "tree"), _sources())
    return romfs_image(tree, str(out / "suites.romfs"))


def _defined(target):
    folder = os.path.join(REPO, target)
    return sum(open(os.path.join(folder, n)).read().count("\ndef test_")
               for n in os.listdir(folder) if n.startswith("test_") and n.endswith(".py"))


@pytest.mark.parametrize("target", TARGETS)
def test_suite_passes_on_the_emulated_board(target, plain_elf, suites_romfs, boot, repl):
    board = boot(plain_elf, romfs=suites_romfs)
    r = repl(board.port)
    out = r.run("import sys, gc\nsys.path.insert(0, '/rom')\nfrom tests import mprun\n"
                "failed = mprun.main([%r])\ngc.collect()\nprint('heap free', gc.mem_free())\n"
                % target, timeout=120)
    print(out)
    counts = re.search(r"(\d+) passed, (\d+) failed", out)
    assert counts, out[-2000:]
    assert int(counts.group(2)) == 0, out[-3000:]
    assert int(counts.group(1)) == _defined(target)
