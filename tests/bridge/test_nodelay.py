# TCP_NODELAY on every TCP connection the bridge serves (the HTTP front) or makes (a board on
# the network, socket://): without it an answer's last bytes wait for the other side's delayed
# ACK, about 40 ms a call (issue 30). Read on the connections themselves, never timed.
import asyncio
import socket
import threading

import uvicorn

from tinymcp.host.bridge.cli import _listen
from tinymcp.host.bridge.guard import Connection
from tinymcp.host.bridge.link import open_port


def test_the_http_front_accepts_connections_with_nodelay():
    seen = []

    class Probe(Connection):
        # The HTTP front's own connection class, telling what its socket says.
        def connection_made(self, transport):
            sock = transport.get_extra_info("socket")
            seen.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            super().connection_made(transport)

    async def app(scope, receive, send):
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})

    async def run():
        sock = _listen("127.0.0.1", 0)   # the socket tinymcp-bridge --http listens on
        port = sock.getsockname()[1]
        server = uvicorn.Server(uvicorn.Config(app, http=Probe, log_config=None, lifespan="off"))
        serving = asyncio.ensure_future(server.serve(sockets=[sock]))
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = await reader.read()
            writer.close()
        finally:
            server.should_exit = True
            await serving
        return answer

    answer = asyncio.run(run())
    assert answer.startswith(b"HTTP/1.1 200"), answer
    assert len(seen) == 1 and seen[0] != 0, seen


def test_a_board_on_the_network_is_reached_with_nodelay():
    # The bridge's side of a socket:// board's connection, opened as the link opens it.
    board = socket.create_server(("127.0.0.1", 0))
    accepted = []
    taker = threading.Thread(target=lambda: accepted.append(board.accept()[0]))
    taker.start()
    port = open_port("socket://127.0.0.1:%d" % board.getsockname()[1])
    try:
        assert port._socket.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
    finally:
        port.close()
        taker.join(10)
        for conn in accepted:
            conn.close()
        board.close()
