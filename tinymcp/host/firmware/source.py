# MicroPython's source for a firmware build: the pinned release (found beside the checkout, or
# fetched from GitHub), and a build copy holding just what mpy-cross and the qemu port need.
import hashlib
import os
import shutil
import tarfile

from tinymcp.host.firmware import FirmwareError

VERSION = "1.28.0"
TARBALL = "micropython-%s-src.tar.xz" % VERSION
# The same tag from MicroPython's own GitHub, for machines without ../shared (needs the internet).
UPSTREAM = "https://github.com/micropython/micropython/archive/refs/tags/v%s.tar.gz" % VERSION
# What building mpy-cross and ports/qemu reads (no submodule among them).
NEEDED = ("LICENSE", "README.md", "py", "extmod", "shared", "lib/libm", "lib/libm_dbl",
          "lib/oofatfs", "lib/littlefs", "lib/uzlib", "lib/re1.5", "lib/crypto-algorithms",
          "ports/qemu", "mpy-cross", "tools", "drivers/bus", "drivers/dht")


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            digest.update(block)
    return digest.hexdigest()


def pinned(root):
    # -> the pinned tarball in ../shared/micropython beside the checkout, checked against its
    # SHA256SUMS, or None when there is none.
    folder = os.path.join(os.path.dirname(os.path.abspath(root)), "shared", "micropython")
    path = os.path.join(folder, TARBALL)
    if not os.path.isfile(path):
        return None
    sums = os.path.join(folder, "SHA256SUMS")
    want = None
    if os.path.isfile(sums):
        with open(sums) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2 and parts[1].lstrip("*") == TARBALL:
                    want = parts[0]
    if want is None:
        raise FirmwareError("%s has no line for %s" % (sums, TARBALL))
    if sha256(path) != want:
        raise FirmwareError("%s does not match its SHA256SUMS: a damaged copy" % path)
    return path


def downloaded(root):
    return os.path.join(root, "build", "firmware", "micropython-%s.tar.gz" % VERSION)


def default_source(root):
    # -> the MicroPython source to build from when none is given: pinned, else downloaded.
    found = pinned(root)
    if found:
        return found
    path = downloaded(root)
    return path if os.path.isfile(path) else None


def fetch(root):
    # Download the release tag from GitHub into build/firmware (for a machine with the internet).
    import urllib.request
    path = downloaded(root)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with urllib.request.urlopen(UPSTREAM, timeout=60) as answer, open(path + ".part", "wb") as f:
            shutil.copyfileobj(answer, f)
    except OSError as e:
        raise FirmwareError("cannot download MicroPython %s from %s: %s" % (VERSION, UPSTREAM, e))
    os.replace(path + ".part", path)
    return path


def identity(src):
    # -> a string that changes whenever the source does: the tarball's hash, or the sizes and
    # times of a tree's needed files.
    if os.path.isfile(src):
        return "tar:" + sha256(src)
    digest = hashlib.sha256()
    for rel in NEEDED:
        top = os.path.join(src, rel)
        for here, dirs, files in os.walk(top):
            dirs[:] = sorted(d for d in dirs if not d.startswith("build"))
            for name in sorted(files):
                st = os.stat(os.path.join(here, name))
                digest.update(("%s %d %d\n" % (os.path.relpath(os.path.join(here, name), src),
                                               st.st_size, st.st_mtime_ns)).encode())
        if os.path.isfile(top):
            st = os.stat(top)
            digest.update(("%s %d %d\n" % (rel, st.st_size, st.st_mtime_ns)).encode())
    return "dir:" + digest.hexdigest()


def _wanted(rel):
    return any(rel == n or rel.startswith(n + "/") for n in NEEDED)


def unpack(src, tree):
    # A fresh build copy of src (a source tree, or a release or pinned tarball) at tree.
    if os.path.isdir(tree):
        shutil.rmtree(tree)
    if os.path.isdir(src):
        if not os.path.isfile(os.path.join(src, "py", "mpconfig.h")):
            raise FirmwareError("%s is not a MicroPython source tree (no py/mpconfig.h)" % src)
        for rel in NEEDED:
            here = os.path.join(src, rel)
            there = os.path.join(tree, rel)
            if os.path.isdir(here):
                shutil.copytree(here, there, ignore=shutil.ignore_patterns("build", "build-*"))
            elif os.path.isfile(here):
                os.makedirs(os.path.dirname(there), exist_ok=True)
                shutil.copy2(here, there)
        return tree
    if not os.path.isfile(src):
        raise FirmwareError("no MicroPython source at %s" % src)
    try:
        with tarfile.open(src) as tar:
            members = []
            for m in tar.getmembers():
                parts = m.name.split("/", 1)   # the top folder: micropython-1.28.0/
                if len(parts) == 2 and _wanted(parts[1]) and (m.isfile() or m.isdir()):
                    m.name = parts[1]
                    members.append(m)
            if not any(m.name == "py/mpconfig.h" for m in members):
                raise FirmwareError("%s is not a MicroPython source tarball (no py/mpconfig.h)" % src)
            if hasattr(tarfile, "data_filter"):   # Python 3.10.12 and later
                tar.extractall(tree, members, filter="data")
            else:
                tar.extractall(tree, members)
    except (tarfile.TarError, OSError) as e:
        raise FirmwareError("cannot unpack %s: %s" % (src, e))
    return tree
