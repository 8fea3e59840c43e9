# The bridge as an MCP Bundle for Claude Desktop, and its MCP Registry entry:
#   python tools/bundle.py [--out DIR] [--wheel FILE]     (default dist/; FILE: a wheel of this
#                                                          checkout already built, else built here)
# writes DIR/tinymcp-bridge-VERSION.mcpb and DIR/server.json. The bundle holds manifest.json (the
# MCPB 0.3 manifest: the board and its token asked of the user, an entry per OS), the bridge
# (this checkout's wheel) and its dependencies (pure-Python wheels from PyPI, unpacked into
# server/lib: nothing for the user's machine to compile), icon.png, LICENSE, and a tools list
# taken from the bridge itself, serving the simulated board. Needs pip and PyPI; never Node
# (tests/bundle checks the result with npm @anthropic-ai/mcpb).
import argparse
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ElementTree
import zipfile
import zlib

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONSTRAINTS = os.path.join(REPO, ".ci", "constraints.txt")
# What the wheel is built from (as tests/test_wheel.py builds it: a copy, no build/ left here).
SOURCES = ("setup.py", "setup.cfg", "pyproject.toml", "README.md", "LICENSE", "tinymcp", "ports",
           "boards")
# What the bridge on stdio imports beyond the standard library, for --port and --sim (the HTTP
# front, OAuth and --mqtt have no place in a bundle a desktop host starts on stdio).
DEPENDENCIES = ("pyserial", "platformdirs")
ICON_SVG = os.path.join(REPO, "tinymcp", "host", "bridge", "static", "icon.svg")
DISTRIBUTION = "tinymcp-hw"
BOARD_TOKEN_ENV = "TINYMCP_BOARD_TOKEN"   # tinymcp.host.bridge.options.BOARD_TOKEN_ENV
PINS_ENV = "TINYMCP_PINS"                 # tinymcp.host.bridge.pins.PINS_ENV
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

# server/main.py: how the host's Python finds the bridge and its board. user_config.board is a
# serial port, auto, a socket:// address, or sim (the simulated board, no hardware).
LAUNCHER = '''\
# tinymcp-bridge as this MCP Bundle starts it: main.py --board BOARD (a serial port, auto,
# socket://HOST:PORT, or sim); the bridge and its dependencies are in lib/ beside this file.
import os
import sys

LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
sys.path.insert(0, LIB)
# the simulated board runs in a child Python, which must find tinymcp too
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (LIB, os.environ.get("PYTHONPATH")) if p)


def bridge_args(argv):
    args = list(argv)
    if "--board" in args:
        at = args.index("--board")
        board = (args[at + 1] if at + 1 < len(args) else "").strip() or "auto"
        args[at:at + 2] = ["--sim"] if board == "sim" else ["--port", board]
    return args


if __name__ == "__main__":
    from tinymcp.host.bridge.cli import main
    sys.exit(main(bridge_args(sys.argv[1:])))
'''


def run(command, **kwargs):
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, **kwargs)
    if done.returncode != 0:
        sys.exit("bundle: %s failed:\n%s" % (" ".join(command), done.stdout.decode()[-2000:]))
    return done.stdout.decode()


def metadata():
    # -> {name, version, url, license, description} from setup.cfg, the distribution's own.
    import configparser
    config = configparser.ConfigParser()
    config.read(os.path.join(REPO, "setup.cfg"))
    return dict(config["metadata"])


def registry_name(url):
    # https://github.com/OWNER/REPO -> io.github.OWNER/REPO, the name the MCP Registry checks
    # against the README's mcp-name: line.
    owner, repo = url.rstrip("/").split("/")[-2:]
    return "io.github.%s/%s" % (owner, repo)


def copy_sources(src):
    # What the wheel is built from, copied into src (a new folder): no build/ left in the checkout.
    os.makedirs(src)
    for name in SOURCES:
        path = os.path.join(REPO, name)
        if os.path.isdir(path):
            shutil.copytree(path, os.path.join(src, name),
                            ignore=shutil.ignore_patterns("__pycache__", "*.mpy", "*.egg-info"))
        else:
            shutil.copy(path, os.path.join(src, name))


def wheels(into, wheel=None):
    # -> the wheels of the bridge (wheel, or one built here) and of DEPENDENCIES, each pure
    # Python (py3-none-any).
    out = os.path.join(into, "wheels")
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    if wheel:
        os.makedirs(out)
        shutil.copy(wheel, out)
    else:
        src = os.path.join(into, "src")
        copy_sources(src)
        run(pip + ["wheel", "-q", "--no-deps", "-c", CONSTRAINTS, "-w", out, src])
    run(pip + ["download", "-q", "--no-deps", "--only-binary=:all:", "-c", CONSTRAINTS, "-d", out]
        + list(DEPENDENCIES))
    found = sorted(os.path.join(out, n) for n in os.listdir(out) if n.endswith(".whl"))
    compiled = [os.path.basename(w) for w in found if not w.endswith("-none-any.whl")]
    if compiled:
        sys.exit("bundle: %s would need a compiler or a platform of its own" % ", ".join(compiled))
    return found


def unpack(wheel, lib):
    # A wheel's modules and its .dist-info (the licence of each dependency), not its scripts.
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.split("/")[0].endswith(".data") or name.endswith((".pyc", "/")):
                continue
            z.extract(name, lib)


def tools_of_the_bridge(stage):
    # -> [{name, description}]: tools/list of the staged bridge serving the simulated board,
    # started through the bundle's own launcher. Its pins go to a file thrown away after it: the
    # staged board is new to the pins on every build (a folder of its own), and would pile up in
    # the user's pins file.
    with tempfile.TemporaryDirectory(prefix="tinymcp-bundle-pins-") as pins:
        env = dict(os.environ, PYTHONPATH="", **{PINS_ENV: os.path.join(pins, "pins.json")})
        return listed_tools(subprocess.Popen(
            [sys.executable, os.path.join(stage, "server", "main.py"), "--board", "sim"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=tempfile.gettempdir(), env=env))


def listed_tools(proc):
    # -> [{name, description}]: every page of tools/list from the bridge process proc, which ends.
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "tinymcp-bundle", "version": "0"}}}
    tools, cursor, rid = [], None, 2
    try:
        send(proc, hello)
        answer(proc, 1)
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        while True:
            send(proc, {"jsonrpc": "2.0", "id": rid, "method": "tools/list",
                        "params": {"cursor": cursor} if cursor else {}})
            page = answer(proc, rid)["result"]
            tools += [{"name": t["name"], "description": t.get("description", "")}
                      for t in page["tools"]]
            cursor, rid = page.get("nextCursor"), rid + 1
            if not cursor:
                return tools
    finally:
        proc.stdin.close()
        proc.wait(60)


def send(proc, msg):
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def answer(proc, rid):
    for line in proc.stdout:
        msg = json.loads(line)
        if msg.get("id") == rid:
            if "result" not in msg:
                sys.exit("bundle: the staged bridge answered %r" % msg)
            return msg
    sys.exit("bundle: the staged bridge ended before answering")


def manifest(meta, tools):
    version = meta["version"]
    args = ["${__dirname}/server/main.py", "--board", "${user_config.board}"]
    env = {"PYTHONPATH": "${__dirname}/server/lib", BOARD_TOKEN_ENV: "${user_config.board_token}"}
    return {
        "manifest_version": "0.3",
        "name": "tinymcp-bridge",
        "display_name": "tinymcp: your boards",
        "version": version,
        "description": "Sensors and outputs of a MicroPython board (USB, network, or the "
                       "simulated board) as MCP tools and resources",
        "long_description": "The tinymcp bridge in front of one board: a MicroPython board on a "
                            "USB serial port, every MicroPython USB board (auto), a board on the "
                            "network (socket://HOST:PORT), or the simulated board (sim), which "
                            "needs no hardware. Needs Python 3.10 or newer.",
        "author": {"name": "the tinymcp authors", "url": meta["url"]},
        "repository": {"type": "git", "url": meta["url"]},
        "homepage": meta["url"],
        "documentation": meta["url"] + "#connect-your-host",
        "icon": "icon.png",
        "license": meta["license"],
        "keywords": ["micropython", "hardware", "sensors", "serial", "iot"],
        "server": {
            "type": "python",
            "entry_point": "server/main.py",
            "mcp_config": {
                "command": "python3", "args": args, "env": env,
                # Windows' installer puts python.exe (and the py launcher) on PATH, not python3
                "platform_overrides": {"win32": {"command": "python", "args": args, "env": env},
                                       "darwin": {"command": "python3", "args": args, "env": env},
                                       "linux": {"command": "python3", "args": args, "env": env}},
            },
        },
        "tools": tools,
        "tools_generated": True,   # a board's own tools are the board's: these are the sim's
        "compatibility": {"platforms": ["darwin", "win32", "linux"],
                          "runtimes": {"python": ">=3.10"}},
        "user_config": {
            "board": {
                "type": "string", "title": "Board",
                "description": "A serial port (COM3, /dev/cu.usbmodem1101, /dev/ttyACM0), auto "
                               "(every MicroPython USB board), a board on the network "
                               "(socket://HOST:PORT), or sim (the simulated board, no hardware)",
                "default": "auto", "required": True},
            "board_token": {
                "type": "string", "title": "Board token",
                "description": "The token a board on the network asks for (its network.json); "
                               "empty for USB boards",
                "default": "", "required": False, "sensitive": True},
        },
    }


def server_json(meta, bundle_name, sha256):
    # The MCP Registry's entry: the PyPI distribution (its README's mcp-name: line proves it
    # ours) and the bundle, as a GitHub release asset.
    version = meta["version"]
    board = {"type": "named", "name": "--port", "description": "A serial port, auto, or "
             "socket://HOST:PORT", "isRequired": True, "default": "auto"}
    token = {"name": BOARD_TOKEN_ENV, "description": "The token a board on the network asks for",
             "isRequired": False, "isSecret": True}
    return {
        "$schema": SCHEMA,
        "name": registry_name(meta["url"]),
        "title": "tinymcp",
        "description": "A MicroPython board's sensors and outputs as MCP tools, over USB or "
                       "the network",
        "repository": {"url": meta["url"], "source": "github"},
        "version": version,
        "packages": [
            {"registryType": "pypi", "identifier": meta["name"], "version": version,
             "transport": {"type": "stdio"}, "packageArguments": [board],
             "environmentVariables": [token]},
            {"registryType": "mcpb", "version": version,
             "identifier": "%s/releases/download/v%s/%s" % (meta["url"], version, bundle_name),
             "fileSha256": sha256, "transport": {"type": "stdio"}},
        ],
    }


def icon_png(size=512):
    # The dashboard's icon (static/icon.svg: rects, straight paths and polylines), drawn into a
    # PNG at the size Claude Desktop asks for: one picture, no image library.
    root = ElementTree.parse(ICON_SVG).getroot()
    scale = size / float(root.get("viewBox").split()[2])
    shapes = []   # (colour, kind, data, bounding box)
    for el in root:
        tag = el.tag.split("}")[-1]
        if tag == "rect":
            x, y, w, h, r = (float(el.get(k, 0)) for k in ("x", "y", "width", "height", "rx"))
            shapes.append((el.get("fill"), "rect", (x, y, x + w, y + h, r), (x, y, x + w, y + h)))
        else:
            width = float(el.get("stroke-width", 1)) / 2
            for (ax, ay), (bx, by) in _segments(tag, el):
                box = (min(ax, bx) - width, min(ay, by) - width, max(ax, bx) + width,
                       max(ay, by) + width)
                shapes.append((el.get("stroke"), "line", ((ax, ay), (bx, by), width), box))
    rows = []
    for py in range(size):
        row = bytearray(b"\0")   # filter: none
        for px in range(size):
            rgba = [0, 0, 0, 0]
            for sy in (0.25, 0.75):
                for sx in (0.25, 0.75):
                    x, y = (px + sx) / scale, (py + sy) / scale
                    colour = None
                    for fill, kind, data, (x0, y0, x1, y1) in shapes:
                        if x0 <= x <= x1 and y0 <= y <= y1 and _inside(kind, data, x, y):
                            colour = fill
                    if colour:
                        hex_ = colour[1:] if len(colour) == 7 else "".join(d * 2 for d in colour[1:])
                        c = int(hex_, 16)
                        for i, v in enumerate(((c >> 16) & 255, (c >> 8) & 255, c & 255, 255)):
                            rgba[i] += v
            row += bytes(v // 4 for v in rgba)
        rows.append(bytes(row))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(
            ">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def _segments(tag, el):
    if tag == "polyline":
        points = [tuple(map(float, p.split(","))) for p in el.get("points").split()]
        return list(zip(points, points[1:]))
    lines, x, y = [], 0.0, 0.0
    words = re.findall(r"[A-Za-z]|-?[0-9.]+", el.get("d"))
    at = 0
    while at < len(words):
        op = words[at]
        if op == "M":
            x, y = float(words[at + 1]), float(words[at + 2])
            at += 3
            continue
        if op not in ("v", "h"):
            raise ValueError("icon.svg: only M, v and h in a path, not %r" % op)
        step = float(words[at + 1])
        end = (x, y + step) if op == "v" else (x + step, y)
        lines.append(((x, y), end))
        x, y = end
        at += 2
    return lines


def _inside(kind, data, x, y):
    if kind == "rect":
        x0, y0, x1, y1, r = data
        if not (x0 <= x <= x1 and y0 <= y <= y1):
            return False
        cx, cy = min(max(x, x0 + r), x1 - r), min(max(y, y0 + r), y1 - r)
        return (x - cx) ** 2 + (y - cy) ** 2 <= r * r
    (ax, ay), (bx, by), width = data
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / float(dx * dx + dy * dy)))
    return (x - ax - t * dx) ** 2 + (y - ay - t * dy) ** 2 <= width * width


def build(out, wheel=None):
    # -> (the .mcpb written, server.json written); wheel: this checkout's, when already built.
    meta = metadata()
    name = "tinymcp-bridge-%s.mcpb" % meta["version"]
    with tempfile.TemporaryDirectory() as work:
        stage = os.path.join(work, "bundle")
        lib = os.path.join(stage, "server", "lib")
        os.makedirs(lib)
        for found in wheels(work, wheel):
            unpack(found, lib)
        with open(os.path.join(stage, "server", "main.py"), "w", encoding="utf-8") as f:
            f.write(LAUNCHER)
        shutil.copy(os.path.join(REPO, "LICENSE"), os.path.join(stage, "LICENSE"))
        with open(os.path.join(stage, "icon.png"), "wb") as f:
            f.write(icon_png())
        with open(os.path.join(stage, "manifest.json"), "w", encoding="utf-8") as f:
            json.dump(manifest(meta, tools_of_the_bridge(stage)), f, indent=2)
            f.write("\n")
        os.makedirs(out, exist_ok=True)
        bundle = os.path.join(out, name)
        with zipfile.ZipFile(bundle, "w", zipfile.ZIP_DEFLATED) as z:
            for here, dirs, files in os.walk(stage):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                for file in sorted(files):
                    path = os.path.join(here, file)
                    z.write(path, os.path.relpath(path, stage).replace(os.sep, "/"))
    with open(bundle, "rb") as f:
        sha256 = hashlib.sha256(f.read()).hexdigest()
    entry = os.path.join(out, "server.json")
    with open(entry, "w", encoding="utf-8") as f:
        json.dump(server_json(meta, name, sha256), f, indent=2)
        f.write("\n")
    return bundle, entry


def main(argv=None):
    parser = argparse.ArgumentParser(description="Build tinymcp-bridge's MCP Bundle (.mcpb) "
                                     "and its MCP Registry server.json.")
    parser.add_argument("--out", default=os.path.join(REPO, "dist"),
                        help="the folder to write them into (default dist/)")
    parser.add_argument("--wheel", metavar="FILE",
                        help="a wheel of this checkout already built (python -m build --wheel), "
                             "used as it is rather than built again")
    args = parser.parse_args(argv)
    wheel = os.path.abspath(args.wheel) if args.wheel else None
    if wheel and not re.match(r"tinymcp_hw-.*-py3-none-any\.whl$", os.path.basename(wheel)):
        parser.error("--wheel %s: not a wheel of %s (tinymcp_hw-VERSION-py3-none-any.whl)"
                     % (args.wheel, DISTRIBUTION))
    if wheel and not os.path.isfile(wheel):
        parser.error("--wheel %s: no such file" % args.wheel)
    bundle, entry = build(os.path.abspath(args.out), wheel)
    print("bundle: wrote %s and %s" % (bundle, entry))
    return 0


if __name__ == "__main__":
    sys.exit(main())
