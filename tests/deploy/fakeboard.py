# A fake MicroPython board on a pty: friendly REPL, raw REPL and raw-paste as mpremote speaks them,
# a sandboxed filesystem its commands really run against, and tinymcp serving after a reset.
import builtins
import errno
import hashlib
import binascii
import io
import os
import pty
import select
import shutil
import struct
import subprocess
import sys
import threading
import time
import tty
import types

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MICROPYTHON = shutil.which("micropython")
BANNER = b"MicroPython v1.29.0 on 2026-08-29; fake board with tinymcp\r\nType \"help()\" for more information.\r\n>>> "
RAW_BANNER = b"raw REPL; CTRL-B to exit\r\n>"
MPY_6_3 = 6 | 3 << 8 | 5 << 10   # v6.3, arch armv6m: what a Pico reports
WINDOW = 128                     # raw-paste flow-control window, as on small ports


class HardReset(BaseException):
    pass


class FakeFS:
    # The board's flash: a directory on the host, with littlefs-like block accounting.
    def __init__(self, root, capacity, block=4096):
        self.root, self.capacity, self.block = root, capacity, block
        os.makedirs(root, exist_ok=True)

    def real(self, path):
        parts = [p for p in str(path).split("/") if p and p != "."]
        if ".." in parts:
            raise OSError(errno.EACCES, "outside the board")
        return os.path.join(self.root, *parts)

    def used_blocks(self):
        n = 0
        for here, dirs, files in os.walk(self.root):
            n += 2 * len(dirs)
            for f in files:
                n += -(-os.path.getsize(os.path.join(here, f)) // self.block)
        return n

    def module(self):
        fs = self
        m = types.SimpleNamespace(sep="/")

        def stat(p):
            r = fs.real(p)
            if not os.path.exists(r):
                raise OSError(errno.ENOENT, "ENOENT")
            st = os.stat(r)
            mode = 0x4000 if os.path.isdir(r) else 0x8000
            return (mode, 0, 0, 0, 0, 0, st.st_size if mode == 0x8000 else 0, 0, 0, 0)

        def mkdir(p):
            r = fs.real(p)
            if os.path.exists(r):
                raise OSError(errno.EEXIST, "EEXIST")
            if not os.path.isdir(os.path.dirname(r)):
                raise OSError(errno.ENOENT, "ENOENT")
            os.mkdir(r)

        def remove(p):
            r = fs.real(p)
            if not os.path.isfile(r):
                raise OSError(errno.ENOENT, "ENOENT")
            os.remove(r)

        def statvfs(p):
            if not fs.capacity:   # nothing mounted: what MicroPython's VFS root reports
                return (0,) * 10
            total = fs.capacity // fs.block
            free = max(total - fs.used_blocks(), 0)
            return (fs.block, fs.block, total, free, free, 0, 0, 0, 0, 255)

        def ilistdir(p=""):
            r = fs.real(p)
            return iter([(n, 0x4000 if os.path.isdir(os.path.join(r, n)) else 0x8000, 0,
                          os.path.getsize(os.path.join(r, n))) for n in sorted(os.listdir(r))])

        m.stat, m.mkdir, m.remove, m.statvfs, m.ilistdir = stat, mkdir, remove, statvfs, ilistdir
        m.listdir = lambda p="": sorted(os.listdir(fs.real(p)))
        m.rmdir = lambda p: os.rmdir(fs.real(p))
        m.getcwd = lambda: "/"
        return m

    def open(self, path, mode="r", *args, **kwargs):
        r = self.real(path)
        if ("w" in mode or "a" in mode) and not os.path.isdir(os.path.dirname(r)):
            raise OSError(errno.ENOENT, "ENOENT")
        if "r" in mode and not os.path.isfile(r):
            raise OSError(errno.ENOENT, "ENOENT")
        return open(r, mode)


class FakeBoard:
    # state: "serving" (tinymcp on the line), "friendly" (>>>), "raw" (raw REPL), "paste".
    def __init__(self, fs_dir, mpy_word=MPY_6_3, capacity=1024 * 1024, serving=True, deaf=False,
                 romfs=None, reset_after_writes=None):
        self.fs = FakeFS(fs_dir, capacity)
        self.romfs = None if romfs is None else bytearray(romfs)   # a ROMFS partition of that size
        self.mpy_word = mpy_word
        self.master, self.slave = pty.openpty()
        tty.setraw(self.slave)   # the board's end is a raw line; the fake keeps it open
        self.port = os.ttyname(self.slave)
        self.events = []         # what happened, for the tests to check
        self.served = []         # frames the serving board answered
        self.state = "friendly"
        self.line = b""
        self.pending_paste = b""
        self.namespace = None
        self.server = None       # an in-process tinymcp server (the board before a deploy)
        self.proc = None         # micropython running the deployed main.py (after a reset)
        self.frame = b""
        self.stop = False
        self.deaf = deaf         # serving something that ignores 0x03 (not tinymcp)
        # Resets by itself (a brown-out, a watchdog, a loose cable) when that many files have
        # been opened for writing since the board started: the next one is cut off half way.
        self.reset_after_writes = reset_after_writes
        self.writes = 0
        self._reset_namespace()
        if serving:
            self._serve_in_process()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    # -- plumbing --------------------------------------------------------------------------

    def close(self):
        self.stop = True
        self.thread.join(5)
        self._end_process()
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def write(self, data):
        os.write(self.master, data)

    def _run(self):
        while not self.stop:
            fds = [self.master] + ([self.proc.stdout] if self.proc else [])
            ready, _, _ = select.select(fds, [], [], 0.05)
            if self.proc and self.proc.stdout in ready:
                out = os.read(self.proc.stdout.fileno(), 4096)
                if out:
                    self.write(out)
                else:
                    self._process_ended()
            if self.master in ready:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    continue
                for i in range(len(data)):
                    try:
                        self._byte(data[i:i + 1])
                    except Exception as e:   # noqa: BLE001  (keep the board alive; tests see it)
                        self.events.append("fake board error: %r" % e)

    def _byte(self, b):
        getattr(self, "_in_" + self.state)(b)

    # -- serving ---------------------------------------------------------------------------

    def _serve_in_process(self):
        import importlib.util
        if REPO not in sys.path:
            sys.path.insert(0, REPO)
        spec = importlib.util.spec_from_file_location("fake_sim_main", os.path.join(REPO, "boards", "sim", "main.py"))
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        self.server = mod.build(bench=False)
        self.state = "serving"
        self.events.append("serving (in process)")

    def _in_serving(self, b):
        if self.proc is not None:
            # bytes for the deployed board; 0x03 ends its serving, then its main.py returns
            try:
                self.proc.stdin.write(b)
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass   # main.py already ended; _process_ended takes the board to the REPL
            if b == b"\x03":
                self.events.append("interrupted (micropython)")
                try:
                    self.proc.stdin.close()
                    self.proc.wait(5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
                self._drain_process()
                self._end_process()
                self._to_repl()
            return
        if b == b"\x03" and not self.deaf:
            self.events.append("interrupted")
            self.server = None
            self._to_repl()
        elif b == b"\n":
            frame, self.frame = self.frame.strip(), b""
            if frame:
                self.served.append(frame)
                answer = self.server.handle(frame)
                if answer:
                    self.write(answer + b"\n")
        else:
            self.frame += b

    def _run_main(self):
        # What the firmware does after a reset: run main.py when there is one.
        if not os.path.isfile(self.fs.real("main.py")):
            self._to_repl()
            return
        if MICROPYTHON is None:   # no real MicroPython: the sim board under CPython stands in
            self.events.append("main.py (in process)")
            self._serve_in_process()
            return
        self.events.append("main.py (micropython)")
        env = dict(os.environ, MICROPYPATH=".")
        command = [MICROPYTHON, "main.py"]
        if self.romfs is not None and self.romfs[:1] != b"\xff" and any(self.romfs):
            # The firmware mounts its ROMFS partition at /rom and puts /rom/lib on sys.path, after
            # the filesystem ('' and .frozen) and before /lib (MicroPython 1.25 and later).
            image = os.path.join(os.path.dirname(self.fs.root), os.path.basename(self.fs.root) + ".rom")
            with open(image, "wb") as f:
                f.write(self.romfs)
            command = [MICROPYTHON, "-c", "import sys, vfs\n"
                       "vfs.mount(vfs.VfsRom(open(%r, 'rb').read()), '/rom')\n"
                       "sys.path[:] = ['', '.frozen', '/rom/lib', '/lib']\n"
                       "sys.argv[:] = ['main.py']\n"
                       "__name__ = '__main__'\n"
                       "exec(open('main.py').read())\n" % image]
            self.events.append("/rom mounted")
        self.proc = subprocess.Popen(command, cwd=self.fs.root, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.state = "serving"

    def _drain_process(self):
        try:
            rest = self.proc.stdout.read()
        except (OSError, ValueError):
            rest = b""
        if rest:
            self.write(rest)

    def _process_ended(self):
        self.events.append("main.py ended")
        self._end_process()
        self._to_repl()

    def _end_process(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.wait(5)
            for f in (self.proc.stdin, self.proc.stdout):
                try:
                    f.close()
                except (OSError, ValueError):
                    pass
            self.proc = None

    def _to_repl(self):
        self.state = "friendly"
        self.write(b"\r\n" + BANNER)

    # -- the REPLs -------------------------------------------------------------------------

    def _in_friendly(self, b):
        if b == b"\x01":
            self.state, self.line = "raw", b""
            self.write(b"\r\n" + RAW_BANNER)
        elif b == b"\x04":
            self._soft_reboot()
            self._run_main()
        elif b in (b"\x03", b"\r"):
            self.write(b"\r\n>>> ")
        elif b == b"\x02":
            self.write(b"\r\n" + BANNER)
        else:
            self.write(b)   # echo

    def _in_raw(self, b):
        if self.pending_paste or (b == b"\x05" and not self.line):
            self.pending_paste += b
            if len(self.pending_paste) == 3:
                ok = self.pending_paste == b"\x05A\x01"
                self.pending_paste = b""
                if ok:
                    self.state, self.line, self.window = "paste", b"", 0
                    self.write(b"R\x01" + struct.pack("<H", WINDOW))
                    self.events.append("raw-paste")
                else:
                    self.write(b"R\x00")
            return
        if b == b"\x01":
            self.line = b""
            self.write(b"\r\n" + RAW_BANNER)
        elif b == b"\x02":
            self.state = "friendly"
            self.write(b"\r\n" + BANNER)
        elif b == b"\x03":
            self.line = b""
        elif b == b"\x04":
            self.write(b"OK")
            if not self.line:
                self.write(b"\r\n")
                self._soft_reboot()
                self.write(RAW_BANNER)   # raw REPL soft reset: main.py does not run
                return
            self._execute(self.line)
        else:
            self.line += b

    def _in_paste(self, b):
        if b == b"\x04":
            self.write(b"\x04")   # end of data acknowledged
            self.state = "raw"
            code, self.line = self.line, b""
            self._execute(code)
            return
        self.line += b
        self.window += 1
        if self.window == WINDOW:   # consumed a window: the host may send another
            self.window = 0
            self.write(b"\x01")

    def _soft_reboot(self):
        self.events.append("soft reboot")
        self._reset_namespace()
        self.write(b"MPY: soft reboot\r\n")

    # -- running what mpremote sends ------------------------------------------------------

    def _reset_namespace(self):
        fs_os = self.fs.module()
        out = self.stdout = io.StringIO()
        board = self
        fake_sys = types.SimpleNamespace(
            implementation=types.SimpleNamespace(name="micropython", version=(1, 29, 0), _mpy=self.mpy_word),
            path=["", "/lib"], platform="rp2", byteorder="little",
            print_exception=lambda e, f=None: None)

        def reset():
            raise HardReset()
        fake_machine = types.SimpleNamespace(reset=reset, soft_reset=reset)
        fake_time = types.SimpleNamespace(sleep_ms=lambda ms: time.sleep(ms / 1000),
                                          sleep=time.sleep, ticks_ms=lambda: int(time.monotonic() * 1000))
        modules = {"os": fs_os, "uos": fs_os, "sys": fake_sys, "machine": fake_machine,
                   "time": fake_time, "hashlib": hashlib, "binascii": binascii,
                   "gc": types.SimpleNamespace(collect=lambda: None, mem_free=lambda: 150000)}
        if self.romfs is not None:
            modules["vfs"] = types.SimpleNamespace(rom_ioctl=self._rom_ioctl,
                                                   umount=lambda path: None)

        def fake_import(name, globals=None, locals=None, fromlist=(), level=0):
            if name in modules:
                return modules[name]
            raise ImportError("no module named '%s'" % name)

        def fake_print(*args, sep=" ", end="\n", file=None):
            out.write(sep.join(str(a) for a in args) + end)
        safe = dict(vars(builtins))
        safe.update(__import__=fake_import, print=fake_print, open=board._open)
        self.namespace = {"__builtins__": safe, "__name__": "__main__"}

    def _open(self, path, mode="r", *args, **kwargs):
        f = self.fs.open(path, mode, *args, **kwargs)
        if "w" in mode:
            self.writes += 1
            if self.writes == self.reset_after_writes:
                f.write(b"half" if "b" in mode else "half")   # what reached the flash
                f.close()
                raise HardReset()
        return f

    def _rom_ioctl(self, op, *args):
        # vfs.rom_ioctl as the ports implement it over one segment (see mpremote romfs deploy).
        rom = self.romfs
        if op == 1:
            return 1
        if op == 2:
            return memoryview(rom)
        if op == 3:
            rom[:args[1]] = b"\xff" * args[1]
            self.events.append("romfs erased")
            return 4
        if op == 4:
            rom[args[1]:args[1] + len(args[2])] = args[2]
            return 0
        if op == 5:
            self.events.append("romfs written")
            return 0
        return -22

    def _execute(self, code):
        self.stdout.seek(0)
        self.stdout.truncate()
        err = b""
        try:
            exec(compile(code.decode(), "<stdin>", "exec"), self.namespace)
        except HardReset:
            self.events.append("hard reset")
            self.write(self.stdout.getvalue().encode())
            self._reset_namespace()
            time.sleep(0.05)
            self._run_main()   # the host saw no EOF markers: it never waits for them
            return
        except OSError as e:
            name = errno.errorcode.get(e.errno, str(e.errno))
            err = ("Traceback (most recent call last):\r\n  File \"<stdin>\", line 1, in <module>\r\n"
                   "OSError: [Errno %d] %s\r\n" % (e.errno or 0, name)).encode()
        except Exception as e:   # noqa: BLE001  (anything the snippet raises goes to stderr)
            err = ("Traceback (most recent call last):\r\n  File \"<stdin>\", line 1, in <module>\r\n"
                   "%s: %s\r\n" % (type(e).__name__, e)).encode()
        self.events.append("exec")
        self.write(self.stdout.getvalue().replace("\n", "\r\n").encode() + b"\x04" + err + b"\x04>")
