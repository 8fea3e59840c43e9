# What the history's tools and resources say (tinymcp/history.py keeps the samples): statistics
# over a window, the samples as JSON, the alerts, plots, and the registration of it all. Loaded
# for each call and released after it (tinymcp/later.py), so a board holds none of it between calls.
from tinymcp.schema import boolean, integer, number, string

_HOUR_MS = 3600000


def register(server, history):
    # At build: the tools and resources, each body a stub (tinymcp.history.later) that loads
    # this module.
    names = [q.name for q in history.quantities]
    which = string("A sampled quantity", enum=names)
    window = integer("Only the last this many seconds (default: all kept)", 1, 7 * 24 * 3600)

    for q in history.quantities:
        server.resource("sensor://" + q.name + "/history", q.name + "-history",
                        "Samples of " + q.name + " (" + q.unit + "), oldest first: "
                        "[[ms since the sampler started, value], ...]", mime="application/json",
                        title=q.name + " history")(
            history.later("tinymcp.historytools.samples_json", q))

    server.resource(history.ALERTS, "alerts", "The alerts set on sampled quantities and whether "
                    "each has crossed its level; updated (subscriptions) at every crossing",
                    mime="application/json", title="Alerts")(
        history.later("tinymcp.historytools.alerts"))

    server.tool("read_history", "Statistics of a sampled quantity over a window: count, min, "
                "max, mean, trend per hour, latest value. Sampled every "
                + str(history.period_ms) + " ms, " + str(history.depth) + " samples kept.",
                inputs={"quantity": which, "seconds?": window},
                outputs={"quantity": string(), "unit": string(), "count": integer(),
                         "now_ms": integer(), "min?": number(), "max?": number(),
                         "mean?": number(), "first_ms?": integer(), "last_ms?": integer(),
                         "trend_per_hour?": number("Change per hour, least squares"),
                         "latest?": number()},
                title="Read history", read_only=True, open_world=False)(
        history.later("tinymcp.historytools.read_history"))

    server.tool("set_alert", "Watch a sampled quantity: an alert fires once when it goes above "
                "(or below) a level, and again only after it came back past the hysteresis; "
                "clear=true stops watching. Subscribe to " + history.ALERTS + " to hear of it.",
                inputs={"quantity": which, "above?": number("Fire when the value rises above"),
                        "below?": number("Fire when the value falls below"),
                        "hysteresis?": number("How far back it must come to re-arm", 0),
                        "clear?": boolean("Stop watching this quantity")},
                outputs={"alerts": {"type": "array"}},
                title="Set alert", read_only=False, destructive=False, idempotent=True,
                open_world=False)(history.later("tinymcp.historytools.set_alert"))

    server.tool("plot_history", "A plot of a sampled quantity over a window, with min, max, "
                "mean, last.", inputs={"quantity": which, "seconds?": window},
                title="Plot history", read_only=True, open_world=False)(
        history.later("tinymcp.historytools.plot_history"))


# -- the bodies: fn(server, history, quantity, arguments) ----------------------------------------

def read_history(server, history, _q, args):
    return window(history, _quantity(history, args["quantity"]), args.get("seconds"))


def set_alert(server, history, _q, args):
    q = _quantity(history, args["quantity"])
    above = args.get("above")
    below = args.get("below")
    if args.get("clear"):
        q.alert = None
    elif (above is None) == (below is None):
        raise ValueError("give exactly one of above or below (or clear=true)")
    else:
        direction, level = ("above", above) if above is not None else ("below", below)
        q.alert = [direction, float(level), float(args.get("hysteresis", 0)), True, 0]
    server.resource_updated(history.ALERTS)
    return alerts(server, history)


def plot_history(server, history, _q, args):
    # The plot, and the same window in one line of text for hosts that show no images (and
    # for models that take no SVG): min, max, mean, last, unit.
    q = _quantity(history, args["quantity"])
    seconds = args.get("seconds")
    stats = window(history, q, seconds)
    if not stats["count"]:
        return "no samples of " + q.name + " yet"
    text = "%s, %d samples over %d s%s: min %s, max %s, mean %s, last %s %s" % (
        q.name, stats["count"], (stats["last_ms"] - stats["first_ms"]) // 1000,
        " (the last %d s asked)" % seconds if seconds else "", _number(stats["min"]),
        _number(stats["max"]), _number(stats["mean"]), _number(stats["latest"]), q.unit)
    return [{"type": "image", "data": _svg(history, q, stats, seconds).encode(),
             "mimeType": "image/svg+xml"}, {"type": "text", "text": text}]


def alerts(server, history, _q=None, _args=None):
    found = []
    for q in history.quantities:
        if q.alert is not None:
            a = q.alert
            found.append({"quantity": q.name, "unit": q.unit, a[0]: a[1], "hysteresis": a[2],
                          "state": "armed" if a[3] else "crossed", "crossings": a[4]})
    return {"alerts": found}


def samples_json(server, history, quantity, _args):
    # The history resource: {"unit", "period_ms", "now_ms", "samples": [[t_ms, value], ...]}.
    parts = ['{"quantity":"', quantity.name, '","unit":"', quantity.unit, '","period_ms":',
             str(history.period_ms), ',"now_ms":', str(history.now()), ',"samples":[']
    comma = ""
    for i in _indices(quantity):
        parts.append("%s[%d,%s]" % (comma, quantity.times[i], _number(quantity.values[i])))
        comma = ","
    parts.append("]}")
    return "".join(parts)


# -- queries ----------------------------------------------------------------------------------

def _indices(quantity, since=None):
    # Ring positions of the samples, oldest first (those at or after `since` only).
    depth = len(quantity.times)
    first = (quantity.next - quantity.count) % depth
    for k in range(quantity.count):
        i = (first + k) % depth
        if since is None or quantity.times[i] >= since:
            yield i


def window(history, quantity, seconds=None):
    # Statistics of the samples of the last `seconds` (all when None): min, max, mean and
    # the trend per hour (least squares), so a model need not read every sample.
    now = history.now()
    since = now - seconds * 1000 if seconds else None
    n = 0
    low = high = total = 0.0
    sx = sy = sxx = sxy = 0.0
    first = last = None
    for i in _indices(quantity, since):
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


def _svg(history, quantity, stats, seconds, width=480, height=200, points=120):
    # A line plot of the window (stats: window()'s, some samples) as SVG text, at most
    # `points` points (every k-th sample).
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
    for i in _indices(quantity, since):
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


def _quantity(history, name):
    found = history.find(name)
    if found is None:
        raise ValueError("no sampled quantity " + name)
    return found
