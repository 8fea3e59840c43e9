# The microcontroller's own temperature sensor: RP2040 ADC4, or the ESP32 family's.
#
#   RP2040(machine.ADC(4)).read()  -> {"celsius": 27.3}
#   ESP32(esp32).read()            -> {"celsius": 41.0}   (pass the esp32 module)
#   attach(server, sensor)         -> read_temperature tool + sensor://temperature
from tinymcp.sensors.common import Throttled, reading, typed


class RP2040:
    # RP2040 datasheet 4.9.5: T = 27 - (V - 0.706) / 0.001721, V from ADC4 against vref.
    def __init__(self, adc, vref=3.3):
        self.adc = adc
        self.vref = vref

    def read(self):
        volts = self.adc.read_u16() * self.vref / 65535
        return {"celsius": round(27 - (volts - 0.706) / 0.001721, 2)}


def __getattr__(name):
    # internal.ESP32, from a module of its own: an RP2040 board never loads it (0.3 KiB).
    if name == "ESP32":
        from tinymcp.sensors.internal_esp32 import ESP32
        return ESP32
    raise AttributeError(name)


def attach(server, sensor, tool="read_temperature", uri="sensor://temperature", every_ms=1000):
    from tinymcp.schema import number
    units = {"celsius": "Cel"}

    @server.tool(tool, "Read the board's temperature sensor in degrees Celsius.",
                 outputs=typed({"celsius": number("Temperature in degrees Celsius")}, units),
                 title="Read temperature", read_only=True, open_world=False)
    def read_tool():
        return reading(sensor.read(), units)

    @server.resource(uri, "temperature", "The temperature sensor's latest reading",
                     mime="application/json", title="Board temperature",
                     watch=Throttled(sensor.read, _tenths, every_ms))
    def read_resource():
        return reading(sensor.read(), units)

    return sensor


def _tenths(r):
    return int(r["celsius"] * 10 + (0.5 if r["celsius"] >= 0 else -0.5))
