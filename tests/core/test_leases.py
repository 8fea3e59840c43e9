# Outputs that fail safe: a lease puts its output back to the safe state on the board itself when
# it runs out without a renewal, when its session ends (the link, a new initialize) or when the
# host that owns it has gone (a bridge's owner_ended), and never touches another owner's output.
from tests.core.support import FakeStream, frame, initialize, result
from tinymcp import Server, leases
from tinymcp.channel import Channel, Lines
from tinymcp.protocol import OWNER_ENDED, OWNER_META
from tinymcp.sensors import gpio, led


class Clock:
    # ticks_ms for the leases, moved by hand.
    def __init__(self, ms=5000):
        self.ms = ms

    def __call__(self):
        return self.ms


class Pin:
    # A machine.Pin that only remembers its level.
    def __init__(self):
        self.level = 0

    def value(self, level=None):
        if level is None:
            return self.level
        self.level = level


class PWM:
    # A machine.PWM that only remembers its frequency and duty.
    def __init__(self):
        self.hz = 1000
        self.duty = 0

    def freq(self, hz=None):
        if hz is None:
            return self.hz
        self.hz = hz

    def duty_u16(self, duty):
        self.duty = duty


def board():
    server = Server("leases", "0")
    server.led_pin = Pin()
    server.relay = Pin()
    server.fan = PWM()
    led.attach(server, led.Led(server.led_pin))
    gpio.attach(server, gpio.Pins(outputs={15: server.relay}, pwm={16: server.fan}))
    server.clock = Clock()
    leases.of(server, server.clock)
    initialize(server)
    return server


def call(server, name, owner=None, **args):
    params = {"name": name, "arguments": args}
    if owner is not None:
        params["_meta"] = {OWNER_META: owner}
    return result(server, "tools/call", params)


def run(server, ms, step_ms=200):
    # The serve loop's idle polls for that long.
    for _ in range(ms // step_ms):
        server.clock.ms += step_ms
        server.poll()


def test_a_lease_that_is_not_renewed_puts_the_led_off_when_it_runs_out():
    server = board()
    answer = call(server, "set_led", on=True, lease_s=2)
    assert answer["structuredContent"] == {"on": True, "lease_s": 2}
    run(server, 1800)
    assert server.led_pin.level == 1
    run(server, 200)
    assert server.led_pin.level == 0


def test_another_call_with_a_lease_renews_it():
    server = board()
    call(server, "set_led", on=True, lease_s=2)
    run(server, 1600)
    call(server, "set_led", on=True, lease_s=2)
    run(server, 1800)
    assert server.led_pin.level == 1
    run(server, 200)
    assert server.led_pin.level == 0


def test_a_call_without_a_lease_leaves_a_running_lease_as_it_is():
    server = board()
    call(server, "set_led", on=True, lease_s=2)
    run(server, 1000)
    answer = call(server, "set_led", on=True)
    assert answer["structuredContent"] == {"on": True, "lease_s": 1.0}
    run(server, 1000)
    assert server.led_pin.level == 0


def test_switching_to_the_safe_state_ends_the_lease_and_an_unleased_output_stays_on():
    server = board()
    call(server, "set_led", on=True, lease_s=2)
    assert call(server, "set_led", on=False)["structuredContent"] == {"on": False}
    assert call(server, "set_led", on=True)["structuredContent"] == {"on": True}
    run(server, 10000)
    assert server.led_pin.level == 1
    assert server.leases.held == []


def test_a_gpio_output_leased_goes_back_to_its_safe_level():
    server = board()
    answer = call(server, "write_pin", pin=15, value=1, lease_s=0.5)
    assert answer["structuredContent"] == {"pin": 15, "value": 1, "lease_s": 0.5}
    run(server, 400)
    assert server.relay.level == 1
    run(server, 200)
    assert server.relay.level == 0


def test_a_pwm_duty_leased_goes_back_to_zero():
    server = board()
    answer = call(server, "set_pwm", pin=16, duty=50, lease_s=1)
    assert answer["structuredContent"] == {"pin": 16, "duty": 50, "freq": 1000, "lease_s": 1}
    assert server.fan.duty == 32768
    run(server, 1000)
    assert server.fan.duty == 0


def test_a_board_file_may_declare_high_as_an_outputs_safe_level():
    server = Server("leases", "0")
    relay = Pin()
    gpio.attach(server, gpio.Pins(outputs={15: relay}, safe={15: 1}))
    server.clock = Clock()
    leases.of(server, server.clock)
    initialize(server)
    call(server, "write_pin", pin=15, value=0, lease_s=1)
    run(server, 1000)
    assert relay.level == 1
    assert call(server, "write_pin", pin=15, value=1, lease_s=1)["structuredContent"] == \
        {"pin": 15, "value": 1}  # already safe: no lease to hold


def test_a_lease_out_of_range_is_refused_and_the_led_is_not_touched():
    server = board()
    for bad in (0, -1, 86401, "2"):
        answer = call(server, "set_led", on=True, lease_s=bad)
        assert answer.get("isError") is True
        assert "lease_s" in answer["content"][0]["text"]
    assert server.led_pin.level == 0


def test_more_leases_than_the_board_keeps_are_refused_before_acting():
    server = board()
    server.leases.max_leases = 1
    call(server, "set_led", on=True, lease_s=5)
    answer = call(server, "write_pin", pin=15, value=1, lease_s=5)
    assert answer.get("isError") is True and "under lease" in answer["content"][0]["text"]
    assert server.relay.level == 0


def test_the_end_of_the_link_puts_leased_outputs_safe_and_leaves_unleased_ones():
    server = board()
    stream = FakeStream([
        frame("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}, id=0) + b"\n",
        frame("tools/call", {"name": "set_led", "arguments": {"on": True, "lease_s": 30}},
              id=1) + b"\n",
        frame("tools/call", {"name": "write_pin", "arguments": {"pin": 15, "value": 1}},
              id=2) + b"\n"])
    channel = Channel(server, Lines(stream))
    assert channel.run() == "eof"
    assert [m["result"]["structuredContent"] for m in stream.sent[1:]] == [
        {"on": True, "lease_s": 30}, {"pin": 15, "value": 1}]
    assert server.led_pin.level == 0
    assert server.relay.level == 1


def test_a_new_initialize_ends_the_last_sessions_leases():
    server = board()
    call(server, "set_led", on=True, lease_s=30)
    initialize(server)
    assert server.led_pin.level == 0


def test_an_owner_ended_puts_that_owners_outputs_safe_and_no_others():
    server = board()
    call(server, "set_led", owner="host-a", on=True, lease_s=30)
    call(server, "write_pin", owner="host-b", pin=15, value=1, lease_s=30)
    assert server.handle(frame(OWNER_ENDED, {"owner": "host-a"}, id=None)) is None
    assert server.led_pin.level == 0
    assert server.relay.level == 1
    server.handle(frame(OWNER_ENDED, {"owner": 7}, id=None))  # not an owner: ignored
    server.handle(frame(OWNER_ENDED, {}, id=None))
    assert server.relay.level == 1


def test_one_output_has_one_lease_owned_by_whoever_renewed_it_last():
    server = board()
    call(server, "set_led", owner="host-a", on=True, lease_s=30)
    call(server, "set_led", owner="host-b", on=True, lease_s=30)
    server.handle(frame(OWNER_ENDED, {"owner": "host-a"}, id=None))
    assert server.led_pin.level == 1
    server.handle(frame(OWNER_ENDED, {"owner": "host-b"}, id=None))
    assert server.led_pin.level == 0

