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
    def __init__(self, on_request=None, init_result=None, max_frame=None):
        self.master, self._slave = pty.openpty()
        tty.setraw(self._slave)
        self.device = os.ttyname(self._slave)
        self.on_request = on_request or (lambda board, msg: False)
        self.init_result = init_result if init_result is not None else GOOD_INIT
        self.max_frame = max_frame
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
            try:
                data = os.read(self.master, 65536)
            except OSError:
                if self.closed:
                    return
                time.sleep(0.01)
                continue
            self.raw += data
            data = self._partial + data
            *lines, self._partial = data.split(b"\n")
            for line in lines:
                self._line(line.rstrip(b"\r"))

    def _line(self, line):
        if not line:
            return
        self.lines.append(line)
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
            if type(result) is dict and self.max_frame is not None:
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
