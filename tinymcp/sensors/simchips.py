# A simulated I2C bus with the machine.I2C method names, and register-level BME280 and SHT3x
# chips to put on it.
#
# A chip turns physical values (a `world()` callable -> dict with celsius, rh, hpa) into the
# raw words a real part would send, by inverting the datasheets' floating-point formulas, so
# the drivers' integer code is checked against an independent implementation.
from tinymcp.clock import ticks_ms, ticks_diff
from tinymcp.sensors.sht3x import crc8

ENODEV = 19
ETIMEDOUT = 110


def _nack():
    return OSError(ENODEV)


class I2C:
    # Fake machine.I2C: devices by 7-bit address; each device has write(data) and
    # read(n) -> bytes, and may raise OSError like a real bus does.
    def __init__(self, *devices):
        self.devices = {}
        self.stuck = False        # a device holding the bus low: every transfer times out
        for device in devices:
            self.add(device)

    def add(self, device):
        self.devices[device.address] = device
        return device

    def _device(self, addr):
        if self.stuck:
            raise OSError(ETIMEDOUT)
        device = self.devices.get(addr)
        if device is None or device.absent:
            raise _nack()
        return device

    def scan(self):
        if self.stuck:
            raise OSError(ETIMEDOUT)
        return sorted([a for a in self.devices if not self.devices[a].absent])

    def writeto(self, addr, buf, stop=True):
        self._device(addr).write(bytes(buf))
        return len(buf)

    def readfrom_into(self, addr, buf, stop=True):
        data = self._device(addr).read(len(buf))
        for i in range(len(buf)):
            buf[i] = data[i]

    def readfrom(self, addr, nbytes, stop=True):
        buf = bytearray(nbytes)
        self.readfrom_into(addr, buf)
        return bytes(buf)

    def writeto_mem(self, addr, memaddr, buf, addrsize=8):
        self._device(addr).write(bytes((memaddr,)) + bytes(buf))

    def readfrom_mem_into(self, addr, memaddr, buf, addrsize=8):
        device = self._device(addr)
        device.write(bytes((memaddr,)))
        data = device.read(len(buf))
        for i in range(len(buf)):
            buf[i] = data[i]

    def readfrom_mem(self, addr, memaddr, nbytes, addrsize=8):
        buf = bytearray(nbytes)
        self.readfrom_mem_into(addr, memaddr, buf)
        return bytes(buf)


def _bisect(f, lo, hi, target, rising):
    # The smallest integer x in [lo, hi] with f(x) >= target (or <= when falling).
    while lo < hi:
        mid = (lo + hi) // 2
        value = f(mid)
        if (value >= target) if rising else (value <= target):
            hi = mid
        else:
            lo = mid + 1
    return lo


# Calibration words of a real chip; the T and P words are the datasheet's worked example.
BOSCH_EXAMPLE = {"T": (27504, 26435, -1000),
                 "P": (36477, -10685, 3024, 2855, 140, -7, 15500, -14600, 6000),
                 "H": (75, 362, 0, 313, 50, 30)}


def t_fine_float(adc_t, t):
    # Datasheet 8.1 (double precision): the temperature's t_fine.
    var1 = (adc_t / 16384.0 - t[0] / 1024.0) * t[1]
    x = adc_t / 131072.0 - t[0] / 8192.0
    return var1 + x * x * t[2]


def pascals_float(adc_p, t_fine, p):
    var1 = t_fine / 2.0 - 64000.0
    var2 = var1 * var1 * p[5] / 32768.0 + var1 * p[4] * 2.0
    var2 = var2 / 4.0 + p[3] * 65536.0
    var1 = (p[2] * var1 * var1 / 524288.0 + p[1] * var1) / 524288.0
    var1 = (1.0 + var1 / 32768.0) * p[0]
    if var1 == 0:
        return 0.0
    pa = (1048576.0 - adc_p - var2 / 4096.0) * 6250.0 / var1
    return pa + (p[8] * pa * pa / 2147483648.0 + pa * p[7] / 32768.0 + p[6]) / 16.0


def humidity_float(adc_h, t_fine, h):
    v = t_fine - 76800.0
    v = (adc_h - (h[3] * 64.0 + h[4] / 16384.0 * v)) * \
        (h[1] / 65536.0 * (1.0 + h[5] / 67108864.0 * v * (1.0 + h[2] / 67108864.0 * v)))
    v = v * (1.0 - h[0] * v / 524288.0)
    return min(100.0, max(0.0, v))


class BME280Chip:
    # Registers 0x00..0xFF with the BME280's map; a ctrl_meas write in forced mode takes a
    # measurement of world() and leaves "measuring" set for the first status read.
    def __init__(self, address=0x76, world=None, calibration=BOSCH_EXAMPLE, chip_id=0x60):
        self.address = address
        self.world = world or (lambda: {"celsius": 21.5, "rh": 45.0, "hpa": 1013.25})
        self.cal = calibration
        self.absent = False
        self.raw = None           # type: tuple | None  # (adc_T, adc_P, adc_H) instead of world()'s
        self.busy_reads = 1       # status reads that still say "measuring"
        self.measurements = 0
        self.busy_left = 0
        self.regs = bytearray(256)
        self.pointer = 0
        self.regs[0xD0] = chip_id
        self._store_calibration()
        self._put_data(0x80000, 0x80000, 0x8000)  # the power-on "skipped" values

    def _store_calibration(self):
        r = self.regs
        words = list(self.cal["T"]) + list(self.cal["P"])
        for i in range(len(words)):
            w = words[i] & 0xFFFF
            r[0x88 + 2 * i] = w & 0xFF
            r[0x89 + 2 * i] = w >> 8
        h1, h2, h3, h4, h5, h6 = self.cal["H"]
        r[0xA1] = h1
        r[0xE1] = h2 & 0xFF
        r[0xE2] = (h2 >> 8) & 0xFF
        r[0xE3] = h3
        r[0xE4] = (h4 >> 4) & 0xFF
        r[0xE5] = (h4 & 0x0F) | ((h5 & 0x0F) << 4)
        r[0xE6] = (h5 >> 4) & 0xFF
        r[0xE7] = h6 & 0xFF

    def _put_data(self, adc_t, adc_p, adc_h):
        r = self.regs
        r[0xF7] = adc_p >> 12
        r[0xF8] = (adc_p >> 4) & 0xFF
        r[0xF9] = (adc_p & 0x0F) << 4
        r[0xFA] = adc_t >> 12
        r[0xFB] = (adc_t >> 4) & 0xFF
        r[0xFC] = (adc_t & 0x0F) << 4
        r[0xFD] = adc_h >> 8
        r[0xFE] = adc_h & 0xFF

    def raw_for(self, celsius, rh, hpa):
        # The adc words a chip with this calibration would report for these conditions.
        t, p, h = self.cal["T"], self.cal["P"], self.cal["H"]
        adc_t = _bisect(lambda a: t_fine_float(a, t) / 5120.0, 0, 0xFFFFF, celsius, True)
        tf = t_fine_float(adc_t, t)
        adc_p = _bisect(lambda a: pascals_float(a, tf, p), 0, 0xFFFFF, hpa * 100, False)
        adc_h = _bisect(lambda a: humidity_float(a, tf, h), 0, 0xFFFF, rh, True)
        return adc_t, adc_p, adc_h

    def _measure(self):
        r = self.regs
        if self.raw is not None:
            adc_t, adc_p, adc_h = self.raw
        else:
            w = self.world()
            adc_t, adc_p, adc_h = self.raw_for(w["celsius"], w["rh"], w["hpa"])
        if not (r[0xF4] >> 5):
            adc_t = 0x80000   # oversampling "skipped"
        if not (r[0xF4] >> 2) & 0x07:
            adc_p = 0x80000
        if not r[0xF2] & 0x07:
            adc_h = 0x8000
        self._put_data(adc_t, adc_p, adc_h)
        self.measurements += 1
        self.busy_left = self.busy_reads

    def write(self, data):
        # A register address, then (value, register, value, ...): BME280 writes are pairs,
        # with no auto-increment.
        self.pointer = data[0]
        for i in range(1, len(data), 2):
            self._set(data[i - 1], data[i])

    def _set(self, reg, value):
        r = self.regs
        if reg == 0xE0 and value == 0xB6:
            r[0xF2] = r[0xF4] = r[0xF5] = 0
        elif reg in (0xF2, 0xF5):
            r[reg] = value
        elif reg == 0xF4:
            r[reg] = value
            if value & 0x03 in (1, 2):   # forced: one measurement, then back to sleep
                self._measure()
                r[0xF4] = value & 0xFC

    def read(self, n):
        r = self.regs
        if self.pointer == 0xF3:
            busy = self.busy_left
            if busy:
                self.busy_left = busy - 1
            r[0xF3] = 0x08 if busy else 0
        start = self.pointer
        return bytes([r[(start + i) & 0xFF] for i in range(n)])


class SHT3xChip:
    # Command-driven, like the real part: a measurement command, then a read of six bytes
    # (T msb, lsb, crc, RH msb, lsb, crc). Reads before the data is ready are NACKed.
    TIMES = {0x2400: 15, 0x240B: 6, 0x2416: 4, 0x2C06: 15, 0x2C0D: 6, 0x2C10: 4}

    def __init__(self, address=0x44, world=None):
        self.address = address
        self.world = world or (lambda: {"celsius": 21.5, "rh": 45.0})
        self.absent = False
        self.corrupt = False      # flip a bit of the humidity word after its CRC was taken
        self.stall = False        # take commands but never produce data
        self.raw = None           # type: tuple | None  # (S_T, S_RH) instead of world()'s
        self.status_word = 0x8010  # alert pending + reset detected, as after power-up
        self.out = None
        self.ready_at = None
        self.wait_ms = 0
        self.measurements = 0
        self.last_command = None

    def write(self, data):
        command = (data[0] << 8) | data[1]
        self.last_command = command
        if command in self.TIMES:
            if self.raw is not None:
                s_t, s_rh = self.raw
            else:
                w = self.world()
                s_t = int((w["celsius"] + 45) * 65535 / 175 + 0.5)
                s_rh = int(w["rh"] * 65535 / 100 + 0.5)
            s_t = min(65535, max(0, s_t))
            s_rh = min(65535, max(0, s_rh))
            out = bytearray((s_t >> 8, s_t & 0xFF, 0, s_rh >> 8, s_rh & 0xFF, 0))
            out[2] = crc8(out, 0, 2)
            out[5] = crc8(out, 3, 5)
            if self.corrupt:
                out[4] ^= 0x01
            self.out = None if self.stall else out
            self.ready_at = ticks_ms()
            self.wait_ms = self.TIMES[command]
            self.measurements += 1
        elif command == 0x30A2:
            self.out = None
        elif command == 0xF32D:
            out = bytearray((self.status_word >> 8, self.status_word & 0xFF, 0))
            out[2] = crc8(out, 0, 2)
            self.out = out
            self.ready_at = None
        else:
            raise _nack()  # unknown commands are not acknowledged

    def read(self, n):
        if self.out is None:
            raise _nack()
        if self.ready_at is not None and ticks_diff(ticks_ms(), self.ready_at) < self.wait_ms:
            raise _nack()  # still measuring
        out = self.out
        self.out = None
        return bytes(out[:n]) + bytes(max(0, n - len(out)))
