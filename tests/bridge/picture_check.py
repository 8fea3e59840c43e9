# What the pictures tests check in a PNG the bridge made of tests/bridge/plotboard.py's plot: its
# size, and the line drawn where the known samples put it (the board's plot geometry: 480x200,
# the samples' span across x 50..470, their range across y 190..10, higher values higher up).
import base64
import io

from tests.bridge.plotboard import SAMPLES

WIDTH, HEIGHT = 480, 200
LINE = (0x1f, 0x77, 0xb4)   # the plot's stroke
TEXT = "temperature, 10 samples over 9 s: min 10, max 30, mean 19.2, last 24 Cel"


def where(t_ms, value):
    # The pixel a sample is plotted at, from the samples alone.
    times = [t for t, _v in SAMPLES]
    values = [v for _t, v in SAMPLES]
    low, high = min(values), max(values)
    x = 50 + (WIDTH - 60) * (t_ms - times[0]) / (times[-1] - times[0])
    y = 10 + (HEIGHT - 30) * (high - value) / (high - low)
    return round(x), round(y)


def inked(image, x, y, reach=2):
    # Is the line's colour within `reach` px of (x, y)? (Its edges are anti-aliased.)
    for dx in range(-reach, reach + 1):
        for dy in range(-reach, reach + 1):
            r, g, b = image.getpixel((x + dx, y + dy))[:3]
            if abs(r - LINE[0]) + abs(g - LINE[1]) + abs(b - LINE[2]) < 60:
                return True
    return False


def check_plot_png(data):
    # data: the PNG's base64, as an image content item carries it.
    from PIL import Image
    image = Image.open(io.BytesIO(base64.b64decode(data)))
    image.load()
    assert image.format == "PNG" and image.size == (WIDTH, HEIGHT)
    for t_ms, value in (SAMPLES[1], SAMPLES[6]):   # the minimum, and one on a falling slope
        x, y = where(t_ms, value)
        assert inked(image, x, y), (t_ms, value, x, y)
        for away in (y - 45, y + 45):   # nothing drawn well above or below it
            if 0 <= away < HEIGHT:
                assert image.getpixel((x, away))[:3] == (255, 255, 255), (x, away)
    return image
