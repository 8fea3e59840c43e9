# On 32-bit ports MicroPython's small ints hold 31 bits: wider intermediates become heap
# big-ints. The BME280 compensation stays within them over the usual indoor/outdoor range.
from tinymcp.sensors import simchips
from tinymcp.sensors.bme280 import BME280

LIMIT = 1 << 30


class Tracked(int):
    # An int that records every arithmetic result outside the 31-bit small-int range.
    wide = []


def _op(name):
    def apply(a, b):
        value = Tracked(getattr(int, name)(int(a), int(b)))
        if not -LIMIT <= value < LIMIT:
            Tracked.wide.append((name, int(a), int(b)))
        return value
    return apply


for _name in ("add", "sub", "mul", "rshift", "lshift", "floordiv", "and"):
    setattr(Tracked, "__" + _name + "__", _op("__" + _name + "__"))
    setattr(Tracked, "__r" + _name + "__",
            (lambda n: lambda a, b: _op("__" + n + "__")(b, a))(_name))


def test_compensation_needs_no_big_ints_from_minus_10_to_60_degc():
    cal = simchips.BOSCH_EXAMPLE
    chip = simchips.BME280Chip(calibration=cal)
    sensor = BME280(None)
    sensor.t, sensor.p, sensor.h = [tuple(Tracked(v) for v in cal[k]) for k in "TPH"]
    for celsius in range(-10, 61, 5):
        for rh in (0, 30, 60, 100):
            for hpa in (300, 800, 1013, 1100):
                adc_t, adc_p, adc_h = chip.raw_for(celsius, rh, hpa)
                Tracked.wide = []
                t_fine = sensor.t_fine(Tracked(adc_t))
                sensor.pascals(Tracked(adc_p), t_fine)
                sensor.humidity(Tracked(adc_h), t_fine)
                assert Tracked.wide == [], (celsius, rh, hpa, Tracked.wide)
