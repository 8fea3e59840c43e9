# DHT11 / DHT22 (AM2302) humidity and temperature on one data pin: the 5-byte frame decoded and
# checksummed here, never read faster than the part allows.
#
#   sensor = DHT(Pin(2), "dht22", wiring="DATA GP2, 10k pull-up to 3V3")
#   sensor.read() -> {"celsius": 21.4, "rh": 48.2, "age_ms": 0}
#   attach(server, sensor)        # read_dht
#
# The frame comes from dht_readinto(pin, buf), the port's C routine MicroPython's dht module
# imports (esp, rp2, ...): taken from `dht` when the driver is made, never at module level, or
# given (the simulated part, tinymcp/sensors/simparts_in.py). A read sooner than the part's interval
# (DHT22 2 s, DHT11 1 s) answers the last good reading with its age instead of waking the part.
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.sensors.common import SensorError, reading, typed

INTERVAL_MS = {"dht11": 1000, "dht22": 2000}   # datasheets: the shortest time between reads
# What each part can report (degC low, high; %RH low, high): a frame outside is a misread even
# when its checksum holds (DHT11: -20..60 degC on its newer revisions).
_RANGES = {"dht11": (-20.0, 60.0, 0.0, 100.0), "dht22": (-40.0, 80.0, 0.0, 100.0)}


def decode(kind, buf):
    # The 5-byte frame -> (celsius, rh). DHT22: humidity and temperature in tenths, 16 bits each,
    # the temperature's top bit its sign. DHT11: whole units, then a tenths byte (bit 7 of the
    # temperature's: below zero, on the parts that measure there).
    if kind == "dht22":
        rh = ((buf[0] << 8) | buf[1]) / 10
        tenths = ((buf[2] & 0x7F) << 8) | buf[3]
        return (-tenths if buf[2] & 0x80 else tenths) / 10, rh
    tenths = buf[2] * 10 + (buf[3] & 0x7F)
    return (-tenths if buf[3] & 0x80 else tenths) / 10, buf[0] + buf[1] / 10


class DHT:
    def __init__(self, pin, kind="dht22", readinto=None, wiring=""):
        if kind not in INTERVAL_MS:
            raise ValueError("kind is 'dht11' or 'dht22'")
        self.pin = pin
        self.kind = kind
        self.name = kind.upper()
        self.interval_ms = INTERVAL_MS[kind]
        if readinto is None:   # on a board: the port's routine the dht module imports (its
            import dht         # stubs leave that import out, hence getattr)
            readinto = getattr(dht, "dht_readinto")
        self.readinto = readinto
        self.wiring = wiring     # where the board wired it, quoted in error messages
        self.clock = ticks_ms
        self._buf = bytearray(5)
        self.tried = None        # when the part was last woken, read or not
        self.good = None         # when the last good frame came; its values:
        self.celsius = None
        self.rh = None

    def hint(self):
        return (" (" + self.wiring + ")") if self.wiring else ""

    def read(self):
        # -> {"celsius", "rh", "age_ms"}: a fresh frame, or within the interval the last one.
        now = self.clock()
        if self.tried is not None and ticks_diff(now, self.tried) < self.interval_ms:
            if self.good is not None and self.good == self.tried:
                return {"celsius": self.celsius, "rh": self.rh,
                        "age_ms": ticks_diff(now, self.good)}
            raise SensorError("The " + self.name + " was read " + str(ticks_diff(now, self.tried))
                              + " ms ago and that read failed; it answers again "
                              + str(self.interval_ms) + " ms after a read: retry then")
        self.tried = now
        self._frame()
        self.good = now
        return {"celsius": self.celsius, "rh": self.rh, "age_ms": 0}

    def _frame(self):
        buf = self._buf
        try:
            self.readinto(self.pin, buf)
        except OSError:
            raise SensorError("The " + self.name + " did not answer: check its DATA wire to "
                              "the pin" + self.hint() + ", the pull-up from DATA to VCC (4.7 to "
                              "10 kOhm; many modules have one) and its power (3.3 to 5.5 V, GND)")
        if (buf[0] + buf[1] + buf[2] + buf[3]) & 0xFF != buf[4]:
            raise SensorError("The " + self.name + " sent a corrupted reading (checksum "
                              "mismatch); nothing was reported. Check for a long or noisy DATA "
                              "wire" + self.hint() + " and retry")
        celsius, rh = decode(self.kind, buf)
        low, high, rh_low, rh_high = _RANGES[self.kind]
        if not (low <= celsius <= high and rh_low <= rh <= rh_high):
            raise SensorError("The " + self.name + " sent an impossible reading (" + str(celsius)
                              + " degC, " + str(rh) + " %RH): is this part a "
                              + ("DHT11" if self.kind == "dht22" else "DHT22") + "?")
        self.celsius = celsius
        self.rh = rh


def attach(server, sensor, name="dht"):
    from tinymcp.schema import number
    units = {"celsius": "Cel", "rh": "%"}

    @server.tool("read_" + name, "Read temperature and relative humidity from the " + sensor.name
                 + ". It measures at most every " + str(sensor.interval_ms // 1000) + " s: a "
                 "read sooner returns the last reading and its age_ms.",
                 outputs=typed({"celsius": number("Temperature in degrees Celsius"),
                                "rh": number("Relative humidity in percent", 0, 100)}, units),
                 title="Read " + sensor.name, read_only=True, idempotent=True, open_world=False)
    def read_tool():
        r = sensor.read()
        age = r.pop("age_ms")
        return reading(r, units, age)

    return sensor
