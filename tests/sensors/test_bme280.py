# BME280 driver against the register-level simulated chip: datasheet values and faults.
from tests.sensors.fakes import bench, call, raises, ready, server, tools
from tinymcp.sensors import simchips
from tinymcp.sensors.bme280 import BME280, attach
from tinymcp.sensors.common import SensorError

# Bosch BMP280/BME280 datasheet worked example (same T/P compensation on both parts):
# adc_T = 519888 -> t_fine = 128422, T = 25.08 degC; adc_P = 415148 -> p = 100653.27 Pa.
EXAMPLE_ADC_T = 519888
EXAMPLE_ADC_P = 415148


def example_sensor(adc_h=30000):
    bus, chip, _, _ = bench()
    chip.raw = (EXAMPLE_ADC_T, EXAMPLE_ADC_P, adc_h)
    return BME280(bus, 0x76), chip


def test_datasheet_example_temperature_is_exact():
    sensor, _ = example_sensor()
    reading = sensor.read()
    assert sensor.t_fine(EXAMPLE_ADC_T) == 128422
    assert reading["celsius"] == 25.08


def test_datasheet_example_pressure_within_the_32_bit_formulas_resolution():
    sensor, _ = example_sensor()
    hpa = sensor.read()["hpa"]
    assert abs(hpa - 1006.5327) < 0.05, hpa  # datasheet: 100653.27 Pa


def test_calibration_words_are_read_and_sign_extended():
    cal = {"T": (27504, 26435, -1000),
           "P": (36477, -10685, 3024, 2855, 140, -7, 15500, -14600, 6000),
           "H": (75, 362, 0, -313, -50, -30)}  # negative 12-bit H4/H5 and signed H6
    bus = simchips.I2C(simchips.BME280Chip(0x76, calibration=cal))
    sensor = BME280(bus)
    sensor.setup()
    assert sensor.t == cal["T"]
    assert sensor.p == cal["P"]
    assert sensor.h == cal["H"]


# Raw words across the range, and how far the integer driver may be from the datasheet's float
# formulas (tests/sensors_host checks these hold where a board computes them in float32).
PRESSURE_ADC_T = (300000, 450000, 519888, 600000)
PRESSURE_ADC_P = (250000, 330000, 415148, 500000, 600000)
HUMIDITY_ADC_T = (400000, 519888, 580000)
HUMIDITY_ADC_H = (20000, 26000, 30000, 36000, 42000)
T_FINE_WITHIN, PASCALS_WITHIN, RH_WITHIN = 2, 5, 0.05


def test_pressure_agrees_with_the_datasheet_double_formula_across_the_range():
    sensor, _ = example_sensor()
    sensor.setup()
    for adc_t in PRESSURE_ADC_T:
        tf = sensor.t_fine(adc_t)
        assert abs(tf - simchips.t_fine_float(adc_t, sensor.t)) < T_FINE_WITHIN
        for adc_p in PRESSURE_ADC_P:
            exact = simchips.pascals_float(adc_p, tf, sensor.p)
            assert abs(sensor.pascals(adc_p, tf) - exact) < PASCALS_WITHIN, (adc_t, adc_p)


def test_humidity_agrees_with_the_datasheet_double_formula():
    sensor, _ = example_sensor()
    sensor.setup()
    for adc_t in HUMIDITY_ADC_T:
        tf = sensor.t_fine(adc_t)
        for adc_h in HUMIDITY_ADC_H:
            exact = simchips.humidity_float(adc_h, tf, sensor.h)
            assert abs(sensor.humidity(adc_h, tf) / 1024 - exact) < RH_WITHIN, (adc_t, adc_h)


def test_humidity_is_clamped_to_0_and_100_percent():
    sensor, _ = example_sensor()
    sensor.setup()
    tf = sensor.t_fine(EXAMPLE_ADC_T)
    assert sensor.humidity(0, tf) == 0
    assert sensor.humidity(65535, tf) == 100 * 1024


def test_read_recovers_the_simulated_conditions():
    bus, chip, _, world = bench(celsius=-5.25, rh=80.5, hpa=950.0)
    reading = BME280(bus).read()
    assert sorted(reading) == ["celsius", "hpa", "rh"]
    assert abs(reading["celsius"] - world["celsius"]) <= 0.011
    assert abs(reading["rh"] - world["rh"]) <= 0.05
    assert abs(reading["hpa"] - world["hpa"]) <= 0.05


def test_each_read_is_one_forced_measurement_with_x1_oversampling():
    bus, chip, _, _ = bench()
    sensor = BME280(bus)
    sensor.read()
    sensor.read()
    assert chip.measurements == 2
    assert chip.regs[0xF2] == 0x01            # osrs_h x1
    assert chip.regs[0xF4] >> 2 == 0x09       # osrs_t x1, osrs_p x1; mode back to sleep
    assert chip.regs[0xF4] & 0x03 == 0


def test_waits_for_the_measuring_bit_but_not_forever():
    bus, chip, _, _ = bench()
    chip.busy_reads = 3
    assert BME280(bus).read()["celsius"] == 21.5
    chip.busy_reads = 50
    e = raises(BME280(bus).read, SensorError)
    assert "did not finish" in str(e)


def test_wrong_chip_id_names_the_part_found():
    bus = simchips.I2C(simchips.BME280Chip(0x76, chip_id=0x58))
    e = raises(BME280(bus).read, SensorError)
    assert "0x58" in str(e) and "BMP280 (no humidity)" in str(e)
    for chip_id, says in ((0x61, "this is a BME680;"), (0x42, "this is not a BME280;")):
        bus = simchips.I2C(simchips.BME280Chip(0x76, chip_id=chip_id))
        assert says in str(raises(BME280(bus).read, SensorError)), chip_id


def test_absent_device_is_an_actionable_error():
    bus, _, _, _ = bench()
    e = raises(BME280(bus, 0x77, wiring="SDA GP4, SCL GP5").read, SensorError)
    text = str(e)
    assert "0x77" in text and "did not answer" in text and "SDA GP4" in text


def test_a_nack_mid_session_is_an_error_and_the_sensor_recovers():
    bus, chip, _, _ = bench()
    sensor = BME280(bus)
    sensor.read()
    chip.absent = True
    assert "NACK" in str(raises(sensor.read, SensorError))
    chip.absent = False
    assert sensor.read()["rh"] == 45.0


def test_a_stuck_bus_is_reported_as_a_timeout():
    bus, _, _, _ = bench()
    bus.stuck = True
    assert "timed out" in str(raises(BME280(bus).read, SensorError))


def test_skipped_measurement_values_are_errors_not_readings():
    sensor, chip = example_sensor()
    chip.raw = (0x80000, EXAMPLE_ADC_P, 30000)
    assert "skipped" in str(raises(sensor.read, SensorError))


def test_attach_registers_a_tool_and_a_subscribable_resource():
    bus, chip, _, _ = bench()
    s = ready(server())
    attach(s, BME280(bus, 0x76))
    tool = tools(s)["read_bme280"]
    assert tool["annotations"]["readOnlyHint"] is True
    assert sorted(tool["outputSchema"]["properties"]) == ["age_ms", "celsius", "hpa", "rh", "units"]
    units = {"celsius": "Cel", "rh": "%", "hpa": "hPa"}
    assert tool["outputSchema"]["properties"]["units"]["const"] == units
    reading = call(s, "read_bme280")["structuredContent"]
    assert reading["hpa"] > 1000 and reading["units"] == units and reading["age_ms"] == 0
    from tests.core.support import result
    listed = result(s, "resources/list")["resources"]
    assert listed[0]["uri"] == "sensor://bme280/0x76"
    text = result(s, "resources/read", {"uri": "sensor://bme280/0x76"})["contents"][0]["text"]
    assert '"celsius"' in text
    assert result(s, "resources/subscribe", {"uri": "sensor://bme280/0x76"}) == {}


def test_a_sensor_absent_from_the_start_is_an_is_error_result_at_each_read():
    bus, chip, _, _ = bench()
    chip.absent = True
    s = ready(server())
    attach(s, BME280(bus, 0x76, wiring="SDA GP4, SCL GP5"))
    for _ in range(2):
        failed = call(s, "read_bme280")
        assert failed["isError"] is True
        assert failed["content"][0]["text"] == (
            "read_bme280 failed: BME280 at 0x76 did not answer on the I2C bus (NACK): check its "
            "power, the SDA/SCL wiring (SDA GP4, SCL GP5), the pull-up resistors and the address "
            "it is strapped to")


def test_a_device_fault_is_an_is_error_result_and_the_server_keeps_serving():
    bus, chip, _, _ = bench()
    s = ready(server())
    attach(s, BME280(bus, 0x76))
    chip.absent = True
    failed = call(s, "read_bme280")
    assert failed["isError"] is True
    assert "did not answer" in failed["content"][0]["text"]
    chip.absent = False
    assert "isError" not in call(s, "read_bme280")
