# One meaning per class name (issue 27): no class of the host programs (tinymcp/host) shares its
# name with another host class, nor with a class of the device code (tinymcp/, ports/, boards/).
import ast
import collections
import os

from tests.board_process import REPO


def classes(folder, skip=()):
    # {class name: [file, ...]} over the .py files under folder (namedtuple classes included).
    found = collections.defaultdict(list)
    for root, dirs, files in os.walk(os.path.join(REPO, folder)):
        dirs[:] = [d for d in dirs if d not in skip + ("__pycache__",)]
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
