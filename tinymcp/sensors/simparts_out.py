# Simulated output parts for boards/sim and the driver tests, each decoding what a driver sends
# as the real part would: an SSD1306 panel on the simulated I2C bus (its command stream and
# display RAM), a WS2812 chain on a data pin (GRB bytes, 24 bits a chip), a hobby servo on a PWM
# pin (the pulse width it sees). None of them reads a driver's own state back.
import struct


class SSD1306Panel:
    # An I2C device (tinymcp/sensors/simchips.I2C): a control byte, then commands or display
    # RAM data (datasheet 8.1.5.2: Co selects one byte or the rest, D/C# commands or data).
    # ARGS: how many argument bytes follow each multi-byte command (datasheet table 9).
    ARGS = {0x81: 1, 0x20: 1, 0x21: 2, 0x22: 2, 0xA8: 1, 0xD3: 1, 0xD5: 1, 0xD9: 1, 0xDA: 1,
            0xDB: 1, 0x8D: 1, 0xA3: 2, 0x26: 6, 0x27: 6, 0x29: 5, 0x2A: 5}

    def __init__(self, address=0x3C, width=128, height=64):
        self.address = address
        self.width = width
        self.height = height
        self.absent = False
        self.ram = bytearray(width * 8)   # 8 pages of 128 columns, whatever the glass shows
        self.commands = []                # every command as received: [opcode, args...]
        self.data_bytes = 0
        self._power_on()

    def _power_on(self):
        # Reset values (datasheet table 9): off, page addressing, no remap, no charge pump.
        self.on = False
        self.pump = False
        self.inverse = False
        self.entire_on = False
        self.seg_remap = False
        self.com_remap = False
        self.mux = 63
        self.start_line = 0
        self.offset = 0
        self.mode = 2
        self.cols = (0, self.width - 1)
        self.pages = (0, 7)
        self.col = 0
        self.page = 0
        self.pending = None

    def power_cycle(self):
        self._power_on()
        for i in range(len(self.ram)):   # RAM holds noise after power-up; zero is kinder
            self.ram[i] = 0

    def write(self, data):
        i = 0
        while i < len(data):
            control = data[i]
            i += 1
            if control & 0x80:           # Co=1: one byte, then another control byte
                if i < len(data):
                    self._take(data[i], control & 0x40)
                i += 1
                continue
            for byte in data[i:]:        # Co=0: the rest of the transfer
                self._take(byte, control & 0x40)
            return

    def read(self, n):
        return bytes(n)   # the status byte (D6 = display off) is not modelled: zeros

    def _take(self, byte, is_data):
        if is_data:
            self._ram_write(byte)
        elif self.pending is not None:
            self.pending.append(byte)
            if len(self.pending) == self.ARGS[self.pending[0]] + 1:
                self._command(self.pending)
                self.pending = None
        elif byte in self.ARGS:
            self.pending = [byte]
        else:
            self._command([byte])

    def _command(self, cmd):
        self.commands.append(cmd)
        op = cmd[0]
        if op in (0xAE, 0xAF):
            self.on = op == 0xAF
        elif op in (0xA6, 0xA7):
            self.inverse = op == 0xA7
        elif op in (0xA4, 0xA5):
            self.entire_on = op == 0xA5
        elif op in (0xA0, 0xA1):
            self.seg_remap = op == 0xA1
        elif op in (0xC0, 0xC8):
            self.com_remap = op == 0xC8
        elif 0x40 <= op <= 0x7F:
            self.start_line = op - 0x40
        elif 0xB0 <= op <= 0xB7:
            self.page = op - 0xB0
        elif op <= 0x0F:
            self.col = (self.col & 0xF0) | op
        elif op <= 0x1F:
            self.col = (self.col & 0x0F) | ((op & 0x0F) << 4)
        elif op == 0x8D:
            self.pump = bool(cmd[1] & 0x04)
        elif op == 0x20:
            self.mode = cmd[1] & 0x03
        elif op == 0x21:
            self.cols = (cmd[1] & 0x7F, cmd[2] & 0x7F)
            self.col = self.cols[0]
        elif op == 0x22:
            self.pages = (cmd[1] & 0x07, cmd[2] & 0x07)
            self.page = self.pages[0]
        elif op == 0xA8:
            self.mux = cmd[1] & 0x3F
        elif op == 0xD3:
            self.offset = cmd[1] & 0x3F

    def _ram_write(self, byte):
        self.data_bytes += 1
        self.ram[self.page * self.width + self.col] = byte
        if self.mode == 2:               # page addressing: the column wraps within the page
            self.col = (self.col + 1) % self.width
            return
        first_col, last_col = self.cols
        first_page, last_page = self.pages
        if self.mode == 0:               # horizontal: along the page, then the next page
            if self.col < last_col:
                self.col += 1
                return
            self.col = first_col
            self.page = self.page + 1 if self.page < last_page else first_page
        else:                            # vertical: down the pages, then the next column
            if self.page < last_page:
                self.page += 1
                return
            self.page = first_page
            self.col = self.col + 1 if self.col < last_col else first_col

    def lit(self, x, y):
        # What the glass shows at (x, y), top left (0, 0), on a module wired as most are:
        # column 0 at the right unless segments are remapped, row 0 at the bottom unless the
        # COM scan is reversed. Dark when off or without the charge pump (no panel supply).
        if not (self.on and self.pump) or y > self.mux:
            return 0
        if self.entire_on:
            return 1
        col = x if self.seg_remap else self.width - 1 - x
        com = y if self.com_remap else self.mux - y
        row = (com + self.start_line + self.offset) % 64
        bit = (self.ram[(row >> 3) * self.width + col] >> (row & 7)) & 1
        return bit ^ 1 if self.inverse else bit

    def png(self):
        # The panel as a 1-bit greyscale PNG, lit pixels white.
        rows = bytearray()
        for y in range(self.height):
            rows.append(0)   # filter: none
            for xb in range(0, self.width, 8):
                byte = 0
                for bit in range(8):
                    byte = (byte << 1) | self.lit(xb + bit, y)
                rows.append(byte)
        return png_grey1(self.width, self.height, bytes(rows))


def _crc32(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ 0xEDB88320 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def _adler32(data):
    a, b = 1, 0
    for byte in data:
        a = (a + byte) % 65521
        b = (b + a) % 65521
    return (b << 16) | a


def _chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", _crc32(kind + body))


def png_grey1(width, height, rows):
    # rows: each row's filter byte and packed pixels. Deflate's stored blocks (RFC 1951 3.2.4)
    # carry them uncompressed, so no zlib is needed on any runtime.
    stream = bytearray(b"\x78\x01")
    for at in range(0, len(rows), 65535):
        block = rows[at:at + 65535]
        final = 1 if at + 65535 >= len(rows) else 0
        stream += struct.pack("<BHH", final, len(block), len(block) ^ 0xFFFF) + block
    stream += struct.pack(">I", _adler32(rows))
    return (b"\x89PNG\r\n\x1a\n"
            + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
            + _chunk(b"IDAT", bytes(stream)) + _chunk(b"IEND", b""))


class WS2812Chain:
    # WS2812 chips in a chain on one data pin: each takes the first 24 bits it is sent (green,
    # red, blue, most significant bit first) and passes the rest on; the reset gap latches them.
    # A chip that got no bits keeps its colour.
    def __init__(self, length):
        self.grb = [(0, 0, 0)] * length
        self.frames = 0

    def send(self, data):
        for i in range(min(len(self.grb), len(data) // 3)):
            self.grb[i] = (data[3 * i], data[3 * i + 1], data[3 * i + 2])
        self.frames += 1

    def colours(self):
        # -> [[r, g, b]] as the chips light.
        return [[g_r_b[1], g_r_b[0], g_r_b[2]] for g_r_b in self.grb]


class NeoPixel:
    # The shape of MicroPython's neopixel.NeoPixel the driver uses (buf, bpp, write()), whose
    # write() sends buf as it is down the data pin: here to a chain of simulated chips.
    def __init__(self, chain, n, bpp=3):
        self.chain = chain
        self.n = n
        self.bpp = bpp
        self.buf = bytearray(n * bpp)

    def write(self):
        self.chain.send(bytes(self.buf))


class ServoHorn:
    # A hobby servo on a simulated PWM output (tinymcp/sensors/sim.PWM): the pulse width it sees
    # and where it would turn, by its own pulse range. No pulses: detached, no position.
    def __init__(self, pwm, pulse_us=(500, 2500)):
        self.pwm = pwm
        self.range_us = pulse_us

    def pulse_us(self):
        return self.pwm.duty_u16() * 1000000 / (65535 * self.pwm.freq())

    def angle(self):
        if self.pwm.duty_u16() == 0:
            return None
        low, high = self.range_us
        return (self.pulse_us() - low) * 180 / (high - low)
