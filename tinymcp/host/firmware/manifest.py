# The freeze manifest: the file set tinymcp-deploy would copy (traced through the board's build()),
# frozen as modules in their package layout, the board frozen as main.py, and the port's own
# frozen modules included so the firmware keeps everything a stock one has.
import os

from tinymcp.host.deploy.files import CBOR_LINK, board_files, device_path

# The port's own frozen modules: the MicroPython board's manifest when it has one (RPI_PICO_W
# adds networking and Bluetooth helpers, and includes the port's), else the port's (asyncio,
# onewire, dht, neopixel, ...).
PORT_MANIFEST = '''\
try:
    include("$(BOARD_DIR)/manifest.py")
except Exception as e:
    if not isinstance(e.__context__, FileNotFoundError):
        raise
    include("$(PORT_DIR)/boards/manifest.py")
'''


def _listing(names):
    return "(\n" + "".join("    %r,\n" % n for n in names) + ")"


def manifest_text(root, board, target, files, how):
    # files: repo-relative .py paths (board_files); the board's own folder is the device root.
    root = os.path.abspath(root)
    packages, modules = {}, []
    for rel in files:
        dest = device_path(rel, board)
        if dest == rel:                      # tinymcp/..., ports/...: a package and its path
            top, _, inner = rel.partition("/")
            packages.setdefault(top, []).append(inner)
        else:                                # main.py and its sibling modules
            modules.append(dest)
    lines = ["# Written by tinymcp-firmware --board %s --target %s: tinymcp frozen into the "
             "firmware," % (board, target),
             "# boards/%s/main.py as main.py. The files are those tinymcp-deploy would copy (%s),"
             % (board, how.split(" ")[0]),
             "# plus the CBOR link mode. Run tinymcp-firmware again after changing the board.", ""]
    lines.append(PORT_MANIFEST)
    for top in sorted(packages):
        lines.append("package(%r, base_path=%r, files=%s)" % (top, root, _listing(sorted(packages[top]))))
    board_dir = os.path.join(root, "boards", board)
    for dest in sorted(modules, key=lambda d: (d == "main.py", d)):
        lines.append("module(%r, base_path=%r)" % (dest, board_dir))
    return "\n".join(lines) + "\n"


def write_manifest(root, board, target, out_dir):
    # -> (path of out_dir/manifest.py, the repo files frozen). The CBOR link mode costs flash
    # only (it is imported when a host asks for it), so a firmware always has it.
    root = os.path.abspath(root)
    files, how = board_files(root, board, extra=CBOR_LINK)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "manifest.py")
    with open(path, "w") as f:
        f.write(manifest_text(root, board, target, files, how))
    return path, files
