# SSD1306 OLED (128x64 or 128x32) on I2C: lines of text drawn with MicroPython's framebuf.
#
#   panel = SSD1306(i2c, address=0x3C, height=64)   # SA0 low: 0x3C, high: 0x3D
#   panel.show(["Hello", "22.4 C"], invert=False)   # 8 px a character, 8 px a line
#   panel.clear()
#   attach(server, panel)                           # show_text, clear_display
#
# Each frame goes out after the set-up commands (24 bytes, well under a millisecond at 400 kHz),
# so a panel plugged in late or power-cycled shows the next frame; the whole frame is one I2C
# write after a Co=0, D/C#=1 control byte. Nothing is set up at attach(): a missing panel is an
# error of the call that needs it, not of the board's start.
from tinymcp.sensors.common import SensorError, bus_fault, hexaddr

# Datasheet 10.1 / application note set-up, in order: display off (sent before the first frame
# only, so later ones do not flicker), clock, multiplex (patched for the height), offset 0, start
# line 0, charge pump on (no external VCC), horizontal addressing, segment remap and COM scan
# reversed (column 0 left, row 0 top on the usual modules), COM pins (patched), contrast,
# pre-charge, VCOMH, RAM shown, not inverted, on.
_INIT = (0xAE, 0xD5, 0x80, 0xA8, 63, 0xD3, 0x00, 0x40, 0x8D, 0x14, 0x20, 0x00, 0xA1, 0xC8,
         0xDA, 0x12, 0x81, 0xCF, 0xD9, 0xF1, 0xDB, 0x40, 0xA4, 0xA6, 0xAF)
_MUX_AT = 4          # index of the multiplex ratio in _INIT
_COM_PINS_AT = 15    # index of the COM pins configuration
_COMMANDS = 0x00     # control byte: Co=0, D/C#=0 -> the rest are commands
_DATA = 0x40         # control byte: Co=0, D/C#=1 -> the rest go to display RAM


class SSD1306:
    width = 128
    char_px = 8      # framebuf's built-in font: 8x8 cells

    def __init__(self, i2c, address=0x3C, height=64, wiring="", framebuf=None):
        if framebuf is None:   # MicroPython's own; CPython tests and the sim pass a stand-in
            import framebuf
        if height not in (32, 64):
            raise ValueError("an SSD1306 panel is 128x64 or 128x32")
        self.i2c = i2c
        self.address = address
        self.height = height
        self.wiring = wiring
        self.name = "SSD1306 display at " + hexaddr(address)
        self.max_lines = height // self.char_px
        self.max_chars = self.width // self.char_px
        self.buffer = bytearray(self.width * height // 8)
        self.frame = framebuf.FrameBuffer(self.buffer, self.width, height, framebuf.MONO_VLSB)
        self._setup = bytearray(_INIT)
        self._setup[_MUX_AT] = height - 1
        self._setup[_COM_PINS_AT] = 0x12 if height == 64 else 0x02
        self._resetup = memoryview(self._setup)[1:]   # the set-up without display off
        # Before each frame: invert or not, then the whole RAM as the write window.
        self._window = bytearray((0xA6, 0x21, 0, self.width - 1, 0x22, 0, height // 8 - 1))
        self.started = False
        self.lines = 0
        self.inverted = False

    def _commands(self, buf):
        self.i2c.writeto_mem(self.address, _COMMANDS, buf)

    def _send(self, invert):
        try:
            self._commands(self._setup if not self.started else self._resetup)
            self._window[0] = 0xA7 if invert else 0xA6
            self._commands(self._window)
            self.i2c.writeto_mem(self.address, _DATA, self.buffer)
            self.started = True
        except OSError as e:
            raise bus_fault(e, self.name, self.wiring)
        self.inverted = invert

    def show(self, lines, invert=False):
        # Each line as sent, from the top left; characters outside ASCII draw as a box.
        if len(lines) > self.max_lines:
            raise SensorError(self.name + " shows at most " + str(self.max_lines) + " lines")
        for line in lines:
            if len(line) > self.max_chars:
                raise SensorError(self.name + " shows at most " + str(self.max_chars)
                                  + " characters a line")
        frame = self.frame
        frame.fill(0)
        y = 0
        for line in lines:
            frame.text(line, 0, y, 1)
            y += self.char_px
        self._send(invert)
        self.lines = len(lines)
        return {"lines": self.lines, "invert": invert}

    def clear(self):
        self.frame.fill(0)
        self._send(False)
        self.lines = 0
        return {"lines": 0, "invert": False}


def attach(server, panel):
    from tinymcp.schema import array, boolean, integer, string
    shown = {"lines": integer("Lines now shown", 0, panel.max_lines),
             "invert": boolean("Whether the panel shows dark text on a lit background")}

    @server.tool("show_text", "Show up to " + str(panel.max_lines) + " lines of up to "
                 + str(panel.max_chars) + " characters on the " + panel.name + ", replacing "
                 "what it showed. Text is drawn exactly as given (ASCII; other characters "
                 "show as a box).",
                 inputs={"lines": array(string("One line of text", max_length=panel.max_chars),
                                        "Lines from the top", max_items=panel.max_lines),
                         "invert?": boolean("Dark text on a lit background", default=False)},
                 outputs=shown, title="Show text on the display", read_only=False,
                 destructive=False, idempotent=True, open_world=False)
    def show_text(lines, invert=False):
        return panel.show(lines, invert)

    @server.tool("clear_display", "Blank the " + panel.name + ".", outputs=shown,
                 title="Clear the display", read_only=False, destructive=False,
                 idempotent=True, open_world=False)
    def clear_display():
        return panel.clear()

    return panel
