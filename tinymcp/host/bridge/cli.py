# tinymcp-bridge: command line, exit codes, and the wiring of link, board session, hub and fronts.
import argparse
import asyncio
import logging
import os
import shutil
import signal
import socket
import sys

from tinymcp.host.bridge.link import Link, PortError, open_port

log = logging.getLogger("tinymcp.bridge")

TOKEN_ENV = "TINYMCP_BRIDGE_TOKEN"
# USB ids of boards that usually run MicroPython (vendor, or vendor:product).
MICROPYTHON_USB = {0x2E8A: "Raspberry Pi (Pico)", 0x303A: "Espressif native USB",
                   0xF055: "MicroPython (pyboard)", 0x239A: "Adafruit", 0x1A86: "WCH CH34x UART",
                   0x10C4: "Silicon Labs CP210x UART", 0x0403: "FTDI UART"}


class Parser(argparse.ArgumentParser):
    def error(self, message):
        # One line, exit 2 (the contract), instead of argparse's usage block.
        self.exit(2, "tinymcp-bridge: %s (see --help)\n" % message)


def build_parser():
    p = Parser(prog="tinymcp-bridge",
               description="Serve a tinymcp board on a serial port to MCP hosts over stdio "
                           "or Streamable HTTP.")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--port", metavar="DEVICE", help="the board's serial port, e.g. /dev/ttyACM0")
    src.add_argument("--sim", nargs="?", const="sim", metavar="BOARD",
                     help="run boards/BOARD/main.py (default: sim) behind a pseudo-terminal")
    src.add_argument("--list-ports", action="store_true", help="list serial ports and exit")
    p.add_argument("--baud", type=int, default=115200, help="baud rate (default 115200)")
    p.add_argument("--http", metavar="[HOST:]PORT",
                   help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio "
                        "(HOST defaults to 127.0.0.1)")
    p.add_argument("--token",
                   help="bearer token HTTP clients must send; required on a non-loopback bind. "
                        "Every local user can read a command line: prefer $%s" % TOKEN_ENV)
    p.add_argument("--timeout", type=float, default=10.0, metavar="SECONDS",
                   help="seconds the board has to answer one request (default 10)")
    p.add_argument("--link", default="json", choices=("json", "auto", "cbor"),
                   help="frames on the board link: json lines (default, readable), auto (CBOR "
                        "with CRC when the board offers it), cbor (the same, warning if not)")
    p.add_argument("--no-restart", action="store_true",
                   help="never restart a board that does not serve (at its REPL, or left in "
                        "the 2026-07-28 era by another client) with 0x03 and a soft reset")
    p.add_argument("--log-level", default="warning",
                   choices=("debug", "info", "warning", "error"), help="stderr log level")
    p.add_argument("--demo", action="store_true",
                   help="show a narrated live session on stderr (the default when stdin is a "
                        "terminal) instead of serving stdio")
    p.add_argument("--demo-seconds", type=float, metavar="N",
                   help="end the demo after N seconds (exit 0)")
    return p


def parse_http(value):
    # "[HOST:]PORT" -> (host, port); "[::1]:8000" for IPv6.
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or int(port) > 65535:
        raise ValueError("--http wants [HOST:]PORT, got %r" % value)
    return host, int(port)


def list_ports(out):
    from serial.tools import list_ports as lp
    ports = sorted(lp.comports(), key=lambda p: p.device)
    if not ports:
        print("no serial ports found", file=out)
    for port in ports:
        line = port.device
        if port.vid is not None:
            hint = MICROPYTHON_USB.get(port.vid, "")
            line += "  usb %04x:%04x" % (port.vid, port.pid or 0)
            line += "  %s" % (port.product or port.description or "")
            if hint:
                line += "  <- likely a MicroPython board (%s)" % hint
        elif port.description and port.description != "n/a":
            line += "  " + port.description
        print(line.rstrip(), file=out)
    return 0


def _listen(host, port):
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise PortError("cannot listen on %s:%d: %s" % (host, port, e.strerror or e)) from None
    sock.listen(64)
    sock.setblocking(False)
    return sock


def main(argv=None):
    args = build_parser().parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level.upper()),
                        format="tinymcp-bridge %(levelname)s %(name)s: %(message)s")
    if args.list_ports:
        return list_ports(sys.stdout)
    if args.port is None and args.sim is None:
        build_parser().error("say which board: --port DEVICE, or --sim for the simulated board")
    if args.timeout <= 0:
        build_parser().error("--timeout must be positive")
    if args.token is not None:
        log.warning("--token is visible to every local user in the process list; set $%s "
                    "instead", TOKEN_ENV)
    else:
        args.token = os.environ.get(TOKEN_ENV) or None
    http = None
    sock = None
    sim = None
    try:
        if args.http:
            try:
                http = parse_http(args.http)
            except ValueError as e:
                raise PortError(str(e)) from None
            from tinymcp.host.bridge.guard import is_loopback
            if not is_loopback(http[0]) and not args.token:
                raise PortError("binding %s (not loopback) needs a token: --token or $%s"
                                % (http[0], TOKEN_ENV))
            sock = _listen(*http)
        if args.sim is not None:
            from tinymcp.host.bridge.sim import SimBoard
            sim = SimBoard(args.sim)
            device, port = sim.open()
        else:
            device, port = args.port, open_port(args.port, args.baud)
    except PortError as e:
        print("tinymcp-bridge: %s" % e, file=sys.stderr)
        if sock is not None:
            sock.close()
        return 2
    demo = args.demo or (sys.stdin.isatty() and not args.http)
    try:
        asyncio.run(run(args, device, port, sim, http, sock, demo))
    except KeyboardInterrupt:
        pass
    finally:
        if sim is not None:
            sim.close()
    return 0


def _ended(task):
    if not task.cancelled() and task.exception() is not None:
        log.error("%s ended: %r", task.get_coro().__qualname__, task.exception())


def _command():
    # The absolute path a host config should name to start this bridge.
    if os.path.basename(sys.argv[0]) == "tinymcp-bridge":
        return os.path.abspath(sys.argv[0])
    return shutil.which("tinymcp-bridge") or "tinymcp-bridge"


async def run(args, device, port, sim, http, sock, demo):
    from tinymcp.host.bridge.board import BoardSession
    from tinymcp.host.bridge.hub import Hub
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stopping.set)
    link = Link(device, args.baud, port)
    board = BoardSession(link, args.timeout, link_mode=args.link)
    board.restart_boards = not args.no_restart
    hub = Hub(board)
    tasks = [loop.create_task(link.run())]
    if sim is not None:
        tasks.append(loop.create_task(sim.run(board)))
    for task in tasks:   # these run for as long as the bridge does: an end is a bug, said
        task.add_done_callback(_ended)
    board.start()
    fronts = []
    http_front = None
    if http is not None:
        from tinymcp.host.bridge.http import serve_http
        host, number = http
        number = sock.getsockname()[1]
        http_front = loop.create_task(serve_http(hub, sock, host, number, args.token, stopping))
        fronts.append(http_front)
        shown = "[%s]" % host if ":" in host else host
        print("tinymcp-bridge: serving http://%s:%d/mcp" % (shown, number), file=sys.stderr,
              flush=True)
        print("tinymcp-bridge: live dashboard at http://%s:%d/%s" % (
            shown, number, " (open it as /?token=TOKEN)" if args.token else ""), file=sys.stderr,
            flush=True)
    if demo:
        from tinymcp.host.bridge.demo import run_demo, snippet
        if sim is not None:
            print("tinymcp-bridge: simulated board %s on %s\n" % (sim.main, device),
                  file=sys.stderr)
        print(snippet(_command(), ["--sim"] if sim is not None else ["--port", device]),
              file=sys.stderr)
        fronts.append(loop.create_task(run_demo(hub, args.demo_seconds)))
    elif http is None:
        from tinymcp.host.bridge.stdio import serve_stdio
        fronts.append(loop.create_task(serve_stdio(hub)))
    stop = loop.create_task(stopping.wait())
    try:
        # stdio ends at EOF, a timed demo after its seconds, everything on SIGINT/SIGTERM.
        done, _ = await asyncio.wait(fronts + [stop], return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task is not stop and not task.cancelled() and task.exception():
                log.error("%r", task.exception())
    finally:
        stopping.set()
        for task in fronts:
            if task is not http_front:
                task.cancel()
        # The HTTP front ends its sessions and closes its streams before it returns.
        await asyncio.wait(fronts, timeout=5)
        if sim is not None:
            sim.stop()
            await sim.wait_stopped()
        link.close()
        board.close()
        for task in tasks + [stop]:
            task.cancel()
        await asyncio.gather(*tasks, stop, return_exceptions=True)
