# The reference board of the benchmark: the sim board's first three tools and its resource, no drivers.
#
# The same surface as tools/bench_support/sdk_sim.py, so heap figures measure the core and
# not the sensor drivers the full sim board wires in.
import math

from tinymcp import Server
from tinymcp.schema import boolean, integer, number

_state = {"led": False, "t": 0}


def _celsius():
    _state["t"] += 1
    return round(22.0 + 2.0 * math.sin(_state["t"] / 48.0), 2)


def build():
    server = Server("tinymcp-ref", "0.1.0", title="tinymcp reference board",
                    instructions="Three tools and a resource, for the benchmark.")

    @server.tool("read_temperature", "Read the board's temperature sensor in degrees Celsius.",
                 outputs={"celsius": number("Temperature in degrees Celsius")},
                 title="Read temperature", read_only=True, open_world=False)
    def read_temperature():
        return {"celsius": _celsius()}

    @server.tool("read_adc", "Read one 16-bit ADC channel (3.3 V reference).",
                 inputs={"channel": integer("ADC channel", 0, 3)},
                 outputs={"raw": integer("Raw reading, 0..65535", 0, 65535),
                          "volts": number("Voltage at the pin")},
                 title="Read ADC channel", read_only=True, open_world=False)
    def read_adc(channel):
        raw = 16384 + channel * 1000
        return {"raw": raw, "volts": round(raw * 3.3 / 65535, 4)}

    @server.tool("set_led", "Switch the board's LED on or off.",
                 inputs={"on": boolean("true to light the LED")},
                 outputs={"on": boolean("The LED state now")},
                 title="Set LED", read_only=False, destructive=False, idempotent=True,
                 open_world=False)
    def set_led(on):
        _state["led"] = on
        return {"on": on}

    @server.resource("sensor://temperature", "temperature",
                     "The temperature sensor's latest reading", mime="application/json",
                     title="Board temperature", watch=lambda: _celsius())
    def temperature_resource():
        return {"celsius": _celsius()}

    return server
