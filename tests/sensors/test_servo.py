# Servo driver against simulated servos on PWM pins: the pulse width each one sees, on the
# board's declared range, as a float32 board computes it; detached as its safe state.
from tests.float32 import f32
from tests.sensors.fakes import call, raises, ready, server, tools
from tinymcp.sensors import sim
from tinymcp.sensors.common import SensorError
from tinymcp.sensors.servo import Servos, attach
from tinymcp.sensors.simparts_out import ServoHorn

DUTY_US = 20000 / 65535   # one duty_u16 step at 50 Hz, in microseconds


def bench(pulse_us=(500, 2500), pins=(17, 18)):
    pwm = dict([(p, sim.PWM(sim.Pin(p), freq=1000, duty_u16=30000)) for p in pins])
    servos = Servos(pwm, pulse_us=pulse_us, freq=50)
    return servos, dict([(p, ServoHorn(pwm[p], pulse_us)) for p in pins])


def test_starts_detached_at_50_hz():
    servos, horns = bench()
    for pin in horns:
        assert horns[pin].pwm.freq() == 50 and horns[pin].angle() is None


def test_known_angles_give_the_datasheet_pulses():
    servos, horns = bench()
    for angle, pulse in ((0, 500), (45, 1000), (90, 1500), (135, 2000), (180, 2500)):
        assert servos.set(17, angle) == {"pin": 17, "angle": angle, "pulse_us": pulse}
        assert abs(horns[17].pulse_us() - pulse) <= DUTY_US / 2 + 1e-9, angle
        assert abs(horns[17].angle() - angle) < 0.03


def test_the_range_is_the_boards():
    servos, horns = bench(pulse_us=(1000, 2000))
    servos.set(18, 90)
    assert abs(horns[18].pulse_us() - 1500) <= DUTY_US / 2 + 1e-9
    servos.set(18, 180)
    assert abs(horns[18].pulse_us() - 2000) <= DUTY_US / 2 + 1e-9
    assert horns[17].angle() is None               # the other servo untouched
    assert "inside one PWM period" in str(raises(lambda: Servos({}, (500, 25000)), ValueError))


def test_a_float32_board_lands_within_one_duty_step():
    # The board rounds only the angle (float32, as the JSON decoder gives it): the rest is
    # integer. The oracle: what float32 makes of angle * 1000, then the same integers.
    servos, horns = bench()
    for angle in (0.1, 33.3, 45.05, 89.99, 90.0001, 123.456, 179.9):
        a32 = f32(angle)
        milli = int(f32(f32(a32 * 1000) + 0.5))
        pulse_ns = 500000 + 2000 * milli // 180
        exact_us = 500 + 2000 * angle / 180
        assert abs(pulse_ns / 1000 - exact_us) < 0.002          # the angle's rounding only
        duty, ns = servos.duty(a32)
        assert abs(ns - pulse_ns) <= 12                         # one milli-degree at most
        servos.set(17, a32)
        assert abs(horns[17].pulse_us() - exact_us) <= DUTY_US, angle


def test_safe_detaches_and_unknown_pins_are_refused():
    servos, horns = bench()
    servos.set(17, 30)
    servos.safe(17)
    assert horns[17].angle() is None and horns[17].pwm.duty_u16() == 0
    e = raises(lambda: servos.set(5, 10), SensorError)
    assert "GPIO 5" in str(e) and "17, 18" in str(e)
    assert "0..180" in str(raises(lambda: servos.set(17, 181), SensorError))


def test_set_servo_tool_and_its_lease():
    from tinymcp.leases import of
    servos, horns = bench()
    s = ready(server())
    now = [0]
    of(s, clock=lambda: now[0])
    attach(s, servos)
    schema = tools(s)["set_servo"]["inputSchema"]["properties"]
    assert schema["pin"]["enum"] == [17, 18] and schema["angle"]["maximum"] == 180
    refused = call(s, "set_servo", {"pin": 16, "angle": 10})
    assert refused["isError"] is True and "must be one of 17, 18" in refused["content"][0]["text"]
    moved = call(s, "set_servo", {"pin": 18, "angle": 90, "lease_s": 1})
    assert moved["structuredContent"] == {"pin": 18, "angle": 90, "pulse_us": 1500, "lease_s": 1}
    call(s, "set_servo", {"pin": 17, "angle": 10})
    now[0] = 1001
    s.leases.expire()
    assert horns[18].angle() is None               # lease out: detached
    assert abs(horns[17].angle() - 10) < 0.03      # no lease: it stays
