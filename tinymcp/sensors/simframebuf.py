# A stand-in for MicroPython's framebuf on CPython (the sim board, the tests): MONO_VLSB only.
# MicroPython builds (boards, the unix port) use their own framebuf; this one draws each
# character as an 8x8 code cell (the character's bits as bars), not a font: where text is and
# how much of it, not how it reads.
MONO_VLSB = 0


class FrameBuffer:
    def __init__(self, buffer, width, height, format=MONO_VLSB, stride=None):
        if format != MONO_VLSB:
            raise ValueError("the framebuf stand-in draws MONO_VLSB only")
        self.buffer = buffer
        self.width = width
        self.height = height

    def pixel(self, x, y, c=None):
        if not (0 <= x < self.width and 0 <= y < self.height):
            return None
        index = (y >> 3) * self.width + x
        bit = 1 << (y & 7)
        if c is None:
            return 1 if self.buffer[index] & bit else 0
        if c:
            self.buffer[index] |= bit
        else:
            self.buffer[index] &= ~bit & 0xFF

    def fill(self, c):
        value = 0xFF if c else 0
        for i in range(len(self.buffer)):
            self.buffer[i] = value

    def fill_rect(self, x, y, w, h, c):
        for yy in range(y, y + h):
            for xx in range(x, x + w):
                self.pixel(xx, yy, c)

    def text(self, s, x, y, c=1):
        # framebuf's rules: 8 px a character, only set pixels drawn, codes outside 32..127 as 127.
        for ch in s:
            code = ord(ch)
            if code < 32 or code > 127:
                code = 127
            for col in range(8):
                bits = _cell(code, col)
                for row in range(8):
                    if bits & (1 << row):
                        self.pixel(x + col, y + row, c)
            x += 8


def _cell(code, col):
    # Column col of a character's code cell: blank for a space and in the first column, else a
    # frame whose columns 1..7 carry the code's bits as full bars.
    if code == 32 or col == 0:
        return 0
    return 0x7E if code & (1 << (col - 1)) else 0x42
