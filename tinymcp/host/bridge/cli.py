# tinymcp-bridge: the command line, exit codes, and the wiring: each board's link and session
# under one router, the hosts' side over it, and the fronts (stdio, HTTP, the demo).
import asyncio
import collections
import functools
import logging
import os
import signal
import socket
import sys

from tinymcp.host.args import Parser
from tinymcp.host.bridge.catalog import LABEL, slug
from tinymcp.host.bridge.host import log_failure
from tinymcp.host.bridge.install import HOSTS, bridge_command
from tinymcp.host.bridge.link import Link, PortError, check_url, is_url, open_port

log = logging.getLogger("tinymcp.bridge")

TOKEN_ENV = "TINYMCP_BRIDGE_TOKEN"
BOARD_TOKEN_ENV = "TINYMCP_BOARD_TOKEN"
# One board of the command line: kind "port" (a device or a URL), "sim" or "auto".
Spec = collections.namedtuple("Spec", "label kind target given")


def build_parser():
    p = Parser(prog="tinymcp-bridge",
               description="Serve tinymcp boards (serial ports, the network, simulated) to MCP "
                           "hosts over stdio or Streamable HTTP.")
    p.add_argument("--port", action="append", default=[], metavar="[LABEL=]DEVICE",
                   help="a board's serial port (/dev/ttyACM0), a pyserial URL (socket://HOST:PORT: "
                        "a board on the network), or auto: every MicroPython USB board, now or "
                        "later. Repeatable; LABEL (a-z, 0-9, -) names the board")
    p.add_argument("--sim", action="append", default=[], nargs="?", const="sim",
                   metavar="[LABEL=]BOARD",
                   help="run boards/BOARD/main.py (default: sim) behind a pseudo-terminal (on "
                        "pipes where there is none: Windows). Repeatable")
    p.add_argument("--mqtt", action="append", default=[], metavar="URL",
                   help="an MQTT 5 broker (mqtt://HOST[:PORT], mqtts://HOST[:PORT]): every board "
                        "announcing itself there (MCP over MQTT), now or later. Repeatable; "
                        "credentials from $TINYMCP_MQTT_USERNAME and $TINYMCP_MQTT_PASSWORD, a "
                        "CA certificate for mqtts:// from $TINYMCP_MQTT_CA")
    p.add_argument("--mqtt-filter", action="append", default=[], metavar="FILTER",
                   help="with --mqtt: only boards whose server-name matches this topic filter "
                        "(tinymcp/#, site/+/pico; default #). Repeatable")
    p.add_argument("--mqtt-insecure", action="store_true",
                   help="with --mqtt: serve the boards of a broker that takes the bridge "
                        "without a login or enforces no ACL (anyone there can speak for any "
                        "board; their tools say so). Without it such a broker's boards are "
                        "not served (docs/fleet.md)")
    p.add_argument("--list-ports", action="store_true", help="list serial ports and exit")
    p.add_argument("--board-token", metavar="TOKEN",
                   help="what boards on the network (socket://) require first. Every local user "
                        "can read a command line: prefer $%s" % BOARD_TOKEN_ENV)
    p.add_argument("--baud", type=int, default=115200, help="baud rate (default 115200)")
    p.add_argument("--http", metavar="[HOST:]PORT",
                   help="serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio "
                        "(HOST defaults to 127.0.0.1)")
    p.add_argument("--token",
                   help="bearer token HTTP clients must send; required on a non-loopback bind. "
                        "Every local user can read a command line: prefer $%s" % TOKEN_ENV)
    p.add_argument("--no-auth", action="store_true",
                   help="with --http on loopback: no token at all (by default a loopback bridge "
                        "makes a random one and prints it)")
    p.add_argument("--oauth-issuer", metavar="URL",
                   help="with --http: be an OAuth 2.1 resource server for this authorization "
                        "server (its issuer URL): hosts bring its JWT access tokens, scopes "
                        "tinymcp.read and tinymcp.act")
    p.add_argument("--public-url", metavar="URL",
                   help="with --oauth-issuer: the /mcp URL hosts use, the tokens' audience "
                        "(default http://HOST:PORT/mcp as served)")
    p.add_argument("--compact", action="store_true",
                   help="with several boards: a tool they share is listed once, with a board "
                        "argument naming which (not LABEL_TOOL for each)")
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
    p.add_argument("--install", choices=sorted(HOSTS), metavar="HOST",
                   help="write this bridge, with the other options given, into HOST's MCP "
                        "config (%s), keeping everything else there" % ", ".join(sorted(HOSTS)))
    p.add_argument("--print-config", choices=sorted(HOSTS), metavar="HOST",
                   help="print what --install HOST would write, and where")
    p.add_argument("--name",
                   help="with --install: the server's name in the host's config (default "
                        "tinymcp); an entry of that name is replaced")
    p.add_argument("--trust", metavar="LABEL|all",
                   help="accept what the board LABEL (or every board) declares now: connect "
                        "with the board options given, write its tools, prompts, resources and "
                        "instructions into the pins file, print them and exit")
    p.add_argument("--trust-changes", action="store_true",
                   help="serve what boards changed since they were accepted, for this run "
                        "(the pins file is left as it is)")
    p.add_argument("--pins", metavar="FILE",
                   help="the pins file: what each board declared as the user accepted it "
                        "(default: pins.json in the user's state directory, or $TINYMCP_PINS)")
    return p


def parse_http(value):
    # "[HOST:]PORT" -> (host, port); "[::1]:8000" for IPv6.
    host, _, port = value.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if not port.isdigit() or int(port) > 65535:
        raise ValueError("--http wants [HOST:]PORT, got %r" % value)
    return host, int(port)


def list_ports(out):
    from tinymcp.host.bridge.discovery import list_ports_text
    for line in list_ports_text():
        print(line, file=out)
    return 0


def board_specs(args):
    # -> ([Spec], several: whether tools carry labels); ValueError with the reason for a bad
    # board argument.
    specs = []
    for kind, values in (("port", args.port), ("sim", args.sim)):
        for given in values:
            label, sep, target = given.partition("=")
            if not sep or "/" in label or ":" in label:
                label, target = None, given
            elif not LABEL.match(label):
                raise ValueError("board label %r: a-z, 0-9 and -, a letter first, at most 24"
                                 % label)
            if kind == "port" and target == "auto":
                if label:
                    raise ValueError("--port auto takes no label: each board it finds gets its "
                                     "own, from its name")
                kind = "auto"
            specs.append(Spec(label, kind, target, given))
    if sum(spec.kind == "auto" for spec in specs) > 1:
        raise ValueError("--port auto is given once")
    labels = [spec.label for spec in specs if spec.label]
    for label in labels:
        if labels.count(label) > 1:
            raise ValueError("two boards are labelled %r" % label)
    several = len(specs) > 1 or any(spec.kind == "auto" for spec in specs) or bool(args.mqtt)
    if several:   # a simulated board without a label is named after its board folder
        for i, spec in enumerate(specs):
            if spec.kind == "sim" and not spec.label:
                base, n, label = slug(os.path.basename(spec.target.rstrip("/")), "sim"), 1, None
                while label is None or label in labels:
                    label = base if n == 1 else "%s-%d" % (base, n)
                    n += 1
                labels.append(label)
                specs[i] = spec._replace(label=label)
    return specs, several


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
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, args.log_level.upper()),
                        format="tinymcp-bridge %(levelname)s %(name)s: %(message)s")
    if args.install or args.print_config:
        from tinymcp.host.bridge import install
        return install.main(sys.argv[1:] if argv is None else argv)
    if args.name is not None:
        parser.error("--name goes with --install or --print-config")
    if args.list_ports:
        return list_ports(sys.stdout)
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


def checked(parser, args):
    # -> (specs, several) for the boards of a valid command line; a bad one: exit 2, one line.
    if not args.port and not args.sim and not args.mqtt:
        parser.error("say which board: --port DEVICE, --sim for the simulated board, or --mqtt "
                     "URL for the boards behind a broker")
    if args.mqtt_filter and not args.mqtt:
        parser.error("--mqtt-filter goes with --mqtt")
    if args.mqtt_insecure and not args.mqtt:
        parser.error("--mqtt-insecure goes with --mqtt")
    try:
        specs, several = board_specs(args)
    except ValueError as e:
        parser.error(str(e))
    if args.timeout <= 0:
        parser.error("--timeout must be positive")
    _check_auth(parser, args)
    return specs, several


def _check_auth(parser, args):
    # The HTTP front's authorization options: one of --token, --oauth-issuer, --no-auth.
    from urllib.parse import urlsplit
    if args.no_auth and (args.token or args.oauth_issuer):
        parser.error("--no-auth goes with neither --token nor --oauth-issuer")
    if args.token and args.oauth_issuer:
        parser.error("--token or --oauth-issuer, not both")
    if args.public_url and not args.oauth_issuer:
        parser.error("--public-url goes with --oauth-issuer")
    for option, url in (("--oauth-issuer", args.oauth_issuer), ("--public-url", args.public_url)):
        if url is None:
            continue
        from tinymcp.host.bridge.guard import is_loopback
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query \
                or parts.fragment:
            parser.error("%s wants an http(s) URL without query or fragment, got %r"
                         % (option, url))
        if option == "--oauth-issuer" and parts.scheme != "https" \
                and not is_loopback(parts.hostname):
            parser.error("--oauth-issuer must be https:// (plain http only on loopback)")


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
        # -> make_session(**callbacks) for the router: the board's link and session.
        return functools.partial(BoardSession,
                                 functools.partial(Link, device, args.baud, port,
                                                   args.board_token),
                                 args.timeout, link_mode=args.link, restart=not args.no_restart)

    hosts = Hosts(functools.partial(Router, several, compact=args.compact, pins=pins),
                  args.timeout)
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
        discovery = Discovery(args.baud,
                              serve=lambda device, port: router.add(None,
                                                                    session_for(device, port)),
                              let_go=router.remove,
                              taken=lambda device: os.path.realpath(device) in named)
        tasks.append(loop.create_task(discovery.run()))
    if args.mqtt:
        from tinymcp.host.bridge.mqtt import serve_brokers
        for broker in serve_brokers(
                args.mqtt, args.mqtt_filter, router,
                lambda make_link: functools.partial(BoardSession, make_link, args.timeout,
                                                    restart=False), args.mqtt_insecure):
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
            config += ["--sim"] if spec.given == "sim" and len(specs) == 1 else [
                "--" + ("sim" if spec.kind == "sim" else "port"), spec.given]
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
