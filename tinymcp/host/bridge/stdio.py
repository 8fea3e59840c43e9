# The stdio front: one host session on stdin/stdout, newline-delimited JSON-RPC. stdin is read
# by the event loop where it can watch it (a pipe or a socket, on Linux and macOS); elsewhere in a
# thread, as the official SDK reads it: a console, a pipe or a file, on every OS. Each chunk read
# is handled where it is read, in that turn of the loop: its lines go to the session, and what
# they lead to (frames to boards, answers on stdout) is written once the chunk has been (turn.py).
import asyncio
import logging
import os
import sys
import threading

from tinymcp.host.bridge import turn
from tinymcp.host.bridge.express import ExpressLane
from tinymcp.host.bridge.wire import (MAX_MESSAGE, TOO_LONG, LineSplitter, decode, dump_line,
                                      too_long, tools_call)

log = logging.getLogger("tinymcp.bridge.stdio")

CHUNK = 1 << 16


def open_stdin(stdin, loop, handle):
    # -> what reads stdin and calls handle(chunk) on the loop for each chunk (b"" once, at the
    # end of input): the loop where it can watch its descriptor (no thread between a host's line
    # and the bridge), else a thread.
    try:
        return StdinLoop(stdin.fileno(), loop, handle)
    except (AttributeError, OSError, ValueError, NotImplementedError):
        # no descriptor; a regular file or /dev/null (epoll refuses them: PermissionError);
        # an event loop without add_reader (Windows')
        return StdinThread(stdin, loop, handle)


class StdinLoop:
    # stdin read by the event loop when it is readable, each chunk handled as it is read. Its
    # descriptor stays blocking, as the host's end of it may be shared: one read after readiness
    # does not block.

    def __init__(self, fd, loop, handle):
        self.fd = fd
        self.loop = loop
        self.handle = handle
        self._watching = False
        loop.add_reader(fd, self._readable)   # NotImplementedError: a loop without it
        self._watching = True

    def _readable(self):
        try:
            data = os.read(self.fd, CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:   # the end, like EOF
            log.debug("stdin: %s", e)
            data = b""
        if not data:
            self.close()
        turn.handled(self.handle, data)

    def close(self):
        if self._watching:
            self._watching = False
            self.loop.remove_reader(self.fd)


class StdinThread:
    # stdin read by a daemon thread (a read still blocked when the bridge ends does not hold it
    # up), at most READ_AHEAD chunks ahead of the loop: a host that floods waits, as it would for
    # a pipe the bridge does not read. A stdin that is closed, unreadable or /dev/null ends at once.
    READ_AHEAD = 16

    def __init__(self, stdin, loop, handle):
        self.loop = loop
        self.handle = handle
        self._closed = False
        self._ahead = threading.Semaphore(self.READ_AHEAD)
        # The unbuffered file below sys.stdin: a thread blocked in a buffered read would hold the
        # buffer's lock while the interpreter shuts down.
        source = getattr(stdin, "buffer", stdin)
        source = getattr(source, "raw", source)
        self._read = getattr(source, "read", None)
        if self._read is None:
            loop.call_soon(self._deliver, b"")
        else:
            threading.Thread(target=self._run, name="tinymcp-stdin", daemon=True).start()

    def close(self):
        self._closed = True   # a daemon thread: a read still blocked does not hold the bridge up

    def _deliver(self, data):
        self._ahead.release()
        if not self._closed:
            turn.handled(self.handle, data)

    def _run(self):
        try:
            while True:
                data = self._read(CHUNK)
                self._ahead.acquire()
                self.loop.call_soon_threadsafe(self._deliver, data)
                if not data:
                    return
        except RuntimeError:     # the loop has closed: the bridge has ended
            return
        except Exception as e:   # OSError, ValueError (closed): the end, like EOF
            log.debug("stdin: %s", e)
        try:
            self.loop.call_soon_threadsafe(self._deliver, b"")
        except RuntimeError:
            pass


def descriptor(out):
    # -> the file descriptor under a binary stdout (nothing left in its buffer), or None.
    try:
        out.flush()
        return out.fileno()
    except (AttributeError, OSError, ValueError):   # io.UnsupportedOperation is an OSError
        return None


async def serve_stdio(hosts, stdin=None, stdout=None):
    # Serve until stdin ends. Nothing but protocol frames is ever written to stdout.
    loop = asyncio.get_running_loop()
    out = stdout or sys.stdout.buffer
    ended = loop.create_future()   # stdin has ended, or the host closed stdout
    lines = []   # messages sent and not yet written: one write for them all
    session = lane = None
    fd = None   # stdout's descriptor, written directly (where stdin is read by the loop)

    def end():
        if not ended.done():
            ended.set_result(None)

    def send(msg, related=None):
        put(dump_line(msg))

    def put(line):
        # One line for the host (its bytes made: an express answer's, express.py).
        if ended.done() and ended.result():   # the host closed its end: nothing more goes
            return
        lines.append(line)
        if len(lines) > 1 or turn.hold(flush):   # a flush is on its way: they join its write
            return
        if session is None or not session.tasks:   # nothing else in flight: at once
            flush()
        else:   # others may end in this turn of the loop: their answers join this write
            loop.call_soon(flush)

    def flush():
        if not lines:
            return
        data = b"".join(lines)
        lines.clear()
        if ended.done() and ended.result():
            return
        try:
            if fd is None:
                out.write(data)
                out.flush()
            else:   # the descriptor itself: no buffer to copy the bytes through first
                while data:
                    data = data[os.write(fd, data):]
        except (BrokenPipeError, OSError, ValueError):
            # the host closed its end: nothing more is read or written
            if ended.done():
                return
            ended.set_result("gone")

    splitter = LineSplitter(MAX_MESSAGE)

    def handle(data):
        # One chunk of stdin (b"": its end) -> each line it completes to the session.
        if ended.done():
            return
        got = splitter.feed(data) if data else splitter.end()
        alone = len(got) == 1   # one message: its frame to the board at once (express.py)
        for line in got:
            if line is TOO_LONG:   # dropped as it streamed: one answer for the whole line
                send(too_long())
                continue
            line = line.strip()
            if not line:
                continue
            msg, routed = tools_call(line)   # the usual tools/call, read the short way
            if msg is None:
                msg, problem = decode(line)
                if problem is not None:
                    send(problem)
                    continue
            if lane is None or not lane.take(msg, line, alone, routed):
                session.receive(msg, line, routed)
        if not data:
            end()

    session = hosts.open_session(send, "stdio")
    stdin = open_stdin(stdin or sys.stdin, loop, handle)
    if type(stdin) is StdinLoop:   # read by the loop (POSIX): the express lane is open
        lane = ExpressLane(session, hosts.router, lambda rid, data: put(data + b"\n"))
        fd = descriptor(out)
    try:
        await ended
        if session.tasks and not ended.result():
            # input ended with requests in flight: answer them first. Each is bounded by the
            # bridge's own timeout (initialize waits that long for a board that is starting), so
            # this bound is only a backstop, with room for a loaded machine: timeout + 1 s left
            # an initialize that waited its whole timeout one second to be answered.
            await asyncio.wait(list(session.tasks.values()), timeout=2 * hosts.timeout + 5)
    finally:
        stdin.close()
        session.close()
        if lane is not None:
            log.debug("stdio: %d tools/call took the express lane", lane.taken)
        flush()   # what this turn of the loop sent, before the bridge ends
