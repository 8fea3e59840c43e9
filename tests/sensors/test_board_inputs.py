# The Pico and ESP32 board files with input parts named in their wiring block: off by default,
# and when a pin is given, the driver wired to the pins named (machine, onewire and dht replaced by
# simulated parts).
import sys

from tests.core.support import frame
from tests.sensors.fakes import FakeMachine, call, ready, tools
from tests.sensors.test_ds18b20 import finish
from tinymcp.sensors.simparts_in import DHTPart, DS18B20Probe, HCSR04Part, OneWireBus

INPUT_TOOLS = ("read_dht", "read_distance", "read_probes")


class Standins:
    # onewire, dht and machine.time_pulse_us over the simulated parts, on the board's pins.
    def __init__(self, fake, trig, echo, dht_pin):
        self.probe = DS18B20Probe(0x0000C0FFEE01, lambda: 19.25)
        self.bus = OneWireBus(self.probe)
        self.sonar = HCSR04Part(lambda: 64.0)
        self.dht = DHTPart("dht22", lambda: {"celsius": 23.5, "rh": 41.0})
        self.fake = fake
        self.wired = {}
        self.trig, self.echo, self.dht_pin = trig, echo, dht_pin
        self.trig_writes = 0
        fake.time_pulse_us = self.time_pulse_us
        standins = self

        class OneWireModule:
            def OneWire(self, pin):
                standins.wired["onewire"] = pin.id
                return standins.bus

        class DhtModule:
            def dht_readinto(self, pin, buf):
                standins.dht.readinto(standins.dht.pin if pin.id == standins.dht_pin else pin, buf)

        self.modules = {"onewire": OneWireModule(), "dht": DhtModule()}

    def time_pulse_us(self, pin, level, timeout_us):
        # The board's TRIG pin went high and low since the last echo: the module was triggered.
        trig = self.fake.pins[self.trig]
        if trig.writes > self.trig_writes and trig.level == 0:
            self.sonar.triggered += 1
        self.trig_writes = trig.writes
        if pin.id != self.echo:
            return -2
        return self.sonar.time_pulse_us(self.sonar.echo, level, timeout_us)

    def install(self):
        for name in self.modules:
            sys.modules[name] = self.modules[name]

    def uninstall(self):
        for name in self.modules:
            if sys.modules.get(name) is self.modules[name]:
                del sys.modules[name]


def build(board, wiring=None):
    # -> (the built and initialized server, the stand-ins). wiring: the block's input constants.
    fake = FakeMachine()
    name = "boards." + board + ".main"
    if name in sys.modules:
        del sys.modules[name]
    fake.install()
    try:
        module = __import__(name, None, None, ("build",))
        wiring = wiring or {}
        for key in wiring:
            setattr(module, key, wiring[key])
        standins = Standins(fake, wiring.get("HCSR04_TRIG"), wiring.get("HCSR04_ECHO"),
                            wiring.get("DHT_PIN"))
        standins.install()
        try:
            return ready(module.build()), standins
        finally:
            standins.uninstall()
    finally:
        fake.uninstall()
        del sys.modules[name]


def test_no_input_part_is_offered_until_the_wiring_names_its_pins():
    for board in ("rpi_pico", "esp32"):
        s, _ = build(board)
        offered = tools(s)
        assert not [t for t in INPUT_TOOLS if t in offered], board


def test_the_pico_reads_each_input_part_on_the_pins_its_wiring_names():
    s, parts = build("rpi_pico", {"ONEWIRE_PIN": 22, "HCSR04_TRIG": 14, "HCSR04_ECHO": 15, "DHT_PIN": 2})
    assert [t for t in INPUT_TOOLS if t in tools(s)] == list(INPUT_TOOLS)
    assert parts.wired == {"onewire": 22}
    assert parts.fake.pins[14].level == 0      # TRIG driven low from the start
    got = call(s, "read_distance")
    assert not got.get("isError") and abs(got["structuredContent"]["cm"] - 64.0) <= 0.3
    got = call(s, "read_dht")["structuredContent"]
    assert got["celsius"] == 23.5 and got["rh"] == 41.0
    parts.probe.present = False    # read_probes is a long tool: answered from the serve loop
    assert s.handle(frame("tools/call", {"name": "read_probes", "arguments": {}}, 5)) is None
    failed = finish(s, 5)["result"]
    assert failed["isError"] is True
    assert "DATA GP22, 4.7k pull-up to 3V3" in failed["content"][0]["text"]


def test_the_esp32_names_its_gpios_in_the_advice():
    s, parts = build("esp32", {"HCSR04_TRIG": 5, "HCSR04_ECHO": 18, "DHT_PIN": 15, "DHT_KIND": "dht11"})
    assert "read_probes" not in tools(s)
    parts.sonar.present = False
    failed = call(s, "read_distance")
    assert failed["isError"] is True and "TRIG GPIO5, ECHO GPIO18" in failed["content"][0]["text"]
    assert "1 s" in tools(s)["read_dht"]["description"]   # a DHT11: its 1 s interval
