# What a bus fault means at the bench: loaded by common.bus_fault at a board's first fault.

# errno values as MicroPython's ports raise them (numbers, so no errno module is needed).
EIO = 5
ENODEV = 19
ETIMEDOUT = 110
ETIMEDOUT_ALT = 116  # newlib/lwIP numbering on some ports


def advice(err, what, wiring=""):
    # An OSError from a bus call -> what to check (common.bus_fault makes it a SensorError).
    code = err.args[0] if err.args and type(err.args[0]) is int else None
    hint = (" (" + wiring + ")") if wiring else ""
    if code == ENODEV or code == EIO:
        return (what + " did not answer on the I2C bus (NACK): check its power, the SDA/SCL "
                "wiring" + hint + ", the pull-up resistors and the address it is strapped to")
    if code == ETIMEDOUT or code == ETIMEDOUT_ALT:
        return (what + ": the I2C bus timed out; a device may be holding SDA or SCL low. "
                "Power-cycle the sensor and check the wiring" + hint + " and pull-ups")
    return what + ": bus error " + (str(code) if code is not None else str(err)) + hint
