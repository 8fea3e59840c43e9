# The emulated board itself behaves like a real one: boot.py and main.py after every reset, a
# filesystem that outlives a soft reset, ROMFS written through vfs.rom_ioctl, Ctrl-C that
# interrupts running code, 140 KiB of heap and single-precision floats.
import os
import select
import time
import tty


def console(port):
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    return fd


def read_until(fd, marker, timeout=20):
    seen, end = b"", time.monotonic() + timeout
    while marker not in seen:
        assert time.monotonic() < end, "never saw %r; got %r" % (marker, seen[-300:])
        if select.select([fd], [], [], 0.2)[0]:
            seen += os.read(fd, 4096)
    return seen


def test_boot_py_and_main_py_run_after_each_soft_reset_and_files_survive_it(plain_elf, boot, repl):
    board = boot(plain_elf)
    r = repl(board.port)
    r.run("for name in ('boot', 'main'):\n"
          "    with open(name + '.py', 'w') as f:\n"
          "        f.write('with open(\"log\", \"a\") as f:\\n    f.write(\"%s \")\\n' % name)\n")
    r.t.exit_raw_repl()
    for _ in range(2):
        r.t.serial.write(b"\x04")   # Ctrl-D at the friendly REPL: a soft reset
        r.t.read_until(1, b">>> ", timeout=10)
    r.t.enter_raw_repl(soft_reset=True)   # mpremote's soft reset: boot.py only, as on any port
    assert r.run("print(open('log').read())").strip() == "boot main boot main boot"


def test_rom_ioctl_writes_an_image_that_mounts_at_rom_after_a_soft_reset(plain_elf, boot, repl,
                                                                          tmp_path):
    import contextlib
    import io
    from mpremote.romfs import make_romfs
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "hello.py").write_text("WORDS = 'from the ROMFS'\n")
    with contextlib.redirect_stdout(io.StringIO()):
        image = make_romfs(str(tmp_path / "tree"), mpy_cross=False)
    board = boot(plain_elf)
    r = repl(board.port)
    assert r.run("import vfs\nprint(vfs.rom_ioctl(1), len(vfs.rom_ioctl(2, 0)))").split() == [
        "1", str(1024 * 1024)]
    r.run("import vfs\nprint(vfs.rom_ioctl(3, 0, %d))" % len(image))
    for at in range(0, len(image), 64):
        r.run("vfs.rom_ioctl(4, 0, %d, %r)" % (at, image[at:at + 64]))
    r.run("vfs.rom_ioctl(5, 0)")
    r.t.enter_raw_repl(soft_reset=True)
    assert r.run("import hello\nprint(hello.__file__, hello.WORDS)").strip() == \
        "/rom/hello.py from the ROMFS"
    # a write past the partition's end is refused (-EINVAL), as is a segment that is not there
    assert r.run("import vfs\nprint(vfs.rom_ioctl(4, 0, %d, b'xx'), vfs.rom_ioctl(2, 1))"
                 % (1024 * 1024 - 1)).split() == ["-22", "-22"]


def test_ctrl_c_interrupts_running_code_and_the_board_is_32_bit_float32_140k(plain_elf, boot, repl):
    board = boot(plain_elf)
    fd = console(board.port)
    try:
        os.write(fd, b"\r")
        read_until(fd, b">>> ")
        os.write(fd, b"while True: pass\r\r")
        time.sleep(0.5)
        os.write(fd, b"\x03")
        assert b"KeyboardInterrupt" in read_until(fd, b"KeyboardInterrupt")
    finally:
        os.close(fd)
    r = repl(board.port)
    word, single, heap = r.run("import sys, gc\ngc.collect()\n"
                               "print(sys.maxsize == 2 ** 31 - 1, 1.0 + 2.0 ** -30 == 1.0,"
                               " gc.mem_free() + gc.mem_alloc())").split()
    assert (word, single) == ("True", "True")
    assert 130 * 1024 < int(heap) <= 140 * 1024
