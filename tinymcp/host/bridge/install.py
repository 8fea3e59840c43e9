# tinymcp-bridge --install HOST / --print-config HOST: the bridge, with the options given, as one
# server entry in a desktop host's own MCP config file, every other thing in that file kept.
import base64
import json
import os
import re
import shlex
import shutil
import sys
import sysconfig
import tempfile

from tinymcp.host.bridge.link import PortError, is_url

from tinymcp.host.bridge.hostconfigs import HOSTS
from tinymcp.host.bridge.options import BOARD_TOKEN_ENV, build_parser, checked

SECRETS = (BOARD_TOKEN_ENV, "TINYMCP_MQTT_PASSWORD")   # env values --print-config never shows
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# Options of a bridge a host starts on stdio; the rest have no place in its config.
NOT_INSTALLED = (("http", "--http"), ("token", "--token"), ("demo", "--demo"),
                 ("demo_seconds", "--demo-seconds"), ("list_ports", "--list-ports"),
                 ("no_auth", "--no-auth"), ("oauth_issuer", "--oauth-issuer"),
                 ("public_url", "--public-url"), ("discover", "--discover"))
# Taken out of the arguments written: ours, and the token (written as env instead).
# --trust is a one-shot run (accept and exit): a host starting it would never be served.
TAKEN_OUT = ("--install", "--print-config", "--name", "--board-token", "--trust")


class ConfigRefused(Exception):
    pass


def config_path(host, platform, environ):
    # -> HOST's config file in the layout of platform ("darwin", "win32", anything else: Linux),
    # home and APPDATA taken from environ.
    layout = "darwin" if platform == "darwin" else "win32" if platform == "win32" else "linux"
    where = HOSTS[host].files.get(layout) or HOSTS[host].files["*"]
    home = (environ.get("USERPROFILE") if layout == "win32" else None) or environ.get("HOME") \
        or os.path.expanduser("~")
    roots = {"~": home,
             "%APPDATA%": environ.get("APPDATA") or os.path.join(home, "AppData", "Roaming"),
             "$XDG": environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")}
    root, *parts = where.split("/")
    return os.path.join(roots[root], *parts)


def bridge_command(executable=sys.executable, windows=os.name == "nt"):
    # -> [command, leading args]: the installed console script by its absolute path (beside this
    # Python in a venv, in Scripts\ beside a Windows system Python, or in the scripts folders of
    # this Python), else this Python running the module.
    script = "tinymcp-bridge.exe" if windows else "tinymcp-bridge"
    here = os.path.dirname(os.path.abspath(executable))
    folders = [here, os.path.join(here, "Scripts")]
    if executable == sys.executable:
        folders += [sysconfig.get_path("scripts"),
                    sysconfig.get_path("scripts", sysconfig.get_preferred_scheme("user"))]
    for folder in folders:
        path = os.path.join(folder, script)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return [path]
    return [os.path.abspath(executable), "-m", "tinymcp.host.bridge"]


def passed_on(argv, specs):
    # -> the bridge options of argv as written, minus TAKEN_OUT, each --sim board and the
    # --pins file given by a path made absolute (the host starts the bridge in a folder of its
    # own choosing).
    sims = iter([spec for spec in specs if spec.kind == "sim"])
    out = []
    i = 0
    while i < len(argv):
        option, eq, _ = argv[i].partition("=")
        i += 1
        if option in TAKEN_OUT:
            i += 0 if eq else 1
        elif option == "--sim":
            # argparse took the next word as the board unless it looks like an option
            if not eq and i < len(argv) and not argv[i].startswith("-"):
                i += 1
            board = sim_given(next(sims))
            out += ["--sim=" + board] if eq else ["--sim"] if board == "sim" else ["--sim", board]
        elif option == "--pins":
            given = argv[i - 1][len("--pins="):] if eq else argv[i] if i < len(argv) else ""
            i += 0 if eq else 1
            out += ["--pins", os.path.abspath(given)]
        else:
            out.append(argv[i - 1])
    return out


def sim_given(spec):
    # --sim's value for a host's config (and the demo's snippet): a bundled board's name stays
    # a name; a board folder or file is given by its absolute path.
    # An unknown board is a PortError, as it is when the bridge starts.
    from tinymcp.host.deploy import DeployError
    from tinymcp.host.deploy.tree import device_tree
    try:
        tree = device_tree()
        found = tree.board(spec.target)
    except DeployError as e:
        raise PortError(str(e)) from None
    if found.main == os.path.join(tree.boards_dir, spec.target, "main.py"):
        return spec.given
    return spec.given[:len(spec.given) - len(spec.target)] + os.path.abspath(spec.target)


def entry(host, command, env):
    # -> the server entry for HOST: command, args (and "type", "env" where they belong).
    shaped = {"type": "stdio"} if HOSTS[host].typed else {}
    shaped.update(command=command[0], args=command[1:])
    if env:
        shaped["env"] = env
    return shaped


def install_lines(host, name, server, platform):
    # -> (how, [lines]): what adds the entry to HOST by the host's own means: VS Code's
    # `code --add-mcp` command and vscode: link, Cursor's install link, Claude Code's
    # `claude mcp add-json` (user scope: ~/.claude.json's mcpServers); (None, []) for Claude
    # Desktop. Each carries the entry exactly as --install writes it (secrets as the
    # placeholders --print-config shows).
    from urllib.parse import quote, urlencode
    compact = (",", ":")

    def quoted(word):
        if platform == "win32":   # as Windows programs split their command line
            import subprocess
            return subprocess.list2cmdline([word])
        return shlex.quote(word)
    if host == "vscode":
        added = json.dumps(dict({"name": name}, **server), separators=compact)
        return "this command, or by opening this link", [
            "code --add-mcp " + quoted(added), "vscode:mcp/install?" + quote(added, safe="")]
    if host == "cursor":
        config = base64.b64encode(json.dumps(server, separators=compact).encode()).decode()
        return "by opening this link", ["cursor://anysphere.cursor-deeplink/mcp/install?"
                                        + urlencode({"name": name, "config": config})]
    if host == "claude-code":
        return "this command", ["claude mcp add-json --scope user %s %s" % (
            quoted(name), quoted(json.dumps(server, separators=compact)))]
    return None, []


def read_config(path):
    # -> the file's top-level object ({} for a missing or empty file). Trailing commas (VS Code
    # writes JSON with comments, JSONC) are read; comments are refused, as rewriting would lose
    # them. Whatever cannot be read is ConfigRefused, and the file is left as it is.
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigRefused("cannot read %s (%s)" % (path, getattr(e, "strerror", None) or e))
    if not text.strip():
        return {}
    try:
        config = json.loads(text)
    except ValueError:
        plain = _without_trailing_commas(text)
        if plain is None:
            raise ConfigRefused("%s has comments, which rewriting it would lose; left as it is: add "
                          "the entry --print-config shows yourself" % path) from None
        try:
            config = json.loads(plain)   # the same lines: only commas were taken out
        except ValueError as e:
            raise ConfigRefused("%s is not JSON (line %d: %s); left as it is" % (path, e.lineno, e.msg)) \
                from None
    if type(config) is not dict:
        raise ConfigRefused("%s holds no JSON object; left as it is" % path)
    return config


def _without_trailing_commas(text):
    # -> text without the commas that close an object or array; None if it has a comment.
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == '"':   # a string, escapes and all
            end = i + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            out.append(text[i:end + 1])
            i = end + 1
            continue
        if text.startswith("//", i) or text.startswith("/*", i):
            return None
        if c != "," or text[i + 1:].lstrip()[:1] not in ("}", "]"):
            out.append(c)
        i += 1
    return "".join(out)


def write_atomically(path, text, private):
    # A temporary file beside path, then os.replace: the host never reads half a file. The mode
    # of the file replaced is kept (0600 for a new one, or one holding a secret).
    path = os.path.realpath(path)   # a symlinked config (dotfiles) stays a symlink
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=folder, prefix="." + os.path.basename(path) + ".")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if os.path.exists(path) and not private:
            shutil.copymode(path, temp)
        os.replace(temp, path)
    except BaseException:
        if os.path.exists(temp):
            os.remove(temp)
        raise


def merge(path, host, name, server, out, err):
    # Merges {name: server} into HOST's servers in the file at path, after a backup (PATH.bak).
    # Nothing is written when the entry is there already.
    config = read_config(path)
    servers = config.setdefault(HOSTS[host].key, {})
    if type(servers) is not dict:
        raise ConfigRefused("%s: %r is not an object; left as it is" % (path, HOSTS[host].key))
    if servers.get(name) == server:
        print("tinymcp-bridge: %r is already in %s as it would be written; nothing changed"
              % (name, path), file=out)
        return
    if name in servers:
        print("tinymcp-bridge: replacing the %r entry that was there:\n%s"
              % (name, _shown(servers[name])), file=err)
    servers[name] = server
    backup = None
    if os.path.exists(path):
        backup = path + ".bak"
        shutil.copy2(path, backup)
    write_atomically(path, json.dumps(config, indent=2, ensure_ascii=False) + "\n",
                     private="env" in server)
    print("tinymcp-bridge: wrote %r into %s of %s%s:\n%s\n%s: %s" % (
        name, HOSTS[host].key, path, " (the file before: %s)" % backup if backup else "",
        _shown(server), HOSTS[host].title, HOSTS[host].then), file=out)


def _shown(server):
    # An entry as the terminal shows it: its env values (tokens) hidden.
    env = server.get("env") if type(server) is dict else None
    if type(env) is dict:
        server = dict(server, env={key: "(hidden)" for key in env})
    return json.dumps(server, indent=2)


def main(argv, platform=sys.platform, environ=os.environ, out=None, err=None):
    # tinymcp-bridge --install HOST | --print-config HOST [--name NAME] [bridge options]; the
    # layout of platform, home and APPDATA from environ (tests give each OS's, in a fake home).
    out, err = out or sys.stdout, err or sys.stderr
    parser = build_parser()
    parser.allow_abbrev = False   # the options go into a file people read: spelled in full
    args = parser.parse_args(argv)
    if args.install and args.print_config:
        parser.error("--install or --print-config, not both")
    for attr, option in NOT_INSTALLED:
        if getattr(args, attr) is not None and getattr(args, attr) is not False:
            parser.error("%s has no place in a host's config: the host starts the bridge "
                         "itself, on stdio" % option)
    args.name = "tinymcp" if args.name is None else args.name
    if not NAME.match(args.name):
        parser.error("--name %r: letters, digits, _ . and -, at most 64" % args.name)
    specs, _several = checked(parser, args)
    host = args.install or args.print_config
    path = config_path(host, platform, environ)
    token = args.board_token
    if token is None and any((spec.kind == "port" and is_url(spec.target))
                             or spec.kind == "discover" for spec in specs):
        token = environ.get(BOARD_TOKEN_ENV) or None
    env = {BOARD_TOKEN_ENV: token} if token else {}
    if args.mqtt:   # the broker's login, certificate and CA go where the host starts the bridge
        from tinymcp.host.bridge.mqtt import CA_ENV, CERT_ENV, KEY_ENV, PASSWORD_ENV, USERNAME_ENV
        env.update((name, environ[name]) for name in (USERNAME_ENV, PASSWORD_ENV, CA_ENV,
                                                      CERT_ENV, KEY_ENV) if environ.get(name))
    try:
        server = entry(host, bridge_command() + passed_on(argv, specs), env or None)
        if args.print_config:
            # A terminal is seen and copied (screens, logs, pastes): secrets as placeholders.
            hidden = sorted(name for name in env if name in SECRETS)
            shown = dict(server, env=dict(env, **{name: "<set %s>" % name for name in hidden})) \
                if hidden else server
            print(json.dumps({HOSTS[host].key: {args.name: shown}}, indent=2), file=out)
            print("tinymcp-bridge: this goes into %s" % path, file=err)
            how, lines = install_lines(host, args.name, shown, platform)
            if lines:
                print("tinymcp-bridge: or add it to %s with %s:\n%s"
                      % (HOSTS[host].title, how, "\n".join(lines)), file=err)
            if hidden:
                print("tinymcp-bridge: put the value of $%s where \"<set ...>\" stands "
                      "(--install %s writes it, into a file readable by you only)"
                      % (", $".join(hidden), host), file=err)
            return 0
        merge(path, host, args.name, server, out, err)
        if token:
            print("tinymcp-bridge: the board token is in %s in clear, as $%s of the entry "
                  "(not on the command line, which every local user can read); the file is "
                  "readable by you only" % (path, BOARD_TOKEN_ENV), file=err)
        if "TINYMCP_MQTT_PASSWORD" in env:
            print("tinymcp-bridge: the broker's password is in %s in clear, as "
                  "$TINYMCP_MQTT_PASSWORD of the entry; the file is readable by you only"
                  % path, file=err)
        return 0
    except (ConfigRefused, PortError) as e:
        print("tinymcp-bridge: %s" % e, file=err)
        return 2
    except OSError as e:
        print("tinymcp-bridge: cannot write %s (%s); left as it was"
              % (e.filename or path, e.strerror or e), file=err)
        return 2
