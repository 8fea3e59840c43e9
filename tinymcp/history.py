# Readings over time on the board. A sampler run from the serve loop's idle time keeps, per
# quantity, a ring of (time, value) in two preallocated arrays (8 bytes a sample), and alerts that
# fire once per crossing of a level (with hysteresis), as resource updates and log messages.
#
#   history = History(period_ms=1000, depth=300)
#   history.track("temperature", lambda: sensor.read()["celsius"], "Cel")
#   attach(server, history)   -> sensor://NAME/history, sensor://alerts, read_history,
#                                set_alert (and clear), plot_history
#
# Times are milliseconds since the sampler started (they survive ticks_ms wrapping around).
from array import array

from tinymcp.clock import ticks_diff, ticks_ms

ALERTS = "sensor://alerts"
_HOUR_MS = 3600000


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

    def indices(self, since=None):
        # Ring positions of the samples, oldest first (those at or after `since` only).
        depth = len(self.times)
        first = (self.next - self.count) % depth
        for k in range(self.count):
            i = (first + k) % depth
            if since is None or self.times[i] >= since:
                yield i

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

    # -- what the tools and resources say -----------------------------------------------------

    def window(self, quantity, seconds=None):
        # Statistics of the samples of the last `seconds` (all when None): min, max, mean and
        # the trend per hour (least squares), so a model need not read every sample.
        now = self.now()
        since = now - seconds * 1000 if seconds else None
        n = 0
        low = high = total = 0.0
        sx = sy = sxx = sxy = 0.0
        first = last = None
        for i in quantity.indices(since):
            t = quantity.times[i]
            v = quantity.values[i]
            if first is None:
                first = t
                low = high = v
            last = t
            x = (t - first) / _HOUR_MS  # hours from the first sample: small numbers for floats
            n += 1
            total += v
            low = v if v < low else low
            high = v if v > high else high
            sx += x
            sy += v
            sxx += x * x
            sxy += x * v
        result = {"quantity": quantity.name, "unit": quantity.unit, "count": n, "now_ms": now}
        if n:
            result["min"] = low
            result["max"] = high
            result["mean"] = total / n
            result["first_ms"] = first
            result["last_ms"] = last
            spread = n * sxx - sx * sx
            result["trend_per_hour"] = (n * sxy - sx * sy) / spread if spread > 0 else 0.0
            result["latest"] = quantity.values[(quantity.next - 1) % len(quantity.values)]
        return result

    def samples_json(self, quantity):
        # The history resource: {"unit", "period_ms", "now_ms", "samples": [[t_ms, value], ...]}.
        parts = ['{"quantity":"', quantity.name, '","unit":"', quantity.unit, '","period_ms":',
                 str(self.period_ms), ',"now_ms":', str(self.now()), ',"samples":[']
        comma = ""
        for i in quantity.indices():
            parts.append("%s[%d,%s]" % (comma, quantity.times[i], _number(quantity.values[i])))
            comma = ","
        parts.append("]}")
        return "".join(parts)

    def alerts(self):
        found = []
        for q in self.quantities:
            if q.alert is not None:
                a = q.alert
                found.append({"quantity": q.name, "unit": q.unit, a[0]: a[1], "hysteresis": a[2],
                              "state": "armed" if a[3] else "crossed", "crossings": a[4]})
        return {"alerts": found}

    def svg(self, quantity, seconds=None, width=480, height=200, points=120):
        # A line plot of the window as SVG text, at most `points` points (every k-th sample).
        stats = self.window(quantity, seconds)
        if not stats["count"]:
            return None
        since = stats["now_ms"] - seconds * 1000 if seconds else None
        t0, t1 = stats["first_ms"], stats["last_ms"]
        low, high = stats["min"], stats["max"]
        if high - low < 1e-6:
            low, high = low - 0.5, high + 0.5
        step = max(1, stats["count"] // points)
        xs = width - 60
        ys = height - 30
        parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
                 'viewBox="0 0 %d %d"><rect width="100%%" height="100%%" fill="white"/>'
                 '<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="'
                 % (width, height, width, height)]
        k = 0
        for i in quantity.indices(since):
            if k % step == 0:
                t = quantity.times[i]
                x = 50 + (xs * (t - t0) / (t1 - t0) if t1 > t0 else 0)
                y = 10 + ys * (high - quantity.values[i]) / (high - low)
                parts.append("%d,%d " % (x, y))
            k += 1
        parts.append('"/><text x="4" y="16" font-size="12">%s %s</text>'
                     '<text x="4" y="%d" font-size="12">%s</text>'
                     '<text x="%d" y="%d" font-size="12" text-anchor="end">%d s</text></svg>'
                     % (_number(high), quantity.unit, height - 18, _number(low),
                        width - 4, height - 4, (t1 - t0) // 1000))
        return "".join(parts)


def _number(value):
    # A float as JSON wants it: 6 significant digits, what a single-precision sample holds
    # (1013.25 hPa stays 1013.25; more digits would be noise of the float32 it was kept as).
    return "%.6g" % value


def attach(server, history):
    # The sampler on the serve loop, and what a host sees of it.
    from tinymcp.schema import boolean, integer, number, string
    history.server = server
    server.idle.append(history.tick)
    names = [q.name for q in history.quantities]
    which = string("A sampled quantity", enum=names)
    window = integer("Only the last this many seconds (default: all kept)", 1, 7 * 24 * 3600)

    for quantity in history.quantities:
        _history_resource(server, history, quantity)

    @server.resource(ALERTS, "alerts", "The alerts set on sampled quantities and whether each "
                     "has crossed its level; updated (subscriptions) at every crossing",
                     mime="application/json", title="Alerts")
    def alerts_resource():
        return history.alerts()

    @server.tool("read_history", "Statistics of a sampled quantity over a window: count, min, "
                 "max, mean, trend per hour, latest value. Sampled every "
                 + str(history.period_ms) + " ms, " + str(history.depth) + " samples kept.",
                 inputs={"quantity": which, "seconds?": window},
                 outputs={"quantity": string(), "unit": string(), "count": integer(),
                          "now_ms": integer(), "min?": number(), "max?": number(),
                          "mean?": number(), "first_ms?": integer(), "last_ms?": integer(),
                          "trend_per_hour?": number("Change per hour, least squares"),
                          "latest?": number()},
                 title="Read history", read_only=True, open_world=False)
    def read_history(quantity, seconds=None):
        return history.window(_quantity(history, quantity), seconds)

    @server.tool("set_alert", "Watch a sampled quantity: an alert fires once when it goes above "
                 "(or below) a level, and again only after it came back past the hysteresis; "
                 "clear=true stops watching. Subscribe to " + ALERTS + " to hear of it.",
                 inputs={"quantity": which, "above?": number("Fire when the value rises above"),
                         "below?": number("Fire when the value falls below"),
                         "hysteresis?": number("How far back it must come to re-arm", 0),
                         "clear?": boolean("Stop watching this quantity")},
                 outputs={"alerts": {"type": "array"}},
                 title="Set alert", read_only=False, destructive=False, idempotent=True,
                 open_world=False)
    def set_alert(quantity, above=None, below=None, hysteresis=0, clear=False):
        q = _quantity(history, quantity)
        if clear:
            q.alert = None
        elif (above is None) == (below is None):
            raise ValueError("give exactly one of above or below (or clear=true)")
        else:
            direction, level = ("above", above) if above is not None else ("below", below)
            q.alert = [direction, float(level), float(hysteresis), True, 0]
        server.resource_updated(ALERTS)
        return history.alerts()

    @server.tool("plot_history", "A line plot of a sampled quantity over a window, as an SVG "
                 "image.", inputs={"quantity": which, "seconds?": window},
                 title="Plot history", read_only=True, open_world=False)
    def plot_history(quantity, seconds=None):
        q = _quantity(history, quantity)
        svg = history.svg(q, seconds)
        if svg is None:
            return "no samples of " + q.name + " yet"
        return [{"type": "image", "data": svg.encode(), "mimeType": "image/svg+xml"}]

    return history


def _history_resource(server, history, quantity):
    # One resource per quantity (a closure each: the decorator needs a function per uri).
    @server.resource("sensor://" + quantity.name + "/history", quantity.name + "-history",
                     "Samples of " + quantity.name + " (" + quantity.unit + "), oldest first: "
                     "[[ms since the sampler started, value], ...]", mime="application/json",
                     title=quantity.name + " history")
    def read():
        return history.samples_json(quantity)


def _quantity(history, name):
    found = history.find(name)
    if found is None:
        raise ValueError("no sampled quantity " + name)
    return found
