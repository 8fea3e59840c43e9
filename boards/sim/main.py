# The simulated board: a drifting temperature, four ADC channels and an LED, no hardware needed.
import math
import random
import sys

if __name__ == "__main__":  # run from a checkout: the repo root holds tinymcp/ and ports/
    sys.path.append(globals().get("__file__", "").rsplit("boards", 1)[0] or ".")

from tinymcp import Server
from tinymcp.clock import ticks_ms
from tinymcp.schema import boolean, integer, number

VREF = 3.3
_start = ticks_ms()


def _seconds():
    return (ticks_ms() - _start) / 1000


class SimBoard:
    # The "hardware": readings are functions of time plus a little noise.
    def __init__(self):
        self.led = False

    def temperature(self):
        t = _seconds()
        # A slow swing plus a faster ripple, so a 0.1 degree change comes every second or two.
        base = 22.0 + 2.0 * math.sin(t / 48.0) + 0.3 * math.sin(t / 1.1)
        return round(base + random.uniform(-0.02, 0.02), 2)

    def adc(self, channel):
        t = _seconds()
        if channel == 0:    # a 1.65 V sine, like a signal generator on ADC0
            volts = 1.65 + 1.2 * math.sin(t * 2.0)
        elif channel == 1:  # a potentiometer left at a quarter turn
            volts = VREF * 0.25
        elif channel == 2:  # a photodiode that reads brighter while the LED is on
            volts = 2.4 if self.led else 0.35
        else:               # a floating input: noise around mid-rail
            volts = 1.6
        volts = min(VREF, max(0.0, volts + random.uniform(-0.003, 0.003)))
        raw = int(volts / VREF * 65535 + 0.5)
        return raw, round(raw * VREF / 65535, 4)


def build(board=None):
    board = board or SimBoard()
    server = Server("tinymcp-sim", "0.1.0", title="tinymcp simulated board",
                    instructions="A simulated microcontroller board: read its temperature "
                                 "sensor and ADC channels, switch its LED.")

    @server.tool("read_temperature", "Read the board's temperature sensor in degrees Celsius.",
                 outputs={"celsius": number("Temperature in degrees Celsius")},
                 title="Read temperature", read_only=True, open_world=False)
    def read_temperature():
        return {"celsius": board.temperature()}

    @server.tool("read_adc", "Read one 16-bit ADC channel (3.3 V reference).",
                 inputs={"channel": integer("ADC channel", 0, 3)},
                 outputs={"raw": integer("Raw reading, 0..65535", 0, 65535),
                          "volts": number("Voltage at the pin")},
                 title="Read ADC channel", read_only=True, open_world=False)
    def read_adc(channel):
        raw, volts = board.adc(channel)
        return {"raw": raw, "volts": volts}

    @server.tool("set_led", "Switch the board's LED on or off.",
                 inputs={"on": boolean("true to light the LED")},
                 outputs={"on": boolean("The LED state now")},
                 title="Set LED", read_only=False, destructive=False, idempotent=True,
                 open_world=False)
    def set_led(on):
        board.led = on
        return {"on": on}

    @server.resource("sensor://temperature", "temperature",
                     "The temperature sensor's latest reading", mime="application/json",
                     title="Board temperature",
                     watch=lambda: round(board.temperature(), 1))
    def temperature_resource():
        return {"celsius": board.temperature()}

    return server


if __name__ == "__main__":
    from ports import serve
    serve(build())
