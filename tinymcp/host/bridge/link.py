# The link to a board: a serial port (exclusive open) or a pyserial URL such as socket://HOST:PORT
# (a board on the network, its token presented first); newline framing, noise filter, reopen
# after a re-plug or a dropped connection. Frames are JSON lines, or CBOR link frames once the
# board session switches mode to "cbor".
import asyncio
import base64
import collections
import errno
import json
import logging
import os
from urllib.parse import urlsplit

import serial

from tinymcp import cborlink, protocol

from tinymcp.host.bridge.lines import TOO_LONG, LineSplitter

log = logging.getLogger("tinymcp.bridge.link")

MAX_LINE = 1 << 20          # a line longer than this is noise by definition; dropped as it streams
MAX_BACKLOG = 1 << 20       # bytes queued for a board that does not read before frames are dropped
_JSONRPC = b'{"jsonrpc"'


REFUSED_RETRY = 15.0        # seconds before a board that refused the token is tried again


class PortError(Exception):
    # An unusable port; the message says what to do about it (one line, for the CLI).
    pass


def is_url(device):
    # socket://HOST:PORT, rfc2217://... : pyserial's URL handlers, not a device path.
    return "://" in device


def open_port(device, baud=115200):
    # -> an open, non-blocking serial.Serial, or PortError with a useful reason. A URL may
    # block while it connects: the link opens those in a thread.
    try:
        if is_url(device):
            port = serial.serial_for_url(device, baud, timeout=0, write_timeout=0)
        else:
            port = serial.Serial(device, baud, timeout=0, write_timeout=0, exclusive=True)
    except serial.SerialException as e:
        raise PortError(_explain(device, e)) from None
    except (OSError, ValueError) as e:
        raise PortError(_explain(device, e)) from None
    os.set_blocking(port.fileno(), False)
    return port


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


def _explain(device, e):
    code = getattr(e, "errno", None)
    text = str(e)
    if code == errno.ENOENT or "No such file" in text:
        return ("%s does not exist: is the board plugged in? (tinymcp-bridge --list-ports shows "
                "the serial ports)" % device)
    if code in (errno.EACCES, errno.EPERM) or "Permission denied" in text:
        return ("no permission to open %s: add yourself to the dialout group "
                "(sudo usermod -aG dialout $USER, then log in again)" % device)
    if "exclusively lock" in text or code in (errno.EBUSY, errno.EAGAIN):
        return ("%s is busy: another program (a serial monitor, an IDE, another bridge) has it "
                "open; close that program and retry" % device)
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
    start = 0 if line[:1] == b"{" else line.find(_JSONRPC)
    if start >= 0:
        try:
            msg = json.loads(line[start:])
        except (ValueError, RecursionError):
            msg = None
        if type(msg) is dict and msg.get("jsonrpc") == "2.0":
            return msg, (line[:start] if start else None)
    return None, line


def is_cbor(line):
    # A CBOR link frame starts with a map head; JSON and REPL output start with ASCII.
    return 0xA0 <= line[0] <= 0xBF


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


class Link:
    # Owns the port. Calls on_message(dict) per frame, on_noise(bytes) per other line and
    # on_state(connected: bool) when the port appears or goes away. token: what a board on the
    # network wants first on every connection (its TOKEN line); serial ports never get it.

    def __init__(self, device, baud=115200, port=None, token=None, *, on_message, on_noise,
                 on_state):
        self.device = device
        self.baud = baud
        self.port = port
        self.network = is_url(device)
        self.token = token if self.network else None
        self.reopen_interval = 1.0 if self.network else 0.25
        self.on_message = on_message
        self.on_noise = on_noise
        self.on_state = on_state
        self._lines = LineSplitter(MAX_LINE)
        self._urgent = collections.deque()   # frames to write before the queue: cancels, pings
        self._queue = collections.deque()    # frames in the order the board should read them
        self._queued = 0                     # bytes in both, not yet started
        self._writing = None                 # what is left of the frame being written
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
                        self.on_state(False)
                    await asyncio.sleep(self.reopen_interval)
                    continue
                self.first_try = False
                if self._closed:
                    self._drop_port()
                    return
                log.info("port %s opened", self.device)
            self._lost = loop.create_future()
            fd = self.port.fileno()
            loop.add_reader(fd, self._readable)
            if self.network:   # the token first, on every connection
                self.write(("%s%s\n" % (protocol.TOKEN_LINE, self.token or "")).encode(),
                           urgent=True)
            # A newline first: a half frame the board holds from before ends, and is ignored.
            self.write(b"\n", urgent=True)
            self.on_state(True)
            try:
                await self._lost
            finally:
                self._drop_port()
            if not self._closed:
                log.log(logging.DEBUG if self._refused else logging.WARNING,
                        "port %s lost; waiting for it to come back", self.device)
                self.on_state(False)
                if self._refused:   # a slow retry, never a tight loop
                    await asyncio.sleep(REFUSED_RETRY)

    def _drop_port(self):
        port, self.port = self.port, None
        if port is None:
            return
        loop = asyncio.get_running_loop()
        try:
            loop.remove_reader(port.fileno())
            loop.remove_writer(port.fileno())
        except (ValueError, OSError):
            pass
        try:
            port.close()
        except Exception:
            pass
        self._lines.clear()
        self._urgent.clear()
        self._queue.clear()
        self._queued = 0
        self._writing = None

    def _fail(self, why):
        log.debug("port %s: %s", self.device, why)
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(why)

    def _readable(self):
        try:
            data = os.read(self.port.fileno(), 65536)
        except BlockingIOError:
            return
        except OSError as e:  # EIO: the other side of a pty closed, or the USB device vanished
            self._fail(str(e))
            return
        if not data:
            self._fail("end of file")
            return
        self._feed(data)

    def _feed(self, data):
        for line in self._lines.feed(data):
            if line is TOO_LONG:
                log.debug("noise: dropped a line over %d bytes", MAX_LINE)
            else:
                self._line(line)

    def _line(self, line):
        if line and is_cbor(line):
            msg = self._cbor(line.rstrip(b"\r"))  # a cooked tty adds "\r"; never a frame's last byte
            if msg is None:
                return
            noise = None
        else:
            msg, noise = parse_line(line)
            if msg is None and noise and self.mode == "cbor":
                msg, noise = self._salvage(noise)
        if noise:
            log.debug("noise: %r", noise[:200])
            self.on_noise(noise)
        if msg is not None:
            self.frames_in += 1
            if msg.get("id") is None and protocol.reason(msg) == protocol.UNAUTHORIZED:
                self._unauthorized()
                return
            if self._refused:
                log.info("%s accepted the token", self.device)
                self._refused = 0
            try:
                self.on_message(msg)
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
        return json.dumps(msg, separators=(",", ":")).encode() + b"\n"

    def send(self, msg, urgent=False):
        return self.write(self.encode(msg), urgent)

    def write(self, frame, urgent=False):
        # Queue one encoded frame (urgent: ahead of the frames not yet started) -> the frame,
        # which withdraw() takes back while it is still waiting; None when there is no port, or
        # when the board has stopped reading and MAX_BACKLOG bytes wait for it already.
        if self.port is None:
            return None
        if self._queued > MAX_BACKLOG:
            log.warning("the board is not reading its input; dropping a frame")
            return None
        (self._urgent if urgent else self._queue).append(frame)
        self._queued += len(frame)
        self._flush()
        return frame

    def withdraw(self, frame):
        # -> True when the frame was still waiting (no byte of it reached the board): removed.
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

    def _flush(self):
        port = self.port
        if port is None:
            return
        loop = asyncio.get_running_loop()
        fd = port.fileno()
        while True:
            if self._writing is None:
                waiting = self._urgent or self._queue
                if not waiting:
                    break
                frame = waiting.popleft()
                self._queued -= len(frame)
                self._writing = memoryview(frame)
            try:
                n = os.write(fd, self._writing)
            except BlockingIOError:
                n = 0
            except OSError as e:
                self._fail(str(e))
                return
            if n == 0:
                loop.add_writer(fd, self._flush)  # the board is slow to read: wait, never block
                return
            self._writing = self._writing[n:] if n < len(self._writing) else None
        try:
            loop.remove_writer(fd)
        except (ValueError, OSError):
            pass

    def close(self):
        if self.cbor_in or self.crc_errors:
            (log.warning if self.crc_errors else log.info)(
                "cbor link: %d frames from the board, %d dropped for a bad CRC",
                self.cbor_in, self.crc_errors)
        self._closed = True
        self._fail("closed")
        if self._lost is None:
            self._drop_port()
