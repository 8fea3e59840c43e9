# The stdio front: one host session on stdin/stdout, newline-delimited JSON-RPC. stdin is read
# by the event loop where it can watch it (a pipe or a socket, on Linux and macOS); elsewhere in a
# thread, as the official SDK reads it: a console, a pipe or a file, on every OS.
import asyncio
import logging
import os
import sys
import threading

from tinymcp.host.bridge.wire import (MAX_MESSAGE, TOO_LONG, LineSplitter, decode, dump_line,
                                      too_long)

log = logging.getLogger("tinymcp.bridge.stdio")

CHUNK = 1 << 16


def open_stdin(stdin, loop):
    # -> what reads stdin: the loop where it can watch its descriptor (no thread between a host's
    # line and the bridge), else a thread.
    try:
        return StdinLoop(stdin.fileno(), loop)
    except (AttributeError, OSError, ValueError, NotImplementedError):
        # no descriptor; a regular file or /dev/null (epoll refuses them: PermissionError);
        # an event loop without add_reader (Windows')
        return StdinThread(stdin, loop)


class StdinLoop:
    # stdin read by the event loop when it is readable, at most READ_AHEAD chunks ahead of the
    # session (then it is not read until the session takes one). Its descriptor stays blocking,
    # as the host's end of it may be shared: one read after readiness does not block.
    READ_AHEAD = 16

    def __init__(self, fd, loop):
        self.fd = fd
        self.loop = loop
        self._chunks = asyncio.Queue()
        self._watching = False
        self._ended = False
        self._watch(True)

    def _watch(self, on):
        if on and not self._watching:
            self.loop.add_reader(self.fd, self._readable)
        elif not on and self._watching:
            self.loop.remove_reader(self.fd)
        self._watching = on

    def _readable(self):
        try:
            data = os.read(self.fd, CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as e:   # the end, like EOF
            log.debug("stdin: %s", e)
            data = b""
        self._chunks.put_nowait(data)
        self._ended = not data
        if self._ended or self._chunks.qsize() >= self.READ_AHEAD:
            self._watch(False)

    async def read(self):
        # -> the next chunk; b"" at the end of input.
        data = await self._chunks.get()
        if not self._ended and self._chunks.qsize() < self.READ_AHEAD:
            self._watch(True)
        return data

    def close(self):
        self._watch(False)


class StdinThread:
    # stdin read by a daemon thread (a read still blocked when the bridge ends does not hold it
    # up), at most READ_AHEAD chunks ahead of the loop: a host that floods waits, as it would for
    # a pipe the bridge does not read. A stdin that is closed, unreadable or /dev/null ends at once.
    READ_AHEAD = 16

    def __init__(self, stdin, loop):
        self.loop = loop
        self._chunks = asyncio.Queue()
        self._ahead = threading.Semaphore(self.READ_AHEAD)
        # The unbuffered file below sys.stdin: a thread blocked in a buffered read would hold the
        # buffer's lock while the interpreter shuts down.
        source = getattr(stdin, "buffer", stdin)
        source = getattr(source, "raw", source)
        self._read = getattr(source, "read", None)
        if self._read is None:
            self._chunks.put_nowait(b"")
        else:
            threading.Thread(target=self._run, name="tinymcp-stdin", daemon=True).start()

    def close(self):
        pass   # a daemon thread: a read still blocked does not hold the bridge up

    async def read(self):
        # -> the next chunk; b"" at the end of input.
        data = await self._chunks.get()
        self._ahead.release()
        return data

    def _run(self):
        try:
            while True:
                data = self._read(CHUNK)
                self._ahead.acquire()
                self.loop.call_soon_threadsafe(self._chunks.put_nowait, data)
                if not data:
                    return
        except RuntimeError:     # the loop has closed: the bridge has ended
            return
        except Exception as e:   # OSError, ValueError (closed): the end, like EOF
            log.debug("stdin: %s", e)
        try:
            self.loop.call_soon_threadsafe(self._chunks.put_nowait, b"")
        except RuntimeError:
            pass


async def serve_stdio(hosts, stdin=None, stdout=None):
    # Serve until stdin ends. Nothing but protocol frames is ever written to stdout.
    loop = asyncio.get_running_loop()
    stdin = open_stdin(stdin or sys.stdin, loop)
    out = stdout or sys.stdout.buffer
    gone = asyncio.Event()
    lines = []   # messages sent in this turn of the loop: one write for them all
    session = None

    def send(msg, related=None):
        if gone.is_set():
            return
        lines.append(dump_line(msg))
        if session is None or not session.tasks:   # nothing else in flight: at once
            flush()
        elif len(lines) == 1:   # others may end in this turn: their answers join this write
            loop.call_soon(flush)

    def flush():
        if not lines:
            return
        data = b"".join(lines)
        lines.clear()
        if gone.is_set():
            return
        try:
            out.write(data)
            out.flush()
        except (BrokenPipeError, OSError, ValueError):
            gone.set()  # the host closed its end

    session = hosts.open_session(send, "stdio")
    splitter = LineSplitter(MAX_MESSAGE)
    try:
        while not gone.is_set():
            data = await stdin.read()
            for line in splitter.feed(data) if data else splitter.end():
                if line is TOO_LONG:   # dropped as it streamed: one answer for the whole line
                    send(too_long())
                    continue
                line = line.strip()
                if not line:
                    continue
                msg, problem = decode(line)
                if problem is not None:
                    send(problem)
                else:
                    session.receive(msg)
            if not data:
                break
        if session.tasks:  # input ended with requests in flight: answer them first
            await asyncio.wait(list(session.tasks.values()), timeout=hosts.timeout + 1)
    finally:
        stdin.close()
        session.close()
        flush()   # what this turn of the loop sent, before the bridge ends
