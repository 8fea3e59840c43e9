# One meaning per class name (issue 27): no class name is defined twice across the tree (tinymcp/
# with its host programs, ports/, boards/, tools/), so grep finds one thing for each name. The one
# exception is MicroPython's own `machine` classes, which the simulated parts and the benchmarks'
# stand-in module imitate under their real names.
import ast
import collections
import os

from tests.board_process import REPO


TREE = ("tinymcp", "ports", "boards", "tools")   # all the code, tests aside
# machine.Pin, ADC, PWM, I2C: one meaning each (a part with that class's methods), imitated by
# tinymcp/sensors/sim.py and simchips.py (the simulated board) and by
# tools/bench_support/machine_standin.py (which must import nothing of tinymcp).
MACHINE = {"Pin", "ADC", "PWM", "I2C"}


def classes(folder, skip=()):
    # {class name: [file, ...]} over the .py files under folder (namedtuple classes included).
    found = collections.defaultdict(list)
    for root, dirs, files in os.walk(os.path.join(REPO, folder)):
        dirs[:] = [d for d in dirs if d not in skip + ("__pycache__", "node_modules")]
        for name in files:
            if not name.endswith(".py"):
                continue
            path = os.path.join(root, name)
            rel = os.path.relpath(path, REPO)
            with open(path, encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    found[node.name].append(rel)
                elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                      and getattr(node.value.func, "attr", None) == "namedtuple"):
                    found[node.value.args[0].value].append(rel)
    return found


def test_no_host_class_name_repeats_another_host_class():
    host = classes(os.path.join("tinymcp", "host"))
    assert {n: where for n, where in host.items() if len(where) > 1} == {}


def test_no_host_class_name_repeats_a_device_class():
    host = classes(os.path.join("tinymcp", "host"))
    device = classes("tinymcp", skip=("host",))
    for folder in ("ports", "boards"):
        for name, where in classes(folder).items():
            device[name] += where
    assert {n: (host[n], device[n]) for n in set(host) & set(device)} == {}


def everywhere():
    # {class name: [file, ...]} over the whole tree.
    found = collections.defaultdict(list)
    for folder in TREE:
        for name, where in classes(folder).items():
            found[name] += where
    return found


def test_no_class_name_is_defined_twice_anywhere_in_the_tree():
    found = everywhere()
    seen = {path.split(os.sep)[0] for where in found.values() for path in where}
    assert {"tinymcp", "ports", "tools"} <= seen   # the scan sees all of it
    twice = {n: where for n, where in found.items() if len(where) > 1}
    assert {n: where for n, where in twice.items() if n not in MACHINE} == {}
    # A machine name is imitated only by the simulated parts and the benchmarks' stand-in.
    imitators = {os.path.join("tinymcp", "sensors", "sim.py"),
                 os.path.join("tinymcp", "sensors", "simchips.py"),
                 os.path.join("tools", "bench_support", "machine_standin.py")}
    assert {n: where for n, where in twice.items() if not set(where) <= imitators} == {}
