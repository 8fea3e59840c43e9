# The ESP32 family's temperature sensor, internal.ESP32 (tinymcp/sensors/internal.py loads it
# when a board first names it: an RP2040 board never holds it).
from tinymcp.sensors.common import SensorError


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
