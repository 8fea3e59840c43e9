# A misbehaving board on a pseudo-terminal: the bridge opens .device like a USB port, and the
# test decides byte by byte what the board says. It records every line it was sent.
import json
import os
import pty
import threading
import time
import tty

GOOD_INIT = {"protocolVersion": "2025-11-25",
             "capabilities": {"tools": {"listChanged": True}, "logging": {}},
             "serverInfo": {"name": "fakeboard", "version": "1"}}
TOOLS = [{"name": "echo", "description": "Answers its arguments.",
          "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": True}}]


class FakeBoard:
    # on_request(board, msg) answers a request the defaults below do not (return True when it
    # did); init_result is what initialize gets (a callable may vary it per attempt).
    def __init__(self, on_request=None, init_result=None, max_frame=None, offer=True):
        self.master, self._slave = pty.openpty()
        tty.setraw(self._slave)
        self.device = os.ttyname(self._slave)
        self.on_request = on_request or (lambda board, msg: False)
        self.init_result = init_result if init_result is not None else GOOD_INIT
        self.max_frame = max_frame or 4096   # like tinymcp: longer lines are discarded
        self.offer = offer and max_frame is not None   # say so in initialize (new firmware)
        self.reading = threading.Event()     # cleared: the board stops reading its input
        self.reading.set()
        self.lines = []         # every line the bridge wrote, as bytes
        self.messages = []      # those that parsed as JSON objects
        self.raw = bytearray()  # every byte, for control characters (0x03, Ctrl-D)
        self.inits = 0
        self.closed = False
        self._lock = threading.Lock()
        self._partial = b""
        threading.Thread(target=self._read, daemon=True).start()

    # -- what the board says ----------------------------------------------------------------

    def write(self, data):
        with self._lock:
            view = memoryview(data)
            while view:
                try:
                    n = os.write(self.master, view)
                except BlockingIOError:
                    time.sleep(0.001)
                    continue
                except OSError:
                    if self.closed:   # unplugged while it answered: nobody hears it now
                        return
                    raise
                view = view[n:]

    def send(self, msg):
        self.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")

    def answer(self, msg, result=None, error=None):
        reply = {"jsonrpc": "2.0", "id": msg["id"]}
        if error is not None:
            reply["error"] = error
        else:
            reply["result"] = {} if result is None else result
        self.send(reply)

    # -- what the board hears ---------------------------------------------------------------

    def _read(self):
        while not self.closed:
            self.reading.wait()
            try:
                data = os.read(self.master, 4096)
            except OSError:
                if self.closed:
                    return
                time.sleep(0.01)
                continue
            self.raw += data
            self._data(data)

    def _data(self, data):
        data = self._partial + data
        *lines, self._partial = data.split(b"\n")
        for line in lines:
            self._line(line.rstrip(b"\r"))

    def _line(self, line):
        if not line:
            return
        self.lines.append(line)
        if len(line) > self.max_frame:
            self.send({"jsonrpc": "2.0", "id": None, "error": {
                "code": -32600, "message": "Invalid Request: frame longer than %d bytes, "
                "discarded" % self.max_frame,
                "data": {"reason": "frame-too-long", "limit": self.max_frame}}})
            return
        try:
            msg = json.loads(line)
        except ValueError:
            return
        if type(msg) is not dict:
            return
        self.messages.append(msg)
        if "method" in msg and "id" in msg:
            if not self.on_request(self, msg):
                self.default(msg)

    def default(self, msg):
        method = msg["method"]
        if method == "initialize":
            self.inits += 1
            result = self.init_result(self) if callable(self.init_result) else self.init_result
            if type(result) is dict and self.offer:
                result = json.loads(json.dumps(result))
                result.setdefault("capabilities", {}).setdefault("experimental", {})[
                    "tinymcp/link"] = {"maxFrame": self.max_frame}
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        elif method == "tools/list":
            self.answer(msg, {"tools": TOOLS})
        elif method == "tools/call" and msg["params"].get("name") == "echo":
            args = msg["params"].get("arguments") or {}
            self.answer(msg, {"content": [{"type": "text", "text": json.dumps(args)}],
                              "structuredContent": args})
        else:
            self.answer(msg)   # ping, logging/setLevel, subscribe: {}

    def received(self, method):
        return [m for m in self.messages if m.get("method") == method]

    def answer_to(self, rid):
        # The bridge's answer to a request the board made, or None.
        for m in self.messages:
            if m.get("id") == rid and "method" not in m:
                return m
        return None

    def later(self, fn, *args):
        threading.Thread(target=fn, args=args, daemon=True).start()

    def wait_for(self, predicate, timeout=20, what="the board to hear it"):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            found = predicate()
            if found:
                return found
            time.sleep(0.02)
        raise AssertionError("timed out waiting for %s; heard %r" % (what, self.lines[-5:]))

    def close(self):
        self.closed = True
        for fd in (self.master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass


BANNER = (b"MicroPython v1.24.1 on 2024-11-29; Fake board with RP2040\r\n"
          b'Type "help()" for more information.\r\n>>> ')


class ReplBoard(FakeBoard):
    # A board at MicroPython's friendly REPL: it echoes what it is typed, runs each line as
    # Python (JSON fails on true/false/null), Ctrl-C clears the line, Ctrl-B shows the banner,
    # Ctrl-D soft-resets: then main.py serves MCP (main_serves) or the REPL comes back.
    def __init__(self, main_serves=False, serving=False, **kwargs):
        FakeBoard.__init__(self, **kwargs)
        self.main_serves = main_serves
        self.at_repl = not serving   # serving: main.py serves until fall()
        self.typed = []        # lines typed at the prompt
        self._typing = b""

    def fall(self, says):
        # main.py ends (a crash, a stray 0x03): the REPL says `says` and reads what comes next.
        self.at_repl = True
        self._typing = b""
        self._partial = b""
        self.write(says)

    def _data(self, data):
        if not self.at_repl:
            FakeBoard._data(self, data)
            return
        for i in range(len(data)):
            byte = data[i:i + 1]
            if not self.at_repl:   # soft-reset into main.py: the rest is for the MCP server
                FakeBoard._data(self, data[i:])
                return
            self._key(byte)

    def _key(self, byte):
        if byte in b"\r\n":
            line, self._typing = self._typing, b""
            if byte == b"\n" and not line:
                return   # the "\n" of a "\r\n"
            if line:
                self.typed.append(line)
            self.write(b"\r\n" + self._run(line) + b">>> ")
        elif byte == b"\x03":
            self._typing = b""
            self.write(b"\r\n>>> ")
        elif byte == b"\x02":
            self.write(b"\r\n" + BANNER)
        elif byte == b"\x04":
            self._typing = b""
            self.write(b"MPY: soft reboot\r\n")
            if self.main_serves:
                self.at_repl = False
            else:
                self.write(BANNER)
        else:
            self._typing += byte
            self.write(byte)   # the REPL echoes what it is typed

    @staticmethod
    def _run(line):
        for name in (b"true", b"false", b"null"):
            if name in line:
                return (b'Traceback (most recent call last):\r\n  File "<stdin>", line 1, in '
                        b"<module>\r\nNameError: name '" + name + b"' isn't defined\r\n")
        return line + b"\r\n" if line else b""
