# tinymcp-bridge --install HOST / --print-config HOST: each host's own file in each OS's layout
# (a fake home and APPDATA), merged without losing anything, and a written entry that starts.
import json
import os
import stat
import subprocess
import sys

import pytest

from tests.bridge.conftest import REPO, bridge_script, clean_env
from tinymcp.host import lineclient
from tinymcp.host.bridge import install

# The contract's places, spelled out again here so that a slip in the host table fails.
PLACES = {
    ("claude-desktop", "darwin"):
        "HOME/Library/Application Support/Claude/claude_desktop_config.json",
    ("claude-desktop", "win32"): "APPDATA/Claude/claude_desktop_config.json",
    ("claude-desktop", "linux"): "HOME/.config/Claude/claude_desktop_config.json",
    ("vscode", "darwin"): "HOME/Library/Application Support/Code/User/mcp.json",
    ("vscode", "win32"): "APPDATA/Code/User/mcp.json",
    ("vscode", "linux"): "HOME/.config/Code/User/mcp.json",
    ("cursor", "darwin"): "HOME/.cursor/mcp.json",
    ("cursor", "win32"): "HOME/.cursor/mcp.json",
    ("cursor", "linux"): "HOME/.cursor/mcp.json",
    ("claude-code", "darwin"): "HOME/.claude.json",
    ("claude-code", "win32"): "HOME/.claude.json",
    ("claude-code", "linux"): "HOME/.claude.json",
}
KEY = {"claude-desktop": "mcpServers", "vscode": "servers", "cursor": "mcpServers",
       "claude-code": "mcpServers"}
OTHER = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"],
         "env": {"LEVEL": "3"}}
BOARD = """import sys
sys.path.insert(0, %r)
from tinymcp import Server

def build():
    server = Server("myboard", "1.0.0")

    @server.tool("hello", "Says hello.", read_only=True)
    def hello():
        return "hello from myboard"

    return server

if __name__ == "__main__":
    from ports import serve
    serve(build())
""" % REPO


def fake_os(tmp_path, platform):
    # -> (environ, {"HOME": home, "APPDATA": appdata}) for platform's layout. On Windows the
    # home is USERPROFILE: a HOME set there (Git Bash) is not it.
    home, appdata = tmp_path / "home", tmp_path / "roaming"
    if platform == "win32":
        environ = {"USERPROFILE": str(home), "HOME": str(tmp_path / "not-home"),
                   "APPDATA": str(appdata)}
    else:
        environ = {"HOME": str(home)}
    return environ, {"HOME": str(home), "APPDATA": str(appdata)}


def place(host, platform, roots):
    root, rest = PLACES[host, platform].split("/", 1)
    return os.path.join(roots[root], *rest.split("/"))


def run_main(argv, platform="linux", environ=None, capsys=None):
    # -> (exit status, stdout, stderr) of install.main in this process.
    try:
        status = install.main(argv, platform=platform, environ=environ or {})
    except SystemExit as e:
        status = e.code
    out, err = capsys.readouterr()
    return status, out, err


def one_line_refusal(status, out, err, *words):
    assert status == 2, (out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0], lines[0]


def files(folder):
    return {os.path.join(top, name) for top, _dirs, names in os.walk(folder) for name in names}


def executable(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


@pytest.mark.parametrize("platform", ["darwin", "win32", "linux"])
@pytest.mark.parametrize("host", sorted(KEY))
def test_each_host_on_each_os_gets_the_bridge_in_its_own_file(tmp_path, capsys, host, platform):
    environ, roots = fake_os(tmp_path, platform)
    path = place(host, platform, roots)
    os.makedirs(os.path.dirname(path))
    before = {"theme": "dark", KEY[host]: {"everything": OTHER}, "numStartups": 12}
    with open(path, "w") as f:
        json.dump(before, f, indent=4)
    original = open(path).read()

    status, out, err = run_main(["--install", host, "--sim"], platform, environ, capsys)

    assert status == 0, err
    after = json.load(open(path))
    assert after["theme"] == "dark" and after["numStartups"] == 12   # the rest of the file
    assert after[KEY[host]]["everything"] == OTHER                   # the other server
    written = after[KEY[host]]["tinymcp"]
    assert executable(written["command"]) and os.path.isabs(written["command"])
    assert written["args"][-1:] == ["--sim"]
    if host in ("vscode", "claude-code"):
        assert written["type"] == "stdio"
    else:
        assert "type" not in written
    assert open(path + ".bak").read() == original
    assert path in out
    assert files(tmp_path) == {path, path + ".bak"}   # and nothing anywhere else


@pytest.mark.parametrize("host", sorted(KEY))
def test_a_missing_file_and_its_folders_are_created_without_a_backup(tmp_path, capsys, host):
    environ, roots = fake_os(tmp_path, "linux")
    path = place(host, "linux", roots)

    status, _out, err = run_main(["--install", host, "--sim"], "linux", environ, capsys)

    assert status == 0, err
    assert list(json.load(open(path))) == [KEY[host]]
    assert not os.path.exists(path + ".bak")


def test_an_empty_file_is_an_empty_config(tmp_path, capsys):
    environ, roots = fake_os(tmp_path, "darwin")
    path = place("cursor", "darwin", roots)
    os.makedirs(os.path.dirname(path))
    open(path, "w").close()

    assert run_main(["--install", "cursor", "--sim"], "darwin", environ, capsys)[0] == 0
    assert list(json.load(open(path))["mcpServers"]) == ["tinymcp"]


def test_the_console_script_writes_an_entry_a_host_can_start_from_anywhere(tmp_path):
    # The real command in a fake home, a board folder given relative to where it runs; then the
    # entry as a host uses it: its command and args, started in another folder.
    home, work, elsewhere = tmp_path / "home", tmp_path / "work", tmp_path / "elsewhere"
    for folder in (home, work / "myboard", elsewhere):
        folder.mkdir(parents=True)
    (work / "myboard" / "main.py").write_text(BOARD)
    env = {k: v for k, v in clean_env(HOME=str(home)).items()
           if k not in ("XDG_CONFIG_HOME", "APPDATA")}

    done = subprocess.run([bridge_script(), "--install", "claude-code", "--sim", "./myboard",
                           "--timeout", "20"], cwd=work, env=env, capture_output=True,
                          timeout=60, stdin=subprocess.DEVNULL)

    assert done.returncode == 0, done.stderr
    server = json.load(open(home / ".claude.json"))["mcpServers"]["tinymcp"]
    assert server["command"] == bridge_script() and executable(server["command"])
    assert server["args"] == ["--sim", str(work / "myboard"), "--timeout", "20"]
    client = lineclient.LineClient.spawn([server["command"]] + server["args"], cwd=elsewhere,
                                         env=dict(env, **server.get("env", {})))
    try:
        reply = client.initialize()
        assert reply["result"]["protocolVersion"] == "2025-11-25", reply
        tools = client.request("tools/list")["result"]["tools"]
        assert [tool["name"] for tool in tools if tool["name"] == "hello"] == ["hello"]
        said = client.call("hello")["result"]["content"][0]["text"]
        assert said == "hello from myboard"
    finally:
        client.close()


def test_print_config_prints_the_entry_install_writes_and_writes_nothing(tmp_path, capsys):
    environ, roots = fake_os(tmp_path, "win32")
    path = place("vscode", "win32", roots)
    argv = ["--sim", "--log-level", "info", "--name", "board"]

    status, out, err = run_main(["--print-config", "vscode"] + argv, "win32", environ, capsys)

    assert status == 0 and not os.path.exists(tmp_path / "roaming")
    printed = json.loads(out)
    assert list(printed) == ["servers"] and list(printed["servers"]) == ["board"]
    said = err.strip().splitlines()
    assert said[0] == "tinymcp-bridge: this goes into %s" % path
    assert said[1] == "tinymcp-bridge: or add it to VS Code with this command, or by opening " \
        "this link:" and said[2].startswith("code --add-mcp ") and len(said) == 4
    assert run_main(["--install", "vscode"] + argv, "win32", environ, capsys)[0] == 0
    assert json.load(open(path)) == printed


def test_installing_twice_leaves_one_entry_and_the_file_as_it_was(tmp_path, capsys):
    environ, roots = fake_os(tmp_path, "linux")
    path = place("claude-desktop", "linux", roots)
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        json.dump({"mcpServers": {"everything": OTHER}}, f)
    argv = ["--install", "claude-desktop", "--sim"]
    assert run_main(argv, "linux", environ, capsys)[0] == 0
    first, backup = open(path).read(), open(path + ".bak").read()

    status, out, _err = run_main(argv, "linux", environ, capsys)

    assert status == 0 and "nothing changed" in out
    assert open(path).read() == first and open(path + ".bak").read() == backup
    assert list(json.loads(first)["mcpServers"]) == ["everything", "tinymcp"]


def test_an_entry_of_the_same_name_is_replaced_and_said(tmp_path, capsys):
    environ, roots = fake_os(tmp_path, "linux")
    path = place("cursor", "linux", roots)
    os.makedirs(os.path.dirname(path))
    old = {"command": "/old/tinymcp-bridge", "args": ["--port", "/dev/ttyACM0"]}
    with open(path, "w") as f:
        json.dump({"mcpServers": {"pico": old, "everything": OTHER}}, f)

    status, _out, err = run_main(["--install", "cursor", "--name", "pico", "--port", "auto"],
                                 "linux", environ, capsys)

    assert status == 0
    assert "replacing the 'pico' entry" in err and "/old/tinymcp-bridge" in err
    servers = json.load(open(path))["mcpServers"]
    assert list(servers) == ["pico", "everything"] and servers["everything"] == OTHER
    assert servers["pico"]["args"] == ["--port", "auto"]


def test_vscode_jsonc_with_trailing_commas_is_merged(tmp_path, capsys):
    environ, roots = fake_os(tmp_path, "darwin")
    path = place("vscode", "darwin", roots)
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write('{\n  "servers": {\n    "web": {"type": "http", "url": "http://x/,]"},\n  },\n'
                '  "inputs": [],\n}\n')

    assert run_main(["--install", "vscode", "--sim"], "darwin", environ, capsys)[0] == 0
    after = json.load(open(path))
    assert after["inputs"] == [] and after["servers"]["web"]["url"] == "http://x/,]"
    assert list(after["servers"]) == ["web", "tinymcp"]


@pytest.mark.parametrize("text, words", [
    ('{\n  // my servers\n  "servers": {}\n}\n', ("comments", "left as it is")),
    ('{"servers": {"a": /* off */ 1}}', ("comments",)),
    ('{"servers": {"a": 1}', ("not JSON", "line 1")),
    ('{\n  "servers": {},\n  "x": [1,,],\n}', ("not JSON", "line 3")),
    ('["servers"]', ("no JSON object",)),
    ('{"servers": ["a"]}', ("'servers' is not an object",)),
    (b'{"servers": {"\xff": 1}}', ("cannot read",)),
])
def test_a_file_that_cannot_be_merged_is_left_untouched(tmp_path, capsys, text, words):
    environ, roots = fake_os(tmp_path, "linux")
    path = place("vscode", "linux", roots)
    os.makedirs(os.path.dirname(path))
    data = text if type(text) is bytes else text.encode()
    with open(path, "wb") as f:
        f.write(data)

    for boards in (["--sim"], ["--port", "socket://h:1", "--board-token", "t" * 16]):
        status, out, err = run_main(["--install", "vscode"] + boards, "linux", environ, capsys)
        one_line_refusal(status, out, err, path, *words)
        assert open(path, "rb").read() == data
    assert os.listdir(os.path.dirname(path)) == ["mcp.json"]


@pytest.mark.parametrize("argv, words", [
    ([], ("say which board",)),
    (["--sim", "no-such-board"], ("no board 'no-such-board'",)),
    (["--sim", "--timeout", "0"], ("--timeout",)),
    (["--sim", "--bogus"], ("unrecognized",)),
    (["--sim", "--log-lev", "debug"], ("unrecognized",)),        # spelled in full, in a file
    (["--port", "Pico=/dev/ttyACM0"], ("board label",)),
    (["--sim", "--http", "8000"], ("--http", "stdio")),
    (["--sim", "--demo"], ("--demo",)),
    (["--sim", "--name", "two words"], ("--name",)),
    (["--sim", "--print-config", "cursor"], ("not both",)),
])
def test_a_bad_bridge_option_is_one_line_and_writes_nothing(tmp_path, argv, words):
    home = tmp_path / "home"
    home.mkdir()
    done = subprocess.run([sys.executable, "-m", "tinymcp.host.bridge", "--install", "cursor"]
                          + argv, cwd=REPO, env=clean_env(HOME=str(home)), capture_output=True,
                          timeout=30, stdin=subprocess.DEVNULL)
    one_line_refusal(done.returncode, done.stdout.decode(), done.stderr.decode(),
                     "tinymcp-bridge: ", *words)
    assert done.stdout == b"" and os.listdir(home) == []


def test_name_without_install_is_refused():
    done = subprocess.run([sys.executable, "-m", "tinymcp.host.bridge", "--sim", "--name", "x"],
                          cwd=REPO, env=clean_env(), capture_output=True, timeout=30,
                          stdin=subprocess.DEVNULL)
    one_line_refusal(done.returncode, "", done.stderr.decode(), "--name goes with --install")


def test_sim_boards_by_path_become_absolute_and_bundled_names_stay(tmp_path, capsys,
                                                                    monkeypatch):
    (tmp_path / "myboard").mkdir()
    (tmp_path / "myboard" / "main.py").write_text(BOARD)
    (tmp_path / "other.py").write_text(BOARD)
    monkeypatch.chdir(tmp_path)

    status, out, _err = run_main(["--print-config", "cursor", "--sim", "./myboard",
                                  "--sim=bench=other.py", "--sim", "pico=sim", "--sim",
                                  "--port", "socket://127.0.0.1:9"],
                                 "linux", {"HOME": str(tmp_path)}, capsys)

    assert status == 0
    args = json.loads(out)["mcpServers"]["tinymcp"]["args"]
    assert args == ["--sim", str(tmp_path / "myboard"), "--sim=bench=" + str(tmp_path / "other.py"),
                    "--sim", "pico=sim", "--sim", "--port", "socket://127.0.0.1:9"]


@pytest.mark.parametrize("pins", [["--pins", "my-pins.json"], ["--pins=my-pins.json"]])
def test_trust_is_not_installed_and_the_pins_file_becomes_absolute(tmp_path, capsys,
                                                                  monkeypatch, pins):
    # --trust accepts and exits: a host starting it would never be served. The host starts
    # the bridge in a folder of its own choosing, so the pins file is named whole.
    monkeypatch.chdir(tmp_path)
    status, out, _err = run_main(["--print-config", "cursor", "--sim", "--trust", "sim",
                                  "--trust-changes"] + pins,
                                 "linux", {"HOME": str(tmp_path)}, capsys)
    assert status == 0
    args = json.loads(out)["mcpServers"]["tinymcp"]["args"]
    assert args == ["--sim", "--trust-changes", "--pins", str(tmp_path / "my-pins.json")]


def test_a_board_token_goes_into_env_not_args_and_the_file_is_private(tmp_path, capsys):
    environ, roots = fake_os(tmp_path, "linux")
    path = place("claude-code", "linux", roots)
    token = "correct-horse-battery-staple"

    status, out, err = run_main(["--install", "claude-code", "--port", "socket://10.0.0.7:7000",
                                 "--board-token", token], "linux", environ, capsys)

    assert status == 0
    server = json.load(open(path))["mcpServers"]["tinymcp"]
    assert server["env"] == {"TINYMCP_BOARD_TOKEN": token}
    assert token not in json.dumps(server["args"]) and server["args"] == [
        "--port", "socket://10.0.0.7:7000"]
    assert token not in out and token not in err and "in clear" in err
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_the_token_in_the_environment_is_taken_for_a_network_board_only(tmp_path, capsys):
    token = {"TINYMCP_BOARD_TOKEN": "from-the-environment"}
    environ = dict(token, HOME=str(tmp_path))
    shown = {"TINYMCP_BOARD_TOKEN": "<set TINYMCP_BOARD_TOKEN>"}   # never printed in clear
    for boards, env in ((["--sim"], None), (["--port", "socket://h:1"], shown)):
        status, out, _err = run_main(["--print-config", "cursor"] + boards, "linux", environ,
                                     capsys)
        assert status == 0
        assert json.loads(out)["mcpServers"]["tinymcp"].get("env") == env


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_the_file_keeps_its_mode(tmp_path, capsys):
    environ, roots = fake_os(tmp_path, "linux")
    path = place("cursor", "linux", roots)
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as f:
        f.write("{}")
    os.chmod(path, 0o644)

    assert run_main(["--install", "cursor", "--sim"], "linux", environ, capsys)[0] == 0
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o644


def test_a_symlinked_config_stays_a_symlink(tmp_path, capsys):
    environ, _roots = fake_os(tmp_path, "linux")
    dotfiles = tmp_path / "dotfiles" / "claude.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {}}')
    (tmp_path / "home").mkdir()
    os.symlink(dotfiles, tmp_path / "home" / ".claude.json")

    assert run_main(["--install", "claude-code", "--sim"], "linux", environ, capsys)[0] == 0
    assert os.path.islink(tmp_path / "home" / ".claude.json")
    assert list(json.loads(dotfiles.read_text())["mcpServers"]) == ["tinymcp"]


def test_the_command_is_the_console_script_beside_python_or_python_running_the_module(tmp_path):
    def make(*parts):
        path = tmp_path.joinpath(*parts)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        path.chmod(0o755)
        return str(path)

    venv = make("venv", "Scripts", "python.exe")
    script = make("venv", "Scripts", "tinymcp-bridge.exe")
    assert install.bridge_command(venv, windows=True) == [script]
    system = make("Python312", "python.exe")
    script = make("Python312", "Scripts", "tinymcp-bridge.exe")
    assert install.bridge_command(system, windows=True) == [script]
    bare = make("bare", "bin", "python3")
    assert install.bridge_command(bare, windows=False) == [bare, "-m", "tinymcp.host.bridge"]
    assert install.bridge_command() == [bridge_script()]


def windows_argv(line):
    # -> the arguments a Windows program gets from its command line (CommandLineToArgvW's rules:
    # backslashes are literal unless they precede a quote; 2n of them and a quote: n and a
    # toggle; 2n+1: n and a literal quote).
    args, arg, quoted, i, started = [], "", False, 0, False
    while i < len(line):
        c = line[i]
        if c == "\\":
            n = len(line[i:]) - len(line[i:].lstrip("\\"))
            if line[i + n:i + n + 1] == '"':
                arg += "\\" * (n // 2) + ('"' if n % 2 else "")
                i += n + (1 if n % 2 else 0)   # an even run leaves its quote to toggle
            else:
                arg += "\\" * n
                i += n
            started = True
            continue
        if c == '"':
            quoted, started = not quoted, True
        elif c in " \t" and not quoted:
            if started:
                args.append(arg)
            arg, started = "", False
        else:
            arg, started = arg + c, True
        i += 1
    if started:
        args.append(arg)
    return args


def links(err):
    # -> the lines after "or add it to ...:" on --print-config's stderr.
    said = err.strip().splitlines()
    at = [i for i, line in enumerate(said) if line.startswith("tinymcp-bridge: or add it")]
    following = said[at[0] + 1:] if at else []
    told = [i for i, line in enumerate(following) if line.startswith("tinymcp-bridge:")]
    return following[:told[0]] if told else following


@pytest.mark.parametrize("platform", ["darwin", "win32", "linux"])
def test_vscode_add_mcp_command_and_link_carry_the_entry_install_writes(tmp_path, capsys,
                                                                       platform, monkeypatch):
    import shlex
    from urllib.parse import unquote
    (tmp_path / "my board").mkdir()
    (tmp_path / "my board" / "main.py").write_text(BOARD)
    monkeypatch.chdir(tmp_path)
    environ, roots = fake_os(tmp_path, platform)
    argv = ["--sim", "./my board", "--port", "socket://10.0.0.7:8765", "--name", "bench",
            "--log-level", "info"]
    status, _out, err = run_main(["--print-config", "vscode"] + argv, platform, environ, capsys)
    assert status == 0
    command, link = links(err)
    words = windows_argv(command) if platform == "win32" else shlex.split(command)
    assert words[:2] == ["code", "--add-mcp"] and len(words) == 3
    added = json.loads(words[2])
    assert link.startswith("vscode:mcp/install?")
    assert json.loads(unquote(link[len("vscode:mcp/install?"):])) == added
    assert run_main(["--install", "vscode"] + argv, platform, environ, capsys)[0] == 0
    written = json.load(open(place("vscode", platform, roots)))["servers"]["bench"]
    assert added == dict(written, name="bench")


@pytest.mark.parametrize("platform", ["darwin", "win32", "linux"])
def test_the_cursor_link_carries_the_entry_install_writes(tmp_path, capsys, platform):
    import base64
    from urllib.parse import parse_qs, urlsplit
    environ, roots = fake_os(tmp_path, platform)
    argv = ["--port", "auto", "--compact", "--name", "desk"]
    status, _out, err = run_main(["--print-config", "cursor"] + argv, platform, environ, capsys)
    assert status == 0
    (link,) = links(err)
    parts = urlsplit(link)
    assert (parts.scheme, parts.netloc, parts.path) == ("cursor", "anysphere.cursor-deeplink",
                                                        "/mcp/install")
    query = parse_qs(parts.query, strict_parsing=True)
    assert query["name"] == ["desk"]
    config = json.loads(base64.b64decode(query["config"][0], validate=True))
    assert run_main(["--install", "cursor"] + argv, platform, environ, capsys)[0] == 0
    assert config == json.load(open(place("cursor", platform, roots)))["mcpServers"]["desk"]


def test_the_links_never_carry_a_token(tmp_path, capsys):
    import base64
    from urllib.parse import parse_qs, unquote, urlsplit
    token = "correct-horse-battery-staple"
    for host in ("vscode", "cursor"):
        status, _out, err = run_main(["--print-config", host, "--port", "socket://h:1",
                                      "--board-token", token], "linux",
                                     {"HOME": str(tmp_path)}, capsys)
        assert status == 0 and token not in err
        for line in links(err):
            decoded = unquote(line)
            if line.startswith("cursor:"):
                decoded = base64.b64decode(parse_qs(urlsplit(line).query)["config"][0]).decode()
            assert token not in decoded and "<set TINYMCP_BOARD_TOKEN>" in decoded


@pytest.mark.parametrize("platform", ["darwin", "win32", "linux"])
def test_the_claude_code_command_carries_the_entry_install_writes(tmp_path, capsys, platform):
    import shlex
    environ, roots = fake_os(tmp_path, platform)
    argv = ["--sim", "--port", "socket://10.0.0.7:8765", "--name", "bench"]
    status, _out, err = run_main(["--print-config", "claude-code"] + argv, platform, environ,
                                 capsys)
    assert status == 0
    (command,) = links(err)
    words = windows_argv(command) if platform == "win32" else shlex.split(command)
    assert words[:6] == ["claude", "mcp", "add-json", "--scope", "user", "bench"]
    assert len(words) == 7
    assert run_main(["--install", "claude-code"] + argv, platform, environ, capsys)[0] == 0
    written = json.load(open(place("claude-code", platform, roots)))["mcpServers"]["bench"]
    assert json.loads(words[6]) == written
