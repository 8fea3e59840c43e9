# The board end: finding and probing the port, mpremote's raw REPL for inspecting, writing and
# resetting, the checks made before anything is written, and the initialize that proves it serves.
import ast
import errno
import json
import os
import time

from tinymcp.host.deploy import DeployError, network
from tinymcp.host.lineclient import LineClient

VERIFY_TIMEOUT_S = 12.0
MARK = "_tinymcp_deploying"   # set in the board's REPL while deploy talks to it


def find_port():
    # The one USB serial port on this machine, like `mpremote connect auto`.
    from serial.tools import list_ports
    ports = [p.device for p in list_ports.comports() if p.vid is not None]
    if not ports:
        raise DeployError("no board found: plug one in or pass --port DEVICE")
    if len(ports) > 1:
        raise DeployError("several serial ports (%s): pass --port DEVICE" % ", ".join(ports))
    return ports[0]


def probe_port(port, baud):
    # Tell "missing" from "busy" before mpremote opens it (its error says neither).
    import serial
    if port.startswith("/dev/") and not os.path.exists(port):
        raise DeployError("no board at %s (port missing)" % port)
    try:
        s = serial.Serial(port, baud, timeout=0, exclusive=True)
    except serial.SerialException as e:
        text = str(e)
        if getattr(e, "errno", None) in (errno.EAGAIN, errno.EBUSY) or "lock" in text or "busy" in text:
            raise DeployError("port %s is busy: close the bridge, serial monitor or mpremote using it" % port)
        if getattr(e, "errno", None) == errno.EACCES or "ermission" in text:
            raise DeployError("no permission to open %s (add yourself to the dialout group)" % port)
        if getattr(e, "errno", None) == errno.ENOENT or "No such file" in text:
            raise DeployError("no board at %s (port missing)" % port)
        raise DeployError("cannot open %s: %s" % (port, text.splitlines()[0]))
    s.close()


def _mpremote_romfs(name):
    # -> (CommandError, mpremote's own ROMFS step `name`): not public API, so a later mpremote
    # may lack it; that is a one-line error, not a traceback.
    import mpremote
    from mpremote import commands
    step = getattr(commands, name, None)
    if step is None:
        raise DeployError("this mpremote (%s) has no %s: pip install 'mpremote>=1.29,<1.30'"
                          % (getattr(mpremote, "__version__", "?"), name))
    return commands.CommandError, step


# MpremoteBoard.romfs_survey's program (%r: the name of the stamp file): MicroPython walking the
# record headers of ROMFS partition 0 (kind 4 a directory, 5 a file, 2 data in place), no
# file data read.
SURVEY = ("try:\n import vfs\n f = vfs.rom_ioctl\nexcept (ImportError, AttributeError):\n f = None\n"
          "def u(m, i):\n v = 0\n while True:\n  c = m[i]\n  i += 1\n"
          "  v = (v << 7) | (c & 127)\n  if not c & 128:\n   return v, i\n"
          "def ls(m, i, end):\n r = []\n while i < end:\n  k, i = u(m, i)\n  n, i = u(m, i)\n"
          "  if k in (4, 5):\n   l, j = u(m, i)\n   r.append((k, bytes(m[j:j + l]).decode(), j + l, i + n))\n"
          "  i += n\n return r\n"
          "def survey():\n"
          " if f is None or f(1) <= 0:\n  return None\n"
          " try:\n  m = memoryview(f(2, 0))\n except Exception as e:\n"
          "  return {'unreadable': repr(e)}\n"
          " r = {'size': len(m), 'names': None, 'stamp': None, 'init': False}\n"
          " if bytes(m[:3]) != b'\\xd2\\xcd\\x31':\n  return r\n"
          " try:\n  n, i = u(m, 3)\n  top = ls(m, i, min(i + n, len(m)))\n"
          " except IndexError:\n  r['unreadable'] = 'a ROMFS header with no records'\n  return r\n"
          " r['names'] = [e[1] for e in top]\n"
          " for k, name, i, end in top:\n"
          "  if k == 5 and name == %r:\n   t, i = u(m, i)\n   n, i = u(m, i)\n"
          "   r['stamp'] = bytes(m[i:i + min(n, 64)]) if t == 2 else None\n"
          "  if k == 4 and name == 'tinymcp':\n"
          "   r['init'] = '__init__.mpy' in [e[1] for e in ls(m, i, end)]\n"
          " return r\n"
          "print(repr(survey()))\n")


class MpremoteBoard:
    # The board over mpremote's serial transport: raw REPL commands, file writes, resets.
    def __init__(self, port, baud=115200):
        try:
            from mpremote.transport_serial import SerialTransport
            from mpremote.transport import TransportError
        except ImportError:
            raise DeployError("mpremote is not installed: pip install mpremote")
        self.port, self.baud = port, baud
        self.TransportError = TransportError
        try:
            # A read timeout bounds every wait: on a pty mpremote reads without polling.
            self.t = SerialTransport(port, baud, timeout=5)
        except TransportError as e:
            raise DeployError("cannot open %s: %s" % (port, e))

    def close(self):
        try:
            self.t.close()
        except OSError:
            pass

    def to_prompt(self, wait_s=10):
        # A serving tinymcp board ends on a raw 0x03 byte and drops to the REPL; its prompt
        # ends the wait. Ctrl-A arriving while it still serves would be read and dropped with
        # the 0x03, so nothing more is sent before it (or wait_s) has passed.
        self.t.serial.write(b"\x03")
        self.t.serial.timeout = 0.2   # a pty is read without polling: keep the wait short
        self.t.read_until(1, b">>> ", timeout=1, timeout_overall=wait_s)
        self.t.serial.timeout = 5

    def interrupt(self):
        # Into the raw REPL (mpremote's Ctrl-C, Ctrl-A). No soft reset here: it would stop the
        # timer that feeds a board's watchdog after a 0x03 exit (ports/micropython/boot.py),
        # and the watchdog would reset the board mid-copy.
        self.to_prompt()
        try:
            self.t.enter_raw_repl(soft_reset=False, timeout_overall=5)
            self.t.exec(MARK + " = 1")   # gone after any reset: see restarted()
        except self.TransportError:
            raise DeployError("the board on %s does not answer the REPL (hold its boot button "
                              "while resetting, or `mpremote touch :noserve`)" % self.port)

    def restarted(self):
        # After a failed command: did the board reset under us (its REPL lost our mark), rather
        # than fail the command? Anything unclear counts as no.
        try:
            self.t.serial.reset_input_buffer()
            self.t.in_raw_repl = False
            self.to_prompt(wait_s=5)
            self.t.enter_raw_repl(soft_reset=False, timeout_overall=5)
            return not self.t.eval("%r in globals()" % MARK)
        except (self.TransportError, OSError):
            return False

    def exec(self, code):
        try:
            return self.t.exec(code).decode(errors="replace")
        except self.TransportError as e:
            raise DeployError("the board failed running a command: %s" % _last_line(e))

    def inspect(self, paths, trees=("tinymcp", "ports")):
        # -> (.mpy version word, free bytes, block size, {path: (size, sha256 hex or None)})
        # for `paths` and everything under `trees`; size -1 for a directory. Space is that of
        # the working directory, where the files go (/ on rp2 and esp32, /flash on a pyboard).
        code = ("import os, sys\n"
                "try:\n import hashlib, binascii\nexcept ImportError:\n hashlib = None\n"
                "ps = %r\n"
                "def walk(d):\n"
                " try:\n  es = list(os.ilistdir(d))\n except OSError:\n  return\n"
                " for e in es:\n  ps.append(d + '/' + e[0])\n  if e[1] & 0x4000:\n   walk(d + '/' + e[0])\n"
                "for t in %r:\n walk(t)\n"
                "s = os.statvfs(os.getcwd())\nr = {}\n"
                "for p in ps:\n"
                " try:\n  st = os.stat(p)\n except OSError:\n  continue\n"
                " n, h = st[6], None\n"
                " if st[0] & 0x4000:\n  n = -1\n"
                " elif hashlib:\n"
                "  d = hashlib.sha256()\n"
                "  with open(p, 'rb') as f:\n"
                "   while True:\n    b = f.read(256)\n    if not b:\n     break\n    d.update(b)\n"
                "  h = binascii.hexlify(d.digest()).decode()\n"
                " r[p] = (n, h)\n"
                "print(repr((getattr(sys.implementation, '_mpy', 0), (s[1] or s[0]) * s[4], s[1] or s[0], r)))\n"
                % (list(paths), tuple(trees)))
        return ast.literal_eval(self.exec(code).strip())

    def network_settings(self, path):
        # -> the board's network.json parsed here, {} when it is not valid JSON, None when absent.
        code = ("try:\n with open(%r) as f:\n  print(repr(f.read()))\n"
                "except OSError:\n print('None')\n" % path)
        text = ast.literal_eval(self.exec(code).strip())
        if text is None:
            return None
        try:
            return json.loads(text)
        except ValueError:
            return {}

    def mkdirs(self, dirs):
        for d in dirs:
            self.exec("import os\ntry:\n os.mkdir(%r)\nexcept OSError:\n pass\n" % d)

    def remove(self, path):
        self.exec("import os\nos.remove(%r)\n" % path)

    def write(self, dest, data, progress):
        try:
            self.t.fs_writefile(dest, data, chunk_size=256, progress_callback=progress)
        except (self.TransportError, OSError) as e:
            if self.restarted():
                raise DeployError("the board on %s reset while %s was being written (its power, "
                                  "cable or a watchdog?): run tinymcp-deploy again; the files "
                                  "already there are checked and skipped" % (self.port, dest))
            raise DeployError("writing %s failed: %s" % (dest, _last_line(e)))

    def rmdir(self, path):
        self.exec("import os\nos.rmdir(%r)\n" % path)

    def romfs_survey(self, stamp):
        # -> None when the firmware has no ROMFS partition, else {"size": partition 0's bytes,
        # "names": the image's top-level names (None: no image, erased), "stamp": the first
        # bytes of its top-level file named stamp, or None, "init": whether it has
        # tinymcp/__init__.mpy}, or {"unreadable": why} when the partition is not a buffer here.
        # Walks the records' headers (mpremote's romfs format) on the board, reading no file data.
        return ast.literal_eval(self.exec(SURVEY % stamp).strip())

    def romfs_erase(self, size):
        # Erase the start of ROMFS partition 0, its header with it: nothing mounts at /rom after
        # the next reset (vfs.rom_ioctl 3: prepare for writing, which erases; 5: written).
        self.exec("import vfs\ntry:\n vfs.umount('/rom')\nexcept OSError:\n pass\n"
                  "vfs.rom_ioctl(3, 0, %d)\nvfs.rom_ioctl(5, 0)\n" % min(size, 4096))

    def romfs_digest(self, length):
        # -> sha256 hex of the partition's first length bytes, or None without hashlib.
        code = ("import vfs\ntry:\n import hashlib, binascii\nexcept ImportError:\n print(None)\n"
                "else:\n h = hashlib.sha256()\n m = memoryview(vfs.rom_ioctl(2, 0))\n"
                " for i in range(0, %d, 1024):\n  h.update(m[i:min(i + 1024, %d)])\n"
                " print(binascii.hexlify(h.digest()).decode())\n" % (length, length))
        answer = self.exec(code).strip()
        return None if answer == "None" else answer

    def write_romfs(self, image, out):
        # mpremote romfs deploy's own writer: unmount /rom, erase, write in chunks, complete.
        import contextlib
        import tempfile
        import types
        CommandError, _do_romfs_deploy = _mpremote_romfs("_do_romfs_deploy")
        from mpremote.main import State

        class Connected(State):
            # Already in the raw REPL: no soft reset (it would stop a watchdog's feeding timer).
            def ensure_raw_repl(self, soft_reset=None):
                if not self.transport.in_raw_repl:
                    self.transport.enter_raw_repl(soft_reset=False)

        state = Connected()
        state.transport = self.t
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "romfs.img")
            with open(path, "wb") as f:
                f.write(image)
            try:
                with contextlib.redirect_stdout(out):
                    _do_romfs_deploy(state, types.SimpleNamespace(path=path, partition=0, mpy=False))
            except (CommandError, self.TransportError, SystemExit) as e:
                raise DeployError("writing the ROMFS image failed: %s" % _last_line(e))
        out.write("\n")

    def soft_reset(self):
        # Ctrl-D at the friendly REPL: a soft reboot that runs main.py; the port stays open.
        self.t.exit_raw_repl()
        self.t.read_until(1, b">>> ", timeout=2, timeout_overall=5)
        self.t.serial.write(b"\x04")

    def hard_reset(self):
        # machine.reset(): USB boards drop off the bus and come back on the same name.
        self.t.exec_raw_no_follow("import time, machine\ntime.sleep_ms(100)\nmachine.reset()")


class Console:
    # What a board prints instead of answering after a reset: boot noise is kept (the line that
    # best says why it does not serve), while a traceback or its REPL prompt means main.py has
    # ended and nothing will answer: line() then returns the reason at once.
    def __init__(self):
        self.said = ""
        self.traceback = None   # the File lines of a traceback being printed

    def line(self, raw):
        text = raw.strip().decode(errors="replace")
        if text.startswith("Traceback (most recent call last)"):
            self.traceback = []
            return None
        if self.traceback is not None:
            if raw[:1] in (b" ", b"\t"):
                self.traceback.append(text)
                return None
            where, self.traceback = self.traceback, None
            if any('"<stdin>"' in f for f in where):   # the REPL ran a line typed at it
                return "the board is at its REPL, not serving%s" % self.told()
            place = " (%s)" % where[-1] if where else ""
            if self.said.startswith("tinymcp:"):   # boot.start() caught it: "build() failed"
                return "%s %s%s" % (self.said.rstrip(":"), text, place)
            return "main.py stopped with %s%s" % (text, place)
        if text.startswith(">>>") or text.startswith('Type "help()"'):
            return "the board is at its REPL, not serving%s" % self.told()
        self.said = _telling(text, self.said)
        return None

    def told(self):
        return "; it said: " + self.said[:100] if self.said else ""


def verify(port, baud=115200, timeout=VERIFY_TIMEOUT_S, serial_port=None, token=None,
           broker=False):
    # Send `initialize` until a JSON-RPC answer comes back, skipping boot noise; after a hard
    # reset the port may vanish and come back, so reopen it as needed. A traceback or the REPL
    # is reported as soon as it shows. With a token (a board deployed for Wi-Fi), the console
    # line that says where it listens sends the initialize there instead. With broker (a board
    # serving through an MQTT broker) its console line saying it is there is the answer, and
    # the serverInfo is None. -> (serverInfo, where).
    import serial
    s = serial_port
    client = None
    deadline = time.monotonic() + timeout
    asked, sent_at = 0, 0.0
    console = Console()
    try:
        while time.monotonic() < deadline:
            if s is None:
                try:
                    s = serial.Serial(port, baud, timeout=0.2, exclusive=True)
                except serial.SerialException:
                    time.sleep(0.2)
                    continue
            if client is None:
                client = LineClient(s.fileno(), timeout=0.2)
            try:
                if time.monotonic() - sent_at > 3.0:   # the board may still be booting: ask again
                    asked += 1
                    client.start("initialize", network.INITIALIZE, "deploy-%d" % asked)
                    sent_at = time.monotonic()
                line = client.line(0.2)
            except TimeoutError:
                continue
            except (OSError, EOFError):   # the device went away under us (USB reset)
                if serial_port is None:
                    s.close()
                s, serial_port, client, sent_at = None, None, None, 0.0
                continue
            try:
                msg = json.loads(line.strip().decode())
            except ValueError:
                # "MPY: soft reboot", "tinymcp: not serving: ...", a traceback, the REPL
                text = line.strip().decode(errors="replace")
                where = network.listening(text) if token else None
                if where:
                    return network.verify(where[0], where[1], token), "%s:%d" % where
                on = network.on_broker(text) if broker else None
                if on:
                    return None, on
                if (token or broker) and text.startswith(network.NOT_ON_NETWORK):
                    raise DeployError("the board is not on the network: %s"
                                      % text[len(network.NOT_ON_NETWORK):])
                stopped = console.line(line)
                if stopped:
                    raise DeployError("%s (see its console: mpremote connect %s repl)"
                                      % (stopped, port))
                continue
            if (isinstance(msg, dict) and "method" not in msg   # not our request echoed by a REPL
                    and str(msg.get("id", "")).startswith("deploy-")):
                if "result" in msg:
                    return msg["result"].get("serverInfo", {}), port
                raise DeployError("the board answered initialize with an error: %s"
                                  % msg.get("error", {}).get("message"))
    finally:
        if s is not None and serial_port is None:
            s.close()
    raise DeployError("the board did not answer initialize within %.0f s after the reset%s "
                      "(see its console: mpremote connect %s repl)" % (timeout, console.told(), port))


def plan(made, existing):
    # -> (files to copy, files to remove). Identical files are skipped; a foo.py that would
    # shadow the new foo.mpy goes (MicroPython imports .py first), and so does anything else
    # under tinymcp/ and ports/ that this build does not have (an earlier build, copies by hand).
    import hashlib
    copy = []
    for dest, size, data in made:
        have = existing.get(dest)
        if not (have and have[0] == size and have[1] == hashlib.sha256(data).hexdigest()):
            copy.append((dest, size, data))
    keep = {dest for dest, _size, _data in made}
    stale = sorted(p for p, (size, _h) in existing.items()
                   if size >= 0 and p not in keep and p.split("/")[0] in ("tinymcp", "ports"))
    return copy, stale


def _blocks(size, block):
    return (size + block - 1) // block if size else 0


NO_FILESYSTEM = ("the board has no filesystem to copy to (os.statvfs of its working directory "
                 "is all zeros): flash a MicroPython firmware that mounts one, or freeze tinymcp "
                 "into the firmware instead (tinymcp-firmware)")


def check_space(copy, removed, existing, free, block, new_dirs):
    # Raise naming the first file that does not fit; littlefs takes whole blocks per file and
    # a block pair per directory.
    if block <= 0:   # a firmware with nothing mounted
        raise DeployError(NO_FILESYSTEM)
    left = free - 2 * block * new_dirs
    for p in removed:
        left += _blocks(existing[p][0], block) * block
    for i, (dest, size, _data) in enumerate(copy):
        left += _blocks(existing.get(dest, (0,))[0], block) * block
        left -= _blocks(size, block) * block
        if left < 0:
            raise DeployError("%s (%d B) does not fit: the board has %d B free and the %d files "
                              "before it take the rest" % (dest, size, free, i))


def check_mpy(word, version):
    # sys.implementation._mpy: bits 0-7 the .mpy version, bits 8-9 the sub-version. Bytecode
    # loads when the version matches (the sub-version only matters for native code).
    if not word:
        raise DeployError("wrong .mpy version: the board does not report one (MicroPython older "
                          "than 1.19?); this build is v%s" % version)
    board = "%d.%d" % (word & 0xFF, (word >> 8) & 3) if word & 0xFF >= 6 else str(word & 0xFF)
    if str(word & 0xFF) != version.split(".")[0]:
        raise DeployError("wrong .mpy version: the board loads .mpy v%s, this build is v%s "
                          "(pass --mpy-version %s or update the board's MicroPython)"
                          % (board, version, board))
    return board


def _telling(line, said):
    # Keep the line that best says why a board is not serving: an error or a tinymcp message
    # beats a banner, and the REPL echoing our request back says nothing.
    if not line or '"deploy-' in line:
        return said
    if "Error" in line or line.startswith("tinymcp:"):
        return line
    if said and ("Error" in said or said.startswith("tinymcp:")):
        return said
    return line


def _last_line(e):
    lines = str(e).strip().splitlines()
    return lines[-1] if lines else type(e).__name__
