# Readings over time on the board. A sampler run from the serve loop's idle time keeps, per
# quantity, a ring of (time, value) in two preallocated arrays (8 bytes a sample), and alerts that
# fire once per crossing of a level (with hysteresis), as resource updates and log messages.
#
#   history = History(period_ms=1000, depth=300)
#   history.track("temperature", lambda: sensor.read()["celsius"], "Cel")
#   attach(server, history)   -> sensor://NAME/history, sensor://alerts, read_history,
#                                set_alert (and clear), plot_history
#
# This module is what runs all the time: the rings, the sampler, the crossing check. What the
# tools and resources say (queries, statistics, plots, alert settings) is in
# tinymcp/historytools.py, loaded for each such call and released after it.
#
# Times are milliseconds since the sampler started (they survive ticks_ms wrapping around).
from array import array

from tinymcp import once
from tinymcp.clock import ticks_diff, ticks_ms

ALERTS = "sensor://alerts"


class Quantity:
    def __init__(self, name, read, unit, depth):
        self.name = name
        self.read = read
        self.unit = unit
        self.times = array("l", range(depth))   # filled as samples come; count says how far
        self.values = array("f", range(depth))
        self.count = 0
        self.next = 0       # where the next sample goes
        self.alert = None   # [direction "above"/"below", level, hysteresis, armed, crossings]

    def add(self, t, value):
        i = self.next
        self.times[i] = t
        self.values[i] = value
        self.next = (i + 1) % len(self.times)
        if self.count < len(self.times):
            self.count += 1

    def clear(self):
        # Forget every sample kept -> how many there were.
        count = self.count
        self.count = self.next = 0
        return count

    def check(self, value):
        # -> True when this value crosses the alert's level (once; re-armed past hysteresis).
        alert = self.alert
        if alert is None:
            return False
        above = alert[0] == "above"
        level = alert[1]
        beyond = value > level if above else value < level
        if alert[3] and beyond:
            alert[3] = False
            alert[4] += 1
            return True
        back = value <= level - alert[2] if above else value >= level + alert[2]
        if not alert[3] and back:
            alert[3] = True
        return False


class History:
    ALERTS = ALERTS   # for tinymcp/historytools.py, which does not import this module

    def __init__(self, period_ms=1000, depth=300, clock=ticks_ms):
        self.clock = clock    # ms ticks: ticks_ms, or a test's own
        self.period_ms = period_ms
        self.depth = depth
        self.quantities = []
        self.elapsed = 0      # ms since the first tick
        self.last = None      # ticks_ms of the last tick
        self.due = 0          # elapsed time of the next sample
        self.server = None    # set by attach(): told when an alert fires

    def track(self, name, read, unit):
        # read() -> a number; unit as UCUM writes it ("Cel", "%", "hPa", "V").
        quantity = Quantity(name, read, unit, self.depth)
        self.quantities.append(quantity)
        return quantity

    def find(self, name):
        for quantity in self.quantities:
            if quantity.name == name:
                return quantity
        return None

    def now(self):
        # ms since the sampler started, brought up to date.
        now = self.clock()
        if self.last is not None:
            self.elapsed += ticks_diff(now, self.last)
        self.last = now
        return self.elapsed

    def tick(self):
        # From the serve loop when idle: a sample of every quantity once a period.
        t = self.now()
        if t < self.due:
            return
        self.due = t + self.period_ms
        for quantity in self.quantities:
            try:
                value = float(quantity.read())
            except Exception:  # a sensor fault: no sample this time; the tools say why
                continue
            quantity.add(t, value)
            if quantity.check(value) and self.server is not None:
                self.fired(quantity, value)

    def fired(self, quantity, value):
        alert = quantity.alert
        server = self.server
        if server.events is not None:  # the ring (tinymcp/events.py): wait_for_event hears of it
            server.events.add("alert", ALERTS, quantity.name, value, quantity.unit, self.elapsed,
                              {"crossed": alert[0], "level": alert[1]})
        server.log("warning", {"alert": quantity.name, "crossed": alert[0], "level": alert[1],
                               "value": value, "unit": quantity.unit}, "alerts")
        server.resource_updated(ALERTS)


def attach(server, history):
    # The sampler on the serve loop, and what a host sees of it (registered by historytools,
    # which is released again once it has).
    history.server = server
    server.idle.append(history.tick)
    once("tinymcp.historytools.register", server, history)
    return history


def later(history, body, quantity=None):
    # A registered tool or resource: body(server, history, quantity, arguments), a function of
    # tinymcp/historytools.py named by its full dotted path, loaded for the call (tinymcp/later.py).
    def call(**args):
        return once(body, history.server, history, quantity, args)
    return call


History.later = later   # historytools makes its stubs with history.later(...)
