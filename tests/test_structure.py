# Server, Session, Call (issue 27): the Server is what the board offers and is written only by its
# own methods; what changes per client lives in a Session the transport holds. Read from the
# source, as grep would: no other module assigns a Server attribute, and nothing swaps attributes
# in and out of an object by name.
import ast
import os

from tests.board_process import REPO, py_files

DEVICE = ("tinymcp", "ports", "boards")
OWNER = os.path.join("tinymcp", "server.py")


def device_files():
    return py_files(DEVICE, skip=("host",))


def _is_server(node):
    # `server`, or `something.server` (a channel's, a history's).
    return ((isinstance(node, ast.Name) and node.id == "server")
            or (isinstance(node, ast.Attribute) and node.attr == "server"))


def server_writes(path):
    # -> ["file:line server.attr", ...]: assignments to an attribute of a server, and
    # setattr/delattr on one.
    with open(os.path.join(REPO, path)) as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("setattr", "delattr") and node.args
              and _is_server(node.args[0])):
            found.append("%s:%d %s(server, ...)" % (path, node.lineno, node.func.id))
        flat = []
        for target in targets:
            flat.extend(target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
        for target in flat:
            if isinstance(target, ast.Attribute) and _is_server(target.value):
                found.append("%s:%d server.%s" % (path, node.lineno, target.attr))
    return found


def test_no_module_but_server_py_writes_a_server_attribute():
    found = []
    for path in device_files():
        if path != OWNER:
            found.extend(server_writes(path))
    assert found == [], "Server attributes written from outside tinymcp/server.py " \
                        "(attach through a Server method instead): " + ", ".join(found)


def test_the_scan_sees_a_write_when_there_is_one(tmp_path):
    # The check above is only as good as its scan: it must see each way of writing.
    sample = tmp_path / "sample.py"
    sample.write_text("def f(server, self):\n"
                      "    server.poll = None\n"
                      "    self.server.link = 1\n"
                      "    server.a, server.b = 1, 2\n"
                      "    server.opened += 1\n"
                      "    setattr(server, 'x', 1)\n"
                      "    server.idle.append(1)\n")   # a call on an attribute: not a write
    found = server_writes(str(sample))
    assert sorted(f.split(" ", 1)[1] for f in found) == sorted([
        "server.poll", "server.link", "server.a", "server.b", "server.opened",
        "setattr(server, ...)"])


def test_mqtt_keeps_a_session_per_client_without_swapping_attributes():
    with open(os.path.join(REPO, "ports", "mqtt.py")) as f:
        tree = ast.parse(f.read())
    calls = [node.func.id for node in ast.walk(tree)
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    assert "setattr" not in calls and "getattr" not in calls
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    assert "_SESSION" not in names
