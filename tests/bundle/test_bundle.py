# The bridge as an MCP Bundle (tools/bundle.py): checked by the official mcpb tool, packed again
# by it, and what it holds (test_bundle_launch.py starts it as Claude Desktop does).
import json
import os
import subprocess
import sys
import zipfile

import pytest

from tests.bundle.conftest import REPO

pytestmark = pytest.mark.xdist_group("bundle")   # one worker, one build


def manifest_of(unpacked):
    with open(os.path.join(str(unpacked), "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


def test_the_official_tool_validates_the_manifest(built, mcpb):
    _bundle, _entry, unpacked = built
    done = mcpb("validate", os.path.join(str(unpacked), "manifest.json"))
    assert done.returncode == 0 and b"validation passes" in done.stdout, done.stdout.decode()
    info = mcpb("info", built[0])
    assert info.returncode == 0 and b"tinymcp-bridge" in info.stdout, info.stdout.decode()


def test_mcpb_pack_round_trips_the_bundle(built, mcpb, tmp_path):
    bundle, _entry, unpacked = built
    repacked = tmp_path / "repacked.mcpb"
    done = mcpb("pack", unpacked, repacked)
    assert done.returncode == 0, done.stdout.decode()
    ours, theirs = zipfile.ZipFile(str(bundle)), zipfile.ZipFile(str(repacked))
    assert sorted(ours.namelist()) == sorted(theirs.namelist())
    for name in ours.namelist():
        assert ours.read(name) == theirs.read(name), name
    again = tmp_path / "again"
    assert mcpb("unpack", repacked, again).returncode == 0
    assert manifest_of(again) == manifest_of(unpacked)


def test_the_manifest_asks_for_the_board_and_its_token_on_every_os(built):
    _bundle, _entry, unpacked = built
    manifest = manifest_of(unpacked)
    board, token = manifest["user_config"]["board"], manifest["user_config"]["board_token"]
    assert board["required"] and board["default"] == "auto" and not board.get("sensitive")
    for choice in ("auto", "socket://", "sim", "COM3"):
        assert choice in board["description"]
    assert token["sensitive"] and not token["required"]
    config = manifest["server"]["mcp_config"]
    assert sorted(config["platform_overrides"]) == ["darwin", "linux", "win32"]
    assert "${user_config.board}" in config["args"]
    assert config["env"]["TINYMCP_BOARD_TOKEN"] == "${user_config.board_token}"
    assert manifest["compatibility"]["platforms"] == ["darwin", "win32", "linux"]


def test_the_bundle_carries_its_pure_python_dependencies_its_icon_and_the_licence(built):
    _bundle, _entry, unpacked = built
    manifest = manifest_of(unpacked)
    lib = os.path.join(str(unpacked), "server", "lib")
    assert {"tinymcp", "serial", "platformdirs"} <= set(os.listdir(lib))
    assert os.path.isfile(os.path.join(lib, "tinymcp", "host", "device", "boards", "sim",
                                       "main.py"))
    compiled = [os.path.join(here, n) for here, _d, names in os.walk(str(unpacked))
                for n in names if n.endswith((".so", ".pyd", ".dll", ".dylib", ".pyc"))]
    assert compiled == []
    with open(os.path.join(str(unpacked), manifest["icon"]), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    with open(os.path.join(str(unpacked), "LICENSE"), "rb") as f, \
            open(os.path.join(REPO, "LICENSE"), "rb") as ours:
        assert f.read() == ours.read()
    assert manifest["license"] == "MIT"


def test_the_launcher_maps_the_board_setting_to_the_bridge_options(built):
    _bundle, _entry, unpacked = built
    code = ("import importlib.util, sys\n"
            "spec = importlib.util.spec_from_file_location('launcher', sys.argv[1])\n"
            "launcher = importlib.util.module_from_spec(spec)\n"
            "spec.loader.exec_module(launcher)\n"
            "print([launcher.bridge_args(['--board', b]) for b in sys.argv[2:]])")
    boards = ["sim", "COM3", "auto", "socket://10.0.0.7:8765", ""]
    done = subprocess.run([sys.executable, "-c", code, os.path.join(str(unpacked), "server",
                                                                     "main.py")] + boards,
                          stdout=subprocess.PIPE, check=True, timeout=60)
    assert done.stdout.decode().strip() == str([
        ["--sim"], ["--port", "COM3"], ["--port", "auto"], ["--port", "socket://10.0.0.7:8765"],
        ["--port", "auto"]])


@pytest.mark.parametrize("given, said", [("nothere/tinymcp_hw-0.1.0-py3-none-any.whl",
                                           "no such file"),
                                          ("setup.cfg", "not a wheel of tinymcp-hw")])
def test_a_wheel_given_that_is_not_this_projects_is_refused_before_any_work(given, said,
                                                                             tmp_path):
    done = subprocess.run([sys.executable, os.path.join(REPO, "tools", "bundle.py"), "--out",
                           str(tmp_path / "out"), "--wheel", given], cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 2 and done.stdout == b""
    assert said in done.stderr.decode().strip().splitlines()[-1], done.stderr.decode()
    assert not (tmp_path / "out").exists()
