# tinymcp-firmware: the freeze manifest (checked with MicroPython's own tools/manifestfile.py), the
# build commands it prints, its one-line errors, and the emulated board it builds serving from
# power-on.
import importlib.util
import os
import re
import signal
import subprocess
import sys
import textwrap

import pytest

from tinymcp.host.deploy.files import CBOR_LINK, board_files
from tinymcp.host.firmware.cli import main
from tests.firmware import images
from tests.firmware.conftest import REPO, initialize
from tests.needs import missing


def run(*args):
    return main(list(args) + ["--root", REPO])


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinymcp-firmware: "), err
    return err


@pytest.fixture(scope="module")
def manifestfile():
    # MicroPython's own manifest reader, from the pinned source.
    if images.source() is None:
        missing("no MicroPython source: run .ci/install-firmware")
    tree = images.tree()
    spec = importlib.util.spec_from_file_location("manifestfile", os.path.join(tree, "tools", "manifestfile.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.tree = tree
    return module


def stand_in_rp2(tmp_path):
    # ports/rp2 is not in the pinned source: a stand-in with what its manifests do that needs no
    # micropython-lib (the real ones also require onewire, dht, neopixel, networking bundles).
    port = tmp_path / "rp2"
    (port / "modules").mkdir(parents=True)
    (port / "modules" / "_boot.py").write_text("# the port's own: mounts the flash filesystem\n")
    (port / "boards" / "RPI_PICO").mkdir(parents=True)   # no manifest: the port's is used
    (port / "boards" / "manifest.py").write_text(textwrap.dedent('''\
        freeze("$(PORT_DIR)/modules")
        include("$(MPY_DIR)/extmod/asyncio")
    '''))
    w = port / "boards" / "RPI_PICO_W"
    (w / "modules").mkdir(parents=True)
    (w / "modules" / "wlan_helper.py").write_text("# stands in for the Pico W's networking helpers\n")
    (w / "manifest.py").write_text(textwrap.dedent('''\
        include("$(PORT_DIR)/boards/manifest.py")
        freeze("$(BOARD_DIR)/modules")
    '''))
    return port


def frozen(manifestfile, manifest, port, board):
    m = manifestfile.ManifestFile(manifestfile.MODE_FREEZE, {
        "MPY_DIR": manifestfile.tree, "PORT_DIR": str(port), "BOARD_DIR": str(port / "boards" / board),
        "MPY_LIB_DIR": None})
    m.execute(manifest)
    return {f.target_path: f.full_path for f in m.files()}


def test_the_rp2_manifest_is_accepted_by_micropython_for_the_pico_and_the_pico_w(
        manifestfile, tmp_path, capsys):
    out = tmp_path / "pico"
    assert run("--board", "rpi_pico", "--out", str(out)) == 0
    manifest = str(out / "manifest.py")
    files, _how = board_files(REPO, "rpi_pico", extra=CBOR_LINK)
    expected = {("main.py" if f == "boards/rpi_pico/main.py" else f): os.path.join(REPO, f)
                for f in files}
    port = stand_in_rp2(tmp_path)
    pico = frozen(manifestfile, manifest, port, "RPI_PICO")
    assert {t: p for t, p in pico.items() if t in expected} == expected   # the board, tinymcp, ports
    assert "_boot.py" in pico and "asyncio/__init__.py" in pico           # the port's own
    assert not [t for t in pico if t.startswith(("tinymcp/host", "ports/cpython"))]
    pico_w = frozen(manifestfile, manifest, port, "RPI_PICO_W")
    assert set(pico_w) == set(pico) | {"wlan_helper.py"}                  # the board's manifest
    printed = capsys.readouterr().out
    for board in ("RPI_PICO", "RPI_PICO_W"):
        assert "BOARD=%s" % board in printed
    assert "make -C <micropython>/ports/rp2 BOARD=RPI_PICO FROZEN_MANIFEST=%s" % manifest in printed
    assert "firmware.uf2" in printed


def test_a_broken_board_manifest_is_not_silently_replaced_by_the_ports(manifestfile, tmp_path):
    out = tmp_path / "pico"
    assert run("--board", "rpi_pico", "--out", str(out)) == 0
    port = stand_in_rp2(tmp_path)
    (port / "boards" / "RPI_PICO_W" / "manifest.py").write_text("include(\n")
    with pytest.raises(manifestfile.ManifestFileError):
        frozen(manifestfile, str(out / "manifest.py"), port, "RPI_PICO_W")


def test_esp32_gets_its_build_command(tmp_path, capsys):
    out = tmp_path / "esp32"
    (tmp_path / "ports" / "esp32").mkdir(parents=True)
    assert run("--board", "esp32", "--out", str(out), "--micropython", str(tmp_path)) == 0
    printed = capsys.readouterr().out
    assert ("make -C %s/ports/esp32 BOARD=ESP32_GENERIC FROZEN_MANIFEST=%s"
            % (tmp_path, out / "manifest.py")) in printed
    assert "export.sh" in printed
    text = (out / "manifest.py").read_text()
    assert "module('main.py', base_path=%r)" % os.path.join(REPO, "boards", "esp32") in text


@pytest.mark.parametrize("args, says", [
    (["--board", "nope", "--out", "x"], "no board 'nope'"),
    (["--board", "sim"], "--board and --out are required"),
    (["--board", "sim", "--out", "x", "--run"], "--run boots the emulated board"),
    (["--board", "sim", "--out", "x", "--target", "qemu", "--micropython", "/nowhere"],
     "no MicroPython source at /nowhere"),
    (["--board", "sim", "--out", "x", "--target", "mips"], "invalid choice"),
])
def test_bad_arguments_get_one_line_and_exit_2(args, says, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert run(*args) == 2
    assert says in one_line_error(capsys)


def test_an_rp2_build_needs_a_checkout_with_the_port(tmp_path, capsys):
    tarball = tmp_path / "micropython.tar.xz"
    tarball.write_bytes(b"")
    for src in (tarball, tmp_path):   # a tarball; a tree without ports/rp2 (the pinned one)
        assert run("--board", "rpi_pico", "--out", str(tmp_path / "o"), "--micropython", str(src)) == 2
        assert "has no ports/rp2: building for rp2 needs a MicroPython git checkout" in one_line_error(capsys)


def test_the_qemu_firmware_serves_from_power_on(sim_elf, boot):
    # Nothing copied, nothing typed at a REPL: the frozen main.py serves as the board boots.
    board = boot(sim_elf)
    result = initialize(board.port)
    assert result["serverInfo"]["name"] == "tinymcp-sim"
    assert result["capabilities"]["experimental"]["tinymcp/link"]["cbor"] is True  # frozen too


def test_run_boots_the_emulated_board_behind_a_pty_until_told_to_stop(sim_elf):
    # What a person does by hand: build (cached here), boot, talk to it, Ctrl-C or SIGTERM.
    cmd = [sys.executable, "-m", "tinymcp.host.firmware", "--board", "sim", "--target", "qemu",
           "--out", os.path.dirname(sim_elf), "--micropython", images.source(),
           "--work", images.WORK, "--root", REPO, "--run"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        said = ""
        while "tinymcp-bridge --port" not in said:
            line = proc.stdout.readline()
            assert line, "tinymcp-firmware --run ended early: %s%s" % (said, proc.stderr.read())
            said += line
        port = re.search(r"tinymcp-bridge --port (\S+)", said).group(1)
        assert initialize(port)["serverInfo"]["name"] == "tinymcp-sim"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert not os.path.exists(port)   # QEMU, and its pty, went with it
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_an_unwritable_out_folder_gets_one_line_not_a_traceback(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["--board", "sim", "--out", str(blocker / "out")]) == 2
    assert str(blocker) in one_line_error(capsys)
