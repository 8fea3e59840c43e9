# Sensirion SHT3x (SHT30/31/35) on I2C: single-shot reads, every word CRC-checked.
#
#   sensor = SHT3x(i2c, address=0x44)       # ADDR pin low: 0x44, high: 0x45
#   sensor.read() -> {"celsius": 22.41, "rh": 48.03}
#   attach(server, sensor)                  # read_sht3x tool + sensor://sht3x/0x44
from tinymcp.sensors.common import (SensorError, Throttled, bus_fault, hexaddr, reading, sleep_ms,
                                    typed)

# Single shot, clock stretching disabled (datasheet table 9): command, then the maximum
# measurement time in ms (table 4: 15.5 / 6.5 / 4.5 ms, rounded up).
REPEATABILITY = {"high": (0x2400, 16), "medium": (0x240B, 7), "low": (0x2416, 5)}
_SOFT_RESET = 0x30A2
_READ_STATUS = 0xF32D


def crc8(buf, start=0, end=2):
    # Datasheet 4.12: polynomial 0x31 (x^8 + x^5 + x^4 + 1), init 0xFF, no final XOR.
    crc = 0xFF
    for i in range(start, end):
        crc ^= buf[i]
        for _ in range(8):
            crc = ((crc << 1) ^ 0x31) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


class SHT3x:
    retries = 3      # extra 1 ms waits for a chip that is a little slower than its datasheet

    def __init__(self, i2c, address=0x44, repeatability="high", wiring=""):
        self.i2c = i2c
        self.address = address
        self.wiring = wiring  # where the board wired it, quoted in error messages
        self.name = "SHT3x at " + hexaddr(address)
        command, self.measure_ms = REPEATABILITY[repeatability]
        self._single = bytearray((command >> 8, command & 0xFF))
        self._cmd = bytearray(2)
        self._data = bytearray(6)

    def _send(self, command):
        self._cmd[0] = command >> 8
        self._cmd[1] = command & 0xFF
        self.i2c.writeto(self.address, self._cmd)

    def read_raw(self):
        # -> (S_T, S_RH), the raw 16-bit words, after both CRCs passed.
        self._measure()
        data = self._data
        return (data[0] << 8) | data[1], (data[3] << 8) | data[4]

    def _measure(self):
        # One single-shot measurement into self._data, CRC-checked (no tuple to allocate).
        i2c = self.i2c
        data = self._data
        try:
            i2c.writeto(self.address, self._single)
        except OSError as e:
            raise bus_fault(e, self.name, self.wiring)
        sleep_ms(self.measure_ms)
        tries = self.retries
        while True:
            try:
                i2c.readfrom_into(self.address, data)
                break
            except OSError as e:
                # Without clock stretching the chip NACKs its address until the data is ready.
                if tries == 0:
                    raise SensorError(self.name + " took the measurement command but never "
                                      "returned data (" + str(e) + "); power-cycle the sensor "
                                      "or check for a second device at that address")
                tries -= 1
                sleep_ms(1)
        if crc8(data, 0, 2) != data[2] or crc8(data, 3, 5) != data[5]:
            raise SensorError(self.name + " sent a corrupted reading (CRC mismatch); nothing was "
                              "reported. Check for long or noisy SDA/SCL wires and retry")

    def read(self):
        self._measure()
        data = self._data
        s_t = (data[0] << 8) | data[1]
        s_rh = (data[3] << 8) | data[4]
        # Datasheet 4.13: T = -45 + 175 * S_T / (2^16 - 1), RH = 100 * S_RH / (2^16 - 1),
        # in integer hundredths (rounded) so only the two results are floats.
        centi = (s_t * 17500 + 32767) // 65535 - 4500
        rh = (s_rh * 10000 + 32767) // 65535
        return {"celsius": centi / 100, "rh": rh / 100}

    def reset(self):
        try:
            self._send(_SOFT_RESET)
        except OSError as e:
            raise bus_fault(e, self.name, self.wiring)
        sleep_ms(2)  # datasheet: soft reset takes at most 1.5 ms

    def status(self):
        # The 16-bit status register (alert, heater, reset-detected, CRC-of-last-write bits).
        try:
            self._send(_READ_STATUS)
            self.i2c.readfrom_into(self.address, memoryview(self._data)[:3])
        except OSError as e:
            raise bus_fault(e, self.name, self.wiring)
        if crc8(self._data, 0, 2) != self._data[2]:
            raise SensorError(self.name + " sent a corrupted status word (CRC mismatch)")
        return (self._data[0] << 8) | self._data[1]


def attach(server, sensor, name="sht3x", every_ms=2000):
    # One call: a read tool and a subscribable resource named after the sensor's address.
    from tinymcp.schema import number
    uri = "sensor://sht3x/" + hexaddr(sensor.address)
    units = {"celsius": "Cel", "rh": "%"}

    @server.tool("read_" + name, "Read temperature and relative humidity from the SHT3x at "
                 + hexaddr(sensor.address) + ".",
                 outputs=typed({"celsius": number("Temperature in degrees Celsius"),
                                "rh": number("Relative humidity in percent", 0, 100)}, units),
                 title="Read SHT3x " + hexaddr(sensor.address), read_only=True,
                 idempotent=True, open_world=False)
    def read_tool():
        return reading(sensor.read(), units)

    @server.resource(uri, name, "Latest SHT3x reading: celsius, rh", mime="application/json",
                     title="SHT3x " + hexaddr(sensor.address),
                     watch=Throttled(sensor.read, _rounded, every_ms))
    def read_resource():
        return reading(sensor.read(), units)

    return sensor


def _rounded(r):
    # What counts as a change worth a notification: 0.1 degC, 0.5 %RH.
    return (int(r["celsius"] * 10), int(r["rh"] * 2))
