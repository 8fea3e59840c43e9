# Bosch BME280 on I2C: forced-mode reads with the datasheet's integer compensation.
#
#   sensor = BME280(i2c, address=0x76)      # SDO to GND: 0x76, to VDDIO: 0x77
#   sensor.read() -> {"celsius": 21.87, "rh": 45.12, "hpa": 1008.31}
#   attach(server, sensor)                  # read_bme280 tool + sensor://bme280/0x76
from tinymcp.sensors.common import Throttled, hexaddr, reading, typed


class BME280:
    # What a board constructs and attach() registers. The chip code (tinymcp/sensors/
    # bme280chip.py) is loaded at the first read and kept: a board holds it only once it reads
    # the sensor, and a sensor that is absent never stops a boot.
    def __init__(self, i2c, address=0x76, wiring=""):
        self.i2c = i2c
        self.address = address
        self.wiring = wiring  # where the board wired it, quoted in error messages
        self.chip = None

    def driver(self):
        # -> the chip's driver (bme280chip.Chip), made at the first call.
        if self.chip is None:
            from tinymcp.sensors.bme280chip import Chip
            self.chip = Chip(self.i2c, self.address, self.wiring)
        return self.chip

    def read(self):
        # -> {"celsius": ..., "rh": ..., "hpa": ...} of one forced-mode measurement.
        return self.driver().read()

    def read_raw(self):
        # -> (adc_T, adc_P, adc_H) of one forced-mode measurement.
        return self.driver().read_raw()


def attach(server, sensor, name="bme280", every_ms=2000):
    # One call: a read tool and a subscribable resource named after the sensor's address.
    from tinymcp.schema import number
    uri = "sensor://bme280/" + hexaddr(sensor.address)
    units = {"celsius": "Cel", "rh": "%", "hpa": "hPa"}
    outputs = typed({"celsius": number("Temperature in degrees Celsius"),
                     "rh": number("Relative humidity in percent", 0, 100),
                     "hpa": number("Barometric pressure in hectopascals")}, units)

    @server.tool("read_" + name, "Read temperature, humidity and pressure from the BME280 at "
                 + hexaddr(sensor.address) + ".", outputs=outputs,
                 title="Read BME280 " + hexaddr(sensor.address), read_only=True,
                 idempotent=True, open_world=False)
    def read_tool():
        return reading(sensor.read(), units)

    @server.resource(uri, name, "Latest BME280 reading: celsius, rh, hpa",
                     mime="application/json", title="BME280 " + hexaddr(sensor.address),
                     watch=Throttled(sensor.read, _rounded, every_ms))
    def read_resource():
        return reading(sensor.read(), units)

    return sensor


def _rounded(r):
    # What counts as a change worth a notification: 0.1 degC, 0.5 %RH, 0.1 hPa.
    return (int(r["celsius"] * 10), int(r["rh"] * 2), int(r["hpa"] * 10))
