# tinymcp/later.py, the one table of what loads later: every name in it exists, every string a
# board loads by is in it, and every board ships what it will load.
import ast
import importlib
import os

import pytest

from tinymcp.host.deploy.files import board_files, boards, later_module, module_file
from tinymcp.later import LATER
from tests.board_process import REPO

FLAGS = ("completions", "long_tools", "leases", "context", "idle", "cbor", "jsonschema")
TARGETS = {entry[1]: entry for entry in LATER}


def device_sources():
    # (module file, its parsed source) of everything a board may run.
    for folder in ("tinymcp", "ports", "boards"):
        for root, dirs, files in os.walk(os.path.join(REPO, folder)):
            dirs[:] = [d for d in dirs if d not in ("host", "cpython", "__pycache__")]
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(root, name)
                    with open(path) as f:
                        yield os.path.relpath(path, REPO), ast.parse(f.read(), path)


def loads_by_string():
    # [(file, "how", target)] for each once("...") and history.later("...") in device code,
    # and each release("...").
    found = []
    for rel, tree in device_sources():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and node.args
                    and isinstance(node.args[0], ast.Constant) and type(node.args[0].value) is str):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            if name in ("once", "later", "release"):
                found.append((rel, name, node.args[0].value))
    return found


def test_each_entry_is_well_formed():
    assert len(TARGETS) == len(LATER)   # one entry per target
    for trigger, target, shipped, after in LATER:
        assert trigger and after in ("release", "keep"), target
        how, _, what = shipped.partition(" ")
        if how == "with":
            assert os.path.isfile(os.path.join(REPO, module_file(what))), shipped
        else:
            assert how == "if" and what in FLAGS, shipped


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_each_name_it_loads_later_exists(target):
    module, _, name = target.rpartition(".")
    assert hasattr(importlib.import_module(module), name), target


def test_every_name_a_board_loads_by_a_string_is_in_it_and_released_as_it_says():
    found = loads_by_string()
    assert len(found) >= 15, found
    for rel, how, target in found:
        if how == "release":   # a module, let go where the table says a target of it is kept
            assert [t for t in TARGETS if t.rpartition(".")[0] == target], (rel, target)
            continue
        assert target in TARGETS, (rel, target)
        assert TARGETS[target][3] == "release", (rel, target)   # once() releases, always
    # and each released target has its loader
    loaded = {target for _rel, _how, target in found}
    assert {t for t, e in TARGETS.items() if e[3] == "release"} <= loaded


def test_no_module_is_loaded_by_a_string_outside_the_table():
    # __import__ only in the face (its lazy names, once()) and in linkmode's check of what a
    # board carries (frozen code: importing is the check).
    for rel, tree in device_sources():
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
                 and getattr(n.func, "id", getattr(n.func, "attr", None)) in (
                     "__import__", "import_module")]
        if calls:
            assert rel in (os.path.join("tinymcp", "__init__.py"),
                           os.path.join("tinymcp", "linkmode.py")), rel


def test_every_board_ships_what_it_loads_later():
    for board in boards(REPO):
        files, how = board_files(REPO, board)
        assert how == "traced", (board, how)
        files = set(files)
        for _trigger, target, shipped, _after in LATER:
            if shipped.startswith("with ") and module_file(shipped[5:]) in files:
                assert later_module(target) in files, (board, target)


def test_a_module_left_out_takes_with_it_what_ships_only_with_it():
    # --handshake-only leaves out tinymcp/stateless.py, and so tinymcp/asking.py (its
    # input-required results), which ships only with it.
    from tinymcp.host.deploy.files import STATELESS
    files, _how = board_files(REPO, "rpi_pico")
    assert STATELESS in files and "tinymcp/asking.py" in files
    files, _how = board_files(REPO, "rpi_pico", leave_out=(STATELESS,))
    assert STATELESS not in files and "tinymcp/asking.py" not in files
