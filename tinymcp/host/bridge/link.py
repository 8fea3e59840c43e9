# The link to a board: a serial port (exclusive open) or a pyserial URL such as socket://HOST:PORT
# (a board on the network, its token presented first); newline framing, noise filter, reopen
# after a re-plug or a dropped connection. Frames are JSON lines, or CBOR link frames once the
# board session switches mode to "cbor". Where the event loop can watch the port's file
# descriptor (a POSIX serial port or pty, a socket:// board, on Linux and macOS), the loop reads
# and writes it itself: no thread between a frame and the board. Elsewhere (Windows, whose COM
# ports have no descriptor) two threads make pyserial's blocking calls.
import asyncio
import base64
import collections
import errno
import json
import logging
import os
import socket
import threading
from urllib.parse import urlsplit

import serial

from tinymcp import cborlink, protocol

from tinymcp.host.bridge import turn
from tinymcp.host.bridge.wire import (TOO_LONG, BoardAnswer, Encoded, LineSplitter, board_json,
                                      board_nonfinite, board_scan, dump_line, reason,
                                      whole_object)

log = logging.getLogger("tinymcp.bridge.link")

MAX_LINE = 1 << 20          # a line longer than this is noise by definition; dropped as it streams
MAX_BACKLOG = 1 << 20       # bytes queued for a board that does not read before frames are dropped
READ_WAIT = 0.2             # seconds a read waits for a first byte before it looks whether to stop
CHUNK = 1 << 16             # bytes one read of a socket:// board takes at most
WRITE_MAX = 4096            # bytes of waiting frames the writer joins into one write: a frame
                            # written is one the board session can no longer take back
READ_AHEAD = 16             # chunks read and not yet taken by the loop before the reader waits
_JSONRPC = b'{"jsonrpc"'
PROMPTS = (b">>> ", b"=== ")   # MicroPython's REPL and its paste mode, waiting for a line


REFUSED_RETRY = 15.0        # seconds before a board that refused the token is tried again


class PortError(Exception):
    # An unusable port; the message says what to do about it (one line, for the CLI).
    pass


def is_url(device):
    # socket://HOST:PORT, rfc2217://... : pyserial's URL handlers, not a device path.
    return "://" in device


def open_port(device, baud=115200):
    # -> an open serial.Serial whose reads wait READ_WAIT at most and whose writes block, or
    # PortError with a useful reason. A URL may block while it connects: the link opens those in
    # a thread.
    try:
        if is_url(device):
            port = serial.serial_for_url(device, baud, timeout=READ_WAIT)
            no_delay(port)
        else:
            port = serial.Serial(device, baud, timeout=READ_WAIT, exclusive=True)
    except serial.SerialException as e:
        raise PortError(explain(device, e)) from None
    except (OSError, ValueError) as e:
        raise PortError(explain(device, e)) from None
    return port


def no_delay(port):
    # A board on the network gets each frame when it is written, not after the ACK of the last
    # one (Nagle's algorithm): TCP_NODELAY on pyserial's socket:// connection.
    sock = getattr(port, "_socket", None)
    if sock is not None:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def read_some(port):
    # -> the bytes that came, waiting READ_WAIT at most for the first one; SerialException or
    # OSError when the port is gone (a USB board unplugged, the far end of a pty or socket closed).
    data = port.read(1)
    if not data:
        return data
    if type(port).__module__ == "serial.urlhandler.protocol_socket":   # in_waiting is 0 or 1
        port.timeout = 0   # the rest of what one recv() gets, at once
        try:
            return data + port.read(CHUNK)
        finally:
            port.timeout = READ_WAIT
    waiting = port.in_waiting
    return data + port.read(waiting) if waiting else data


def check_url(device):
    # A malformed URL is refused at the start (exit 2); one that does not answer yet is
    # reached when it does.
    if device.startswith("socket://"):
        parts = urlsplit(device)
        try:
            port = parts.port
        except ValueError:
            port = None
        if parts.hostname and port:
            return
        raise PortError("%s is not a usable URL: a board on the network is socket://HOST:PORT "
                        "(PORT 1..65535)" % device)
    try:
        serial.serial_for_url(device, do_not_open=True)
    except (serial.SerialException, ValueError) as e:
        raise PortError("%s is not a URL pyserial understands: %s"
                        % (device, str(e).splitlines()[0] if str(e) else "malformed")) from None


def explain(device, e):
    # What opening device raised -> one line saying what to do, from the errno (Linux, macOS) or
    # the words of pyserial's Windows messages ("could not open port 'COM3': PermissionError(...").
    code = getattr(e, "errno", None)
    text = str(e)
    busy = ("%s is busy: another program (a serial monitor, an IDE, another bridge) has it open; "
            "close that program and retry" % device)
    if code == errno.ENOENT or "No such file" in text or "FileNotFoundError" in text:
        return ("%s does not exist: is the board plugged in? (tinymcp-bridge --list-ports shows "
                "the serial ports)" % device)
    if "PermissionError" in text:   # Windows: "Access is denied" is a COM port another program has
        return busy
    if code in (errno.EACCES, errno.EPERM) or "Permission denied" in text:
        return ("no permission to open %s: add yourself to the dialout group "
                "(sudo usermod -aG dialout $USER, then log in again)" % device)
    if "exclusively lock" in text or code in (errno.EBUSY, errno.EAGAIN):
        return busy
    if code == errno.ENOTTY or "Inappropriate ioctl" in text:
        return "%s is not a serial port" % device
    if is_url(device):
        return "cannot reach %s: %s" % (device, text.splitlines()[0] if text else
                                        e.__class__.__name__)
    return "cannot open %s: %s" % (device, text.splitlines()[0] if text else e.__class__.__name__)


def parse_line(line):
    # One line from the board -> (message dict or None, noise bytes or None). A protocol frame
    # behind a half line of REPL output ('>>> {"jsonrpc"...') is salvaged.
    line = line.rstrip(b"\r \t")
    if not line:
        return None, None
    if line[:1] == b"{":
        msg = BoardAnswer.read(line)   # the usual answer, read the short way
        if msg is not None:
            return msg, None
    start = 0 if line[:1] == b"{" else line.find(_JSONRPC)
    if start >= 0:
        if board_nonfinite:   # left by a line that was no JSON (BoardAnswer.of reads it)
            board_nonfinite.clear()
        try:   # UTF-8, as json.loads would find ('{' then no NUL), without looking for it
            if line[start + 1:start + 2] != b"\x00":
                msg = whole_object(line[start:].decode("utf-8", "surrogatepass"), board_scan,
                                   board_json)
            else:
                msg = json.loads(line[start:], parse_constant=board_json.parse_constant)
        except (ValueError, RecursionError):
            msg = None
        if type(msg) is dict and msg.get("jsonrpc") == "2.0":
            if "method" not in msg:   # an answer: it may go to a host as it came (wire.BoardAnswer)
                msg = BoardAnswer.of(msg, line[start:])
            return msg, (line[:start] if start else None)
    return None, line


def from_link(msg):
    # A message decoded from a CBOR frame -> the MCP JSON message it stands for: restores what
    # the link omits ("jsonrpc", a tool result's text mirror, a blob's default mimeType; the
    # board session restores a blob's uri) and base64-encodes byte strings.
    msg = _base64(msg)
    msg["jsonrpc"] = "2.0"
    result = msg.get("result")
    if type(result) is dict and "structuredContent" in result and "content" not in result:
        mirror = json.dumps(result["structuredContent"], separators=(",", ":"))
        msg["result"] = dict({"content": [{"type": "text", "text": mirror}]}, **result)
    elif type(result) is dict and type(result.get("contents")) is list:
        for item in result["contents"]:
            if type(item) is dict and "blob" in item and "mimeType" not in item:
                item["mimeType"] = "application/octet-stream"
    return msg


def _base64(value):
    if type(value) is dict:
        return {k: _base64(v) for k, v in value.items()}
    if type(value) is list:
        return [_base64(v) for v in value]
    if type(value) is bytes:  # image/audio "data", resource "blob": base64 in MCP JSON
        return base64.b64encode(value).decode()
    return value


def to_link(msg):
    # An MCP JSON message -> one CBOR link frame (with its newline).
    if "jsonrpc" in msg:
        msg = {k: v for k, v in msg.items() if k != "jsonrpc"}
    return cborlink.encode(msg) + b"\n"


def port_fd(port):
    # -> the file descriptor the event loop can watch for this port, or None: pyserial's POSIX
    # serial ports (non-blocking, select()ed) and its socket:// connections have one; a COM port
    # (Windows), a --sim board's pipes (where there are no ptys) or another URL handler do not.
    if type(port).__module__ not in ("serial.serialposix", "serial.urlhandler.protocol_socket"):
        return None
    try:
        return port.fileno()
    except (OSError, ValueError, AttributeError):   # io.UnsupportedOperation is an OSError
        return None


class PortLoop:
    # One open port served by the event loop: its reader hands each chunk read to
    # received(bytes) as it comes, its writer writes what take_frames() gives, as much as the
    # port takes now, the rest when it is writable again. A failure calls lost(reason); stop()
    # lets the port go (closed, .released done). The same face as PortThreads.

    def __init__(self, port, fd, loop, received, lost, take_frames):
        self.port = port
        self.fd = fd
        self.loop = loop
        self.received = received
        self.lost = lost
        self.take_frames = take_frames
        self.running = True
        self.stopped = False
        self.released = loop.create_future()
        self._out = b""           # bytes taken from the queue and not yet written
        self._kicked = False      # a write is scheduled for this turn of the loop
        self._watching = False    # waiting for the port to be writable
        loop.add_reader(fd, self._read)   # NotImplementedError: no such loop (PortThreads)

    def _read(self):
        try:
            data = os.read(self.fd, CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:   # EIO: a USB board unplugged, the far end of a pty gone
            self._failed(e)
            return
        if not data:   # readable, yet nothing: the device or the connection has gone
            self._failed(EOFError("the port reports readiness to read but returns no data"))
            return
        if not self.stopped:
            turn.handled(self.received, data)

    def kick(self):
        # Frames are waiting: written once the chunk of input being handled has been (turn.py),
        # else at the end of this turn of the loop: all that came meanwhile in one write.
        if not self._kicked and not self._watching and self.running:
            self._kicked = True
            if not turn.hold(self._write):
                self.loop.call_soon(self._write)

    def write_now(self, frame):
        # One frame, written now: nothing waits before it (no frame queued, none being
        # written). What the port does not take now waits until it drains, as _write leaves it.
        try:
            written = os.write(self.fd, frame)
        except (BlockingIOError, InterruptedError):
            written = 0
        except OSError as e:
            self._failed(e)
            return
        if written < len(frame):
            self._out = frame[written:]
            self._watching = True
            self.loop.add_writer(self.fd, self._write)

    def _write(self):
        self._kicked = False
        try:
            while self.running:
                if not self._out:
                    self._out = self.take_frames() or b""
                    if not self._out:
                        break
                written = os.write(self.fd, self._out)
                self._out = self._out[written:]
                if self._out:   # the port's buffer is full: the rest when it drains
                    break
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as e:
            self._failed(e)
            return
        want = bool(self._out) and self.running
        if want != self._watching:
            self._watching = want
            if want:
                self.loop.add_writer(self.fd, self._write)
            else:
                self.loop.remove_writer(self.fd)

    def _failed(self, e):
        if self.running:
            self._unwatch()
            self.lost("%s: %s" % (e.__class__.__name__, e))

    def _unwatch(self):
        self.running = False
        self.loop.remove_reader(self.fd)
        if self._watching:
            self.loop.remove_writer(self.fd)
            self._watching = False

    def stop(self):
        # Nothing more is read or written; the port is closed at once.
        self.stopped = True
        self._unwatch()
        try:
            self.port.close()
        except Exception:
            pass
        if not self.released.done():
            self.released.set_result(None)


class PortThreads:
    # One open port, served by two threads: the reader hands what comes to received(bytes) on the
    # loop, the writer writes what next_frame(self) gives it (None: stop). Either one failing
    # calls lost(reason) on the loop; once they stop, the reader lets the writer finish, closes
    # the port and then sets .released, so the port can be opened again.

    def __init__(self, port, loop, received, lost, next_frame, wake):
        self.port = port
        self.loop = loop
        self.received = received
        self.lost = lost
        self.next_frame = next_frame
        self.wake = wake                  # the Condition the writer waits on for frames
        self.running = True     # the threads go on
        self.stopped = False    # the link let go of this port: what still comes is dropped
        self.released = loop.create_future()
        # The loop takes what is read at its own pace: a board that floods the line waits for it
        # (the port's buffer fills, as it did when the loop read only when it was ready).
        self._ahead = threading.Semaphore(READ_AHEAD)
        self.writer = threading.Thread(target=self._write, daemon=True,
                                       name="tinymcp-write %s" % port.name)
        self.reader = threading.Thread(target=self._read, daemon=True,
                                       name="tinymcp-read %s" % port.name)
        self.writer.start()
        self.reader.start()

    def _call(self, callback, *args):
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:   # the loop has closed: the bridge is ending
            self.running = False

    def _failed(self, e):
        if self.running:
            self.running = False
            self._call(self.lost, "%s: %s" % (e.__class__.__name__, e))

    def _read(self):
        try:
            while self.running:
                data = read_some(self.port)
                if data:
                    while not self._ahead.acquire(timeout=READ_WAIT):
                        if not self.running:
                            return
                    self._call(self._deliver, data)
        except Exception as e:   # SerialException, OSError: unplugged, or closed at the far end
            self._failed(e)
        finally:
            self._halt()
            self.writer.join(1.0)   # a write stuck on a board that never reads is abandoned
            try:
                self.port.close()
            except Exception:
                pass
            self._call(self._released)

    def _deliver(self, data):
        self._ahead.release()
        if not self.stopped:
            turn.handled(self.received, data)

    def _released(self):
        if not self.released.done():
            self.released.set_result(None)

    def kick(self):
        pass   # the writer waits on the Condition the link notifies

    def _write(self):
        try:
            while True:
                frame = self.next_frame(self)
                if frame is None:
                    return
                self.port.write(frame)
        except Exception as e:
            self._failed(e)

    def stop(self):
        # On the loop: both threads end soon (a read within READ_WAIT), nothing more is delivered.
        self.stopped = True
        self._halt()

    def _halt(self):
        self.running = False
        with self.wake:
            self.wake.notify_all()
        for cancel in ("cancel_read", "cancel_write"):
            try:
                getattr(self.port, cancel, lambda: None)()
            except Exception:
                pass


class Link:
    # Owns the port (a seams.BoardLink). Tells events (a seams.LinkEvents) on_message(dict) per
    # frame, on_noise(bytes) per other line and on_state(connected) when the port appears or
    # goes away. token: what a board on the network wants first on every connection (its TOKEN
    # line); serial ports never get it.
    frame_end = b"\n"   # what ends a JSON frame: a line (BoardSession.relay)

    def __init__(self, device, baud=115200, port=None, token=None, *, events):
        self.device = device
        self.baud = baud
        self.port = port
        self.network = is_url(device)
        self.token = token if self.network else None
        self.reopen_interval = 1.0 if self.network else 0.25
        self.events = events
        self._lines = LineSplitter(MAX_LINE)
        self._prompted = False               # the line begun now ends in a prompt, told
        self._urgent = collections.deque()   # frames to write before the queue: cancels, pings
        self._queue = collections.deque()    # frames in the order the board should read them
        self._queued = 0                     # bytes in both, not yet started
        self._wake = threading.Condition()   # guards the queues, shared with the writer thread
        self._io = None                      # the PortThreads serving the open port
        self._lost = None
        self._closed = False
        self._refused = 0         # connections in a row the board refused (a wrong token)
        self.first_try = port is None   # the port is about to be opened for the first time
        self.frames_in = 0
        self.mode = "json"        # how frames to the board are written; set by the board session
        self.cbor_in = 0          # good CBOR frames from the board
        self.crc_errors = 0       # CBOR frames from the board dropped for a bad CRC or escaping

    @property
    def connected(self):
        return self.port is not None

    async def run(self):
        # Keep the port open for as long as the bridge runs.
        loop = asyncio.get_running_loop()
        while not self._closed:
            if self.port is None:
                try:
                    if self.network:   # a connect may take seconds: never on the loop
                        self.port = await loop.run_in_executor(None, open_port, self.device,
                                                               self.baud)
                    else:
                        self.port = open_port(self.device, self.baud)
                except PortError as e:
                    log.log(logging.WARNING if self.first_try else logging.DEBUG, "%s", e)
                    if self.first_try:   # it was worth waiting for; now it is missing
                        self.first_try = False
                        self.events.on_state(False)
                    await asyncio.sleep(self.reopen_interval)
                    continue
                self.first_try = False
                if self._closed:
                    self._drop_port()
                    return
                log.info("port %s opened", self.device)
            self._lost = loop.create_future()
            self._io = self._serve(loop)
            if self.network:   # the token first, on every connection
                self.write(("%s%s\n" % (protocol.TOKEN_LINE, self.token or "")).encode(),
                           urgent=True)
            # A newline first: a half frame the board holds from before ends, and is ignored.
            self.write(b"\n", urgent=True)
            self.events.on_state(True)
            try:
                await self._lost
            finally:
                released = self._drop_port()
            if released is not None:
                await released   # the threads have closed the port: it may be opened again
            if not self._closed:
                log.log(logging.DEBUG if self._refused else logging.WARNING,
                        "port %s lost; waiting for it to come back", self.device)
                self.events.on_state(False)
                if self._refused:   # a slow retry, never a tight loop
                    await asyncio.sleep(REFUSED_RETRY)

    def _serve(self, loop):
        # The port served by the loop where it can watch its descriptor, else by two threads.
        fd = port_fd(self.port)
        if fd is not None:
            try:
                return PortLoop(self.port, fd, loop, self._feed, self._fail, self._take_frames)
            except NotImplementedError:   # an event loop without add_reader (Windows')
                pass
        return PortThreads(self.port, loop, self._feed, self._fail, self._next_frame, self._wake)

    def _drop_port(self):
        # -> None, or a future done when the threads serving the port have closed it (a read
        # ends within READ_WAIT).
        port, self.port = self.port, None
        io, self._io = self._io, None
        with self._wake:
            self._urgent.clear()
            self._queue.clear()
            self._queued = 0
        self._lines.clear()
        self._prompted = False
        if io is not None:
            io.stop()
            return io.released
        if port is not None:
            port.close()
        return None

    def _fail(self, why):
        log.debug("port %s: %s", self.device, why)
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(why)

    def _feed(self, data):
        lines = self._lines.feed(data)
        for line in lines:
            if line is TOO_LONG:
                log.debug("noise: dropped a line over %d bytes", MAX_LINE)
            else:
                self._line(line)
        # A REPL's prompt waits for input at the end of a line that never ends: told as noise,
        # once per line.
        if lines:
            self._prompted = False
        if self._prompted or data[-1:] == b"\n":   # told already, or no line is begun
            return
        partial = self._lines.partial
        if partial.endswith(PROMPTS):
            self._prompted = True
            log.debug("noise: a prompt %r", bytes(partial[-80:]))
            self.events.on_noise(bytes(partial[-200:]))

    def _line(self, line):
        if line and 0xA0 <= line[0] <= 0xBF:   # a CBOR frame's map head (JSON, REPL: ASCII)
            msg = self._cbor(line.rstrip(b"\r"))  # a cooked tty adds "\r"; never a frame's last byte
            if msg is None:
                return
            noise = None
        else:
            # The usual answer first, read the short way (parse_line tries it too, once a cooked
            # tty's "\r" is stripped: a line ending so is left to it, not read twice).
            msg = BoardAnswer.read(line) if line[:1] == b"{" and line[-1:] == b"}" else None
            noise = None
            if msg is None:
                msg, noise = parse_line(line)
            if msg is None and noise and self.mode == "cbor":
                msg, noise = self._salvage(noise)
        if noise:
            log.debug("noise: %r", noise[:200])
            self.events.on_noise(noise)
        if msg is not None:
            self.frames_in += 1
            if msg.get("id") is None and reason(msg) == protocol.UNAUTHORIZED:
                self._unauthorized()
                return
            if self._refused:
                log.info("%s accepted the token", self.device)
                self._refused = 0
            try:
                self.events.on_message(msg)
            except Exception:  # one odd frame must not cost the frames behind it
                log.exception("handling a frame from the board: %s", str(msg)[:200])

    def _unauthorized(self):
        # The board on the network refused the token: said once, then tried again slowly.
        self._refused += 1
        log.log(logging.ERROR if self._refused == 1 else logging.DEBUG,
                "%s refused the bridge: %s token (--board-token or $TINYMCP_BOARD_TOKEN); "
                "trying again every %g s", self.device, "a wrong" if self.token else "no",
                REFUSED_RETRY)

    def _cbor(self, line):
        try:
            msg = cborlink.decode(line)
        except cborlink.FrameError as e:
            self.crc_errors += 1
            log.debug("dropped a corrupted CBOR frame (%s); %d so far", e, self.crc_errors)
            return None
        except (ValueError, RecursionError) as e:
            log.debug("noise: an intact CBOR frame that is not a message (%s)", e)
            return None
        if type(msg) is not dict:
            log.debug("noise: a CBOR frame that is not a map")
            return None
        self.cbor_in += 1
        return from_link(msg)

    def _salvage(self, line):
        # A CBOR frame behind a half line of REPL output (a print without its newline): it
        # starts with a map head before "id" or "method"; its CRC says whether it really is one.
        for marker in (b"bid", b"fmethod"):
            at = line.find(marker, 1)
            while at > 0:
                if 0xA0 <= line[at - 1] <= 0xBF:
                    try:
                        msg = cborlink.decode(line[at - 1:])
                    except ValueError:
                        msg = None
                    if type(msg) is dict:
                        self.cbor_in += 1
                        return from_link(msg), line[:at - 1]
                at = line.find(marker, at + 1)
        return None, line

    def encode(self, msg):
        # One message as the board reads it: a JSON line, or a CBOR link frame.
        if self.mode == "cbor":
            return to_link(msg)
        if type(msg) is Encoded:   # a host's request as it came (wire.HostParams)
            return msg.data + b"\n"
        return dump_line(msg)

    def send(self, msg, urgent=False):
        return self.write(self.encode(msg), urgent)

    def write(self, frame, urgent=False, now=False):
        # Queue one encoded frame (urgent: ahead of the frames not yet started) -> the frame,
        # which withdraw() takes back while it is still waiting; None when there is no port, or
        # when the board has stopped reading and MAX_BACKLOG bytes wait for it already.
        # now: nothing else will join it (the chunk of input being handled held only its
        # message), so on the loop's port it is written at once when nothing waits before it,
        # not once the chunk has been handled (turn.py): the board starts on it that much sooner.
        if self.port is None:
            return None
        io = self._io
        if type(io) is PortLoop and not urgent and self._queued <= MAX_BACKLOG:
            if now and not self._queued and not io._kicked and not io._watching and io.running:
                io.write_now(frame)   # nothing waits before it: past the queue
                return frame
            self._queue.append(frame)   # the loop's: no thread shares the queues, no lock
            self._queued += len(frame)
            if now and not io._kicked and not io._watching and io.running:
                io._write()
            else:
                io.kick()
            return frame
        with self._wake:
            if self._queued > MAX_BACKLOG:
                log.warning("the board is not reading its input; dropping a frame")
                return None
            (self._urgent if urgent else self._queue).append(frame)
            self._queued += len(frame)
            self._wake.notify()
        if self._io is not None:
            self._io.kick()
        return frame

    def withdraw(self, frame):
        # -> True when the frame was still waiting (no byte of it reached the board): removed.
        with self._wake:
            for waiting in (self._queue, self._urgent):
                for i, queued in enumerate(waiting):
                    if queued is frame:
                        del waiting[i]
                        self._queued -= len(frame)
                        return True
        return False

    def send_raw(self, data):
        # Bytes for the board's REPL rather than its MCP server (0x03, Ctrl-D): no framing.
        return self.write(data, urgent=True) is not None

    def _next_frame(self, io):
        # The writer thread's next bytes (_take_frames); waits for some; None once io stops.
        with self._wake:
            while io.running:
                frames = self._take_frames()
                if frames is not None:
                    return frames
                self._wake.wait()
        return None

    def _take_frames(self):
        # -> the frames waiting, urgent ones first, up to WRITE_MAX bytes joined for one write
        # (what stays waiting can still be withdrawn), or None.
        queue = self._queue
        if not (self._urgent or queue):   # nothing (the loop's writer asks once more after
            return None                   # each write): no lock to take for it
        if type(self._io) is PortLoop:   # the loop's own writer: no thread shares the queues
            if len(queue) == 1 and not self._urgent:   # the usual: one frame
                frame = queue.popleft()
                self._queued -= len(frame)
                return frame
            return self._joined_frames()
        with self._wake:
            if not (self._urgent or self._queue):
                return None
            return self._joined_frames()

    def _joined_frames(self):
        urgent, queue = self._urgent, self._queue
        frames, size = [], 0
        for waiting in (urgent, queue):
            while waiting and (not frames or size + len(waiting[0]) <= WRITE_MAX):
                frames.append(waiting.popleft())
                size += len(frames[-1])
        self._queued -= size
        return b"".join(frames)

    def close(self):
        if self.cbor_in or self.crc_errors:
            (log.warning if self.crc_errors else log.info)(
                "cbor link: %d frames from the board, %d dropped for a bad CRC",
                self.cbor_in, self.crc_errors)
        self._closed = True
        self._fail("closed")
        if self._lost is None:
            self._drop_port()
