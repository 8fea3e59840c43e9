# The heartbeat LED and the watchdog of boot.start(heartbeat=..., watchdog_ms=...): an idle hook
# of the server blinks and feeds them from the serve loop's idle poll, and a timer keeps a
# started watchdog fed after serving ends. A board with neither never loads this module.
from tinymcp.clock import ticks_ms, ticks_diff


class Idle:
    # An idle hook (in Server.idle), run in the serve loop's idle poll (every ~200 ms) with the
    # others: feeds the watchdog and blinks the heartbeat LED. A loop that hangs stops both.
    def __init__(self, led=None, wdt=None, every_ms=500):
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


def watch(server, led=None, watchdog_ms=None):
    # -> the machine.WDT started (None without watchdog_ms), fed by an Idle hook of the server.
    wdt = None
    if watchdog_ms:
        from machine import WDT
        wdt = WDT(timeout=watchdog_ms)
    server.idle.append(Idle(led, wdt))
    return wdt


def keep_fed(wdt):
    # A watchdog cannot be stopped once started: after a deliberate exit (0x03 from mpremote)
    # a timer feeds it, so the REPL is usable instead of resetting every few seconds.
    from machine import Timer
    try:
        timer = Timer(-1)   # rp2: a virtual timer
    except ValueError:
        timer = Timer(0)    # esp32: hardware timers only
    timer.init(period=1000, mode=Timer.PERIODIC, callback=lambda t: wdt.feed())
    return timer
