# A small synchronous JSON-RPC client over newline-delimited frames (the MCP stdio framing): the
# tests, the benchmarks and deploy's checks talk to boards and bridges through it. Its peer is a
# child process on pipes or a pty, a TCP socket, or any file descriptor it is handed.
import itertools
import json
import os
import select
import socket
import subprocess
import tempfile
import time


def child(argv, cwd=None, env=None, pty=False, stderr=True):
    # Starts a child with its stdin and stdout on pipes (or both on a pty: a board on a tty)
    # -> LineClient's keyword arguments for it. Its stderr is collected in a file (stderr=False:
    # dropped), so it can never block the child.
    errfile = tempfile.TemporaryFile() if stderr else None
    err = errfile if stderr else subprocess.DEVNULL
    if not pty:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=err)
        return {"read_fd": proc.stdout.fileno(), "write_fd": proc.stdin.fileno(), "proc": proc,
                "errfile": errfile}
    import tty
    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=master, stdout=master, stderr=err)
    finally:
        os.close(master)
    return {"read_fd": slave, "proc": proc, "errfile": errfile, "closing": (slave,)}


def written(file):
    # -> what a child process has written so far to file (a temporary file it shares), as text.
    # Read with pread: seeking would move the offset the child writes at, and its next line
    # would overwrite the start of the file.
    fd = file.fileno()
    chunks = []
    while True:
        chunk = os.pread(fd, 65536, sum(map(len, chunks)))
        if not chunk:
            return b"".join(chunks).decode(errors="replace")
        chunks.append(chunk)


class LineClient:
    # One peer. Reads in the caller's thread (select with a deadline); while it writes it also
    # reads, so a peer answering a long write never stalls on a full pipe. Notifications that
    # come while an answer is awaited are kept in .notes, answers to other requests in .early,
    # lines that are not JSON-RPC messages in .noise.
    def __init__(self, read_fd, write_fd=None, timeout=30.0, proc=None, errfile=None,
                 closing=None):
        self.fd = read_fd
        self.write_fd = read_fd if write_fd is None else write_fd
        self.timeout = timeout
        self.proc = proc            # the child process, when spawned
        self.errfile = errfile      # where the child's stderr goes
        self._closing = closing or ()   # what close() releases besides the child
        self.pending = b""          # bytes read and not yet taken as lines
        self.notes = []
        self.noise = []
        self.early = {}
        self.ids = itertools.count(1)
        self.sent_bytes = self.received_bytes = 0   # the last request and its answer, newline in

    @classmethod
    def spawn(cls, argv, cwd=None, env=None, pty=False, timeout=30.0, stderr=True):
        return cls(timeout=timeout, **child(argv, cwd, env, pty, stderr))

    @classmethod
    def connect(cls, host, port, first=None, timeout=30.0):
        # A TCP peer (a board on the network); `first` is written before anything else (its
        # token line).
        sock = socket.create_connection((host, port), timeout=timeout)
        client = cls(sock.fileno(), timeout=timeout, closing=(sock,))
        if first:
            client.write(first)
        return client

    # -- bytes ----------------------------------------------------------------------------

    def _fill(self, timeout):
        # Read what the peer has sent within timeout (seconds) -> False when nothing came.
        if not select.select((self.fd,), (), (), max(0.0, timeout))[0]:
            return False
        chunk = os.read(self.fd, 65536)
        if not chunk:
            raise EOFError("%s closed its output%s" % (self.name(), self._said()))
        self.pending += chunk
        return True

    def write(self, data):
        # Writes all of data, reading meanwhile: the peer may answer before it has read it all.
        view = memoryview(data)
        blocking = os.get_blocking(self.write_fd)
        os.set_blocking(self.write_fd, False)
        try:
            while view:
                readable, writable, _ = select.select((self.fd,), (self.write_fd,), (),
                                                      self.timeout)
                if readable:
                    self._fill(0)
                if not writable:
                    if not readable:
                        raise TimeoutError("%s does not read its input" % self.name())
                    continue
                try:
                    view = view[os.write(self.write_fd, view):]
                except BlockingIOError:
                    pass
        finally:
            os.set_blocking(self.write_fd, blocking)

    def line(self, timeout=None):
        # -> the next line (without its newline); TimeoutError, or EOFError when the peer ended.
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not self._fill(left):
                raise TimeoutError("no line from %s within %g s%s" % (
                    self.name(), self.timeout if timeout is None else timeout, self._said()))
        line, _, self.pending = self.pending.partition(b"\n")
        return line

    # -- messages -------------------------------------------------------------------------

    def message(self, timeout=None):
        # -> the next JSON-RPC message; lines that are none go to .noise.
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            line = self.line(max(0.0, deadline - time.monotonic()))
            self.received_bytes = len(line) + 1
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if type(msg) is dict and msg.get("jsonrpc") == "2.0":
                return msg
            self.noise.append(line)

    def send(self, msg):
        frame = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
        self.sent_bytes = len(frame)
        self.write(frame)

    def start(self, method, params=None, rid=None):
        # Send a request without waiting -> its id.
        rid = next(self.ids) if rid is None else rid
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return rid

    def wait(self, rid, timeout=None):
        # -> the answer to request rid (None: an error answered with id null). Notifications on
        # the way are kept in .notes, answers to other requests in .early.
        if rid in self.early:
            return self.early.pop(rid)
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        while True:
            try:
                msg = self.message(max(0.0, deadline - time.monotonic()))
            except TimeoutError:
                raise TimeoutError("no answer to id %r from %s within %g s%s" % (
                    rid, self.name(), self.timeout if timeout is None else timeout,
                    self._said())) from None
            if "method" in msg:
                self.notes.append(msg)
            elif msg.get("id") == rid:
                return msg
            else:
                self.early[msg.get("id")] = msg

    def request(self, method, params=None, timeout=None):
        return self.wait(self.start(method, params), timeout)

    def call(self, tool, timeout=None, **arguments):
        return self.request("tools/call", {"name": tool, "arguments": arguments}, timeout)

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def initialize(self, version="2025-11-25", capabilities=None, client="tests"):
        # The handshake: initialize, then notifications/initialized -> the initialize answer.
        reply = self.request("initialize", {"protocolVersion": version,
                                            "capabilities": capabilities or {},
                                            "clientInfo": {"name": client, "version": "0"}})
        if "result" in reply:
            self.notify("notifications/initialized")
        return reply

    # -- the peer -------------------------------------------------------------------------

    def name(self):
        return " ".join(self.proc.args) if self.proc is not None else "the peer"

    def stderr(self):
        # What the child wrote on stderr so far ("" when it is not collected).
        if self.errfile is None:
            return ""
        return written(self.errfile)

    def _said(self):
        text = self.stderr()[-1500:]
        return "; its stderr:\n" + text if text else ""

    def close(self, timeout=10.0):
        # Ends the input (EOF) and reaps the child -> its exit status (None without a child).
        if self.proc is not None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        for thing in self._closing:
            try:
                thing.close() if hasattr(thing, "close") else os.close(thing)
            except OSError:
                pass
        self._closing = ()
        if self.proc is None:
            return None
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        return self.proc.returncode
