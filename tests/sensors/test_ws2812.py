# WS2812 driver against a simulated chain of chips that decodes the bytes sent down the data
# pin (24 bits a chip, green first): the colours the LEDs light, and the strip's lease.
from tests.sensors.fakes import call, raises, ready, server, tools
from tinymcp.sensors.common import SensorError
from tinymcp.sensors.simparts_out import NeoPixel, WS2812Chain
from tinymcp.sensors.ws2812 import Strip, attach


def bench(n=8):
    chain = WS2812Chain(n)
    return Strip(NeoPixel(chain, n), n), chain


def test_colours_go_down_the_wire_green_red_blue():
    strip, chain = bench(3)
    assert strip.set([[255, 0, 0], [0, 255, 0], [1, 2, 3]]) == {"start": 0, "count": 3, "lit": 3}
    assert chain.grb == [(0, 255, 0), (255, 0, 0), (2, 1, 3)]   # as the chips take them
    assert chain.colours() == [[255, 0, 0], [0, 255, 0], [1, 2, 3]]


def test_hex_strings_and_start_leave_the_other_pixels_as_they_were():
    strip, chain = bench(5)
    strip.set(["#102030"] * 5)
    assert strip.set(["#ff8000", "#00FF7f"], start=2) == {"start": 2, "count": 2, "lit": 5}
    assert chain.colours() == [[16, 32, 48], [16, 32, 48], [255, 128, 0], [0, 255, 127],
                               [16, 32, 48]]
    assert chain.frames == 2


def test_a_bad_pixel_changes_nothing():
    strip, chain = bench(4)
    strip.set([[9, 9, 9]])
    for bad in ([256, 0, 0], [1, 2], "#12345", "#gg0000", "red", [1.5, 0, 0], [-1, 0, 0],
                [True, 0, 0], "#0x1234", "#-12345", "# 12345", "#+12345", "ff0000#"):
        e = raises(lambda: strip.set([[1, 1, 1], bad]), SensorError)
        assert "pixels[1]" in str(e), bad
    assert chain.frames == 1 and chain.colours()[0] == [9, 9, 9]


def test_pixels_beyond_the_strip_are_refused():
    strip, chain = bench(4)
    e = raises(lambda: strip.set([[1, 1, 1]] * 3, start=2), SensorError)
    assert "has 4 pixels" in str(e)
    assert chain.frames == 0


def test_an_rgbw_strip_is_refused_before_anything_is_sent():
    chain = WS2812Chain(4)
    strip = Strip(NeoPixel(chain, 4, bpp=4), 4)
    assert "RGB strips" in str(raises(lambda: strip.set([[1, 2, 3]]), SensorError))
    assert chain.frames == 0


def test_safe_is_all_off():
    strip, chain = bench(3)
    strip.set(["#ffffff"] * 3)
    strip.safe()
    assert chain.colours() == [[0, 0, 0]] * 3 and strip.lit() == 0


def test_set_pixels_schema_and_results():
    strip, chain = bench(8)
    s = ready(server())
    attach(s, strip)
    schema = tools(s)["set_pixels"]["inputSchema"]["properties"]
    assert schema["pixels"]["maxItems"] == 8 and schema["start"]["maximum"] == 7
    done = call(s, "set_pixels", {"pixels": [[0, 0, 255], "#00ff00"], "start": 6})
    assert done["structuredContent"] == {"start": 6, "count": 2, "lit": 2}
    assert chain.colours()[6:] == [[0, 0, 255], [0, 255, 0]]
    bad = call(s, "set_pixels", {"pixels": [[0, 0, 300]]})
    assert bad["isError"] is True and "0..255" in bad["content"][0]["text"]
    over = call(s, "set_pixels", {"pixels": [[1, 1, 1]] * 3, "start": 6})
    assert over["isError"] is True and "do not fit" in over["content"][0]["text"]
    typed = call(s, "set_pixels", {"pixels": [7]})
    assert typed["isError"] is True and "pixels[0]" in typed["content"][0]["text"]


def test_a_lease_that_runs_out_turns_the_whole_strip_off():
    from tinymcp.leases import of
    strip, chain = bench(4)
    s = ready(server())
    now = [0]
    of(s, clock=lambda: now[0])
    attach(s, strip)
    lit = call(s, "set_pixels", {"pixels": ["#ff0000", "#00ff00"], "lease_s": 2})
    assert lit["structuredContent"]["lease_s"] == 2
    now[0] = 1500
    s.leases.expire()
    assert chain.colours()[0] == [255, 0, 0]
    renewed = call(s, "set_pixels", {"pixels": ["#0000ff"], "start": 3, "lease_s": 2})
    assert renewed["structuredContent"]["lease_s"] == 2
    now[0] = 3000
    s.leases.expire()
    assert strip.lit() == 3                       # renewed at 1.5 s: runs to 3.5 s
    now[0] = 3600
    s.leases.expire()
    assert chain.colours() == [[0, 0, 0]] * 4     # off, as the chips show it


def test_turning_every_pixel_off_ends_the_lease():
    from tinymcp.leases import of
    strip, chain = bench(2)
    s = ready(server())
    now = [0]
    leases = of(s, clock=lambda: now[0])
    attach(s, strip)
    call(s, "set_pixels", {"pixels": ["#ff0000"], "lease_s": 5})
    assert leases.left(strip, 0) == 5
    call(s, "set_pixels", {"pixels": [[0, 0, 0]]})
    assert leases.left(strip, 0) is None          # dark: nothing left to fail safe
    call(s, "set_pixels", {"pixels": ["#010101"], "start": 1, "lease_s": 5})
    call(s, "set_pixels", {"pixels": [[0, 0, 0]]})
    assert leases.left(strip, 0) == 5             # pixel 1 is still lit: the lease stays
