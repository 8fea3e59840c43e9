# HC-SR04 ultrasonic distance: a 10 us trigger, the echo's width timed by machine.time_pulse_us,
# the speed of sound taken at the air's temperature.
#
#   sensor = HCSR04(Pin(14, Pin.OUT), Pin(15, Pin.IN), wiring="TRIG GP14, ECHO GP15 via divider")
#   sensor.read() -> {"cm": 42.7}
#   attach(server, sensor)          # read_distance
#
# The module runs on 5 V and its ECHO is a 5 V output: a 3.3 V board reads it through a divider
# (1 kOhm over 2 kOhm, for instance). time_pulse_us comes from machine on a board (imported at the
# first read, never at module level) or from the simulated part (tinymcp/sensors/simparts_in.py).
import time

from tinymcp.clock import sleep_ms, ticks_diff, ticks_ms
from tinymcp.sensors.common import SensorError, reading, typed

try:
    from math import sqrt
except ImportError:  # a port built without math
    def sqrt(x):
        return x ** 0.5

try:
    sleep_us = time.sleep_us
except AttributeError:  # CPython
    def sleep_us(us):
        time.sleep(us / 1000000)

MIN_CM = 2.0        # datasheet: 2 cm .. 400 cm
MAX_CM = 400.0
SETTLE_MS = 60      # datasheet: at least 60 ms from one measurement cycle to the next
TIMEOUT_US = 30000  # 400 cm and back at -20 degC is 25.1 ms; the no-object echo is ~38 ms


def speed_of_sound(celsius):
    # m/s in dry air: 20.05 * sqrt(T in kelvin) (331.3 m/s at 0 degC, 343.2 at 20 degC).
    return 20.05 * sqrt(celsius + 273.15)


def echo_cm(us, celsius=20.0):
    # An echo's width in us -> the distance in cm: half the path the sound travelled. On a
    # float32 board: every step rounds to 24 bits, well under the module's 0.3 cm resolution
    # (tests/sensors_host/test_float32_oracles.py).
    return us * speed_of_sound(celsius) / 20000


class HCSR04:
    def __init__(self, trig, echo, time_pulse_us=None, celsius=None, wiring=""):
        self.trig = trig
        self.echo = echo
        self.time_pulse_us = time_pulse_us
        self.celsius = celsius   # () -> the air's temperature (a BME280's, say); None: 20 degC
        self.wiring = wiring     # where the board wired it, quoted in error messages
        self.last = None         # when the last measurement cycle began
        trig.value(0)

    def hint(self):
        return (" (" + self.wiring + ")") if self.wiring else ""

    def echo_width(self):
        # One measurement cycle -> the echo's width in us (or time_pulse_us's -1 / -2).
        pulse = self.time_pulse_us
        if pulse is None:
            from machine import time_pulse_us as pulse
            self.time_pulse_us = pulse
        if self.last is not None:
            wait = SETTLE_MS - ticks_diff(ticks_ms(), self.last)
            if wait > 0:  # the last burst's echoes must die away
                sleep_ms(wait)
        if self.echo.value():
            raise SensorError("The HC-SR04's ECHO line is high before any trigger: check the "
                              "ECHO wire and its divider" + self.hint())
        trig = self.trig
        trig.value(0)
        sleep_us(2)
        trig.value(1)
        sleep_us(10)
        trig.value(0)
        self.last = ticks_ms()
        return pulse(self.echo, 1, TIMEOUT_US)

    def read(self, celsius=None):
        width = self.echo_width()
        if width == -2:
            raise SensorError("No echo from the HC-SR04: check its 5 V supply and GND, the TRIG "
                              "and ECHO wires" + self.hint() + ", and that ECHO (a 5 V output) "
                              "reaches a 3.3 V pin through a divider (1k over 2k)")
        if width < 0:
            raise SensorError("Nothing in range: no surface within " + str(int(MAX_CM)) + " cm "
                              "faces the HC-SR04 (a soft or slanted target may not echo)")
        if celsius is None:
            celsius = self.celsius() if self.celsius is not None else 20.0
        cm = echo_cm(width, celsius)
        if cm > MAX_CM:
            raise SensorError("Out of range: the echo says " + str(int(cm)) + " cm, beyond the "
                              "HC-SR04's " + str(int(MAX_CM)) + " cm")
        if cm < MIN_CM:
            raise SensorError("Too close: the HC-SR04 measures from " + str(int(MIN_CM)) + " cm; "
                              "the target is nearer")
        return {"cm": round(cm, 1)}


def attach(server, sensor, name="distance"):
    from tinymcp.schema import number
    units = {"cm": "cm"}

    @server.tool("read_" + name, "Measure the distance to whatever faces the HC-SR04 "
                 "ultrasonic sensor (2..400 cm), in cm; the air temperature sets the speed of "
                 "sound (20 degC unless given).",
                 inputs={"celsius?": number("Air temperature in degrees Celsius", -40, 85)},
                 outputs=typed({"cm": number("Distance in centimetres", MIN_CM, MAX_CM)}, units),
                 title="Read distance", read_only=True, idempotent=True, open_world=False)
    def read_tool(celsius=None):
        return reading(sensor.read(celsius), units)

    return sensor
