# Simulated machine parts for boards/sim and the driver tests: ADC inputs, pins and PWM.
# The simulated I2C bus and the chips on it are in simchips.py.

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
