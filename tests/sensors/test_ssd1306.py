# SSD1306 driver against the simulated panel, which decodes the command stream and display RAM
# writes the driver sends over the simulated I2C bus: what the glass shows, pixel by pixel.
from tests.sensors.fakes import call, raises, ready, server, tools
from tinymcp.sensors import simchips
from tinymcp.sensors.common import SensorError
from tinymcp.sensors.simparts_out import SSD1306Panel
from tinymcp.sensors.ssd1306 import SSD1306, attach

try:
    import framebuf   # MicroPython: the real one
except ImportError:   # CPython: the stand-in
    from tinymcp.sensors import simframebuf as framebuf


def bench(height=64, address=0x3C, wiring=""):
    panel = SSD1306Panel(address, height=height)
    bus = simchips.I2C(panel)
    return SSD1306(bus, address, height=height, wiring=wiring, framebuf=framebuf), panel, bus


def reference(lines, height=64):
    # The same lines drawn by framebuf itself into a frame of our own: what the glass must show.
    buf = bytearray(128 * height // 8)
    fb = framebuf.FrameBuffer(buf, 128, height, framebuf.MONO_VLSB)
    y = 0
    for line in lines:
        fb.text(line, 0, y, 1)
        y += 8
    return fb


def shown(panel):
    return [[panel.lit(x, y) for x in range(panel.width)] for y in range(panel.height)]


def lit_in(panel, x0, y0, w, h):
    n = 0
    for y in range(y0, y0 + h):
        for x in range(x0, x0 + w):
            n += panel.lit(x, y)
    return n


def test_the_glass_shows_the_lines_where_framebuf_draws_them():
    display, panel, _ = bench()
    lines = ["Hello", "", "22.4 C", "0123456789ABCDEF"]
    assert display.show(lines) == {"lines": 4, "invert": False}
    fb = reference(lines)
    for y in range(64):
        for x in range(128):
            assert panel.lit(x, y) == fb.pixel(x, y), (x, y)
    assert lit_in(panel, 0, 0, 40, 8) > 20          # "Hello" lit, top left
    assert lit_in(panel, 40, 0, 88, 8) == 0         # nothing after it
    assert lit_in(panel, 0, 8, 128, 8) == 0         # the empty line
    assert lit_in(panel, 0, 32, 128, 32) == 0       # below the last line


def test_the_driver_sets_the_panel_up_as_the_datasheet_says():
    display, panel, _ = bench()
    display.show(["x"])
    assert panel.on and panel.pump                  # charge pump on, display on
    assert panel.seg_remap and panel.com_remap      # upright on the usual modules
    assert panel.mode == 0 and panel.mux == 63      # horizontal addressing, 64 rows
    assert panel.data_bytes == 1024                 # one whole frame, nothing more
    assert [0xAE] in panel.commands                 # off while it was set up
    panel.commands = []
    display.show(["y"])
    assert [0xAE] not in panel.commands             # later frames never blank it
    assert panel.data_bytes == 2048


def test_a_128x32_panel_gets_four_lines():
    display, panel, _ = bench(height=32)
    display.show(["top", "", "", "bottom"])
    assert panel.mux == 31 and panel.data_bytes == 512
    assert lit_in(panel, 0, 0, 24, 8) > 0 and lit_in(panel, 0, 24, 48, 8) > 0
    assert "at most 4 lines" in str(raises(lambda: display.show(["a"] * 5), SensorError))


def test_invert_lights_the_background():
    display, panel, _ = bench()
    display.show(["AB"])
    plain = shown(panel)
    display.show(["AB"], invert=True)
    assert panel.inverse
    assert shown(panel) == [[1 - v for v in row] for row in plain]


def test_clear_leaves_the_glass_dark():
    display, panel, _ = bench()
    display.show(["something"])
    assert display.clear() == {"lines": 0, "invert": False}
    assert lit_in(panel, 0, 0, 128, 64) == 0 and panel.on


def test_text_is_drawn_as_sent_never_evaluated():
    display, panel, _ = bench()
    display.show(["{1+1}", "%s\\n"])
    fb = reference(["{1+1}", "%s\\n"])
    assert shown(panel) == [[fb.pixel(x, y) for x in range(128)] for y in range(64)]
    for i in range(5):                                   # five characters, five cells
        assert lit_in(panel, 8 * i, 0, 8, 8) > 0
    assert lit_in(panel, 40, 0, 88, 8) == 0


def test_a_panel_power_cycled_shows_the_next_frame():
    display, panel, _ = bench()
    display.show(["one"])
    panel.power_cycle()
    assert lit_in(panel, 0, 0, 128, 64) == 0
    display.show(["two"])
    assert panel.on and lit_in(panel, 0, 0, 24, 8) > 0


def test_a_missing_panel_is_an_error_naming_the_wiring():
    display, panel, bus = bench(wiring="SDA GP4, SCL GP5")
    panel.absent = True
    e = raises(lambda: display.show(["hi"]), SensorError)
    assert "0x3c" in str(e) and "did not answer" in str(e) and "SDA GP4" in str(e)
    panel.absent = False
    display.show(["hi"])                                  # plugged in: the next call works
    assert panel.on and lit_in(panel, 0, 0, 16, 8) > 0
    bus.stuck = True
    assert "timed out" in str(raises(display.clear, SensorError))


def test_tools_bound_the_lines_and_answer_faults_as_is_error():
    display, panel, _ = bench(wiring="SDA 21, SCL 22")
    s = ready(server())
    attach(s, display)
    listed = tools(s)
    lines = listed["show_text"]["inputSchema"]["properties"]["lines"]
    assert lines["maxItems"] == 8 and lines["items"]["maxLength"] == 16
    assert listed["clear_display"]["annotations"]["readOnlyHint"] is False
    ok = call(s, "show_text", {"lines": ["hello"], "invert": True})
    assert ok["structuredContent"] == {"lines": 1, "invert": True} and panel.inverse
    too_long = call(s, "show_text", {"lines": ["x" * 17]})
    assert too_long["isError"] is True and "at most 16 characters" in too_long["content"][0]["text"]
    too_many = call(s, "show_text", {"lines": ["x"] * 9})
    assert too_many["isError"] is True and "at most 8 items" in too_many["content"][0]["text"]
    assert call(s, "clear_display")["structuredContent"] == {"lines": 0, "invert": False}
    panel.absent = True
    failed = call(s, "show_text", {"lines": ["hi"]})
    assert failed["isError"] is True and "SDA 21" in failed["content"][0]["text"]
