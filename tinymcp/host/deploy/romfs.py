# --romfs: the compiled tree as a ROMFS image (mpremote's romfs support), written into the board's
# ROMFS partition, where its bytecode runs in place from flash; main.py stays on the filesystem.
import contextlib
import hashlib
import io
import os
import shutil

from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy.mpy import build

IMAGE = "romfs.img"
TREE = "romfs"      # the image's contents, beside it in the build folder
NO_ROMFS = ("this firmware has no ROMFS partition (vfs.rom_ioctl): MicroPython 1.25 and later "
            "has one only where the board's build enables it (PYBD-SFx, alif and the stm32 Arduino "
            "boards, ESP8266_GENERIC-FLASH_2M_ROMFS), not on the stock Pico or ESP32 downloads; "
            "deploy without --romfs, or freeze tinymcp into the firmware (tinymcp-firmware "
            "--board NAME --out DIR)")


def build_image(root, board, out_dir, mpy_version, extra=(), source_lines=True, leave_out=(),
                network=None):
    # -> (files inside the image as build() lists them, how they were found, the image bytes).
    # Writes out_dir/romfs/ (the image's tree), out_dir/romfs.img and out_dir/main.py.
    tree = os.path.join(out_dir, TREE)
    if os.path.isdir(tree):
        shutil.rmtree(tree)   # a file left from an earlier build must not slip into the image
    made, how = build(root, board, tree, mpy_version, extra, source_lines, leave_out, network)
    os.replace(os.path.join(tree, "main.py"), os.path.join(out_dir, "main.py"))
    image = write_image(tree, os.path.join(out_dir, IMAGE))
    return [m for m in made if m[0] != "main.py"], how, image


def write_image(tree, path):
    # -> an image of tree that vfs.VfsRom mounts (as mpremote romfs builds it), also written to
    # path.
    from mpremote.romfs import make_romfs
    with contextlib.redirect_stdout(io.StringIO()):   # make_romfs prints the tree it walks
        image = make_romfs(tree, mpy_cross=False)
    with open(path, "wb") as f:
        f.write(image)
    return image


def top_level(inside):
    # Names at the image's top: a file or folder of that name on the filesystem (the current
    # directory comes first on sys.path) would shadow the image's copy.
    return sorted({dest.split("/")[0] for dest, _size, _src in inside})


def write(b, image, out):
    # Write the image into partition 0 unless it already holds it. Raises with a one-line
    # reason, before anything is written, when there is no partition or it is too small.
    size = b.romfs_size(NO_ROMFS)
    if len(image) > size:
        raise DeployError("the ROMFS image (%d B) does not fit the board's ROMFS partition (%d B)"
                          % (len(image), size))
    if b.romfs_digest(len(image)) == hashlib.sha256(image).hexdigest():
        out.write("  ROMFS already holds this image (%d B of %d B)\n" % (len(image), size))
        return False
    out.write("  ROMFS partition %d B: writing a %d B image\n" % (size, len(image)))
    b.write_romfs(image, out)
    return True
