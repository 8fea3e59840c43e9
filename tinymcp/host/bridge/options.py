# tinymcp-bridge's command line: its options, and the checks of a valid one (exit 2 with one line
# otherwise). Read by the bridge (cli.py) and by --install (install.py), which writes them into a
# host's config.
import collections
import os

from tinymcp.host.args import Parser
from tinymcp.host.bridge.routes import LABEL, slug
from tinymcp.host.bridge.hostconfigs import HOSTS

TOKEN_ENV = "TINYMCP_BRIDGE_TOKEN"
BOARD_TOKEN_ENV = "TINYMCP_BOARD_TOKEN"
# One board of the command line: kind "port" (a device or a URL), "sim", "auto" or "discover".
FINDERS = ("auto", "discover")   # --port values that find boards, each board labelled its own way
Spec = collections.namedtuple("Spec", "label kind target given")


def build_parser():
    p = Parser(prog="tinymcp-bridge",
               description="Serve tinymcp boards (serial ports, the network, simulated) to MCP "
                           "hosts over stdio or Streamable HTTP.")
    p.add_argument("--port", action="append", default=[], metavar="[LABEL=]DEVICE",
                   help="a board's serial port (/dev/ttyACM0), a pyserial URL (socket://HOST:PORT: "
                        "a board on the network), auto: every MicroPython USB board, now or "
                        "later, or discover: every board announced on the network (mDNS), now or "
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
    p.add_argument("--discover", action="store_true",
                   help="with --list-ports: also the boards announced on the network (mDNS "
                        "_mcp._tcp), looked for a few seconds")
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
                   help="end the demo after N seconds of watching for updates (exit 0)")
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
            if kind == "port" and target in FINDERS:
                if label:
                    raise ValueError("--port %s takes no label: each board it finds gets its "
                                     "own, from its name" % target)
                kind = target
            specs.append(Spec(label, kind, target, given))
    for finder in FINDERS:
        if sum(spec.kind == finder for spec in specs) > 1:
            raise ValueError("--port %s is given once" % finder)
    labels = [spec.label for spec in specs if spec.label]
    for label in labels:
        if labels.count(label) > 1:
            raise ValueError("two boards are labelled %r" % label)
    several = len(specs) > 1 or any(spec.kind in FINDERS for spec in specs) or bool(args.mqtt)
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
    check_auth(parser, args)
    return specs, several


def check_auth(parser, args):
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


