# What every driver shares: SensorError, turning bus faults into advice, sleeps, watches, leases.
import time

try:
    sleep_ms = time.sleep_ms
except AttributeError:  # CPython
    def sleep_ms(ms):
        time.sleep(ms / 1000)

from tinymcp.clock import ticks_ms, ticks_diff


class SensorError(Exception):
    # A device fault, worded for the person at the bench: what failed and what to check.
    pass


def hexaddr(address):
    return "0x%02x" % address


def bus_fault(err, what, wiring=""):
    # An OSError from a bus call -> a SensorError saying what to check. `what` names the
    # device ("BME280 at 0x76"); `wiring` is a hint the board file can give (pins, pull-ups).
    # The advice is loaded at the first fault (tinymcp/sensors/faults.py): not held until then.
    from tinymcp.sensors.faults import advice
    return SensorError(advice(err, what, wiring))


def typed(outputs, units):
    # A reading's output schema, with what every reading states: the unit of each value (UCUM
    # codes: "Cel", "%", "hPa", "V", "1" for counts) and how old the sample is.
    from tinymcp.schema import integer
    outputs["units"] = {"type": "object", "const": units, "description": "UCUM unit of each value"}
    outputs["age_ms"] = integer("Age of the reading in ms", 0)
    return outputs


def reading(values, units, age_ms=0):
    # A driver's reading as a tool or resource gives it: the values, their units, their age.
    values["units"] = units
    values["age_ms"] = age_ms
    return values


MAX_LEASE_S = 86400   # a day: well inside the half-period ticks_diff measures on every port


def lease_schemas(what):
    # (input, output) schemas of lease_s, for a tool that switches an output (tinymcp/leases.py).
    from tinymcp.schema import number
    return (number("Seconds until " + what + " goes back to its safe state, unless renewed (called "
                   "again with lease_s) or this session ends first", 0.1, MAX_LEASE_S),
            number("Seconds left on the lease"))


def lease(server, output, key, seconds, safe):
    # tinymcp.leases.hold(), called before the output is set: a board whose tools are never
    # given lease_s never loads the module.
    if seconds is None and server.leases is None:
        return None
    from tinymcp.leases import hold
    return hold(server, output, key, seconds, safe)


def with_lease(state, left):
    # A switching tool's result, with the seconds its lease has left (lease() said) if any.
    if left is not None:
        state["lease_s"] = left
    return state


class Throttled:
    # A resource watch that reads a device at most every `every_ms`: the serve loop polls
    # subscriptions five times a second, far more often than a sensor is worth waking.
    # `key(reading)` picks the comparable value; a failing read compares as None.
    def __init__(self, read, key, every_ms=1000):
        self.read = read
        self.key = key
        self.every_ms = every_ms
        self.at = None
        self.value = None

    def __call__(self, **_vars):
        now = ticks_ms()
        if self.at is None or ticks_diff(now, self.at) >= self.every_ms:
            self.at = now
            try:
                self.value = self.key(self.read())
            except Exception:
                self.value = None
        return self.value
