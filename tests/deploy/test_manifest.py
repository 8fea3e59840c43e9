# The mip manifests: every URL names a committed repo file, the core list is the real core, and
# `mpremote mip install` of package.json puts that core on a (fake) board.
import glob
import json
import os
import subprocess
import sys

import pytest

from tinymcp.host.deploy.files import HOST_ONLY, board_files, boards
from tinymcp.host.deploy.manifest import HOST_BOARDS, manifest_text, manifests, package_version
from tests.deploy.conftest import tree


def tracked(repo):
    proc = subprocess.run(["git", "ls-files"], cwd=repo, stdout=subprocess.PIPE, timeout=30)
    return set(proc.stdout.decode().split()) if proc.returncode == 0 else None


def manifest_names(repo):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(repo, "package*.json")))


def load(repo, name):
    with open(os.path.join(repo, name)) as f:
        return json.load(f)


def test_every_url_is_a_real_repo_file(repo):
    names = manifest_names(repo)
    assert "package.json" in names
    in_git = tracked(repo)
    for name in names:
        data = load(repo, name)
        assert set(data) == {"urls", "deps", "version"}, name
        assert data["version"] == package_version(repo)
        for dest, src in data["urls"]:
            # relative: mip resolves it against the manifest's own github: URL
            assert ":" not in src and not src.startswith("/") and ".." not in src.split("/")
            assert dest == src
            assert os.path.isfile(os.path.join(repo, src)), (name, src)
            if in_git is not None:
                assert src in in_git, "%s names %s, which is not committed" % (name, src)


def test_the_core_list_is_the_real_core(repo):
    in_git = tracked(repo)
    on_disk = set(os.path.relpath(p, repo) for pattern in ("tinymcp/*.py", "ports/*.py",
                                                           "ports/micropython/*.py")
                  for p in glob.glob(os.path.join(repo, pattern)))
    core = on_disk & in_git if in_git is not None else on_disk
    core = {p for p in core if not p.startswith(HOST_ONLY)}   # tinymcp/joined.py: CPython's
    listed = [src for _dest, src in load(repo, "package.json")["urls"]]
    assert set(listed) == core
    assert not [p for p in listed if p.startswith("ports/cpython")]


def test_the_manifests_are_up_to_date(repo):
    # `tinymcp-deploy --manifests` regenerates them; run it after adding a module or a board.
    made = manifests(repo)
    assert sorted(made) == manifest_names(repo)
    for name, data in made.items():
        with open(os.path.join(repo, name)) as f:
            assert f.read() == manifest_text(data), "%s is stale: run tinymcp-deploy --manifests" % name


def test_board_manifests_add_what_the_board_imports(repo):
    for board in boards(repo):
        if board in HOST_BOARDS:
            continue
        listed = {src for _dest, src in load(repo, "package-%s.json" % board)["urls"]}
        files, _how = board_files(repo, board)
        assert set(files) - {"boards/%s/main.py" % board} <= listed, board
        # drivers today's wiring leaves out are still there for the user who fits the part
        assert {"tinymcp/sensors/sht3x.py", "tinymcp/sensors/gpio.py"} <= listed, board


def test_mpremote_mip_install_puts_the_core_on_a_board(repo, make_board):
    pytest.importorskip("mpremote", reason="needs mpremote: pip install mpremote")
    board = make_board(serving=False)
    proc = subprocess.run([sys.executable, "-m", "mpremote", "connect", board.port, "mip", "install",
                           "--target", "/lib", "package.json"], cwd=repo, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=120)
    assert proc.returncode == 0, proc.stdout.decode(errors="replace")[-2000:]
    installed = tree(board.fs.real("lib"))
    listed = [src for _dest, src in load(repo, "package.json")["urls"]]
    assert sorted(installed) == sorted(listed)
    for src in listed:
        with open(os.path.join(repo, src), "rb") as f:
            assert installed[src] == f.read(), src


def test_host_programs_never_reach_a_board(repo):
    # tinymcp/host/ is CPython-only: no board's file set, mip manifest or traced build has it.
    for name in manifest_names(repo):
        assert not [src for _dest, src in load(repo, name)["urls"] if src.startswith("tinymcp/host/")]
    for board in boards(repo):
        files, _how = board_files(repo, board)
        assert not [f for f in files if f.startswith("tinymcp/host/")], board


def test_only_tinymcp_is_installed(repo):
    # setup.cfg's package list: tinymcp and its subpackages (the host programs among them), no
    # top-level "tools" or "tests".
    from setuptools import find_packages
    packages = find_packages(repo, include=["tinymcp", "tinymcp.*"])
    assert "tinymcp.host.bridge" in packages and "tinymcp.host.deploy" in packages
    with open(os.path.join(repo, "setup.cfg")) as f:
        assert "include = tinymcp, tinymcp.*" in f.read()
    assert not os.path.exists(os.path.join(repo, "tools", "__init__.py"))
