# Maxim DS18B20 temperature probes on one wire: ROM search, one conversion for every probe,
# each scratchpad CRC-checked.
#
#   probes = DS18B20(onewire.OneWire(Pin(22)), wiring="DATA GP22, 4.7k pull-up to 3V3")
#   probes.read() -> [{"rom": "28ff641e0f5a3c12", "celsius": 21.5}, ...]   (blocks 750 ms)
#   attach(server, probes)     # read_probes: a long tool, the conversion waits in idle time
#
# The driver speaks through the bit and byte primitives of MicroPython's onewire.OneWire
# (reset, readbit, writebit, readbyte, writebyte: thin calls into the C module _onewire), and
# runs the ROM search, MATCH ROM and the CRC itself: the same code drives a board's bus and the
# simulated one (tinymcp/sensors/simparts_in.py), which answers at that level.
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.sensors.common import SensorError, reading, sleep_ms, typed

_SEARCH_ROM = 0xF0
_MATCH_ROM = 0x55
_SKIP_ROM = 0xCC
_CONVERT_T = 0x44
_READ_SCRATCHPAD = 0xBE
_WRITE_SCRATCHPAD = 0x4E
FAMILIES = (0x28, 0x22)   # DS18B20, DS1822: the same scratchpad layout
# Datasheet table 2: the conversion time at 9..12 bits, in ms (93.75, 187.5, 375, 750; rounded up).
CONVERSION_MS = (94, 188, 375, 750)
_CHECK = " Check the 4.7 kOhm pull-up from DATA to 3.3 V, the data pin"


def crc8(buf, end=None):
    # Dallas/Maxim CRC-8 (X^8 + X^5 + X^4 + 1, shifted LSB first, init 0): over the 7 ROM bytes or
    # 8 scratchpad bytes it equals the byte that follows; over them and that byte it is 0.
    crc = 0
    for i in range(len(buf) if end is None else end):
        byte = buf[i]
        for _ in range(8):
            mix = (crc ^ byte) & 1
            crc >>= 1
            if mix:
                crc ^= 0x8C
            byte >>= 1
    return crc


def rom_hex(rom):
    # The ROM id as MicroPython prints it: its 8 bytes in bus order, family code first.
    return "".join("%02x" % b for b in rom)


def decode(lsb, msb, config=0x7F):
    # Scratchpad bytes 0, 1 and 4 -> degrees Celsius (datasheet figure 4: two's complement,
    # 1/16 degC a step; at 9..11 bits the lowest 3..1 bits are undefined and dropped).
    raw = (msb << 8) | lsb
    if raw & 0x8000:
        raw -= 0x10000
    bits = 9 + ((config >> 5) & 3)
    raw &= ~((1 << (12 - bits)) - 1)
    return raw / 16


class DS18B20:
    max_probes = 8   # a search stops there: each probe's ROM is 8 bytes held

    def __init__(self, ow, resolution=12, wiring=""):
        if resolution not in (9, 10, 11, 12):
            raise ValueError("resolution is 9, 10, 11 or 12 bits")
        self.ow = ow
        self.resolution = resolution
        self.conversion_ms = CONVERSION_MS[resolution - 9]
        self.wiring = wiring   # where the board wired it, quoted in error messages
        self.roms = []         # bytes of each probe the last search found
        self.started = None    # when the last conversion began
        self._rom = bytearray(8)
        self._scratch = bytearray(9)

    def hint(self):
        return (" (" + self.wiring + ")") if self.wiring else ""

    def _reset(self):
        if not self.ow.reset():
            raise SensorError("No DS18B20 answered on the one-wire bus (no presence pulse)."
                              + _CHECK + self.hint() + ", and the probe's VDD and GND")

    def scan(self):
        # The ROM search (Maxim application note 187): one pass per probe, each taking the
        # 0 branch first where ROMs differ. -> the ROMs of the temperature probes found.
        ow = self.ow
        rom = self._rom
        found = []
        last_fork = 0   # 1-based bit where the previous pass took 0 at a fork, 0: none left
        while True:
            self._reset()
            ow.writebyte(_SEARCH_ROM)
            fork = 0
            for i in range(64):
                bit = ow.readbit()
                complement = ow.readbit()
                mask = 1 << (i & 7)
                if bit and complement:  # nobody answered this bit: a probe left mid-search
                    raise SensorError("A probe stopped answering during the one-wire search: "
                                      "check the connectors." + _CHECK + self.hint())
                if bit != complement:   # every probe still in the search agrees here
                    go = bit
                elif i + 1 < last_fork:
                    go = 1 if rom[i >> 3] & mask else 0
                else:
                    go = 1 if i + 1 == last_fork else 0
                if not go and bit == complement:
                    fork = i + 1
                if go:
                    rom[i >> 3] |= mask
                else:
                    rom[i >> 3] &= ~mask
                ow.writebit(go)
            if not any(rom):  # every slot read 0: the line never rises
                raise SensorError("The one-wire data line stays low: the 4.7 kOhm pull-up to "
                                  "3.3 V is missing or DATA is shorted to GND" + self.hint())
            if crc8(rom) != 0:
                raise SensorError("A ROM id read during the one-wire search failed its CRC "
                                  "(noise on the bus)." + _CHECK + self.hint()
                                  + " and the cable length (a long cable wants 2.2 kOhm)")
            if rom[0] in FAMILIES:
                found.append(bytes(rom))
            last_fork = fork
            if not last_fork or len(found) >= self.max_probes:
                break
        self.roms = found
        return found

    def convert(self):
        # Every probe starts its conversion at once (SKIP ROM, CONVERT T): -> ms to wait. At less
        # than 12 bits the resolution is written first: a probe forgets it at power-up. A
        # conversion still running (another call's) is waited for, not started again.
        if self.started is not None:
            running = ticks_diff(ticks_ms(), self.started)
            if running < self.conversion_ms:
                return self.conversion_ms - running
        ow = self.ow
        if self.resolution != 12:
            self._reset()
            ow.writebyte(_SKIP_ROM)
            ow.writebyte(_WRITE_SCRATCHPAD)
            ow.writebyte(0x4B)   # TH and TL: the alarm bytes as they come from the factory
            ow.writebyte(0x46)
            ow.writebyte(0x1F | ((self.resolution - 9) << 5))
        self._reset()
        ow.writebyte(_SKIP_ROM)
        ow.writebyte(_CONVERT_T)
        self.started = ticks_ms()
        return self.conversion_ms

    def celsius(self, rom):
        # One probe's converted temperature: MATCH ROM, READ SCRATCHPAD, CRC.
        ow = self.ow
        self._reset()
        ow.writebyte(_MATCH_ROM)
        for b in rom:
            ow.writebyte(b)
        ow.writebyte(_READ_SCRATCHPAD)
        scratch = self._scratch
        for i in range(9):
            scratch[i] = ow.readbyte()
        if crc8(scratch) != 0 or scratch[4] & 0x9F != 0x1F:  # the fixed bits of its config byte
            raise SensorError("The DS18B20 " + rom_hex(rom) + " sent a corrupted scratchpad "
                              "(CRC mismatch); nothing was reported." + _CHECK + self.hint()
                              + " and the cable length, then retry")
        return decode(scratch[0], scratch[1], scratch[4])

    def collect(self):
        # After a conversion: each probe the search found, its ROM id and temperature.
        return [{"rom": rom_hex(rom), "celsius": self.celsius(rom)} for rom in self.roms]

    def read(self):
        # Search, convert, wait, collect: blocks for the conversion time (the tool does not).
        if not self.scan():
            raise SensorError(_NONE + self.hint())
        sleep_ms(self.convert())
        return self.collect()


_NONE = "The one-wire bus answered but holds no DS18B20 probe: check the probe's DATA wire"


def attach(server, probes, name="probes"):
    # read_probes: a long tool (a generator the serve loop steps, tinymcp/tasks.py), so the
    # board keeps answering while the probes convert; a client may run it as a task.
    from tinymcp.schema import array, number, obj, string
    units = {"celsius": "Cel"}
    probe = obj({"rom": string("The probe's 64-bit ROM id, hex, family code first"),
                 "celsius": number("Temperature in degrees Celsius", -55, 125)})

    @server.tool("read_" + name, "Read every DS18B20 temperature probe on the one-wire bus: "
                 "each probe's ROM id and temperature. Takes the conversion time (" +
                 str(probes.conversion_ms) + " ms).",
                 outputs=typed({"probes": array(probe, "One entry per probe found", 0,
                                                probes.max_probes)}, units),
                 title="Read DS18B20 probes", read_only=True, idempotent=True,
                 open_world=False, task="optional")
    def read_tool():
        if not probes.scan():
            raise SensorError(_NONE + probes.hint())
        wait = probes.convert()
        start = ticks_ms()
        while True:
            elapsed = ticks_diff(ticks_ms(), start)
            if elapsed >= wait:
                break
            yield elapsed / wait
        return reading({"probes": probes.collect()}, units)

    return probes
