# Simulated machine parts for boards/sim and the driver tests: an I2C bus with the machine.I2C
# method names, ADC inputs, pins and PWM. The chips on the bus are in simchips.py.

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


class ADC:
    # Fake machine.ADC: read_u16() from a callable giving volts (clamped to 0..vref).
    def __init__(self, volts, vref=3.3):
        self.volts = volts
        self.vref = vref

    def read_u16(self):
        v = min(self.vref, max(0.0, self.volts()))
        return int(v / self.vref * 65535 + 0.5)


class Pin:
    # Fake machine.Pin: value() to read, value(x) to drive; `level` is what the outside drives.
    def __init__(self, id, level=0):
        self.id = id
        self.level = level
        self.writes = 0

    def value(self, x=None):
        if x is None:
            return self.level
        self.level = 1 if x else 0
        self.writes += 1

    def on(self):
        self.value(1)

    def off(self):
        self.value(0)


class PWM:
    def __init__(self, pin, freq=1000, duty_u16=0):
        self.pin = pin
        self._freq = freq
        self.duty = duty_u16

    def freq(self, value=None):
        if value is None:
            return self._freq
        self._freq = value

    def duty_u16(self, value=None):
        if value is None:
            return self.duty
        self.duty = value
