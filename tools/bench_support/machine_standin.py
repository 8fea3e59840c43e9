# A stand-in for `machine` where the MicroPython build has none with these parts (WebAssembly,
# unix): just enough for boards/rpi_pico's build() to run, so its heap can be weighed.
#
# heap_probe.py imports it before every baseline: on a board these are built-in C types, not
# heap. It imports nothing of tinymcp, which would move the baseline. Every bus read fails as
# on an empty bus, so a driver attached to it finds no chip.


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1

    def __init__(self, id, mode=None, pull=None, value=0):
        self.id = id
        self.level = value or 0

    def value(self, x=None):
        if x is None:
            return self.level
        self.level = 1 if x else 0

    def on(self):
        self.level = 1

    def off(self):
        self.level = 0


class ADC:
    def __init__(self, source):
        self.source = source

    def read_u16(self):
        return 13107  # 0.66 V of 3.3 V


class PWM:
    def __init__(self, pin, freq=1000, duty_u16=0):
        self.pin = pin
        self.duty = duty_u16
        self.hz = freq

    def freq(self, value=None):
        if value is None:
            return self.hz
        self.hz = value

    def duty_u16(self, value=None):
        if value is None:
            return self.duty
        self.duty = value


class I2C:
    def __init__(self, id, sda=None, scl=None, freq=None):
        self.id = id

    def scan(self):
        return []

    def _absent(self, *args, **kwargs):
        raise OSError(19)  # ENODEV: no chip answered

    readfrom_mem_into = readfrom_mem = writeto_mem = writeto = readfrom_into = _absent


def unique_id():
    return b"\xe6\x61\x4c\x0d\x13\x2a\x55\x2e"
