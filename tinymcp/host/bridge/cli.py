# tinymcp-bridge: the command line, exit codes, and the wiring: each board's link and session
# under one router, the hosts' side over it, and the fronts (stdio, HTTP, the demo).
import asyncio
import logging
import os
import signal
import socket
import sys

from tinymcp.host.bridge.routes import LABEL, slug
from tinymcp.host.bridge.host import log_failure
from tinymcp.host.bridge.install import bridge_command, sim_given
from tinymcp.host.bridge.link import Link, PortError, check_url, is_url, open_port
from tinymcp.host.bridge.options import (BOARD_TOKEN_ENV, TOKEN_ENV, build_parser, checked,
                                         parse_http)

log = logging.getLogger("tinymcp.bridge")

def list_ports(out, discover=False, token=None):
    from tinymcp.host.bridge.discovery import list_ports_text
    for line in list_ports_text():
        print(line, file=out)
    if discover:   # the boards announced on the network (mDNS), after a few seconds' look
        from tinymcp.host.bridge.mdns import list_text
        print(file=out)
        for line in list_text(token):
            print(line, file=out)
    return 0


def open_boards(specs, baud):
    # -> [(spec, device, open port or None, SimBoard or None)]. A serial port that cannot be
    # opened now is a PortError (exit 2); a URL is checked for its form only, and reached when
    # it answers (a board on the network comes and goes).
    from tinymcp.host.bridge.sim import SimBoard
    opened = []
    try:
        for spec in specs:
            if spec.kind == "sim":
                sim = SimBoard(spec.target, identity=spec.label)
                sim.check()
                opened.append((spec, ) + sim.open() + (sim,))
            elif spec.kind == "port" and is_url(spec.target):
                check_url(spec.target)
                opened.append((spec, spec.target, None, None))
            elif spec.kind == "port":
                opened.append((spec, spec.target, open_port(spec.target, baud), None))
    except PortError:
        for _spec, _device, port, sim in opened:
            if port is not None:
                port.close()
            if sim is not None:
                sim.close()
        raise
    return opened


def _listen(host, port):
    # The HTTP front's socket. Made as a TCP socket by name (IPPROTO_TCP, not 0): asyncio sets
    # TCP_NODELAY only on connections of such a socket, and without it an answer's last bytes
    # wait for the client's delayed ACK (Nagle's algorithm): about 40 ms on every call.
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
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
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level.upper()),
                        format="tinymcp-bridge %(levelname)s %(name)s: %(message)s")
    if args.install or args.print_config:
        from tinymcp.host.bridge import install
        return install.main(sys.argv[1:] if argv is None else argv)
    if args.name is not None:
        parser.error("--name goes with --install or --print-config")
    if args.discover and not args.list_ports:
        parser.error("--discover goes with --list-ports (to serve what it finds: --port discover)")
    if args.list_ports:
        return list_ports(sys.stdout, args.discover,
                          _secret(args.board_token, "--board-token", BOARD_TOKEN_ENV))
    specs, several = checked(parser, args)
    pins = load_pins(parser, args)
    if pins is None:
        return 2
    args.token = _secret(args.token, "--token", TOKEN_ENV)
    if args.token and (args.no_auth or args.oauth_issuer):
        parser.error("$%s is set: it goes with neither --no-auth nor --oauth-issuer" % TOKEN_ENV)
    args.board_token = _secret(args.board_token, "--board-token", BOARD_TOKEN_ENV)
    http = None
    sock = None
    opened = []
    try:
        if args.http:
            try:
                http = parse_http(args.http)
            except ValueError as e:
                raise PortError(str(e)) from None
            from tinymcp.host.bridge.guard import is_loopback
            if args.no_auth and not is_loopback(http[0]):
                raise PortError("--no-auth is for a loopback bind only; binding %s needs a "
                                "token (--token or $%s) or --oauth-issuer" % (http[0], TOKEN_ENV))
            if args.oauth_issuer and not args.public_url and http[0] in ("0.0.0.0", "::"):
                raise PortError("--oauth-issuer on an all-interfaces bind needs --public-url: "
                                "the /mcp URL hosts use, which the tokens name")
            if not is_loopback(http[0]) and not args.token and not args.oauth_issuer:
                raise PortError("binding %s (not loopback) needs a token: --token or $%s, or "
                                "--oauth-issuer" % (http[0], TOKEN_ENV))
            sock = _listen(*http)
        if args.mqtt:
            from tinymcp.host.bridge.mqtt import check
            check(args.mqtt, args.mqtt_filter, args.mqtt_insecure,
                  alone=not args.port and not args.sim)
        opened = open_boards(specs, args.baud)
    except PortError as e:
        print("tinymcp-bridge: %s" % e, file=sys.stderr)
        if sock is not None:
            sock.close()
        return 2
    demo = not args.trust and (args.demo or (sys.stdin is not None and sys.stdin.isatty()
                                             and not args.http))
    status = 0
    try:
        status = asyncio.run(run(args, specs, several, opened, http, sock, demo, pins)) or 0
    except KeyboardInterrupt:
        pass
    finally:
        for _spec, _device, _port, sim in opened:
            if sim is not None:
                sim.close()
        pins.flush()   # pins the loop had not written yet
    return status


def load_pins(parser, args):
    # -> the pins (pins.PinBook), or None after one line saying why the file cannot be used.
    from tinymcp.host.bridge.pins import PinBook, PinsError, default_path
    if args.trust and (args.http or args.demo or args.trust_changes):
        parser.error("--trust connects, accepts and exits: without --http, --demo or "
                     "--trust-changes")
    if args.trust and args.trust != "all" and not LABEL.match(args.trust):
        parser.error("--trust takes a board label (a-z, 0-9 and -) or all, not %r" % args.trust)
    try:
        return PinBook(args.pins or default_path(), trust_changes=args.trust_changes)
    except PinsError as e:
        print("tinymcp-bridge: %s" % e, file=sys.stderr)
        return None


def pin_origin(spec, device, sim):
    # -> (what identifies a board of the command line besides its label, the name its pins go
    # by when it has no label).
    if sim is not None:
        return str(sim.main), spec.label or slug(os.path.basename(spec.target.rstrip("/")), "sim")
    return device, spec.label or slug(os.path.basename(device), "board")


def _secret(given, option, env):
    if given is not None:
        log.warning("%s is visible to every local user in the process list; set $%s instead",
                    option, env)
        return given
    return os.environ.get(env) or None


def http_auth(args, host, port):
    # -> (the HTTP front's auth.py object, the token made for this run or None).
    from tinymcp.host.bridge import auth
    if args.oauth_issuer:
        shown = "[%s]" % host if ":" in host else host
        return auth.OAuth(args.oauth_issuer,
                          args.public_url or "http://%s:%d/mcp" % (shown, port)), None
    if args.token:
        return auth.StaticToken(args.token), None
    if args.no_auth:
        return auth.Open(), None
    import secrets
    made = secrets.token_urlsafe(24)
    return auth.StaticToken(made), made


class PluggedBoards:
    # --port auto's listener (a seams.PluggedPorts, told by discovery.Discovery): a board found
    # on USB is served by the router, under a label made from its name, until it is unplugged.
    # session_for(device, port) -> make_session(events) for the router; named: the real paths
    # of the ports given by name (--port DEVICE), served as such and never found again.
    def __init__(self, router, session_for, named):
        self.router = router
        self.session_for = session_for
        self.named = named

    def taken(self, device):
        return os.path.realpath(device) in self.named

    def found(self, device, port):
        return self.router.add(None, self.session_for(device, port))

    async def gone(self, board):
        await self.router.remove(board)


async def run(args, specs, several, opened, http, sock, demo, pins=None):
    from tinymcp.host.bridge.board import BoardSession
    from tinymcp.host.bridge.hosts import Hosts
    from tinymcp.host.bridge.router import Router
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stopping.set)
        except NotImplementedError:   # Windows' event loop: a plain handler, onto the loop
            signal.signal(sig, lambda *_: loop.call_soon_threadsafe(stopping.set))

    def session_for(device, port):
        # -> make_session(events) for the router: the board's session over its link.
        def connect(events):
            return Link(device, args.baud, port, args.board_token, events=events)

        def make_session(events):
            return BoardSession(connect, args.timeout, link_mode=args.link,
                                restart=not args.no_restart, events=events)
        return make_session

    def broker_session(connect):
        # -> make_session(events) for a board found on a broker (mqtt.py): never restarted.
        def make_session(events):
            return BoardSession(connect, args.timeout, restart=False, events=events)
        return make_session

    def make_router(hosts):
        return Router(several, hosts, compact=args.compact, pins=pins)

    hosts = Hosts(make_router, args.timeout)
    router = hosts.router
    sims = []
    for spec, device, port, sim in opened:
        origin, pin_label = pin_origin(spec, device, sim)
        board = router.add(spec.label, session_for(device, port), origin=origin,
                           pin_label=pin_label)
        if sim is not None:
            board.run(sim.run(board.session))
            sims.append(sim)
    tasks = []
    if any(spec.kind == "auto" for spec in specs):
        from tinymcp.host.bridge.discovery import Discovery
        named = {os.path.realpath(device) for _spec, device, _port, _sim in opened}
        discovery = Discovery(args.baud, PluggedBoards(router, session_for, named))
        tasks.append(loop.create_task(discovery.run()))
    if any(spec.kind == "discover" for spec in specs):
        from tinymcp.host.bridge.mdns import Discover
        from tinymcp.host.bridge.mqtt import BrokerBoards   # labels boards that come and go

        def announced_session(connect):
            # -> make_session(events) for a board found over mDNS (mdns.py): a network board.
            def make_session(events):
                return BoardSession(connect, args.timeout, link_mode=args.link,
                                    restart=not args.no_restart, events=events)
            return make_session
        discover = Discover(BrokerBoards(router, announced_session), args.board_token, args.baud)
        tasks.append(loop.create_task(discover.run()))
    if args.mqtt:
        from tinymcp.host.bridge.mqtt import serve_brokers
        for broker in serve_brokers(args.mqtt, args.mqtt_filter, router, broker_session,
                                    args.mqtt_insecure):
            tasks.append(loop.create_task(broker.run()))
    for task in tasks:   # these run for as long as the bridge does: an end is a bug, said
        task.add_done_callback(log_failure)
    fronts = []
    http_front = None
    if http is not None:
        from tinymcp.host.bridge.http import serve_http
        host, number = http
        number = sock.getsockname()[1]
        auth, made = http_auth(args, host, number)
        http_front = loop.create_task(serve_http(hosts, router.listing, sock, host, number,
                                                 auth, stopping))
        fronts.append(http_front)
        shown = "[%s]" % host if ":" in host else host
        print("tinymcp-bridge: serving http://%s:%d/mcp" % (shown, number), file=sys.stderr,
              flush=True)
        if made is not None:   # as Jupyter does: the link that works, on the bridge's stderr
            print("tinymcp-bridge: live dashboard at http://%s:%d/?token=%s\n"
                  "tinymcp-bridge: hosts send \"Authorization: Bearer %s\" (a token made for "
                  "this run; choose one with $%s, or --no-auth for none)"
                  % (shown, number, made, made, TOKEN_ENV), file=sys.stderr, flush=True)
        else:
            print("tinymcp-bridge: live dashboard at http://%s:%d/%s" % (
                shown, number, " (open it as /?token=TOKEN)" if args.token else ""),
                file=sys.stderr, flush=True)
        if args.oauth_issuer:
            print("tinymcp-bridge: OAuth: tokens from %s for %s (metadata: %s)"
                  % (auth.issuer, auth.resource, auth.metadata_url), file=sys.stderr, flush=True)
    trusting = None
    if args.trust:   # no host is served: the boards are connected, accepted, and that is all
        from tinymcp.host.bridge.pins import accept
        trusting = loop.create_task(accept(router, pins, args.trust, args.timeout,
                                           bool(tasks), sys.stdout))
        fronts.append(trusting)
    elif demo:
        from tinymcp.host.bridge.demo import run_demo, snippet
        config = []
        for spec, device, _port, sim in opened:
            if sim is not None:
                print("tinymcp-bridge: simulated board %s on %s" % (sim.main, device),
                      file=sys.stderr)
            # as --install writes it: a board folder by its absolute path, pasted anywhere
            config += ["--sim"] if spec.given == "sim" and len(specs) == 1 else [
                "--sim", sim_given(spec)] if spec.kind == "sim" else ["--port", spec.given]
        for url in args.mqtt:
            config += ["--mqtt", url]
        for name_filter in args.mqtt_filter:
            config += ["--mqtt-filter", name_filter]
        if args.mqtt_insecure:
            config += ["--mqtt-insecure"]
        print("\n" + snippet(bridge_command(), config or ["--port", "auto"]), file=sys.stderr)
        fronts.append(loop.create_task(run_demo(hosts, args.demo_seconds)))
    elif http is None:
        from tinymcp.host.bridge.stdio import serve_stdio
        fronts.append(loop.create_task(serve_stdio(hosts)))
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
        for task in tasks + [stop]:
            task.cancel()
        for sim in sims:
            sim.stop()
        await asyncio.gather(*(sim.wait_stopped() for sim in sims))
        await router.close()
        await asyncio.gather(*tasks, stop, return_exceptions=True)
    if trusting is not None:
        done = trusting.done() and not trusting.cancelled() and trusting.exception() is None
        return trusting.result() if done else 2
