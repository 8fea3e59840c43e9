# The stdio front: one host session on stdin/stdout, newline-delimited JSON-RPC.
import asyncio
import json
import logging
import sys

from tinymcp.host.bridge.lines import TOO_LONG, LineSplitter
from tinymcp.host.bridge.wire import MAX_MESSAGE, decode, too_long

log = logging.getLogger("tinymcp.bridge.stdio")

CHUNK = 1 << 16


async def serve_stdio(hosts, stdin=None, stdout=None):
    # Serve until stdin ends. Nothing but protocol frames is ever written to stdout.
    loop = asyncio.get_running_loop()
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout.buffer
    reader = asyncio.StreamReader()
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), stdin)
        read = reader.read
    except ValueError:  # a regular file (`< requests.jsonl`) is not a pipe: read it in a thread
        transport = None
        source = getattr(stdin, "buffer", stdin)
        chunk = getattr(source, "read1", source.read)

        async def read(size):
            return await loop.run_in_executor(None, chunk, size)
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
            data = await read(CHUNK)
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
        if transport is not None:
            transport.close()
