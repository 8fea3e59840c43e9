# GPIO/PWM allow-lists, the LED, ADC channels, the MCU temperature and the I2C scan.
import sys

from tests.core.support import result
from tests.sensors.fakes import bench, call, raises, ready, server, tools
from tinymcp.sensors import adc, gpio, i2cparts, i2cscan, internal, led, sim
from tinymcp.sensors.common import SensorError


def pins():
    return gpio.Pins(inputs={14: sim.Pin(14, level=1)}, outputs={15: sim.Pin(15)},
                     pwm={16: sim.PWM(sim.Pin(16))})


def test_only_offered_pins_can_be_written():
    p = pins()
    assert p.write(15, 1) == {"pin": 15, "value": 1}
    assert p.outputs[15].level == 1
    e = raises(lambda: p.write(14, 1), SensorError)   # an input is not an output
    assert "GPIO 14 is not offered for writing" in str(e) and "allowed: 15" in str(e)
    raises(lambda: p.write(2, 1), SensorError)        # a pin the board never offered
    assert p.inputs[14].writes == 0


def test_reads_cover_inputs_and_outputs_only():
    p = pins()
    assert p.read(14) == {"pin": 14, "value": 1}
    assert p.read(15)["value"] == 0
    assert "not offered for reading" in str(raises(lambda: p.read(3), SensorError))


def test_pwm_duty_is_percent_on_the_16_bit_scale():
    p = pins()
    assert p.set_pwm(16, 50, 2000) == {"pin": 16, "duty": 50, "freq": 2000}
    assert p.pwm[16].duty == 32768
    p.set_pwm(16, 100)
    assert p.pwm[16].duty == 65535
    assert "not offered for PWM" in str(raises(lambda: p.set_pwm(15, 10), SensorError))


def test_tools_refuse_pins_outside_the_allow_list_and_writes_are_destructive():
    p = pins()
    s = ready(server())
    gpio.attach(s, p)
    listed = tools(s)
    assert listed["write_pin"]["annotations"]["destructiveHint"] is True
    assert listed["write_pin"]["annotations"]["readOnlyHint"] is False
    assert listed["set_pwm"]["annotations"]["destructiveHint"] is True
    assert listed["read_pin"]["annotations"]["readOnlyHint"] is True
    assert listed["write_pin"]["inputSchema"]["properties"]["pin"]["enum"] == [15]
    refused = call(s, "write_pin", {"pin": 2, "value": 1})
    assert refused["isError"] is True and "must be one of 15" in refused["content"][0]["text"]
    assert call(s, "write_pin", {"pin": 15, "value": 1})["structuredContent"]["value"] == 1
    assert call(s, "read_pin", {"pin": 14})["structuredContent"] == {"pin": 14, "value": 1, "age_ms": 0,
                                                                   "units": {"value": "1"}}


def test_a_board_without_pins_offers_no_pin_tools():
    s = ready(server())
    gpio.attach(s, gpio.Pins())
    assert s.tools is None


def test_led_follows_on_and_honours_active_low():
    led_pin = sim.Pin("LED")
    board_led = led.Led(led_pin)
    assert board_led.set(True) == {"on": True} and led_pin.level == 1
    low = sim.Pin(2)
    led.Led(low, active_low=True).set(True)
    assert low.level == 0
    s = ready(server())
    led.attach(s, board_led)
    assert tools(s)["set_led"]["annotations"]["readOnlyHint"] is False
    assert call(s, "set_led", {"on": False})["structuredContent"] == {"on": False}
    assert led_pin.level == 0


def test_adc_channels_scale_to_volts_and_refuse_unwired_channels():
    chans = adc.ADCChannels([sim.ADC(lambda: 1.65), sim.ADC(lambda: 3.3)], vref=3.3)
    assert chans.read(0) == {"raw": 32768, "volts": 1.65}
    assert chans.read(1)["raw"] == 65535
    assert "not wired" in str(raises(lambda: chans.read(2), SensorError))
    s = ready(server())
    adc.attach(s, chans)
    assert tools(s)["read_adc"]["inputSchema"]["properties"]["channel"]["maximum"] == 1
    assert call(s, "read_adc", {"channel": 5})["isError"] is True


def test_calibrated_adc_takes_volts_from_read_uv():
    class Calibrated:
        def read_u16(self):
            return 1000

        def read_uv(self):
            return 1234567
    assert adc.ADCChannels([Calibrated()], calibrated=True).read(0) == {"raw": 1000,
                                                                        "volts": 1.2346}


def test_rp2040_temperature_follows_the_datasheet_formula():
    # 27 - (V - 0.706) / 0.001721: 0.706 V is 27 degC; each -1.721 mV is one degree warmer.
    for volts, celsius in ((0.706, 27.0), (0.706 - 0.01721, 37.0), (0.706 + 0.01721, 17.0)):
        sensor = internal.RP2040(sim.ADC(lambda v=volts: v, 3.3), 3.3)
        assert abs(sensor.read()["celsius"] - celsius) < 0.05, (volts, sensor.read())


def test_esp32_temperature_uses_mcu_temperature_or_converts_raw_fahrenheit():
    class S3:
        def mcu_temperature(self):
            return 38

    class Classic:
        def raw_temperature(self):
            return 122

    assert internal.ESP32(S3()).read() == {"celsius": 38.0}
    assert internal.ESP32(Classic()).read() == {"celsius": 50.0}
    raises(lambda: internal.ESP32(object()), SensorError)


def test_temperature_attach_gives_the_contract_tool_and_resource():
    sensor = internal.RP2040(sim.ADC(lambda: 0.706, 3.3), 3.3)
    s = ready(server())
    internal.attach(s, sensor)
    assert abs(call(s, "read_temperature")["structuredContent"]["celsius"] - 27) < 0.05
    listed = result(s, "resources/list")["resources"]
    assert listed[0]["uri"] == "sensor://temperature"
    assert listed[0]["mimeType"] == "application/json"


def test_each_address_names_its_likely_parts_and_any_other_is_unknown():
    named = {0x23: "BH1750", 0x3C: "SSD1306 display", 0x3D: "SSD1306 display", 0x44: "SHT3x",
             0x5C: "AM2320", 0x76: "BME280/BMP280", 0x77: "BME280/BMP280/BMP180"}
    for address, parts in named.items():
        assert i2cparts.likely(address) == parts
    for address in (0x00, 0x03, 0x24, 0x3B, 0x7F):
        assert i2cparts.likely(address) == "unknown"


def test_i2c_scan_names_likely_parts_and_reports_a_stuck_bus():
    bus, _, _, _ = bench()
    found = i2cparts.scan(None, bus)
    assert found["addresses"] == [0x44, 0x76]
    assert found["devices"][1] == {"address": "0x76", "likely": "BME280/BMP280"}
    s = ready(server())
    i2cscan.attach(s, bus)
    assert call(s, "scan_i2c")["structuredContent"]["addresses"] == [0x44, 0x76]
    assert "tinymcp.sensors.i2cparts" not in sys.modules   # loaded for the call, released
    assert "i2cparts" not in dir(sys.modules["tinymcp.sensors"])
    bus.stuck = True
    s = ready(server())
    i2cscan.attach(s, bus, wiring="SDA GP4, SCL GP5")
    failed = call(s, "scan_i2c")
    assert failed["isError"] is True and "timed out" in failed["content"][0]["text"]
