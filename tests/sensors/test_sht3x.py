# SHT3x driver against the command-level simulated chip: the CRC, the formulas, the faults.
from tests.sensors.fakes import bench, call, raises, ready, server, tools
from tinymcp.sensors.common import SensorError
from tinymcp.sensors.sht3x import REPEATABILITY, SHT3x, attach, crc8


def sensor_with(raw):
    bus, _, chip, _ = bench()
    chip.raw = raw
    return SHT3x(bus, 0x44), chip


def test_crc8_matches_the_datasheet_example():
    assert crc8(bytearray(b"\xbe\xef")) == 0x92   # datasheet 4.12: 0xBEEF -> 0x92
    assert crc8(bytearray(b"\x00\x00")) == 0x81
    assert crc8(bytearray(b"\x00\xbe\xef\x00"), 1, 3) == 0x92


def test_conversion_follows_the_datasheet_formulas():
    # T = -45 + 175 * S / 65535, RH = 100 * S / 65535
    for s_t, s_rh in ((0, 0), (65535, 65535), (0x6666, 0x8000), (12345, 54321)):
        sensor, _ = sensor_with((s_t, s_rh))
        r = sensor.read()
        assert abs(r["celsius"] - (-45 + 175 * s_t / 65535)) <= 0.005, (s_t, r)
        assert abs(r["rh"] - 100 * s_rh / 65535) <= 0.005, (s_rh, r)
    sensor, _ = sensor_with((0x6666, 0x8000))
    assert sensor.read() == {"celsius": 25.0, "rh": 50.0}


def test_read_recovers_the_simulated_conditions():
    bus, _, _, world = bench(celsius=31.7, rh=12.25)
    r = SHT3x(bus).read()
    assert abs(r["celsius"] - 31.7) <= 0.01 and abs(r["rh"] - 12.25) <= 0.01


def test_single_shot_high_repeatability_without_clock_stretching():
    sensor, chip = sensor_with((100, 200))
    assert sensor.read_raw() == (100, 200)
    assert chip.last_command == 0x2400
    assert chip.measurements == 1


def test_waits_are_the_datasheet_measurement_times_not_seconds():
    maxima = {"high": 15.5, "medium": 6.5, "low": 4.5}  # datasheet table 4
    for name in maxima:
        sensor = SHT3x(None, repeatability=name)
        assert maxima[name] <= sensor.measure_ms < maxima[name] + 1
    bus, _, chip, _ = bench()
    SHT3x(bus, repeatability="low").read()
    assert chip.last_command == REPEATABILITY["low"][0] == 0x2416


def test_a_crc_mismatch_is_an_error_never_a_value():
    sensor, chip = sensor_with((0x6666, 0x8000))
    chip.corrupt = True
    e = raises(sensor.read, SensorError)
    assert "CRC mismatch" in str(e)
    chip.corrupt = False
    assert sensor.read()["rh"] == 50.0


def test_absent_device_is_an_actionable_error():
    bus, _, _, _ = bench()
    e = raises(SHT3x(bus, 0x45, wiring="SDA 21, SCL 22").read, SensorError)
    assert "0x45" in str(e) and "did not answer" in str(e) and "SDA 21" in str(e)


def test_a_chip_that_never_delivers_data_is_a_bounded_error():
    sensor, chip = sensor_with((1, 2))
    chip.stall = True
    assert "never returned data" in str(raises(sensor.read, SensorError))


def test_a_stuck_bus_is_reported_as_a_timeout():
    bus, _, _, _ = bench()
    bus.stuck = True
    assert "timed out" in str(raises(SHT3x(bus).read, SensorError))


def test_status_word_is_crc_checked():
    bus, _, chip, _ = bench()
    assert SHT3x(bus).status() == 0x8010
    SHT3x(bus).reset()
    assert chip.last_command == 0x30A2


def test_attach_registers_a_tool_and_a_resource_and_faults_are_is_error():
    bus, _, chip, _ = bench()
    s = ready(server())
    attach(s, SHT3x(bus, 0x44))
    assert tools(s)["read_sht3x"]["annotations"]["readOnlyHint"] is True
    assert call(s, "read_sht3x")["structuredContent"] == {"celsius": 21.5, "rh": 45.0, "age_ms": 0,
                                                          "units": {"celsius": "Cel", "rh": "%"}}
    chip.corrupt = True
    failed = call(s, "read_sht3x")
    assert failed["isError"] is True and "CRC" in failed["content"][0]["text"]
    from tests.core.support import result
    assert result(s, "resources/list")["resources"][0]["uri"] == "sensor://sht3x/0x44"
