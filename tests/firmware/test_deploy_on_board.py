# tinymcp-deploy onto the emulated board-like firmware (littlefs on its flash, ROMFS, boot.py and
# main.py after each reset): files, --romfs, and the failures a user meets on real firmware.
import ast
import os

from tinymcp.host.deploy import main as deploy

from tests.firmware.conftest import REPO, initialize


def run(board, tmp_path, *extra, name="sim"):
    return deploy(["--board", name, "--port", board.port, "--build", str(tmp_path / "build"),
                   "--root", REPO] + list(extra))


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinymcp-deploy: "), err
    return err


def test_deploy_copies_to_the_filesystem_and_the_board_serves_after_each_soft_reset(
        plain_elf, boot, repl, tmp_path, capsys):
    board = boot(plain_elf)
    assert run(board, tmp_path) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "ok: tinymcp-sim 0.1.0 answers on %s" % board.port in out
    r = repl(board.port)   # 0x03 ends serving; the files are on the board's littlefs
    listing = r.run("import os, sys\nprint(sorted(os.listdir('/')), sorted(os.listdir('/tinymcp'))[:3])\n"
                    "print(sys.modules['tinymcp.server'].__file__)")
    assert "['main.py', 'ports', 'tinymcp']" in listing and "tinymcp/server.mpy" in listing
    r.t.exit_raw_repl()
    r.t.serial.write(b"\x04")   # a soft reset at the friendly REPL: main.py serves again
    r.close()
    assert initialize(board.port)["serverInfo"]["name"] == "tinymcp-sim"


def test_deploy_romfs_writes_the_image_and_keeps_only_main_py_on_the_filesystem(
        plain_elf, boot, repl, tmp_path, capsys):
    board = boot(plain_elf)
    assert run(board, tmp_path) == 0, capsys.readouterr().err   # an earlier deploy, as files
    capsys.readouterr()
    assert run(board, tmp_path, "--romfs") == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "writing a %d B image" % os.path.getsize(tmp_path / "build" / "romfs.img") in out
    assert "removed tinymcp/server.mpy (the ROMFS has it)" in out
    assert "ok: tinymcp-sim 0.1.0 answers on %s" % board.port in out
    r = repl(board.port)
    found = r.run("import os, sys\nprint(os.listdir('/'))\n"
                  "print(sys.modules['tinymcp.server'].__file__)\nprint(sorted(os.listdir('/rom')))")
    listing, module, rom = found.split("\r\n")[:3]
    assert set(ast.literal_eval(listing)) - {"rom"} == {"main.py"}   # / lists the ROMFS mount point too
    assert module == "/rom/tinymcp/server.mpy" and rom == "['ports', 'tinymcp']"
    r.close()
    # The same image again: nothing to write, and the board still serves.
    assert run(board, tmp_path, "--romfs") == 0, capsys.readouterr().err
    assert "ROMFS already holds this image" in capsys.readouterr().out


def test_a_firmware_with_nothing_mounted_gets_one_line_and_exit_2(plain_elf, boot, repl, tmp_path,
                                                                  capsys):
    # Issue item 1: os.statvfs all zeros (MicroPython's stock qemu port) was a ZeroDivisionError.
    board = boot(plain_elf)
    r = repl(board.port)
    r.run("import vfs\nvfs.umount('/')")
    r.close()
    assert run(board, tmp_path) == 2
    assert "the board has no filesystem to copy to" in one_line_error(capsys)


def test_a_main_py_failing_at_import_is_reported_with_its_traceback_at_once(
        plain_elf, boot, tmp_path, capsys, monkeypatch):
    # Issue item 4: the Pico's board file imports rp2, which this firmware lacks. The traceback
    # is the answer as soon as it shows: a deploy waiting out its timeout would say so instead.
    from tinymcp.host.deploy import board as board_end
    monkeypatch.setattr(board_end, "VERIFY_TIMEOUT_S", 120.0)
    board = boot(plain_elf)
    assert run(board, tmp_path, name="rpi_pico") == 2
    err = one_line_error(capsys)
    assert "main.py stopped with ImportError: no module named 'rp2'" in err, err
