# --port auto: boards found by their USB identity (a test double of pyserial's port list, see
# fake_usb.py) on real ptys (socat), probed, served as they are plugged in, let go when
# unplugged, and back under the same label when they return on another port.
import json
import os
import shutil
import sys
import time

import pytest

from tests.bridge.conftest import REPO, BoardOnPty, LineClient, SocatPair, clean_env
from tests.needs import missing
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

FAKE_USB = [sys.executable, os.path.join(REPO, "tests", "bridge", "fake_usb.py")]
PICO = {"vid": 0x2E8A, "pid": 0x0005, "product": "Board in FS mode"}     # MicroPython's own CDC
CP2102 = {"vid": 0x10C4, "pid": 0xEA60, "product": "CP2102 USB to UART Bridge Controller"}
STRANGER = {"vid": 0x1234, "pid": 0x5678, "product": "not a MicroPython board"}


class Bench:
    # The USB ports the bridge sees, and what is plugged into them.
    def __init__(self, folder):
        self.folder = folder
        self.ports = os.path.join(folder, "ports.json")
        self.plugged = {}   # name -> (SocatPair, BoardOnPty or None, its port list entry)
        self._publish()

    def plug(self, name, identity, board_id=None):
        # A pty pair; with board_id, the simulated board on its far end, identified as board_id.
        pair = SocatPair(os.path.join(self.folder, name))
        os.mkdir(os.path.join(self.folder, name))
        pair.up()
        board = None
        if board_id:
            board = BoardOnPty(pair.b, [sys.executable, os.path.join("boards", "sim", "main.py")],
                               env=dict(os.environ, TINYMCP_SIM_ID=board_id))
            board.start()
        self.plugged[name] = (pair, board, dict(identity, device=pair.a))
        self._publish()
        return pair.a

    def unplug(self, name):
        pair, board, _entry = self.plugged.pop(name)
        self._publish()
        if board is not None:
            board.kill()
        pair.down()

    def _publish(self):
        entries = [entry for _pair, _board, entry in self.plugged.values()]
        with open(self.ports + ".new", "w") as f:
            json.dump(entries, f)
        os.replace(self.ports + ".new", self.ports)   # the bridge never reads half a list

    def close(self):
        for name in list(self.plugged):
            self.unplug(name)


def tools(client):
    return {tool["name"] for tool in client.request("tools/list")["result"]["tools"]}


def until(client, check, what, seconds=40):
    end = time.monotonic() + seconds
    while True:
        names = tools(client)
        if check(names):
            return names
        assert time.monotonic() < end, "%s: never; tools %s\n%s" % (what, sorted(names),
                                                                      client.stderr()[-3000:])
        time.sleep(0.3)


def changes(client):
    return [n for n in client.notes if n["method"] == "notifications/tools/list_changed"]


def told(client, more_than, seconds=10):
    # Hosts hear of a change at most one gap (0.25 s) after it: wait for the news.
    end = time.monotonic() + seconds
    while len(changes(client)) <= more_than:
        assert time.monotonic() < end, "no tools/list_changed after %d" % more_than
        client.request("ping")
        time.sleep(0.1)


@pytest.fixture
def bench(tmp_path):
    if shutil.which("socat") is None:
        missing("socat is not installed: run .ci/install-socat")
    bench = Bench(str(tmp_path))
    yield bench
    bench.close()


def test_boards_are_served_as_they_are_plugged_and_come_back_under_their_label(bench):
    quiet = bench.plug("quiet", CP2102)                 # a USB-UART that serves no MCP
    stranger = bench.plug("stranger", STRANGER, "x")    # not a MicroPython USB identity
    client = LineClient(["--port", "auto", "--log-level", "info", "--timeout", "5"],
                        env=clean_env(FAKE_USB_PORTS=bench.ports), command=FAKE_USB)
    try:
        client.initialize()
        assert tools(client) == {"wait_for_event"}   # the bridge's own: wait for a board
        client.wait_stderr("not serving %s" % quiet)
        cursor = client.call("wait_for_event", timeout_s=0)["result"]["structuredContent"]
        assert cursor["events"] == []

        bench.plug("one", PICO, "board-one")           # plugged in: its tools appear
        until(client, lambda n: "sim_read_temperature" in n, "board one's tools")
        told(client, 0)
        bench.plug("two", CP2102, "board-two")         # a second board: its own label
        names = until(client, lambda n: "sim-2_set_led" in n, "board two's tools")
        assert "sim_set_led" in names

        # Calls reach the right board: one's LED lights one's photodiode only.
        assert client.call("sim_set_led", on=True)["result"]["structuredContent"] == {"on": True}
        one = client.call("sim_read_adc", channel=2)["result"]["structuredContent"]
        two = client.call("sim-2_read_adc", channel=2)["result"]["structuredContent"]
        assert one["volts"] > 2.0 > 0.5 > two["volts"], (one, two)

        assert client.request("resources/subscribe", {"uri": "sim+sensor://temperature"})[
            "result"] == {}
        seen = len(changes(client))
        bench.unplug("one")                             # unplugged: its tools go
        names = until(client, lambda n: "sim_read_adc" not in n, "board one gone")
        assert "sim-2_read_adc" in names
        told(client, seen)
        found = client.call("wait_for_event", after=cursor["cursor"], timeout_s=0)
        arrivals = [(e["kind"], e["board"]) for e in found["result"]["structuredContent"]["events"]
                    if e["kind"].startswith("board_")]
        assert arrivals == [("board_added", "sim"), ("board_added", "sim-2"),
                            ("board_removed", "sim")], arrivals
        assert "result" in client.call("sim-2_read_temperature")

        bench.plug("one-again", PICO, "board-one")     # back, on another port: the same label
        until(client, lambda n: "sim_read_adc" in n, "board one back")
        assert "result" in client.call("sim_read_temperature")
        client.notes.clear()                            # and subscribed again: updates flow
        end = time.monotonic() + 30
        while not [n for n in client.notes if n["method"] == "notifications/resources/updated"
                   and n["params"]["uri"] == "sim+sensor://temperature"]:
            assert time.monotonic() < end, client.notes
            client.request("ping")
            time.sleep(0.2)
        said = client.stderr()
        assert stranger not in said, said              # never probed
        assert said.count("not serving %s" % quiet) == 1   # asked again later, quietly
        assert "Traceback" not in said, said
    finally:
        client.stop()
