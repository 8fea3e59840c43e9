# The real board files' build() off the board: machine, esp32 replaced by simulated parts.
import sys

from tests.sensors.fakes import FakeMachine, call, ready, tools
from tinymcp.sensors import simchips


def build(board, *chips):
    fake = FakeMachine(*chips)
    fake.install()
    try:
        name = "boards." + board + ".main"
        if name in sys.modules:
            del sys.modules[name]
        module = __import__(name, None, None, ("build",))
        return ready(module.build()), fake, module
    finally:
        fake.uninstall()


def test_pico_offers_what_its_board_file_lists():
    s, fake, module = build("rpi_pico", simchips.BME280Chip(0x76))
    names = sorted(tools(s))
    assert names == ["read_adc", "read_bme280", "read_temperature", "scan_i2c", "set_led"]
    assert fake.i2c_args == (0, 4, 5, 400000)
    assert tools(s)["read_adc"]["inputSchema"]["properties"]["channel"]["maximum"] == 2
    assert call(s, "read_bme280")["structuredContent"]["celsius"] == 21.5
    call(s, "set_led", {"on": True})
    assert fake.pins["LED"].level == 1
    assert call(s, "read_adc", {"channel": 0})["structuredContent"]["volts"] == 0.66


def test_pico_reports_a_missing_bme280_with_its_wiring():
    s, fake, module = build("rpi_pico")
    failed = call(s, "read_bme280")
    assert failed["isError"] is True
    assert "GP4" in failed["content"][0]["text"] and "0x76" in failed["content"][0]["text"]
    assert call(s, "scan_i2c")["structuredContent"]["addresses"] == []


def test_esp32_offers_what_its_board_file_lists():
    s, fake, module = build("esp32", simchips.BME280Chip(0x76))
    assert sorted(tools(s)) == ["read_adc", "read_bme280", "read_temperature", "scan_i2c",
                                "set_led"]
    assert fake.i2c_args == (0, 21, 22, 400000)
    assert call(s, "read_temperature")["structuredContent"] == {"celsius": 41.0, "age_ms": 0,
                                                                "units": {"celsius": "Cel"}}
    assert call(s, "read_adc", {"channel": 3})["structuredContent"]["volts"] == 0.655
    call(s, "set_led", {"on": True})
    assert fake.pins[2].level == 1


def test_boards_report_who_they_are_in_their_link_offer():
    from tests.core.support import FakeStream, frame
    from tinymcp.channel import Channel, Lines
    for name, prefix in (("rpi_pico", "rp2-"), ("esp32", "esp32-")):
        s, _fake, _module = build(name)
        assert s.identity == prefix + "e6614c0d132a552e"
        stream = FakeStream([frame("initialize", {"protocolVersion": "2025-11-25",
                                                  "capabilities": {}}, id=0) + b"\n"])
        Channel(s, Lines(stream)).run()
        offer = stream.sent[0]["result"]["capabilities"]["experimental"]["tinymcp/link"]
        assert offer["id"] == s.identity
