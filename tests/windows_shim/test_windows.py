# The bridge as on Windows (the shim in sitecustomize.py) and as on POSIX: each test runs twice.
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import BRIDGE, REPO, BoardOnPty, bridge_script, clean_env
from tests.bridge.conftest import LineClient, socat_board  # noqa: F401
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)
from tests.windows_shim import same_on_every_os

# What Windows cannot do, tried in a child process under clean_env(): each name -> what came of it.
ATTEMPTS = r'''
import asyncio, json, os, select, socket, sys
outcome = {}
def attempt(name, fn):
    try:
        fn()
        outcome[name] = "ok"
    except (ImportError, NotImplementedError, OSError, ValueError) as e:
        outcome[name] = "refused: %s" % e.__class__.__name__
for module in ("pty", "tty", "resource", "fcntl", "termios"):
    attempt("import " + module, lambda: __import__(module))
import serial
master, slave = os.openpty()
port = serial.Serial(os.ttyname(slave), timeout=0)
attempt("Serial.fileno", port.fileno)
reader, writer = os.pipe()
attempt("select on a pipe", lambda: select.select([reader], [], [], 0))
a, b = socket.socketpair()
attempt("select on a socket", lambda: select.select([a], [], [], 0))
async def loop_calls():
    loop = asyncio.get_running_loop()
    attempt("add_reader", lambda: loop.add_reader(a.fileno(), print))
    attempt("add_writer", lambda: loop.add_writer(a.fileno(), print))
    attempt("add_signal_handler", lambda: loop.add_signal_handler(15, print))
    for name, pipe in (("connect_read_pipe on stdin", sys.stdin), ("connect_read_pipe on a socket", b)):
        try:
            transport, _ = await loop.connect_read_pipe(asyncio.Protocol, pipe)
            transport.close()
            outcome[name] = "ok"
        except OSError as e:
            outcome[name] = "refused: %s" % e.__class__.__name__
asyncio.run(loop_calls())
print(json.dumps(outcome))
'''
WINDOWS_REFUSES = {"import pty", "import tty", "import resource", "import fcntl", "import termios",
                   "Serial.fileno", "select on a pipe", "add_reader", "add_writer",
                   "add_signal_handler", "connect_read_pipe on stdin"}


def test_the_shim_refuses_what_windows_cannot_do_and_nothing_else(as_on_windows):
    r, w = os.pipe()   # a pipe for stdin: what a host gives the bridge
    try:
        done = subprocess.run([sys.executable, "-c", ATTEMPTS], stdin=r, capture_output=True,
                              text=True, env=clean_env(), cwd=REPO, timeout=60)
    finally:
        os.close(r)
        os.close(w)
    assert done.returncode == 0, done.stderr
    outcome = json.loads(done.stdout)
    refused = {name for name, what in outcome.items() if what != "ok"}
    assert refused == (WINDOWS_REFUSES if as_on_windows else set()), outcome


@pytest.mark.parametrize("stdin", ["/dev/null", "closed"])
def test_stdin_at_dev_null_or_closed_is_a_clean_end_at_once(stdin):
    command = BRIDGE + ["--sim"]
    if stdin == "closed":
        command = ["sh", "-c", 'exec "$@" <&-', "sh"] + command
    started = time.monotonic()
    done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, cwd=REPO,
                          env=clean_env(), timeout=60)
    print("exited %.2f s after it started" % (time.monotonic() - started))
    assert done.returncode == 0, done.stderr
    assert done.stdout == b""
    assert b"Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_sdk_client_has_a_session_through_port_pty(mode, socat_board):
    # The board is boards/sim under CPython on one end of a socat pty pair; the bridge opens the
    # other as it would open /dev/ttyACM0 or COM3.
    pair, testboard = socat_board
    testboard.kill()
    board = BoardOnPty(pair.b, [sys.executable, "boards/sim/main.py"])
    board.start()
    params = StdioServerParameters(command=bridge_script(), args=["--port", pair.a], cwd=REPO,
                                   env=clean_env())

    async def session():
        async with Client(params, mode=mode) as client:
            if mode == "legacy":
                assert client.protocol_version == "2025-11-25"
            tools = {t.name for t in (await client.list_tools()).tools}
            assert {"read_temperature", "read_adc", "set_led"} <= tools
            adc = await client.call_tool("read_adc", {"channel": 1})
            assert not adc.is_error and 0 <= adc.structured_content["volts"] <= 3.3
            led = await client.call_tool("set_led", {"on": True})
            assert led.structured_content == {"on": True}
            read = await client.read_resource("sensor://temperature")
            assert '"celsius"' in read.contents[0].text
            bad = await client.call_tool("read_adc", {"channel": 9})
            assert bad.is_error
    try:
        asyncio.run(session())
    finally:
        board.kill()


def test_a_sim_board_that_crashes_is_restarted_on_its_pty_or_its_pipes(as_on_windows):
    client = LineClient(["--sim", "--log-level", "info"])
    try:
        client.initialize()
        client.notify("notifications/initialized")
        assert "structuredContent" in client.call("read_temperature")["result"]
        log = client.wait_stderr(r"sim board sim started, pid (\d+)")
        on = re.search(r"board ready: .* on (.+?), protocol", client.stderr()).group(1)
        assert on == "pipes to sim" if as_on_windows else on.startswith("/dev/")
        os.kill(int(log.group(1)), signal.SIGKILL)
        client.wait_stderr(r"exited with status")
        end = time.monotonic() + 30
        while "result" not in client.call("read_temperature", timeout=15):
            assert time.monotonic() < end, "no call succeeded after the restart"
            time.sleep(0.2)
        assert client.stderr().count("sim board sim started") == 2
        assert "Traceback" not in client.stderr(), client.stderr()
        assert client.noise == []
    finally:
        assert client.stop() == 0


# pyserial's serialwin32 says "could not open port {portstr!r}: {ctypes.WinError()!r}".
WINDOWS_OPEN_ERRORS = {
    "FileNotFoundError(2, 'The system cannot find the file specified.', None, 2)":
        "COM7 does not exist: is the board plugged in? (tinymcp-bridge --list-ports shows the "
        "serial ports)",
    "PermissionError(13, 'Access is denied.', None, 5)":
        "COM7 is busy: another program (a serial monitor, an IDE, another bridge) has it open; "
        "close that program and retry",
}


@same_on_every_os   # explain() in this process: no process of it runs under the shim
@pytest.mark.parametrize("error", sorted(WINDOWS_OPEN_ERRORS))
def test_a_com_port_that_cannot_be_opened_is_said_in_one_line(error):
    import serial
    from tinymcp.host.bridge.link import explain
    raised = serial.SerialException("could not open port 'COM7': %s" % error)
    assert explain("COM7", raised) == WINDOWS_OPEN_ERRORS[error]


def test_list_ports_names_com_ports_in_order_and_each_macos_port_once(tmp_path):
    plugged = [{"device": "COM10", "vid": 0x2E8A, "pid": 0x0005, "product": "Board in FS mode"},
               {"device": "COM3", "vid": 0x10C4, "pid": 0xEA60, "product": "CP2102"},
               {"device": "COM4", "product": "Communications Port"},
               {"device": "/dev/tty.usbmodem1101", "vid": 0x2E8A, "pid": 0x0005},
               {"device": "/dev/cu.usbmodem1101", "vid": 0x2E8A, "pid": 0x0005}]
    ports = tmp_path / "ports.json"
    ports.write_text(json.dumps(plugged))
    done = subprocess.run([sys.executable, "tests/bridge/fake_usb.py", "--list-ports"],
                          capture_output=True, text=True, cwd=REPO, timeout=60,
                          env=clean_env(FAKE_USB_PORTS=str(ports)))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["/dev/cu.usbmodem1101", "COM3", "COM4",
                                                   "COM10"]
    marked = [line.split()[0] for line in lines if "likely a MicroPython board" in line]
    assert marked == ["/dev/cu.usbmodem1101", "COM3", "COM10"]
    assert lines[2] == "COM4  Communications Port"


def _decorator_names(function):
    # -> the names a function's decorators are made of (windows_covered, same_on_every_os, ...).
    import ast
    names = set()
    for decorator in function.decorator_list:
        for node in ast.walk(decorator):
            if isinstance(node, ast.Name):
                names.add(node.id)
    return names


def _runs_once_as_marked():
    # -> {module path: {test name: decorator names}} and [(module, names given)] for every
    # windows_paths_run_by(...) in the test tree.
    import ast
    tests, given = {}, []
    for here, dirs, files in os.walk(os.path.join(REPO, "tests")):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in sorted(files):
            if not (name.startswith("test_") and name.endswith(".py")):
                continue
            path = os.path.relpath(os.path.join(here, name), REPO).replace(os.sep, "/")
            with open(os.path.join(REPO, path), encoding="utf-8") as f:
                tree = ast.parse(f.read(), path)
            tests[path] = {node.name: _decorator_names(node) for node in tree.body
                           if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")}
            for node in ast.walk(tree):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id == "windows_paths_run_by"):
                    given.append((path, [a.value for a in node.args]))
    return tests, given


@same_on_every_os   # reads the source: no process
def test_each_test_named_as_covering_windows_paths_exists_and_runs_twice():
    # A test marked to run once names the tests whose runs under the shim take its Windows paths
    # (tests/windows_shim/__init__.py): each must exist and itself run under the shim.
    tests, given = _runs_once_as_marked()
    assert len(given) >= 10, given   # the scan sees the marks the suite has
    once = {"windows_covered", "same_on_every_os", "windows_paths_run_by"}
    for path, names in given:
        assert names, path
        for name in names:
            where, _, test = name.rpartition("::")
            where = where or path
            assert test in tests.get(where, {}), "%s names %s, which is not a test" % (path, name)
            assert not tests[where][test] & once, "%s names %s, which runs once" % (path, name)
            assert "as_on_windows" in open(os.path.join(REPO, where), encoding="utf-8").read()
        marked = [t for t, decorators in tests[path].items() if "windows_covered" in decorators]
        assert marked, "%s names covering tests but marks none to run once" % path
