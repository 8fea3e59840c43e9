# The stdio front: one host session on stdin/stdout, newline-delimited JSON-RPC. stdin is read
# in a thread, as the official SDK reads it: a console, a pipe or a file, on every OS.
import asyncio
import json
import logging
import sys
import threading

from tinymcp.host.bridge.lines import TOO_LONG, LineSplitter
from tinymcp.host.bridge.wire import MAX_MESSAGE, decode, too_long

log = logging.getLogger("tinymcp.bridge.stdio")

CHUNK = 1 << 16


def read_in_thread(stdin, loop):
    # -> an asyncio.Queue of the chunks read from stdin, b"" at its end. A stdin that is closed,
    # unreadable or /dev/null ends at once. The thread is a daemon: a read still blocked when
    # the bridge ends does not hold it up.
    chunks = asyncio.Queue()
    # The unbuffered file below sys.stdin: a thread blocked in a buffered read would hold the
    # buffer's lock while the interpreter shuts down.
    source = getattr(stdin, "buffer", stdin)
    source = getattr(source, "raw", source)
    read = getattr(source, "read", None)

    def run():
        try:
            while True:
                data = read(CHUNK)
                loop.call_soon_threadsafe(chunks.put_nowait, data)
                if not data:
                    return
        except Exception as e:   # OSError, ValueError (closed): the end, like EOF
            log.debug("stdin: %s", e)
        try:
            loop.call_soon_threadsafe(chunks.put_nowait, b"")
        except RuntimeError:     # the loop has closed
            pass

    if read is None:
        chunks.put_nowait(b"")
    else:
        threading.Thread(target=run, name="tinymcp-stdin", daemon=True).start()
    return chunks


async def serve_stdio(hosts, stdin=None, stdout=None):
    # Serve until stdin ends. Nothing but protocol frames is ever written to stdout.
    chunks = read_in_thread(stdin or sys.stdin, asyncio.get_running_loop())
    out = stdout or sys.stdout.buffer
    gone = asyncio.Event()

    def send(msg, related=None):
        if gone.is_set():
            return
        try:
            out.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
            out.flush()
        except (BrokenPipeError, OSError, ValueError):
            gone.set()  # the host closed its end

    session = hosts.open_session(send, "stdio")
    lines = LineSplitter(MAX_MESSAGE)
    try:
        while not gone.is_set():
            data = await chunks.get()
            for line in lines.feed(data) if data else lines.end():
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
        session.close()
