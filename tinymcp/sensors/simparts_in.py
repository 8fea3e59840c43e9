# Simulated input parts for boards/sim and the driver tests: DS18B20 probes on a one-wire bus
# (bit level), an HC-SR04 answering trigger pulses, a DHT11/DHT22 at the dht module's level.
#
# Each part encodes physical values (a callable giving them) the way the datasheet says the part
# sends them, written from the datasheet rather than from the driver, so a driver's decoding is
# checked against an independent implementation. Faults are attributes a test or the bench sets.
from tinymcp.clock import ticks_diff, ticks_ms

ETIMEDOUT = 110


def dallas_crc(data):
    # Dallas CRC-8 as polynomial division (a different road from the driver's shift loop): the
    # bits in the order they travel (each byte LSB first), times x^8, modulo x^8 + x^5 + x^4 + 1;
    # the remainder's x^7 term is the CRC's bit 0.
    value = 0
    for byte in data:
        for k in range(8):
            value = (value << 1) | ((byte >> k) & 1)
    value <<= 8
    for shift in range(len(data) * 8 - 1, -1, -1):
        if (value >> (shift + 8)) & 1:
            value ^= 0x131 << shift
    crc = 0
    for k in range(8):
        crc |= ((value >> (7 - k)) & 1) << k
    return crc


# -- one wire ------------------------------------------------------------------------------------

class OneWireBus:
    # The bit and byte primitives of MicroPython's onewire.OneWire over simulated devices: the
    # line is a wired AND, high (1) where no device pulls it low. A device is a generator started
    # at each reset: it yields the bit it drives in the next read slot, or None to receive the
    # next slot's level (a written bit, or the line a read slot saw), and returns when it falls
    # silent until the next reset.
    def __init__(self, *devices):
        self.devices = list(devices)
        self.stuck_low = False    # DATA shorted to GND, or no pull-up: every slot reads 0
        self.resets = 0
        self._talk = []           # [device, its generator, what it yielded]

    def reset(self, required=False):
        self.resets += 1
        if self.stuck_low:
            self._talk = []
            return True   # the line low after the reset pulse looks like a presence pulse
        self._talk = []
        for device in self.devices:
            if device.present:
                gen = device.session()
                self._talk.append([device, gen, next(gen)])
        if required and not self._talk:
            raise OSError("no presence")
        return bool(self._talk)

    def _slot(self, level):
        # One time slot: the master releases the line (level 1) or holds it low (0); -> the level.
        if self.stuck_low:
            return 0
        for talk in self._talk:
            if talk[2] is not None and talk[2] == 0:
                level = 0
        for talk in list(self._talk):
            try:
                talk[2] = talk[1].send(level if talk[2] is None else None)
            except StopIteration:
                self._talk.remove(talk)
        return level

    def readbit(self):
        return self._slot(1)

    def writebit(self, value):
        self._slot(1 if value else 0)

    def readbyte(self):
        value = 0
        for k in range(8):
            value |= self._slot(1) << k
        return value

    def writebyte(self, value):
        for k in range(8):
            self._slot((value >> k) & 1)

    def readinto(self, buf):
        for i in range(len(buf)):
            buf[i] = self.readbyte()

    def write(self, buf):
        for b in buf:
            self.writebyte(b)


class DS18B20Probe:
    # A DS18B20 by its datasheet: ROM commands (SEARCH, MATCH, SKIP, READ ROM), CONVERT T (the
    # register updates once the conversion time has passed: read early, it holds the previous
    # value, 85 degC after power-up), READ and WRITE SCRATCHPAD, the power-up scratchpad.
    FAMILY = 0x28

    def __init__(self, serial, celsius, clock=ticks_ms):
        rom = bytearray(8)
        rom[0] = self.FAMILY
        for i in range(6):
            rom[1 + i] = (serial >> (8 * i)) & 0xFF
        rom[7] = dallas_crc(rom[:7])
        self.rom = bytes(rom)
        self.celsius = celsius        # () -> degrees Celsius, sampled when a conversion ends
        self.clock = clock
        self.present = True
        self.corrupt = False          # flip a bit of the next scratchpad reads (noise)
        self.converting = None        # when CONVERT T came, until its result is in the register
        self.conversions = 0
        self.power_up()

    def power_up(self):
        # Datasheet figure 8: 85 degC (0x0550), TH 0x4B, TL 0x46, 12 bits, reserved 0xFF 0x0C 0x10.
        self.scratch = bytearray((0x50, 0x05, 0x4B, 0x46, 0x7F, 0xFF, 0x0C, 0x10, 0))

    def bits(self):
        return 9 + ((self.scratch[4] >> 5) & 3)

    def conversion_ms(self):
        return 750 / (1 << (12 - self.bits()))   # datasheet table 2: 93.75 ms at 9 bits ...

    def _finish(self):
        # A conversion whose time has passed puts its result in the register.
        if self.converting is not None and \
                ticks_diff(self.clock(), self.converting) >= self.conversion_ms():
            self.converting = None
            self.conversions += 1
            raw = encode(self.celsius(), self.bits())
            self.scratch[0] = raw & 0xFF
            self.scratch[1] = (raw >> 8) & 0xFF

    def session(self):
        # After a reset: one ROM command, then (when selected) one function command.
        command = yield from _receive_byte()
        if command == 0xF0:      # SEARCH ROM: each bit, its complement, then the master's pick
            for i in range(64):
                bit = (self.rom[i >> 3] >> (i & 7)) & 1
                yield bit
                yield 1 - bit
                if (yield None) != bit:
                    return       # the master took the other branch: silent until reset
            return
        if command == 0x33:      # READ ROM
            for b in self.rom:
                yield from _send_byte(b)
            return
        if command == 0x55:      # MATCH ROM
            for b in self.rom:
                if (yield from _receive_byte()) != b:
                    return
        elif command != 0xCC:    # not SKIP ROM either
            return
        yield from self._function()

    def _function(self):
        command = yield from _receive_byte()
        self._finish()
        if command == 0x44:      # CONVERT T: read slots give 0 until it is done
            self.converting = self.clock()
            while True:
                self._finish()
                yield 0 if self.converting is not None else 1
        elif command == 0xBE:    # READ SCRATCHPAD: 9 bytes, the last the CRC of the first 8
            data = bytearray(self.scratch)
            data[8] = dallas_crc(data[:8])
            if self.corrupt:
                data[0] ^= 0x04
            for b in data:
                yield from _send_byte(b)
        elif command == 0x4E:    # WRITE SCRATCHPAD: TH, TL, config (its fixed bits stay)
            for i in (2, 3, 4):
                self.scratch[i] = yield from _receive_byte()
            self.scratch[4] = (self.scratch[4] & 0x60) | 0x1F
        elif command == 0xB4:    # READ POWER SUPPLY: 1, powered from VDD
            yield 1


def encode(celsius, bits=12):
    # Degrees Celsius -> the 16-bit temperature register (datasheet figure 4 and table 1: two's
    # complement sixteenths, -55..125 degC; below 12 bits the unused low bits read 0 here).
    celsius = min(125.0, max(-55.0, celsius))
    step = 1 << (12 - bits)
    sixteenths = int(round(celsius * 16 / step)) * step
    return sixteenths & 0xFFFF


def _receive_byte():
    value = 0
    for k in range(8):
        value |= (yield None) << k
    return value


def _send_byte(value):
    for k in range(8):
        yield (value >> k) & 1


# -- HC-SR04 -------------------------------------------------------------------------------------

class TriggerPin:
    # The module's TRIG input: a high then low from the board is a trigger pulse.
    def __init__(self, part):
        self.part = part
        self.level = 0

    def value(self, x=None):
        if x is None:
            return self.level
        x = 1 if x else 0
        if self.level and not x:
            self.part.triggered += 1
        self.level = x

    def init(self, *args, **kwargs):
        pass


class EchoPin:
    # The module's ECHO output, as the board reads it between pulses.
    def __init__(self, part):
        self.part = part

    def value(self, x=None):
        return 1 if self.part.echo_stuck_high else 0

    def init(self, *args, **kwargs):
        pass


class HCSR04Part:
    # An HC-SR04 by its datasheet: a 10 us trigger starts a burst; ECHO goes high for the time the
    # sound takes out and back (in air at the given temperature), or for about 38 ms when nothing
    # is in range (2..400 cm; a little beyond still echoes, the datasheet's limit is its promise).
    NO_OBJECT_US = 38000

    def __init__(self, cm, celsius=lambda: 20.0):
        self.cm = cm                  # () -> distance to the target, or None: nothing in front
        self.celsius = celsius        # () -> air temperature
        self.trig = TriggerPin(self)
        self.echo = EchoPin(self)
        self.triggered = 0            # trigger pulses not yet answered
        self.present = True           # False: not wired (no power, or TRIG/ECHO unconnected)
        self.echo_stuck_high = False  # ECHO held high (a wiring fault)
        self.pulses = 0

    def echo_us(self):
        # Sound in air: 331.3 m/s at 0 degC, times sqrt(T / 273.15 K); there and back.
        cm = self.cm()
        if cm is None or cm > 450:
            return self.NO_OBJECT_US
        speed = 331.3 * (1 + self.celsius() / 273.15) ** 0.5   # m/s
        return int(2 * cm / 100 / speed * 1000000 + 0.5)

    def time_pulse_us(self, pin, pulse_level, timeout_us=1000000):
        # machine.time_pulse_us on the ECHO pin: -2 when the pulse never starts, -1 when it
        # outlasts the timeout, else its width.
        if pin is not self.echo:
            raise ValueError("time_pulse_us on a pin the simulated HC-SR04 does not drive")
        if self.echo_stuck_high:
            return -1 if pulse_level else -2
        if not self.present or not self.triggered or pulse_level != 1:
            return -2
        self.triggered = 0
        self.pulses += 1
        width = self.echo_us()
        return -1 if width > timeout_us else width


# -- DHT11 / DHT22 -------------------------------------------------------------------------------

class DHTPart:
    # A DHT11 or DHT22 at the level MicroPython's dht module reads it: dht_readinto(pin, buf)
    # fills the 40-bit frame (humidity, temperature, checksum) or raises OSError(ETIMEDOUT) when
    # the part does not answer; read again sooner than its interval, it does not answer either.
    def __init__(self, kind, air, clock=ticks_ms):
        if kind not in ("dht11", "dht22"):
            raise ValueError("kind is dht11 or dht22")
        self.kind = kind
        self.air = air              # () -> {"celsius": ..., "rh": ...}
        self.clock = clock
        self.pin = object()         # the data pin it is wired to
        self.present = True
        self.corrupt = False        # the next frames' checksum is wrong (noise)
        self.interval_ms = 1000 if kind == "dht11" else 2000
        self.last = None
        self.reads = 0

    def frame(self):
        # The five bytes the part sends for the present air (datasheets: DHT22 (AM2302) section 7,
        # tenths in 16 bits, the temperature's top bit its sign; DHT11: whole units, then tenths
        # of a degree with bit 7 the sign; byte 4 the low 8 bits of the sum of the others).
        air = self.air()
        rh = min(100.0, max(0.0, air["rh"]))
        celsius = air["celsius"]
        if self.kind == "dht22":
            tenths = int(round(rh * 10))
            t = int(round(abs(celsius) * 10))
            data = [tenths >> 8, tenths & 0xFF, (t >> 8) | (0x80 if celsius < 0 else 0), t & 0xFF]
        else:
            t = int(round(abs(celsius) * 10))
            data = [int(round(rh)), 0, t // 10, (t % 10) | (0x80 if celsius < 0 else 0)]
        data.append(sum(data) & 0xFF)
        return data

    def readinto(self, pin, buf):
        if pin is not self.pin:
            raise OSError(ETIMEDOUT)   # nothing answers on that pin
        now = self.clock()
        early = self.last is not None and ticks_diff(now, self.last) < self.interval_ms
        self.last = now
        if not self.present or early:
            raise OSError(ETIMEDOUT)
        self.reads += 1
        data = self.frame()
        if self.corrupt:
            data[4] = (data[4] + 1) & 0xFF
        for i in range(5):
            buf[i] = data[i]
