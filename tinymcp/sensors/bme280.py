# Bosch BME280 on I2C: forced-mode reads with the datasheet's integer compensation.
#
#   sensor = BME280(i2c, address=0x76)      # SDO to GND: 0x76, to VDDIO: 0x77
#   sensor.read() -> {"celsius": 21.87, "rh": 45.12, "hpa": 1008.31}
#   attach(server, sensor)                  # read_bme280 tool + sensor://bme280/0x76
from struct import unpack_from

from tinymcp.sensors.common import (SensorError, Throttled, bus_fault, hexaddr, reading, sleep_ms,
                                    typed)

try:
    from micropython import const
except ImportError:
    def const(x):
        return x

_REG_CALIB_TP = const(0x88)   # 26 bytes: T1..T3, P1..P9, (0xA0 unused), H1
_REG_CHIP_ID = const(0xD0)
_REG_RESET = const(0xE0)
_REG_CALIB_H = const(0xE1)    # 7 bytes: H2..H6
_REG_CTRL_HUM = const(0xF2)
_REG_STATUS = const(0xF3)
_REG_CTRL_MEAS = const(0xF4)
_REG_DATA = const(0xF7)       # 8 bytes: press[3], temp[3], hum[2]

CHIP_ID = const(0x60)
_OTHER_CHIPS = {0x58: "a BMP280 (no humidity)", 0x56: "a BMP280 sample", 0x57: "a BMP280 sample",
                0x55: "a BMP180", 0x61: "a BME680"}

# Oversampling x1 for all three: the datasheet's "weather monitoring" setting.
_OSRS_H = const(0x01)
_CTRL_FORCED = const(0x25)    # osrs_t x1 (001), osrs_p x1 (001), mode forced (01)
# Datasheet 9.1: t_measure,max = 1.25 + 2.3*1 + (2.3*1 + 0.575) * 2 = 9.3 ms at x1.
_MEASURE_MS = const(10)
_STATUS_MEASURING = const(0x08)


class BME280:
    def __init__(self, i2c, address=0x76, wiring=""):
        self.i2c = i2c
        self.address = address
        self.wiring = wiring  # where the board wired it, quoted in error messages
        self.name = "BME280 at " + hexaddr(address)
        self._data = bytearray(8)
        self._one = bytearray(1)
        self._ctrl = bytearray(1)
        self.ready = False  # chip id checked and calibration read (again after a fault)
        self.t = (0, 0, 0)  # calibration words
        self.p = (0, 0, 0, 0, 0, 0, 0, 0, 0)
        self.h = (0, 0, 0, 0, 0, 0)
        self.adc_t = self.adc_p = self.adc_h = 0   # the last raw words

    # -- setup: chip id and calibration, on first use so a missing sensor never stops a boot --

    def setup(self):
        try:
            self.i2c.readfrom_mem_into(self.address, _REG_CHIP_ID, self._one)
            chip = self._one[0]
            if chip != CHIP_ID:
                what = _OTHER_CHIPS.get(chip, "not a BME280")
                raise SensorError(self.name + " has chip id " + hexaddr(chip) + ", expected "
                                  + hexaddr(CHIP_ID) + ": this is " + what
                                  + "; check the part and the address")
            c = bytearray(26)   # read once (and again after a fault): not kept
            h = bytearray(7)
            self.i2c.readfrom_mem_into(self.address, _REG_CALIB_TP, c)
            self.i2c.readfrom_mem_into(self.address, _REG_CALIB_H, h)
        except OSError as e:
            raise bus_fault(e, self.name, self.wiring)
        self.t = unpack_from("<Hhh", c)   # dig_T1..T3, then dig_P1..P9: little-endian words
        self.p = unpack_from("<Hhhhhhhhh", c, 6)
        h2, h3, e4, e5, e6, h6 = unpack_from("<hBbBbb", h)
        # H4 and H5 are 12-bit values sharing the nibbles of 0xE5; their top bytes are signed.
        self.h = (c[25], h2, h3, (e4 << 4) | (e5 & 0x0F), (e6 << 4) | (e5 >> 4), h6)
        self.ready = True

    # -- one forced measurement --------------------------------------------------------------

    def read_raw(self):
        # -> (adc_T, adc_P, adc_H) of one forced-mode measurement.
        self._measure()
        return self.adc_t, self.adc_p, self.adc_h

    def _measure(self):
        # One forced-mode measurement into self.adc_t/adc_p/adc_h (no tuple to allocate).
        if not self.ready:
            self.setup()
        i2c = self.i2c
        address = self.address
        one = self._one
        try:
            one[0] = _OSRS_H  # ctrl_hum only takes effect with the next ctrl_meas write
            i2c.writeto_mem(address, _REG_CTRL_HUM, one)
            self._ctrl[0] = _CTRL_FORCED
            i2c.writeto_mem(address, _REG_CTRL_MEAS, self._ctrl)
            sleep_ms(_MEASURE_MS)
            for _ in range(5):  # bounded: a chip that never finishes is a fault, not a hang
                i2c.readfrom_mem_into(address, _REG_STATUS, one)
                if not one[0] & _STATUS_MEASURING:
                    break
                sleep_ms(2)
            else:
                raise SensorError(self.name + " did not finish its measurement (timeout); "
                                  "power-cycle the sensor")
            i2c.readfrom_mem_into(address, _REG_DATA, self._data)
        except OSError as e:
            self.ready = False  # re-check the chip id and calibration once it answers again
            raise bus_fault(e, self.name, self.wiring)
        d = self._data
        self.adc_p = (d[0] << 12) | (d[1] << 4) | (d[2] >> 4)
        self.adc_t = (d[3] << 12) | (d[4] << 4) | (d[5] >> 4)
        self.adc_h = (d[6] << 8) | d[7]
        if self.adc_t == 0x80000 or self.adc_p == 0x80000 or self.adc_h == 0x8000:
            raise SensorError(self.name + " returned its 'skipped' value: a measurement was "
                              "not taken; check the chip is a BME280 and try again")

    def read(self):
        self._measure()
        t_fine = self.t_fine(self.adc_t)
        centi = (t_fine * 5 + 128) >> 8
        pa = self.pascals(self.adc_p, t_fine)
        rh = (self.humidity(self.adc_h, t_fine) * 100) >> 10  # Q22.10 %RH -> hundredths
        return {"celsius": centi / 100, "rh": rh / 100, "hpa": pa / 100}

    # -- Bosch integer compensation (datasheet 4.2.3 and 8.2, 32-bit versions) --------------
    # The 32-bit pressure formula lands within ~3 Pa of the 64-bit and double ones (the
    # sensor's own accuracy is +-100 Pa). Two of its products are split (exactly) so that,
    # with the Bosch example calibration, every intermediate fits a 31-bit small int from
    # -10 to +60 degC: a read then makes no big-int garbage even on 32-bit ports.

    def t_fine(self, adc_t):
        t1, t2, t3 = self.t
        var1 = ((((adc_t >> 3) - (t1 << 1))) * t2) >> 11
        x = (adc_t >> 4) - t1
        var2 = (((x * x) >> 12) * t3) >> 14
        return var1 + var2

    def pascals(self, adc_p, t_fine):
        p1, p2, p3, p4, p5, p6, p7, p8, p9 = self.p
        var1 = (t_fine >> 1) - 64000
        sq = (var1 >> 2) * (var1 >> 2)
        var2 = ((sq >> 11) * p6) + ((var1 * p5) << 1)
        var2 = (var2 >> 2) + (p4 << 16)
        var1 = (((p3 * (sq >> 13)) >> 3) + ((p2 * var1) >> 1)) >> 18
        x = 32768 + var1
        var1 = (((x >> 8) * p1) + (((x & 0xFF) * p1) >> 8)) >> 7  # (x * p1) >> 15, in 30 bits
        if var1 == 0:
            return 0  # the datasheet's guard against a division by zero
        # The datasheet's p = q * 3125; p < 2^31 ? (p << 1) / var1 : (p / var1) * 2, with each
        # division split as q = a * var1 + b so that no product needs more than 30 bits.
        q = (1048576 - adc_p) - (var2 >> 12)
        a = q // var1
        b = q - a * var1
        if q < 687195:  # q * 3125 < 2^31
            p = a * 6250 + (b * 6250) // var1
        else:
            p = (a * 3125 + (b * 3125) // var1) * 2
        var1 = (p9 * (((p >> 3) * (p >> 3)) >> 13)) >> 12
        var2 = ((p >> 2) * p8) >> 13
        return p + ((var1 + var2 + p7) >> 4)

    def humidity(self, adc_h, t_fine):
        # -> relative humidity in %RH as Q22.10 (divide by 1024).
        h1, h2, h3, h4, h5, h6 = self.h
        v = t_fine - 76800
        scaled = (((adc_h << 14) - (h4 << 20) - (h5 * v)) + 16384) >> 15
        v = scaled * (((((((v * h6) >> 10) * (((v * h3) >> 11) + 32768)) >> 10) + 2097152)
                       * h2 + 8192) >> 14)
        v = v - (((((v >> 15) * (v >> 15)) >> 7) * h1) >> 4)
        if v < 0:
            v = 0
        elif v > 419430400:
            v = 419430400
        return v >> 12


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
