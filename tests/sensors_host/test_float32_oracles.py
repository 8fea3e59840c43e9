# The BME280 tests' oracles (the datasheet's float formulas in simchips) as a single-precision
# board computes them: every step in float32. The tolerances of tests/sensors/test_bme280.py
# must hold there too, not only with the doubles of CPython and the unix and wasm ports.
from tests.float32 import f32
from tests.sensors import test_bme280 as shared
from tinymcp.sensors import simchips


class F32:
    # A float whose arithmetic rounds to float32 after each step, as a board's FPU does (a
    # double holds the exact sum, product or quotient of two float32s to well within one
    # rounding, so rounding it once gives the float32 result).
    def __init__(self, value):
        self.v = f32(float(value))

    def _other(self, other):
        return other.v if isinstance(other, F32) else f32(float(other))

    def __add__(self, o):
        return F32(self.v + self._other(o))

    __radd__ = __add__

    def __sub__(self, o):
        return F32(self.v - self._other(o))

    def __rsub__(self, o):
        return F32(self._other(o) - self.v)

    def __mul__(self, o):
        return F32(self.v * self._other(o))

    __rmul__ = __mul__

    def __truediv__(self, o):
        return F32(self.v / self._other(o))

    def __rtruediv__(self, o):
        return F32(self._other(o) / self.v)

    def __eq__(self, o):
        return self.v == self._other(o)

    def __lt__(self, o):
        return self.v < self._other(o)

    def __gt__(self, o):
        return self.v > self._other(o)


def single(values):
    return [F32(v) for v in values]


def test_f32_arithmetic_is_not_double_arithmetic():
    assert (F32(1) + 2.0 ** -30).v == 1.0 and (F32(0.1) * 3).v == f32(0.3)
    assert (F32(16777216) + 1).v == 16777216.0  # 2^24 + 1 needs 25 bits


def test_the_pressure_and_t_fine_tolerances_hold_in_float32():
    sensor, _ = shared.example_sensor()
    sensor.setup()
    for adc_t in shared.PRESSURE_ADC_T:
        tf = sensor.t_fine(adc_t)
        assert abs(tf - simchips.t_fine_float(F32(adc_t), single(sensor.t)).v) < shared.T_FINE_WITHIN
        for adc_p in shared.PRESSURE_ADC_P:
            board = simchips.pascals_float(F32(adc_p), F32(tf), single(sensor.p)).v
            assert abs(sensor.pascals(adc_p, tf) - board) < shared.PASCALS_WITHIN, (adc_t, adc_p)


def test_the_humidity_tolerance_holds_in_float32():
    sensor, _ = shared.example_sensor()
    sensor.setup()
    for adc_t in shared.HUMIDITY_ADC_T:
        tf = sensor.t_fine(adc_t)
        for adc_h in shared.HUMIDITY_ADC_H:
            board = simchips.humidity_float(F32(adc_h), F32(tf), single(sensor.h))
            board = board.v if isinstance(board, F32) else board  # clamped: a plain float
            assert abs(sensor.humidity(adc_h, tf) / 1024 - board) < shared.RH_WITHIN


def test_the_hcsr04_speed_of_sound_arithmetic_holds_in_float32(monkeypatch):
    # hcsr04.echo_cm run with every step in float32 (sqrtf is correctly rounded: the double's
    # root rounded once) stays within 0.01 cm of the double result over the whole range and the
    # air temperatures a board meets, far inside the module's 0.3 cm resolution; and the shared
    # test's tolerance against the simulated module holds on such a board.
    import math

    from tinymcp.sensors import hcsr04
    from tinymcp.sensors.simparts_in import HCSR04Part
    double = {(us, t): hcsr04.echo_cm(us, t) for us in range(116, 30000, 97)
              for t in (-20.0, -5.5, 0.0, 20.0, 31.7, 50.0)}
    monkeypatch.setattr(hcsr04, "sqrt", lambda x: F32(math.sqrt(x.v)))
    for (us, t), exact in double.items():
        board = hcsr04.echo_cm(F32(us), F32(t))
        assert isinstance(board, F32) and abs(board.v - exact) < 0.01, (us, t)
    for t in (-10.0, 20.0, 35.0):
        for cm in (2.5, 123.4, 399.0):
            width = HCSR04Part(lambda: cm, lambda: t).echo_us()
            assert abs(hcsr04.echo_cm(F32(width), F32(t)).v - cm) <= 0.3, (t, cm)
