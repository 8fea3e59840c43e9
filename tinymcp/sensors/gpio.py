# GPIO read/write and PWM duty, only on the pins the board file offers.
#
#   pins = Pins(inputs={14: Pin(14, Pin.IN, Pin.PULL_UP)}, outputs={15: Pin(15, Pin.OUT)},
#               pwm={16: PWM(Pin(16))})
#   attach(server, pins)           -> read_pin, write_pin, set_pwm (only those with pins)
#
# An output's safe state is low unless the board file says otherwise (safe={15: 1} for a relay
# that is off when high), a PWM pin's is a duty of 0; lease_s puts them back (tinymcp/leases.py).
from tinymcp.sensors.common import SensorError, lease, lease_schemas, with_lease


def _listed(numbers):
    return ", ".join([str(n) for n in sorted(numbers)]) or "none"


class Pins:
    def __init__(self, inputs=None, outputs=None, pwm=None, pwm_freq=1000, safe=None):
        self.inputs = inputs or {}
        self.outputs = outputs or {}
        self.safe_levels = safe or {}   # output pin -> its safe level (default 0)
        self.pwm = pwm or {}
        self.pwm_freq = pwm_freq
        for n in self.pwm:
            self.pwm[n].freq(pwm_freq)

    def _pin(self, table, pin, use):
        found = table.get(pin)
        if found is None:
            raise SensorError("GPIO " + str(pin) + " is not offered for " + use + " on this "
                              "board (allowed: " + _listed(table) + "); the board file decides "
                              "which pins may be touched")
        return found

    def readable(self):
        return sorted(list(self.inputs) + list(self.outputs))

    def read(self, pin):
        found = self.inputs.get(pin)
        if found is None:
            found = self._pin(self.outputs, pin, "reading")
        return {"pin": pin, "value": found.value()}

    def write(self, pin, value):
        self._pin(self.outputs, pin, "writing").value(1 if value else 0)
        return {"pin": pin, "value": 1 if value else 0}

    def safe_level(self, pin):
        return self.safe_levels.get(pin, 0)

    def safe(self, pin):
        self.write(pin, self.safe_level(pin))

    def set_pwm(self, pin, duty, freq=None):
        # duty in percent (0..100), kept as the 16-bit duty_u16 the hardware takes.
        pwm = self._pin(self.pwm, pin, "PWM")
        if freq is not None:
            pwm.freq(freq)
        pwm.duty_u16(int(duty * 65535 / 100 + 0.5))
        return {"pin": pin, "duty": duty, "freq": pwm.freq()}


class PwmOutputs:
    # The PWM pins as leases see them: safe at a duty of 0.
    def __init__(self, pins):
        self.pins = pins

    def safe(self, pin):
        self.pins.set_pwm(pin, 0)


def attach(server, pins):
    from tinymcp.schema import integer, number
    readable = pins.readable()
    if readable:
        from tinymcp.sensors.common import reading, typed
        units = {"value": "1"}

        @server.tool("read_pin", "Read the logic level of a GPIO pin the board offers.",
                     inputs={"pin": integer("GPIO number", enum=readable)},
                     outputs=typed({"pin": integer("GPIO number"),
                                    "value": integer("0 or 1", 0, 1)}, units),
                     title="Read GPIO pin", read_only=True, open_world=False)
        def read_pin(pin):
            return reading(pins.read(pin), units)

    if pins.outputs:
        leased = lease_schemas("the pin")

        @server.tool("write_pin", "Drive a GPIO output pin the board offers high (1) or low (0). "
                     "This changes what is wired to the pin. With lease_s the pin goes back to "
                     "its safe level by itself unless written again within that time.",
                     inputs={"pin": integer("GPIO number", enum=sorted(pins.outputs)),
                             "value": integer("1 for high, 0 for low", 0, 1),
                             "lease_s?": leased[0]},
                     outputs={"pin": integer("GPIO number"), "value": integer("0 or 1", 0, 1),
                              "lease_s?": leased[1]},
                     title="Write GPIO pin", read_only=False, destructive=True,
                     idempotent=True, open_world=False)
        def write_pin(pin, value, lease_s=None):
            left = lease(server, pins, pin, lease_s, value == pins.safe_level(pin))
            return with_lease(pins.write(pin, value), left)

    if pins.pwm:
        leased = lease_schemas("the duty")
        duties = PwmOutputs(pins)

        @server.tool("set_pwm", "Set the PWM duty cycle (percent) and optionally the frequency "
                     "of a PWM pin the board offers. This changes what is wired to the pin. With "
                     "lease_s the duty goes back to 0 by itself unless set again within that time.",
                     inputs={"pin": integer("GPIO number", enum=sorted(pins.pwm)),
                             "duty": number("Duty cycle in percent", 0, 100),
                             "freq?": integer("Frequency in Hz", 10, 100000),
                             "lease_s?": leased[0]},
                     outputs={"pin": integer("GPIO number"), "duty": number("Duty in percent"),
                              "freq": integer("Frequency in Hz"), "lease_s?": leased[1]},
                     title="Set PWM duty", read_only=False, destructive=True, idempotent=True,
                     open_world=False)
        def set_pwm(pin, duty, freq=None, lease_s=None):
            left = lease(server, duties, pin, lease_s, duty == 0)
            return with_lease(pins.set_pwm(pin, duty, freq), left)

    return pins
