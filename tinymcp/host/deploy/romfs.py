# The compiled tree as a ROMFS image (mpremote's romfs support), written into the board's ROMFS
# partition, where its bytecode runs in place from flash; main.py stays on the filesystem. Taken by
# default where the partition is there, large enough, and empty or holding an earlier tinymcp
# image (choose()); --romfs insists, --no-romfs declines.
import contextlib
import hashlib
import io
import os
import shutil

from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy.mpy import build

IMAGE = "romfs.img"
TREE = "romfs"      # the image's contents, beside it in the build folder
# The tree goes under lib/ in the image: the firmware mounts the image at /rom and puts /rom/lib
# on sys.path (extmod/vfs.c since MicroPython 1.25, after '' and .frozen, before /lib); /rom
# itself is not there on every port.
LIB = "lib"
STAMP = ".tinymcp"  # at the image's top: says the image is ours (sorted first, read without walking)
STAMP_TEXT = b"tinymcp ROMFS image\n"
NO_ROMFS = ("this firmware has no ROMFS partition (vfs.rom_ioctl): MicroPython 1.25 and later "
            "has one only where the board's build enables it (PYBD-SFx, alif and the stm32 Arduino "
            "boards, ESP8266_GENERIC-FLASH_2M_ROMFS), not on the stock Pico or ESP32 downloads; "
            "deploy without --romfs, or freeze tinymcp into the firmware (tinymcp-firmware "
            "--board NAME --out DIR)")


def build_image(root, board, out_dir, mpy_version, extra=(), source_lines=True, leave_out=(),
                network=None):
    # -> (files inside the image as build() lists them, under LIB; how they were found; the
    # image bytes). Writes out_dir/romfs/ (the image's tree), out_dir/romfs.img and
    # out_dir/main.py.
    tree = os.path.join(out_dir, TREE)
    if os.path.isdir(tree):
        shutil.rmtree(tree)   # a file left from an earlier build must not slip into the image
    made, how = build(root, board, os.path.join(tree, LIB), mpy_version, extra, source_lines,
                      leave_out, network)
    os.replace(os.path.join(tree, LIB, "main.py"), os.path.join(out_dir, "main.py"))
    with open(os.path.join(tree, STAMP), "wb") as f:
        f.write(STAMP_TEXT)
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
    # Names at the top of the image's lib/: a file or folder of that name on the filesystem
    # (the current directory comes first on sys.path) would shadow the image's copy.
    return sorted({dest.split("/")[0] for dest, _size, _src in inside})


FILES = ".mpy files on the filesystem"
NO_PARTITION = ("no ROMFS on this firmware: %s (tinymcp-firmware freezes the code into flash "
                "instead)" % FILES)


def held(part):
    # A survey (MpremoteBoard.romfs_survey) -> what the partition holds: "empty", "tinymcp", or a
    # one-line description of something else.
    if part.get("unreadable"):
        return "contents that cannot be read here (%s)" % part["unreadable"]
    if part["names"] is None:
        return "empty"
    if part["stamp"] == STAMP_TEXT or (part["init"] and "ports" in part["names"]):
        return "tinymcp"   # ours, or an image from before the stamp (tinymcp/ and ports/)
    return "something else (top level: %s)" % (", ".join(part["names"][:6]) or "nothing")


def choose(part, image_size, asked):
    # Files or ROMFS? part: MpremoteBoard.romfs_survey() (None: no partition); image_size: None when no
    # image was built; asked: True (--romfs), False (--no-romfs), None (whichever the board
    # allows). -> (ROMFS?, the reason in one line, erase the partition's tinymcp image?).
    # Raises with the reason when --romfs cannot be had.
    if part is None:
        if asked:
            raise DeployError(NO_ROMFS)
        return False, NO_PARTITION, False
    what = held(part)
    if asked is False:
        return False, "--no-romfs: %s%s" % (FILES, ", the ROMFS partition's tinymcp image erased"
                                             if what == "tinymcp" else ""), what == "tinymcp"
    if what not in ("empty", "tinymcp"):
        if asked:
            raise DeployError("the board's ROMFS partition holds %s: tinymcp-deploy never "
                              "overwrites it (erase it yourself to give it to tinymcp, or "
                              "deploy without --romfs)" % what)
        return False, "the ROMFS partition holds %s, never overwritten: %s" % (what, FILES), False
    if image_size > part["size"]:
        if asked:
            raise DeployError("the ROMFS image (%d B) does not fit the board's ROMFS partition "
                              "(%d B)" % (image_size, part["size"]))
        return False, ("the %d B ROMFS partition is too small for the %d B image: %s%s "
                       "(--handshake-only and --no-source-lines make the image smaller)"
                       % (part["size"], image_size, FILES, ", its tinymcp image erased"
                          if what == "tinymcp" else "")), what == "tinymcp"
    return True, ("a %d B ROMFS partition, %s: the code goes there (bytecode runs in place from "
                  "flash%s)" % (part["size"], "empty" if what == "empty"
                                else "holding an earlier tinymcp image",
                                "" if asked else "; --no-romfs for .mpy files")), False


def write(b, image, size, out):
    # Write the image into partition 0 (size bytes, choose() has checked it fits) unless it
    # already holds it.
    if b.romfs_digest(len(image)) == hashlib.sha256(image).hexdigest():
        out.write("  ROMFS already holds this image (%d B of %d B)\n" % (len(image), size))
        return False
    out.write("  ROMFS partition %d B: writing a %d B image\n" % (size, len(image)))
    b.write_romfs(image, out)
    return True
