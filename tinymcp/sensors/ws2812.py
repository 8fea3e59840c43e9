# WS2812 / SK6812 RGB strips ("NeoPixels") through MicroPython's neopixel module.
#
#   strip = Strip(neopixel.NeoPixel(Pin(16), 8), 8)
#   strip.set([[255, 0, 0], "#00ff00"], start=2)   # pixels 2 and 3; the others keep their colour
#   attach(server, strip)                          # set_pixels {"pixels", "start"?, "lease_s"?}
#
# The colours go into the NeoPixel's own buffer in the order the chips take them (green, red,
# blue: datasheet "Composition of 24bit data"), then one write(). All off is the safe state.
# A WS2812 never answers, so a strip that is missing or unpowered cannot be told from one that lit.
from tinymcp.sensors.common import SensorError, lease, with_lease


_HEX = "0123456789abcdefABCDEF"


def _level(value):
    return type(value) is int and 0 <= value <= 255


def _rgb(pixel, i):
    # -> the pixel as one 0xRRGGBB int (no tuple: a small int allocates nothing), or a
    # SensorError naming it.
    if type(pixel) is str:
        if len(pixel) == 7 and pixel[0] == "#":
            digits = pixel[1:]
            for c in digits:   # int() alone would take "0x1234", "-12345", " 1234 "
                if c not in _HEX:
                    break
            else:
                return int(digits, 16)
    elif type(pixel) is list and len(pixel) == 3 and _level(pixel[0]) and _level(pixel[1]) \
            and _level(pixel[2]):
        return (pixel[0] << 16) | (pixel[1] << 8) | pixel[2]
    raise SensorError("pixels[" + str(i) + "] must be [r, g, b] with each 0..255 or a "
                      "\"#rrggbb\" string")


class Strip:
    def __init__(self, np, count):
        # np: a neopixel.NeoPixel of count pixels, 3 bytes each (an RGBW strip's 4 are refused
        # at the first write). Its buf is read when used: a deploy trace stands in for it.
        self.np = np
        self.count = count

    def dark_after(self, pixels, start):
        # Would the strip be all off once these pixels are set? (Before they are: leases.)
        for i in range(len(pixels)):
            if _rgb(pixels[i], i):
                return False
        buf = self.np.buf
        for i in range(len(buf)):
            if buf[i] and not (start * 3 <= i < (start + len(pixels)) * 3):
                return False
        return True

    def set(self, pixels, start=0):
        if start < 0 or start + len(pixels) > self.count:
            raise SensorError("the strip has " + str(self.count) + " pixels (0.." + str(
                self.count - 1) + "): " + str(len(pixels)) + " from " + str(start)
                + " do not fit")
        for i in range(len(pixels)):   # every pixel checked before any is set
            _rgb(pixels[i], i)
        buf = self.np.buf
        if len(buf) != 3 * self.count:
            raise SensorError("the strip was set up with " + str(len(buf)) + " bytes for "
                              + str(self.count) + " pixels; set_pixels drives RGB strips")
        at = start * 3
        for i in range(len(pixels)):
            rgb = _rgb(pixels[i], i)
            buf[at] = (rgb >> 8) & 0xFF      # green
            buf[at + 1] = rgb >> 16          # red
            buf[at + 2] = rgb & 0xFF         # blue
            at += 3
        self.np.write()
        return {"start": start, "count": len(pixels), "lit": self.lit()}

    def lit(self):
        # Pixels not off.
        buf = self.np.buf
        n = 0
        for i in range(0, len(buf), 3):
            if buf[i] or buf[i + 1] or buf[i + 2]:
                n += 1
        return n

    def safe(self, key=None):
        buf = self.np.buf
        for i in range(len(buf)):
            buf[i] = 0
        self.np.write()


def attach(server, strip):
    from tinymcp.schema import array, integer
    from tinymcp.sensors.common import lease_schemas
    leased = lease_schemas("the strip")
    n = strip.count

    @server.tool("set_pixels", "Set the colours of consecutive pixels of the " + str(n)
                 + "-pixel LED strip, from `start` (default 0); the others keep theirs. Each "
                 "pixel is [r, g, b] (0..255 each) or \"#rrggbb\"; [0, 0, 0] is off. With "
                 "lease_s the whole strip goes off by itself unless set again within that time.",
                 inputs={"pixels": array({"type": ["array", "string"],
                                          "description": "[r, g, b] or \"#rrggbb\""},
                                         "Colours, from `start` on", 1, n),
                         "start?": integer("First pixel to set", 0, n - 1, default=0),
                         "lease_s?": leased[0]},
                 outputs={"start": integer("First pixel set"), "count": integer("Pixels set"),
                          "lit": integer("Pixels of the strip now not off", 0, n),
                          "lease_s?": leased[1]},
                 title="Set LED strip pixels", read_only=False, destructive=False,
                 idempotent=True, open_world=False)
    def set_pixels(pixels, start=0, lease_s=None):
        if start + len(pixels) > n:
            return strip.set(pixels, start)   # the error, before any lease is touched
        left = lease(server, strip, 0, lease_s, strip.dark_after(pixels, start))
        return with_lease(strip.set(pixels, start), left)

    return strip
