# HC-SR04 driver against the simulated module: trigger pulses, echo widths, the speed of sound,
# the range limits and the wiring faults, and read_distance.
from tests.sensors.fakes import call, ready, raises, server, tools
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.sensors.common import SensorError
from tinymcp.sensors.hcsr04 import HCSR04, MAX_CM, SETTLE_MS, attach, echo_cm, speed_of_sound
from tinymcp.sensors.simparts_in import HCSR04Part


def module(cm=100.0, air=20.0, **options):
    where = {"cm": cm, "celsius": air}
    part = HCSR04Part(lambda: where["cm"], lambda: where["celsius"])
    return HCSR04(part.trig, part.echo, part.time_pulse_us, **options), part, where


def test_the_speed_of_sound_is_the_textbook_figure():
    assert abs(speed_of_sound(0) - 331.3) < 0.2 and abs(speed_of_sound(20) - 343.2) < 0.2
    # the datasheet's rule of thumb: us / 58 = cm (about 20 degC)
    assert abs(echo_cm(5800) - 100) < 0.5


def test_reads_recover_the_distance_across_the_range_and_temperatures():
    for celsius in (-10.0, 0.0, 20.0, 35.0):
        for cm in (2.5, 10.0, 55.5, 123.4, 250.0, 399.0):
            sensor, part, where = module(cm, celsius, celsius=lambda c=celsius: c)
            got = sensor.read()["cm"]
            assert abs(got - cm) <= 0.3, (celsius, cm, got)   # the module's 3 mm resolution


def test_the_air_temperature_matters_and_can_be_given_per_read():
    sensor, part, where = module(300.0, 35.0)
    assert abs(sensor.read()["cm"] - 300.0) > 3     # taken at 20 degC: 2.5 % short
    assert abs(sensor.read(35.0)["cm"] - 300.0) <= 0.3


def test_each_read_is_one_trigger_and_one_echo_spaced_by_the_settle_time():
    sensor, part, _ = module()
    sensor.read()
    first = sensor.last
    sensor.read()
    assert part.pulses == 2 and part.triggered == 0 and part.trig.level == 0
    assert ticks_diff(sensor.last, first) >= SETTLE_MS


def test_no_echo_names_trig_echo_and_the_divider():
    sensor, part, _ = module(wiring="TRIG GP14, ECHO GP15")
    part.present = False
    text = str(raises(sensor.read, SensorError))
    assert text.startswith("No echo") and "TRIG GP14, ECHO GP15" in text and "divider" in text


def test_nothing_in_front_is_out_of_range_not_a_number():
    sensor, part, where = module(None)
    assert "Nothing in range" in str(raises(sensor.read, SensorError))
    where["cm"] = 430.0   # echoes, but past the datasheet's 4 m
    assert "Out of range" in str(raises(sensor.read, SensorError))
    where["cm"] = 1.0
    assert "Too close" in str(raises(sensor.read, SensorError))
    where["cm"] = MAX_CM - 1
    assert abs(sensor.read()["cm"] - where["cm"]) <= 0.3


def test_an_echo_line_stuck_high_is_a_wiring_fault():
    sensor, part, _ = module()
    part.echo_stuck_high = True
    assert "ECHO line is high" in str(raises(sensor.read, SensorError))


def test_read_distance_tool():
    sensor, part, where = module(77.7, 30.0, wiring="TRIG GP14, ECHO GP15")
    s = ready(server())
    attach(s, sensor)
    tool = tools(s)["read_distance"]
    assert tool["outputSchema"]["properties"]["cm"]["maximum"] == MAX_CM
    assert tool["inputSchema"]["properties"]["celsius"]["type"] == "number"
    got = call(s, "read_distance", {"celsius": 30.0})["structuredContent"]
    assert abs(got["cm"] - 77.7) <= 0.3 and got["units"] == {"cm": "cm"}
    part.present = False
    failed = call(s, "read_distance")
    assert failed["isError"] is True and "No echo" in failed["content"][0]["text"]
    assert "TRIG GP14, ECHO GP15" in failed["content"][0]["text"]
    part.present = True
    assert "isError" not in call(s, "read_distance")
    assert call(s, "read_distance", {"celsius": 200})["isError"] is True   # out of its schema
