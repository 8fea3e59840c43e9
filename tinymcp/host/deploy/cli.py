# tinymcp-deploy's command line and the deploy sequence: build, interrupt, check, copy, reset, verify.
import argparse
import json
import os
import sys
import tempfile
import time

from tinymcp.host.args import Parser
from tinymcp.host.deploy import DeployError
from tinymcp.host.deploy import board as board_end
from tinymcp.host.deploy import network, starter
from tinymcp.host.deploy import romfs as romfs_image
from tinymcp.host.deploy.board import MpremoteBoard, check_mpy, check_space, find_port, plan, probe_port, verify
from tinymcp.host.deploy.files import CBOR_LINK, STATELESS, network_mode, repo_root
from tinymcp.host.deploy.manifest import write_manifests
from tinymcp.host.deploy.tree import device_tree
from tinymcp.host.deploy.mpy import DEFAULT_MPY, MPY_VERSIONS, build, print_sizes


# How each network mode is said beside the file count.
MODES = {"usb": "USB: no network.json, no network code", "tcp": "Wi-Fi TCP per network.json",
         "mqtt": "Wi-Fi MQTT per network.json"}


def deploy(tree, board, port, baud, build_dir, mpy_version, hard_reset=False, out=None, extra=(),
           source_lines=True, leave_out=(), romfs=None, wifi=None, usb=False, board_files=()):
    # tree: a DeviceTree; board: a MpremoteBoard. romfs: True (--romfs), False (--no-romfs), None (the
    # ROMFS partition when the board has a usable one). wifi: (network.json bytes, token) to
    # serve on Wi-Fi (token None: through an MQTT broker); usb: remove it, back to USB.
    # board_files: [(device path, bytes)] copied beside network.json (its certificates).
    out = out or sys.stdout
    port = port or find_port()
    probe_port(port, baud)
    b = MpremoteBoard(port, baud)
    try:
        b.interrupt()
        # The network code follows the board's network.json: the one written now, else the one
        # it holds (a board deployed earlier with --wifi keeps serving on the network).
        mode = ("usb" if usb else network_mode(json.loads(wifi[0])) if wifi is not None
                else network_mode(b.network_settings(network.SETTINGS)))
        part = b.romfs_survey(romfs_image.STAMP)
        made, inside, image, erase = _build(tree, board, build_dir, mpy_version, extra,
                                            source_lines, leave_out, mode, part, romfs, out)
        files = []   # (device path, size, bytes), main.py last
        if wifi is not None:
            files.append((network.SETTINGS, len(wifi[0]), wifi[0]))
        files += [(dest, len(data), data) for dest, data in board_files]
        for dest, size, _src in made:
            with open(os.path.join(build_dir, *dest.split("/")), "rb") as f:
                files.append((dest, size, f.read()))
        gone = (network.SETTINGS,) + tuple(network.BOARD_FILES.values()) if usb else ()
        if image is not None:
            _copy(b, port, mpy_version, files, out, (image, part["size"]),
                  romfs_image.top_level(inside), gone)
        else:
            _copy(b, port, mpy_version, files, out, gone=gone,
                  erase=part["size"] if erase else 0)
        if hard_reset:
            b.hard_reset()
            b.close()
            b = None
            time.sleep(1.0)   # let a USB board drop off the bus before waiting for it
        else:
            b.soft_reset()
        out.write("reset; waiting for initialize on %s%s\n"
                  % (port, " or on the network" if wifi else ""))
        info, where = verify(port, baud, board_end.VERIFY_TIMEOUT_S * (4 if wifi else 1),
                             None if b is None else b.t.serial, wifi[1] if wifi else None,
                             bool(wifi) and wifi[1] is None)
    finally:
        if b is not None:
            b.close()
    if info is None:  # through a broker: its own line says it is there
        out.write("ok: the board is on %s\n" % where)
    else:
        out.write("ok: %s %s answers on %s\n" % (info.get("name", "?"), info.get("version", "?"),
                                                 where))


def _build(tree, board, build_dir, mpy_version, extra, source_lines, leave_out, mode, part, asked,
           out):
    # Build for the filesystem or for the ROMFS partition (romfs.choose, given the board's
    # survey part, None for none) and print the header line, which says which and why.
    # -> (files to copy, as build() lists them: only main.py for ROMFS; the files inside the
    # image, the image or None, whether to erase the partition's tinymcp image).
    args = (tree, board, build_dir, mpy_version, extra, source_lines, leave_out, mode)
    image = None
    if part is not None and asked is not False and romfs_image.held(part) in ("empty", "tinymcp"):
        inside, how, image = romfs_image.build_image(*args)
    use, reason, erase = romfs_image.choose(part, None if image is None else len(image), asked)
    if use:
        main_py = os.path.getsize(os.path.join(build_dir, "main.py"))
        out.write("%s: %d files (%s, %s), .mpy v%s, as a %d B ROMFS image and main.py, in %s; %s\n"
                  % (board.name, len(inside) + 1, how, MODES[mode], mpy_version, len(image),
                     build_dir, reason))
        return [("main.py", main_py, main_py)], inside, image, False
    made, how = build(*args)
    out.write("%s: %d files (%s, %s), .mpy v%s, in %s; %s\n"
              % (board.name, len(made), how, MODES[mode], mpy_version, build_dir, reason))
    return made, [], None, erase


def _copy(b, port, mpy_version, files, out, image=None, shadows=(), gone=(), erase=0):
    # Check the version and the space first: nothing is written to a board that cannot load it.
    # With a ROMFS image, (bytes, partition size): written first, then what would shadow it on
    # the filesystem goes (tinymcp/, ports/ and anything named like the image's top level),
    # then main.py. erase: the size of a ROMFS partition whose tinymcp image these files
    # replace; it is erased first (a port that puts /rom before the filesystem on sys.path
    # would run it instead).
    dirs = sorted({d for dest, _size, _data in files for d in _parents(dest)})
    word, free, block, existing = b.inspect([f[0] for f in files] + dirs + list(shadows)
                                            + list(gone))
    board_mpy = check_mpy(word, mpy_version)
    copy, stale = plan(files, existing)
    stale = stale + [p for p in gone if existing.get(p, (-1,))[0] >= 0]
    gone_dirs = []
    if image is not None:
        stale = sorted(set(stale) | {p for p in shadows if existing.get(p, (-1,))[0] >= 0})
        gone_dirs = sorted((p for p, (size, _h) in existing.items()
                            if size < 0 and p.split("/")[0] in ("tinymcp", "ports") + tuple(shadows)),
                           key=lambda p: -p.count("/"))
    new_dirs = [d for d in dirs if d not in existing]
    check_space(copy, stale, existing, free, block, len(new_dirs))
    if image is not None:
        romfs_image.write(b, image[0], image[1], out)
    if erase:
        b.romfs_erase(erase)
        out.write("  erased the tinymcp image in the ROMFS partition: the files replace it\n")
    out.write("%s: MicroPython .mpy v%s, %d B free; copying %d of %d files\n"
              % (port, board_mpy, free, len(copy), len(files)))
    for path in stale:
        b.remove(path)
        out.write("  removed %s (%s)\n" % (path, "the ROMFS has it" if image is not None
                                            else "not in this build"))
    for path in gone_dirs:
        b.rmdir(path)
    b.mkdirs(new_dirs)
    for i, (dest, size, data) in enumerate(copy):
        _copy_one(b, "  [%d/%d] %s %d B" % (i + 1, len(copy), dest, size), dest, data, out)


def _dry_run(tree, board, a, extra, leave_out):
    # --dry-run --port: ask the board (its ROMFS partition, its network.json), build what a
    # deploy would, print the sizes, and let the board serve again. Nothing is written to it.
    probe_port(a.port, a.baud)
    b = MpremoteBoard(a.port, a.baud)
    try:
        b.interrupt()
        mode = ("usb" if a.usb else "mqtt" if a.mqtt else "tcp" if a.wifi is not None
                else network_mode(b.network_settings(network.SETTINGS)))
        part = b.romfs_survey(romfs_image.STAMP)
        b.soft_reset()
    finally:
        b.close()
    made, inside, _image, _erase = _build(tree, board, a.build, a.mpy_version, extra,
                                          not a.no_source_lines, leave_out, mode, part, a.romfs,
                                          sys.stdout)
    print_sizes(inside + made)
    return 0


def _parents(path):
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _copy_one(b, label, dest, data, out):
    # A percentage while it copies on a terminal; one line per file either way.
    tty = getattr(out, "isatty", lambda: False)()

    def progress(done, whole):
        if tty:
            out.write("\r%s %3d%%" % (label, 100 * done // max(whole, 1)))
            out.flush()
    b.write(dest, data, progress)
    out.write(("\r" if tty else "") + label + " ok\n")
    out.flush()


def main(argv=None):
    p = Parser(prog="tinymcp-deploy",
               description="Compile what a board needs to .mpy and copy it with mpremote.")
    p.add_argument("--board", metavar="NAME|PATH",
                   help="a bundled board (sim, rpi_pico, esp32, ...), or a folder holding main.py, "
                        "or a board's .py file")
    p.add_argument("--new", metavar="DIR", help="write a starter board, DIR/main.py")
    p.add_argument("--port", help="the board's serial device (default: the one USB serial port)")
    p.add_argument("--baud", type=int, default=115200)
    p.add_argument("--build", metavar="DIR", help="write the compiled tree here (default: a temp dir)")
    p.add_argument("--dry-run", action="store_true", help="only build and print the sizes")
    p.add_argument("--mpy-version", default=DEFAULT_MPY, choices=sorted(MPY_VERSIONS),
                   help="the board's .mpy version (default %(default)s: MicroPython 1.23 and later)")
    p.add_argument("--hard-reset", action="store_true",
                   help="machine.reset() after copying instead of a soft reboot")
    p.add_argument("--link", choices=("json", "cbor"), default="json",
                   help="cbor: also ship the CBOR link mode (tinymcp-bridge --link auto|cbor)")
    p.add_argument("--no-source-lines", action="store_true",
                   help="leave line numbers out of the .mpy files (about 6%% smaller)")
    p.add_argument("--handshake-only", action="store_true",
                   help="leave out the 2026-07-28 revision (tinymcp/stateless): clients fall back to "
                        "initialize, the bridge never needs it")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--romfs", action="store_true", default=None,
                       help="the compiled tree in the board's ROMFS partition or fail with the "
                            "reason (the default takes the partition when it is there, large "
                            "enough, and empty or holding an earlier tinymcp image); main.py "
                            "stays on the filesystem")
    where.add_argument("--no-romfs", dest="romfs", action="store_false",
                       help=".mpy files on the filesystem even where the board has a ROMFS "
                            "partition (its tinymcp image is erased)")
    p.set_defaults(romfs=None)
    p.add_argument("--wifi", metavar="SSID",
                   help="serve on this Wi-Fi network instead of USB (ESP32, Pico W): writes "
                        "network.json on the board (docs/network.md)")
    p.add_argument("--wifi-password", default=os.environ.get("TINYMCP_WIFI_PASSWORD"),
                   help="the network's password (default $TINYMCP_WIFI_PASSWORD: the "
                        "environment keeps it out of the process list)")
    p.add_argument("--board-token", default=os.environ.get("TINYMCP_BOARD_TOKEN"),
                   help="the token a client must send first (default $TINYMCP_BOARD_TOKEN; "
                        "without one a new token is made and printed once)")
    p.add_argument("--listen-port", type=int, default=8765, help="the board's TCP port")
    p.add_argument("--mqtt", metavar="URL",
                   help="with --wifi: serve through this MQTT broker (mqtt://HOST[:PORT]) instead "
                        "of listening; the login from $TINYMCP_MQTT_USERNAME and "
                        "$TINYMCP_MQTT_PASSWORD (docs/network.md)")
    p.add_argument("--mqtt-cert", metavar="FILE",
                   help="with --mqtt mqtts://: the board's client certificate (PEM; its CN the "
                        "board's id), copied to the board: the broker knows the board by it "
                        "(docs/fleet.md)")
    p.add_argument("--mqtt-key", metavar="FILE",
                   help="with --mqtt-cert: its private key (PEM, unencrypted), copied to the board")
    p.add_argument("--mqtt-ca", metavar="FILE",
                   help="with --mqtt mqtts://: the CA the board checks its broker's certificate "
                        "against (without it a board checks none), copied to the board")
    p.add_argument("--usb", action="store_true",
                   help="remove network.json: the board serves over USB again")
    p.add_argument("--manifests", action="store_true", help="rewrite the mip package*.json files")
    p.add_argument("--root", help=argparse.SUPPRESS)
    try:
        a = p.parse_args(argv)
    except SystemExit as e:   # --help, or a bad argument (already reported on one line)
        return e.code
    try:
        if a.new:
            starter.write(a.new, sys.stdout)
            return 0
        tree = device_tree(a.root)
        if a.manifests:
            write_manifests(repo_root(a.root))
            return 0
        if not a.board:
            raise DeployError("--board is required (boards: %s; or a folder holding main.py, or "
                              "a board's .py file)" % ", ".join(tree.boards()))
        board = tree.board(a.board)
        extra = CBOR_LINK if a.link == "cbor" else ()
        leave_out = (STATELESS,) if a.handshake_only else ()
        if a.dry_run:
            if not a.build:
                raise DeployError("--dry-run needs --build DIR")
            if a.port:   # a board to ask: what a deploy would choose, and for its network.json
                return _dry_run(tree, board, a, extra, leave_out)
            # No board to ask: the image for the network.json --wifi [--mqtt] would write.
            mode = "usb" if a.wifi is None else "mqtt" if a.mqtt else "tcp"
            if a.romfs:
                inside, how, image = romfs_image.build_image(tree, board, a.build, a.mpy_version,
                                                             extra, not a.no_source_lines,
                                                             leave_out, mode)
                print("%s: %d files (%s, %s), .mpy v%s, in %s: %s (%d B) and main.py"
                      % (board.name, len(inside) + 1, how, MODES[mode], a.mpy_version, a.build,
                         romfs_image.IMAGE, len(image)))
                main_py = os.path.getsize(os.path.join(a.build, "main.py"))
                print_sizes(inside + [("main.py", main_py, main_py)])
                return 0
            made, how = build(tree, board, a.build, a.mpy_version, extra,
                              not a.no_source_lines, leave_out, mode)
            print("%s: %d files (%s, %s), .mpy v%s, in %s"
                  % (board.name, len(made), how, MODES[mode], a.mpy_version, a.build))
            print_sizes(made)
            return 0
        if a.wifi is not None and a.usb:
            raise DeployError("--wifi and --usb contradict each other")
        if a.mqtt is not None and a.wifi is None:
            raise DeployError("--mqtt needs --wifi SSID: the board reaches its broker on Wi-Fi")
        tls = network.tls_files(a.mqtt, a.mqtt_cert, a.mqtt_key, a.mqtt_ca)
        wifi = (network.settings(a.wifi, a.wifi_password, a.board_token, a.listen_port,
                                 sys.stdout, a.mqtt, {field: dest for field, dest, _ in tls})
                if a.wifi is not None else None)
        options = dict(extra=extra, source_lines=not a.no_source_lines, leave_out=leave_out,
                       romfs=a.romfs, wifi=wifi, usb=a.usb,
                       board_files=[(dest, data) for _, dest, data in tls])
        if a.build:
            deploy(tree, board, a.port, a.baud, a.build, a.mpy_version, a.hard_reset, **options)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                deploy(tree, board, a.port, a.baud, tmp, a.mpy_version, a.hard_reset, **options)
        return 0
    except (DeployError, OSError) as e:   # OSError: an unwritable --build, a full disk
        sys.stdout.flush()
        sys.stderr.write("tinymcp-deploy: %s\n" % e)
        return 2
