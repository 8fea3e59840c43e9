# The real board files with the output parts fitted (their wiring block edited as a user would):
# a panel on the board's I2C bus, a strip on its pin, servos on theirs, over simulated parts.
import sys

from tests.sensors.fakes import FakeMachine, call, ready, tools
from tinymcp.sensors import simparts_out

try:
    import framebuf   # MicroPython: the real one
except ImportError:   # CPython: the board file's `import framebuf` gets the stand-in
    from tinymcp.sensors import simframebuf as framebuf

OUTPUT_TOOLS = ("show_text", "clear_display", "set_pixels", "set_servo")


class FakeNeopixel:
    # Stands in for the neopixel module: NeoPixel(pin, n) onto a simulated chain.
    def __init__(self):
        self.chains = {}
        outer = self

        def NeoPixel(pin, n):
            outer.chains[pin.id] = simparts_out.WS2812Chain(n)
            return simparts_out.NeoPixel(outer.chains[pin.id], n)
        self.NeoPixel = NeoPixel


def fitted(board, **wiring):
    panel = simparts_out.SSD1306Panel(0x3C)
    fake = FakeMachine(panel)
    strips = FakeNeopixel()
    fake.install()
    sys.modules["neopixel"] = strips
    own_framebuf = "framebuf" not in sys.modules
    sys.modules["framebuf"] = framebuf
    try:
        name = "boards." + board + ".main"
        if name in sys.modules:
            del sys.modules[name]
        module = __import__(name, None, None, ("build",))
        for key in wiring:
            setattr(module, key, wiring[key])
        s = ready(module.build())
    finally:
        fake.uninstall()
        del sys.modules["neopixel"]
        if own_framebuf:
            del sys.modules["framebuf"]
        del sys.modules[name]   # the next test imports the file as shipped
    return s, fake, panel, strips


def test_unfitted_boards_offer_none_of_the_output_tools():
    for board in ("rpi_pico", "esp32"):
        s, _, panel, strips = fitted(board)
        assert not [t for t in OUTPUT_TOOLS if t in tools(s)], board
        assert panel.commands == [] and strips.chains == {}


def test_a_pico_with_a_panel_a_strip_and_a_servo():
    s, fake, panel, strips = fitted("rpi_pico", SSD1306_AT=0x3C, NEOPIXEL=(22, 8),
                                    SERVO_PINS=(17,))
    for name in OUTPUT_TOOLS:
        assert name in tools(s), name
    assert panel.commands == []                      # nothing sent before the first call
    assert call(s, "show_text", {"lines": ["pico"]})["structuredContent"]["lines"] == 1
    assert panel.on and panel.data_bytes == 1024
    call(s, "set_pixels", {"pixels": ["#ff0000"]})
    assert strips.chains[22].colours()[0] == [255, 0, 0]
    assert tools(s)["set_servo"]["inputSchema"]["properties"]["pin"]["enum"] == [17]
    moved = call(s, "set_servo", {"pin": 17, "angle": 180})["structuredContent"]
    assert moved == {"pin": 17, "angle": 180, "pulse_us": 2500}   # the board's declared range


def test_a_missing_panel_names_the_boards_i2c_pins():
    for board, pins in (("rpi_pico", "GP4"), ("esp32", "GPIO21")):
        s, _, panel, _ = fitted(board, SSD1306_AT=0x3D)   # the panel answers at 0x3C
        failed = call(s, "show_text", {"lines": ["hi"]})
        assert failed["isError"] is True, board
        text = failed["content"][0]["text"]
        assert "0x3d" in text and pins in text and "did not answer" in text, text
