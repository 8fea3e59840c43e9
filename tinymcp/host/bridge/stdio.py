# The stdio front: one host session on stdin/stdout, newline-delimited JSON-RPC.
import asyncio
import json
import logging
import sys

log = logging.getLogger("tinymcp.bridge.stdio")

MAX_LINE = 16 << 20


async def serve_stdio(hub, stdin=None, stdout=None):
    # Serve until stdin ends. Nothing but protocol frames is ever written to stdout.
    loop = asyncio.get_running_loop()
    stdin = stdin or sys.stdin
    out = stdout or sys.stdout.buffer
    reader = asyncio.StreamReader(limit=MAX_LINE)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), stdin)
        readline = reader.readline
    except ValueError:  # a regular file (`< requests.jsonl`) is not a pipe: read it in a thread
        transport = None
        source = getattr(stdin, "buffer", stdin)

        async def readline():
            return await loop.run_in_executor(None, source.readline, MAX_LINE)
    gone = asyncio.Event()

    def send(msg, related=None):
        if gone.is_set():
            return
        try:
            out.write(json.dumps(msg, separators=(",", ":")).encode() + b"\n")
            out.flush()
        except (BrokenPipeError, OSError, ValueError):
            gone.set()  # the host closed its end

    session = hub.open_session(send, "stdio")
    try:
        while not gone.is_set():
            try:
                line = await readline()
            except ValueError:  # a line over MAX_LINE: asyncio skipped it; say so
                send({"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32600, "message": "Invalid Request: line too long"}})
                continue
            if not line:
                break
            line = line.strip()
            if not line:
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                send({"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32700, "message": "Parse error"}})
                continue
            session.receive(msg)
        if session.tasks:  # input ended with requests in flight: answer them first
            await asyncio.wait(list(session.tasks.values()), timeout=hub.board.timeout + 1)
    finally:
        session.close()
        if transport is not None:
            transport.close()
