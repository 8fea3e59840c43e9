# The freeze manifest: the file set tinymcp-deploy would copy (traced through the board's build()),
# frozen as modules in their package layout, the board frozen as main.py, and the port's own
# frozen modules included so the firmware keeps everything a stock one has.
import os
import shutil

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


def manifest_text(tree, board, target, files, how, main_dir):
    # files: the file set (board_files); the board's own folder is the device root, its main
    # file frozen as main.py from main_dir.
    packages, modules = {}, []
    for rel in files:
        dest = device_path(rel, board.name)
        if dest == rel:                      # tinymcp/..., ports/...: a package and its path
            top, _, inner = rel.partition("/")
            packages.setdefault(top, []).append(inner)
        else:                                # main.py and its sibling modules
            modules.append(dest)
    lines = ["# Written by tinymcp-firmware --board %s --target %s: tinymcp frozen into the "
             "firmware," % (board.name, target),
             "# %s as main.py. The files are those tinymcp-deploy would copy (%s),"
             % (board.main, how.split(" ")[0]),
             "# plus the CBOR link mode. Run tinymcp-firmware again after changing the board.", ""]
    lines.append(PORT_MANIFEST)
    for top in sorted(packages):
        base = tree.core if top == "tinymcp" else tree.device
        lines.append("package(%r, base_path=%r, files=%s)" % (top, base, _listing(sorted(packages[top]))))
    for dest in sorted(modules, key=lambda d: (d == "main.py", d)):
        lines.append("module(%r, base_path=%r)" % (dest, main_dir if dest == "main.py" else board.dir))
    return "\n".join(lines) + "\n"


def write_manifest(tree, board, target, out_dir):
    # -> (path of out_dir/manifest.py, the files frozen). The CBOR link mode costs flash only (it
    # is imported when a host asks for it), so a firmware always has it. A board given as a .py
    # file of another name is frozen as main.py from a copy in out_dir.
    files, how = board_files(tree, board, extra=CBOR_LINK)
    os.makedirs(out_dir, exist_ok=True)
    main_dir = board.dir
    if os.path.basename(board.main) != "main.py":
        main_dir = os.path.abspath(os.path.join(out_dir, "board"))
        os.makedirs(main_dir, exist_ok=True)
        shutil.copyfile(board.main, os.path.join(main_dir, "main.py"))
    path = os.path.join(out_dir, "manifest.py")
    with open(path, "w") as f:
        f.write(manifest_text(tree, board, target, files, how, main_dir))
    return path, files
