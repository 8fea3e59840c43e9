# Where what a board runs comes from (the device tree: tinymcp/, ports/, the bundled boards/), in a
# checkout or in an installed tinymcp, and which board `--board NAME|PATH` means.
import os

from tinymcp.host.deploy import DeployError

# In a wheel, ports/ and boards/ are package data of the host programs (setup.py puts them there).
INSTALLED = ("host", "device")


class BoardSource:
    # A board: the file that becomes main.py on the device, the folder its own modules come from,
    # and its name (the folder's, or the file's stem). Its files are called boards/NAME/... in a
    # file set, whatever folder they are in.
    def __init__(self, main, name):
        self.main = os.path.abspath(main)
        self.dir = os.path.dirname(self.main)
        self.name = name
        self.prefix = "boards/%s/" % name


class DeviceTree:
    # core: the folder holding tinymcp/; device: the folder holding ports/ and boards/ (the same
    # folder in a checkout).
    def __init__(self, core, device):
        self.core = os.path.abspath(core)
        self.device = os.path.abspath(device)
        self.boards_dir = os.path.join(self.device, "boards")

    def boards(self):
        # -> the bundled boards' names.
        if not os.path.isdir(self.boards_dir):
            return []
        return sorted(n for n in os.listdir(self.boards_dir)
                      if os.path.isfile(os.path.join(self.boards_dir, n, "main.py")))

    def board(self, spec):
        # NAME (a bundled board) or PATH (a folder holding main.py, or a board's .py file) -> BoardSource.
        if isinstance(spec, BoardSource):
            return spec
        bundled = os.path.join(self.boards_dir, spec, "main.py")
        if os.sep not in spec and "/" not in spec and os.path.isfile(bundled):
            return BoardSource(bundled, spec)
        path = os.path.abspath(spec)
        if os.path.isfile(os.path.join(path, "main.py")):
            return BoardSource(os.path.join(path, "main.py"), os.path.basename(path))
        if os.path.isfile(path) and path.endswith(".py"):
            return BoardSource(path, os.path.basename(path)[:-3])
        if os.path.isdir(path):
            raise DeployError("%s holds no main.py: not a board folder (tinymcp-deploy --new DIR "
                              "writes one)" % spec)
        raise DeployError("no board %r (boards: %s; or a folder holding main.py, or a board's .py "
                          "file)" % (spec, ", ".join(self.boards())))

    def source(self, rel, board):
        # A file set's name (tinymcp/..., ports/..., boards/NAME/...) -> the file on this disk.
        if rel == board.prefix + "main.py":
            return board.main
        if rel.startswith(board.prefix):
            return os.path.join(board.dir, *rel[len(board.prefix):].split("/"))
        return os.path.join(self.core if rel.startswith("tinymcp/") else self.device, *rel.split("/"))

    def name_of(self, path, board):
        # The file on disk -> its name in a file set, or None when it is not the device's.
        path = os.path.abspath(path)
        if path == board.main:
            return board.prefix + "main.py"
        for base, top in ((self.device, "ports"), (self.core, "tinymcp")):   # ports/ may be in tinymcp/
            if path.startswith(os.path.join(base, top) + os.sep):
                return os.path.relpath(path, base).replace(os.sep, "/")
        rel = os.path.relpath(path, board.dir)
        parts = rel.split(os.sep)
        if rel.startswith("..") or [p for p in parts if p.startswith(".") or p == "site-packages"]:
            return None   # outside the board's folder, or an environment kept in it
        return board.prefix + "/".join(parts)


def device_tree(root=None):
    # The one answer to "where do tinymcp/, ports/ and boards/ come from": the checkout given
    # (--root), the checkout this tinymcp is imported from (an editable install), or the copy an
    # installed tinymcp carries. Never the working directory.
    if root is not None:
        return DeviceTree(root, root)
    import tinymcp
    package = os.path.dirname(os.path.abspath(tinymcp.__file__))
    checkout = os.path.dirname(package)
    if (os.path.isfile(os.path.join(checkout, "ports", "__init__.py"))
            and os.path.isdir(os.path.join(checkout, "boards"))):
        return DeviceTree(checkout, checkout)
    installed = os.path.join(package, *INSTALLED)
    if not os.path.isfile(os.path.join(installed, "ports", "__init__.py")):
        raise DeployError("this tinymcp carries no device tree (%s): reinstall it from its wheel"
                          % installed)
    return DeviceTree(checkout, installed)


def find_board(spec, root=None):
    # --board NAME|PATH (deploy, firmware) and --sim BOARD|PATH (the bridge) -> (DeviceTree, BoardSource).
    tree = device_tree(root)
    return tree, tree.board(spec)


def as_tree(root):
    # A checkout's root (a path) or a DeviceTree -> a DeviceTree.
    return root if isinstance(root, DeviceTree) else DeviceTree(root, root)
