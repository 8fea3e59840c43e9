# Hobby servos on PWM pins: an angle becomes a pulse width inside the range the board declares.
#
#   servos = Servos({17: PWM(Pin(17))}, pulse_us=(500, 2500), freq=50)
#   servos.set(17, 90)            # -> {"pin": 17, "angle": 90, "pulse_us": 1500.0}
#   attach(server, servos)        # set_servo {"pin", "angle", "lease_s"?}
#
# Detached (duty 0: no pulses, the servo goes limp) is the safe state: at start, and when a
# lease runs out. Arithmetic in integer nanoseconds: a float32 board rounds only the angle.
from tinymcp.sensors.common import SensorError


class Servos:
    def __init__(self, pwm, pulse_us=(500, 2500), freq=50, wiring=""):
        # pwm: {gpio: PWM}; pulse_us: the pulse at 0 and at 180 degrees (the servo's datasheet;
        # 1000..2000 for a cautious start, 500..2500 for most SG90/MG996R-class servos).
        if not (100 <= pulse_us[0] < pulse_us[1] and pulse_us[1] * freq < 1000000):
            raise ValueError("pulse_us must rise inside one PWM period")
        self.pwm = pwm
        self.pulse_us = pulse_us
        self.freq = freq
        self.period_ns = 1000000000 // freq
        self.wiring = wiring
        for pin in pwm:
            pwm[pin].freq(freq)
            pwm[pin].duty_u16(0)

    def duty(self, angle):
        # -> (duty_u16, pulse in ns) for an angle in degrees (0..180).
        low, high = self.pulse_us
        milli = int(angle * 1000 + 0.5)
        pulse_ns = low * 1000 + (high - low) * milli // 180
        return (pulse_ns * 65535 + self.period_ns // 2) // self.period_ns, pulse_ns

    def _pwm(self, pin):
        pwm = self.pwm.get(pin)
        if pwm is None:
            raise SensorError("GPIO " + str(pin) + " has no servo on this board (servo pins: "
                              + ", ".join([str(p) for p in sorted(self.pwm)]) + ")")
        return pwm

    def set(self, pin, angle):
        if not 0 <= angle <= 180:
            raise SensorError("angle must be 0..180 degrees")
        pwm = self._pwm(pin)
        duty, pulse_ns = self.duty(angle)
        pwm.duty_u16(duty)
        return {"pin": pin, "angle": angle, "pulse_us": pulse_ns / 1000}

    def safe(self, pin):
        self._pwm(pin).duty_u16(0)


def attach(server, servos):
    from tinymcp.schema import integer, number
    from tinymcp.sensors.common import lease, lease_schemas, with_lease
    leased = lease_schemas("the servo")
    low, high = servos.pulse_us

    @server.tool("set_servo", "Turn a hobby servo to an angle (0..180 degrees: pulses of "
                 + str(low) + ".." + str(high) + " us at " + str(servos.freq) + " Hz). This "
                 "moves what is attached to it. With lease_s it is detached (goes limp) by "
                 "itself unless set again within that time.",
                 inputs={"pin": integer("GPIO the servo's signal wire is on",
                                        enum=sorted(servos.pwm)),
                         "angle": number("Degrees", 0, 180), "lease_s?": leased[0]},
                 outputs={"pin": integer("GPIO"), "angle": number("Degrees"),
                          "pulse_us": number("Pulse width now sent, in microseconds"),
                          "lease_s?": leased[1]},
                 title="Set servo angle", read_only=False, destructive=True, idempotent=True,
                 open_world=False)
    def set_servo(pin, angle, lease_s=None):
        left = lease(server, servos, pin, lease_s, False)
        return with_lease(servos.set(pin, angle), left)

    return servos
