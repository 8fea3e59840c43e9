# The bridge's live dashboard (GET / with --http): each board behind the bridge, its tools, its
# latest readings, plots of its histories and its alerts, all read through the bridge's own MCP
# session with each board. The page speaks no MCP: it polls /dashboard/data.
#
# The boards are read only while a page polls, one request in flight per board at most, whatever
# the number of pages: readings and alerts every 2 s, histories every 5 s, listings every 30 s.
import asyncio
import collections
import json
import logging
import os
import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

log = logging.getLogger("tinymcp.bridge.dashboard")

# One board as the dashboard sees it: its label (None for a lone board given none) and the
# bridge's session with it (state, init_result, and call(method, params, retry=...) -> message).
# The router's boards have the same two attributes.
BoardRow = collections.namedtuple("BoardRow", "label session")

CHARTS_ENV = "TINYMCP_CHARTS_DIR"
CHART_FILES = {"uplot.js": ("uPlot.iife.min.js", "text/javascript; charset=utf-8"),
               "uplot.css": ("uPlot.min.css", "text/css; charset=utf-8")}
CHARTS_HINT = ("Plots need the chart library uPlot, which this bridge did not find: run "
               ".ci/install-charts in the tinymcp checkout (it installs uplot from npm), or set "
               "%s to a folder holding uPlot.iife.min.js and uPlot.min.css, then restart the "
               "bridge." % CHARTS_ENV)
STATIC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "static")
PAGE_FILES = {"/": ("dashboard.html", "text/html; charset=utf-8"),
              "/dashboard/dashboard.js": ("dashboard.js", "text/javascript; charset=utf-8"),
              "/dashboard/dashboard.css": ("dashboard.css", "text/css; charset=utf-8"),
              "/dashboard/icon.svg": ("icon.svg", "image/svg+xml")}
DATA = "/dashboard/data"
UNSEEN = "unseen"   # a listed resource not read yet (None: read, and nothing the page shows)
STATES = {"connected": "starting (the bridge is initializing it)",
          "disconnected": "disconnected (its port is not there)"}

# Every answer: not cached, not sniffed, never a referrer (a first URL may carry ?token=).
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff",
           "Referrer-Policy": "no-referrer"}
# The page: its own scripts and styles only, nothing inline, never framed.
PAGE_HEADERS = dict(HEADERS, **{
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                               "connect-src 'self'; img-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "X-Frame-Options": "DENY"})


def charts_dir():
    # uPlot's dist folder: $TINYMCP_CHARTS_DIR when set, else where .ci/install-charts puts it
    # in a checkout; None when it holds no uPlot (a bare pip install).
    folder = os.environ.get(CHARTS_ENV)
    if not folder:
        repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))))
        folder = os.path.join(repo, "node_modules", ".tinymcp-charts", "node_modules", "uplot",
                              "dist")
    wanted = [os.path.join(folder, name) for name, _ in CHART_FILES.values()]
    return folder if all(os.path.isfile(path) for path in wanted) else None


def _contents(result):
    # A resources/read result -> the JSON its first text holds; ValueError when there is none.
    contents = result.get("contents") or [{}]
    text = contents[0].get("text") if type(contents[0]) is dict else None
    if type(text) is not str:
        raise ValueError("not a text resource")
    return json.loads(text, parse_constant=lambda name: None)   # NaN is no JSON for a page


def _kind(value):
    # What a JSON resource holds, as the dashboard shows it (None: nothing it shows).
    if type(value) is not dict:
        return None
    if type(value.get("samples")) is list:
        return "history"
    if type(value.get("alerts")) is list:
        return "alerts"
    if type(value.get("units")) is dict:
        return "reading"
    return None


def _pending(board):
    # What the bridge withholds from hosts of this board (router.RoutedBoard.pending: its pins).
    pending = getattr(board, "pending", None)
    return pending() if pending is not None else []


class Watch:
    # What the dashboard knows of one board, kept up to date by one task while a page looks.
    max_resources = 32   # JSON resources read from one board; more are left out
    max_pages = 20       # pages of a paginated listing

    def __init__(self, board, periods):
        self.label = board.label
        self.session = board.session
        self.periods = periods   # {"readings": s, "histories": s, "listings": s}
        self.tools = []
        self.kinds = {}          # uri -> "reading" | "history" | "alerts" | None | UNSEEN
        self.titles = {}         # uri -> the resource's title
        self.values = {}         # uri -> {"value": JSON, "read_at": epoch s}
        self.error = None        # why the last look failed, for the page
        self.listed_for = None   # the board's initialize result the listings were made for
        self.due = dict.fromkeys(periods, 0.0)
        self.looked = asyncio.Event()   # set once every kind of data was read (or failed)
        self.task = None
        self.started = None      # loop time its task started

    async def run(self, watching):
        # While watching(): listings, readings and histories as they fall due, one at a time.
        loop = asyncio.get_running_loop()
        while watching():
            try:
                await self._round(loop)
            except Exception as e:   # an odd answer must not end the watch
                log.warning("dashboard: reading board %s failed: %r", self.label or "", e)
                self.error = "the bridge could not read this board: %r" % e
            self.looked.set()
            await asyncio.sleep(max(0.05, min(self.due.values()) - loop.time()))

    async def _round(self, loop):
        state = self.session.state
        if state != "ready":
            self.error = "the board is " + STATES.get(state, state)
            later = loop.time() + self.periods["readings"]   # look again then, not sooner
            self.due = {what: max(due, later) for what, due in self.due.items()}
            return
        self.error = None
        if self.session.init_result is not self.listed_for:
            self.due["listings"] = 0.0   # a new or reset board: list it again
        for what in ("listings", "readings", "histories"):
            if loop.time() >= self.due[what]:
                self.due[what] = loop.time() + self.periods[what]
                await getattr(self, what)()

    async def _call(self, method, params=None):
        # -> the result, or None after noting why there is none.
        reply = await self.session.call(method, params, retry=True)
        if "result" in reply and type(reply["result"]) is dict:
            return reply["result"]
        failure = reply.get("error")
        self.error = "%s: %s" % (method, failure.get("message") if type(failure) is dict
                                 else "no result")
        return None

    async def _list(self, method, key):
        # -> every item of a paginated listing, or None when a page could not be had.
        found, cursor = [], None
        for _ in range(self.max_pages):
            result = await self._call(method, {"cursor": cursor} if cursor else None)
            if result is None:
                return None
            found += [item for item in result.get(key) or [] if type(item) is dict]
            cursor = result.get("nextCursor")
            if not cursor:
                break
        return found

    async def listings(self):
        self.listed_for = self.session.init_result
        caps = (self.listed_for or {}).get("capabilities") or {}
        tools = await self._list("tools/list", "tools") if "tools" in caps else []
        if tools is not None:
            self.tools = [{"name": t.get("name"),
                           "title": t.get("title") or (t.get("annotations") or {}).get("title"),
                           "read_only": (t.get("annotations") or {}).get("readOnlyHint") is True}
                          for t in tools]
        listed = await self._list("resources/list", "resources") if "resources" in caps else []
        if listed is None:
            self.due["listings"] = 0.0   # try again next round
            return
        json_resources = [r for r in listed if r.get("mimeType") == "application/json"
                          and type(r.get("uri")) is str][:self.max_resources]
        self.titles = {r["uri"]: r.get("title") or r.get("name") or r["uri"]
                       for r in json_resources}
        self.kinds = {uri: self.kinds.get(uri, UNSEEN) for uri in self.titles}
        self.values = {uri: v for uri, v in self.values.items() if uri in self.titles}

    async def readings(self):
        # The small resources: readings and alerts, and those not looked at yet.
        await self._read([uri for uri, kind in self.kinds.items()
                          if kind in (UNSEEN, "reading", "alerts")])

    async def histories(self):
        await self._read([uri for uri, kind in self.kinds.items() if kind == "history"])

    async def _read(self, uris):
        for uri in uris:
            result = await self._call("resources/read", {"uri": uri})
            if result is None:
                continue
            try:
                value = _contents(result)
            except ValueError as e:
                self.error = "%s: %s" % (uri, e)
                continue
            self.kinds[uri] = _kind(value)
            self.values[uri] = {"value": value, "read_at": time.time()}

    def snapshot(self):
        init = self.session.init_result or {}
        info = init.get("serverInfo") or {}
        board = {"label": self.label, "name": info.get("name"), "title": info.get("title"),
                 "version": info.get("version"), "instructions": init.get("instructions"),
                 "state": self.session.state, "error": self.error, "tools": self.tools,
                 "readings": [], "histories": [], "alerts": None}
        for uri, kind in self.kinds.items():
            seen = self.values.get(uri)
            if seen is None or kind in (None, UNSEEN):
                continue
            entry = dict(seen["value"], uri=uri, title=self.titles.get(uri),
                         read_at=seen["read_at"])
            if kind == "alerts":
                board["alerts"] = entry
            else:
                board["readings" if kind == "reading" else "histories"].append(entry)
        return board


class Dashboard:
    # The ASGI app behind GET / and /dashboard/*, under the HTTP front's Guard: the same
    # Host/Origin rules as /mcp on every path, the bearer token on the data (the page and its
    # files are public: they hold nothing of a board).
    periods = {"readings": 2.0, "histories": 5.0, "listings": 30.0}
    viewer_seconds = 10.0   # a page that has not polled for this long is gone: reading stops
    first_wait = 3.0        # the first poll waits this long for a first look at the boards

    def __init__(self, boards, events=None):
        self.boards = boards          # fn() -> [BoardRow(label, session)]
        self.events = events          # fn() -> the bridge's recent events, newest first
        self.watches = {}             # board session -> Watch
        self.polled = None            # loop time of the last poll
        self.charts = charts_dir()
        self.files = {}               # path -> (bytes, media type), read once

    def routes(self):
        from starlette.routing import Route
        return [Route("/", self), Route("/dashboard/{name}", self)]

    @staticmethod
    def public(method, path):
        # The page and its files, for the Guard: no token needed (the data needs it).
        return method == "GET" and (path == "/" or (path.startswith("/dashboard/")
                                                    and path != DATA))

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return
        response = await self._answer(Request(scope, receive))
        await response(scope, receive, send)

    async def _answer(self, request):
        path = request.url.path
        if request.method != "GET":
            return Response("Method not allowed", status_code=405,
                            headers=dict(HEADERS, Allow="GET"))
        if path == DATA:
            return JSONResponse(await self.look(), headers=HEADERS)
        name = path.rpartition("/")[2]
        if path in PAGE_FILES or (path.startswith("/dashboard/") and name in CHART_FILES):
            found = self._file(path, name)
            if found is not None:
                return Response(found[0], media_type=found[1],
                                headers=PAGE_HEADERS if path == "/" else HEADERS)
            return Response(CHARTS_HINT, status_code=404, headers=HEADERS)
        return Response("Not found", status_code=404, headers=HEADERS)

    def _file(self, path, name):
        # -> (bytes, media type) of a page file or a chart file, None for a missing chart file.
        if path not in self.files:
            if path in PAGE_FILES:
                filename, media = PAGE_FILES[path]
                folder = STATIC
            elif self.charts is not None:
                filename, media = CHART_FILES[name]
                folder = self.charts
            else:
                return None
            with open(os.path.join(folder, filename), "rb") as f:
                self.files[path] = (f.read(), media)
        return self.files[path]

    # -- the data ---------------------------------------------------------------------------

    async def look(self):
        # What the page shows; keeps each board's watch running while pages poll.
        loop = asyncio.get_running_loop()
        self.polled = loop.time()
        boards = self.boards()
        for gone in set(self.watches) - {board.session for board in boards}:
            self._stop(self.watches.pop(gone))
        watches = []
        for board in boards:
            watch = self.watches.get(board.session)
            if watch is None:
                watch = self.watches[board.session] = Watch(board, self.periods)
            watch.label = board.label
            if watch.task is None or watch.task.done():
                watch.looked.clear()   # what it saw before nobody looked is old news
                watch.started = loop.time()
                watch.task = loop.create_task(watch.run(self._watching))
            watches.append(watch)
        first = [w for w in watches if not w.looked.is_set()]
        if first:   # soon after a watch starts: a moment for its first look, not an empty page
            wait = max(w.started for w in first) + self.first_wait - loop.time()
            if wait > 0:
                try:
                    await asyncio.wait_for(asyncio.gather(*[w.looked.wait() for w in first]),
                                           wait)
                except asyncio.TimeoutError:
                    pass
        return {"now": time.time(), "charts": self.charts is not None,
                "charts_hint": None if self.charts is not None else CHARTS_HINT,
                "boards": [dict(watch.snapshot(), pending=_pending(board))
                           for watch, board in zip(watches, boards)],
                "events": self.events() if self.events is not None else []}

    def _watching(self):
        loop = asyncio.get_running_loop()
        return self.polled is not None and loop.time() - self.polled < self.viewer_seconds

    @staticmethod
    def _stop(watch):
        if watch.task is not None:
            watch.task.cancel()

    async def close(self):
        tasks = [w.task for w in self.watches.values() if w.task is not None]
        for watch in self.watches.values():
            self._stop(watch)
        await asyncio.gather(*tasks, return_exceptions=True)
        self.watches.clear()
