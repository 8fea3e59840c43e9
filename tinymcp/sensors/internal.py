# The microcontroller's own temperature sensor: RP2040 ADC4, or the ESP32 family's.
#
#   RP2040(machine.ADC(4)).read()  -> {"celsius": 27.3}
#   ESP32(esp32).read()            -> {"celsius": 41.0}   (pass the esp32 module)
#   attach(server, sensor)         -> read_temperature tool + sensor://temperature
from tinymcp.sensors.common import SensorError, Throttled, reading, typed


class RP2040:
    # RP2040 datasheet 4.9.5: T = 27 - (V - 0.706) / 0.001721, V from ADC4 against vref.
    def __init__(self, adc, vref=3.3):
        self.adc = adc
        self.vref = vref

    def read(self):
        volts = self.adc.read_u16() * self.vref / 65535
        return {"celsius": round(27 - (volts - 0.706) / 0.001721, 2)}


class ESP32:
    # ESP32-S2/S3/C3/C6 have esp32.mcu_temperature() in degC; the original ESP32 only
    # raw_temperature(), in degF and uncalibrated (it reads well above the air around it).
    def __init__(self, esp32_module):
        if hasattr(esp32_module, "mcu_temperature"):
            self.sensor = esp32_module.mcu_temperature
            self.fahrenheit = False
        elif hasattr(esp32_module, "raw_temperature"):
            self.sensor = esp32_module.raw_temperature
            self.fahrenheit = True
        else:
            raise SensorError("this ESP32 port has no internal temperature sensor")

    def read(self):
        if self.fahrenheit:
            return {"celsius": round((self.sensor() - 32) / 1.8, 1)}
        return {"celsius": float(self.sensor())}


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
