# Millisecond ticks on both runtimes (MicroPython's time.ticks_* wrap; CPython's do not need to).
import time

try:
    ticks_ms = time.ticks_ms
    ticks_diff = time.ticks_diff
except AttributeError:
    def ticks_ms():
        return int(time.monotonic() * 1000)

    def ticks_diff(a, b):
        return a - b

try:
    sleep_ms = time.sleep_ms
except AttributeError:
    def sleep_ms(ms):
        time.sleep(ms / 1000)
