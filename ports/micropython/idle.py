# The serve loop's idle poll with a heartbeat LED or a watchdog (boot.start(heartbeat=...,
# watchdog_ms=...)); a board with neither never loads it.
from tinymcp.clock import ticks_ms, ticks_diff


class Idle:
    # Runs in the serve loop's idle poll (every ~200 ms): feeds the watchdog and blinks the
    # heartbeat LED, then polls subscriptions as usual. A loop that hangs stops both.
    def __init__(self, poll, led=None, wdt=None, every_ms=500):
        self.poll = poll
        self.led = led
        self.wdt = wdt
        self.every_ms = every_ms
        self.last = ticks_ms()
        self.lit = False

    def __call__(self):
        if self.wdt is not None:
            self.wdt.feed()
        if self.led is not None and ticks_diff(ticks_ms(), self.last) >= self.every_ms:
            self.last = ticks_ms()
            self.lit = not self.lit
            self.led.value(1 if self.lit else 0)
        self.poll()
