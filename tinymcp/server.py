# The MCP server: registration, one handler table, dispatch. What a protocol revision decides (the
# envelope, which methods exist, how the client is asked and told) is the revision's.
from tinymcp import jsonrpc, once, release
from tinymcp.jsonrpc import RpcError, must
from tinymcp.protocol import (VERSIONS, LEVELS, VERSION_META, BATCHES,
                              INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR,
                              OWNER_ENDED)
from tinymcp.revision import HANDSHAKE

_EMPTY = b"{}"
_NO_PARAMS = {}
OFF = len(LEVELS)  # a log level above every level: nothing is sent


class Call:
    # One request being handled: its id, its progress token, whether the client cancelled it,
    # its _meta. One per session, its fields reset by each request: none is made per request.
    busy = False
    id = None
    token = None
    cancelled = False
    meta = None  # type: dict | None


class Session:
    # One client's state, owned by the transport that carries that client (a Channel holds
    # one, ports/mqtt.py one per MQTT client id; Server.handle() serves its own, opened with its
    # first frame).
    def __init__(self, number):
        self.number = number       # leases are held by it (tinymcp/leases.py)
        self.revision = HANDSHAKE  # until a 2026-07-28 request decides otherwise
        self.cache = {}            # encoded results that never change; cleared with the registries
        self.backlog = []          # requests that arrived while a handler was busy
        self.waiting = None        # ids of our requests to the client -> their answers (context.py)
        self.next_id = 0           # the id of our last request to the client
        self.work = None           # generator tools in progress (tinymcp/tasks.py)
        self.link = None           # where notifications and requests go (None: the outbox)
        self.pump = None           # reads and routes input while a handler runs (None: no input)
        self.batch = None          # the JSON-RPC batch being answered (tinymcp/batch.py)
        self.link_modes = None     # the channel's offer: initialize's experimental["tinymcp/link"]
        self.call = Call()
        self.initialized = False   # initialize answered: requests are served
        self.version = None
        self.era = len(VERSIONS) - 1  # 0 = 2024-11-05 ... 3 = 2025-11-25, 4 = 2026-07-28
        self.client_capabilities = _NO_PARAMS  # replaced by initialize's, never written
        self.log_level = OFF       # info once initialized, until the client sets one
        self.subscriptions = {}    # uri -> last value seen by the resource's watch


class Server:
    # What the board offers, built once: its info, registries, one handler table and idle
    # hooks. Extensions attach through its methods; what a client changes is its Session.
    page_size = 50          # items per tools/resources/prompts list page
    client_timeout_ms = 60000
    leases = None           # tinymcp.leases.Leases, made with the first lease of an output
    events = None           # tinymcp.events.Events, when a board attaches the ring
    opened = 0              # sessions opened so far
    session = None          # the session being served; none until a client's first frame
    # Set by the board's build or later, each in the instance only once it is: the registries
    # (created with their first entry), completions, the Context (made when first asked for) and
    # tinymcp.direct.Direct (handle() and the outbox, without a channel).
    tools = resources = prompts = _ctx = direct = None
    completions = False

    def __init__(self, name, version, title=None, instructions=None, identity=""):
        info = {"name": name, "version": version}
        if title:
            info["title"] = title
        self.info = info
        self.instructions = instructions
        self.identity = identity  # a stable id of the board (machine.unique_id()), in the offer
        self.outbox = []        # frames sent while no channel is attached (tests)
        self.idle = []          # fn() run by the serve loop when it is idle (samplers)
        self.structured = [None, True, None]  # tools/call's answer for a dict (jsonrpc.py)

    # -- sessions ---------------------------------------------------------------------------

    def open_session(self):
        # A new connection: a new session, in whichever revision its first request speaks;
        # nothing of the last connection's is answered on this one. The transport keeps it and
        # enters it before it serves that client; handle() serves the last one opened (one of
        # its own at its first frame). Until the first, no client hears of anything.
        self.opened += 1
        session = self.session = Session(self.opened)
        return session

    def enter(self, session):
        # The session whose client is served next (its requests, its idle watch).
        self.session = session

    def end_session(self, session):
        # A session ended (its link, or a new initialize on the same one): the outputs it
        # leased go back to their safe state (tinymcp/leases.py), and it hears of no resource.
        session.subscriptions = {}
        if self.leases is not None:
            self.leases.end(session.number)

    def attach(self, events=None, leases=None):
        # The board's event ring (tinymcp/events.py: its changes and updates go in) or its
        # leases (tinymcp/leases.py, expired from its idle time).
        if events is not None:
            self.events = events
        if leases is not None:
            self.leases = leases
            self.idle.append(leases.expire)

    # -- registration -------------------------------------------------------------------

    def tool(self, name, description=None, inputs=None, outputs=None, title=None,
             read_only=None, destructive=None, idempotent=None, open_world=None, ctx=False,
             task=None):
        # Decorator: the function gets the validated arguments as keywords (and ctx=Context).
        # A generator function is a long tool (tinymcp/tasks.py); task="optional" or
        # "required" lets a client run it as a task.
        def register(fn):
            if self.tools is None:
                from tinymcp.tools import Tools
                self.tools = Tools()
            from tinymcp.tools import pack_hints
            hints = pack_hints((read_only, destructive, idempotent, open_world))
            if task:
                from tinymcp.tasktools import offer
                hints |= offer(self, task) << 8
            self.tools.add(fn, name, description, inputs, outputs, title, hints, ctx)
            self.changed("tools")
            return fn
        return register

    def resource(self, uri, name, description=None, mime=None, title=None, watch=None,
                 complete=None):
        # Decorator: a static resource, or a template when the uri has {variables}.
        def register(fn):
            if self.resources is None:
                from tinymcp.resources import Resources
                self.resources = Resources()
            self.resources.add(fn, uri, name, description, mime, title, watch, complete)
            if complete:
                self.completions = True
            self.changed("resources")
            return fn
        return register

    def prompt(self, name, description=None, args=None, title=None, complete=None):
        # Decorator: args is {"name": "description", "optional?": "description"}.
        def register(fn):
            if self.prompts is None:
                from tinymcp.prompts import Prompts, HANDLERS
                self.prompts = Prompts()
                self.add_methods(HANDLERS)
            self.prompts.add(fn, name, description, args, title, complete)
            if complete:
                self.completions = True
            self.changed("prompts")
            return fn
        return register

    def add_methods(self, handlers):
        # Methods a capability brings with its first entry (prompts/*, tasks/*): this server's
        # own handler table from then on, so a board without them holds none of their code.
        table = dict(self.handlers)
        table.update(handlers)
        self.handlers = table

    def remove(self, kind, key):
        # Remove a tool/prompt by name or a resource by uri; tells the client.
        registry = getattr(self, kind)
        if registry is not None and registry.remove(key):
            self.changed(kind)

    def changed(self, kind):
        session = self.session
        if session is None:  # the board's build: no client to tell yet
            return
        session.cache = {}
        if self.events is not None and (session.initialized or session.revision is not HANDSHAKE):
            self.events.changed(kind)  # a change a client could hear of, not the board's build
        session.revision.changed(self, kind)

    @property
    def ctx(self):
        # What a running handler may use: progress, logging, cancellation, asking the client.
        if self._ctx is None:
            from tinymcp.context import Context
            self._ctx = Context(self)
        return self._ctx

    # -- output ---------------------------------------------------------------------------

    def send(self, msg):
        batch = self.session.batch
        if batch is not None:  # a batch's answer array is open on the line: sent after it
            batch.hold(msg)
            return
        self.out_link().send(msg)

    def out_link(self):
        # Where output outside a request's answer goes: the session's link, or, with no
        # channel, the outbox kept for whoever drives handle() (tests).
        link = self.session.link
        return link if link is not None else self._direct().outbox

    def _direct(self):
        direct = self.direct
        if direct is None:  # a board's serve loop never gets here: it has its channel
            from tinymcp.direct import Direct
            direct = self.direct = Direct(self)
        return direct

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)

    def log(self, level, data, logger=None):
        # notifications/message, when the level passes the client's filter.
        rank = LEVELS.index(level) if level in LEVELS else 3
        session = self.session
        if session is None or rank < session.log_level:
            return
        params = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        self.notify("notifications/message", params)

    def resource_updated(self, uri):
        # Tell subscribers that uri changed (a watch= does this by itself from the serve loop).
        if self.events is not None:
            self.events.updated(uri)
        if self.session is not None:
            self.session.revision.updated(self, uri)

    def poll(self, hooks=True):
        # Called by the serve loop when idle: the idle hooks (unless a transport with several
        # sessions ran them already), then the resources the session being served subscribed
        # to whose watch changed are reported.
        if hooks:
            for work in self.idle:
                work()
        session = self.session
        if session is None or not session.subscriptions or self.resources is None:
            return
        subs = session.subscriptions
        for uri in subs:
            value = self.resources.watch(uri)
            if value != subs[uri]:
                subs[uri] = value
                session.revision.updated(self, uri)

    # -- input ----------------------------------------------------------------------------

    def handle(self, frame):
        # One JSON frame in, its encoded answer out (None for notifications and responses): how
        # tests and hosts drive a server without a channel (tinymcp/direct.py), in the session
        # being served (one opened by the first frame when there is none).
        return self._direct().handle(frame)

    def answer(self, msg, link):
        # One decoded message in; its answer, if it has one, is written through link.
        if type(msg) is dict:
            rid = msg.get("id")
            good_id = type(rid) is int or type(rid) is str
            if msg.get("jsonrpc") != "2.0":
                link.error(rid if good_id else None, INVALID_REQUEST,
                           must("jsonrpc", '"2.0"', "Request"))
                return
            method = msg.get("method")
            if method is None and ("result" in msg or "error" in msg):
                waiting = self.session.waiting
                if good_id and waiting is not None and rid in waiting:
                    waiting[rid] = msg  # the client's answer to a request of ours (Context.request)
                return
            if type(method) is not str:
                link.error(rid if good_id else None, INVALID_REQUEST,
                           must("method", "a string", "Request"))
                return
            params = msg.get("params")
            if params is None:
                params = _NO_PARAMS  # shared, never written: no dict per ping
            if "id" not in msg:
                if type(params) is dict:
                    self._notification(method, params)
                return
            if not good_id:
                link.error(None, INVALID_REQUEST, must("id", "a string or an integer", "Request"))
                return
            if type(params) is not dict:
                link.error(rid, INVALID_PARAMS, must("params", "an object"))
                return
            self._request(rid, method, params, link)
        elif (type(msg) is list and self.session.version == BATCHES
              and type(link) is jsonrpc.JsonLink):
            from tinymcp.batch import Batch  # JSON lines only: a CBOR frame is one message
            Batch(self.session, link, self.answer, self.send).serve(msg)
        else:
            why = "batches are not supported" if type(msg) is list else "expected a JSON object"
            link.error(None, INVALID_REQUEST, "Invalid Request: " + why)

    def _request(self, rid, method, params, link):
        revision = self._decide(method, params)
        call = self.session.call
        call.busy = True
        call.id = rid
        call.cancelled = False
        meta = params.get("_meta")
        meta = call.meta = meta if type(meta) is dict else None
        call.token = meta.get("progressToken") if meta is not None else None
        try:
            handler = revision.gate(self, method, params)
            result = handler(self, params)
            if result is not None:
                result = revision.finish(self, method, result)
        except RpcError as e:
            result = e
        except Exception as e:
            result = RpcError(INTERNAL_ERROR, "Internal error: " + describe(e))
        finally:
            call.busy = False
            call.id = None
            revision.done(self)
        if call.cancelled or result is None:
            call.cancelled = False  # what runs next (idle work) is not the cancelled request
            return  # the client gave up on it, or it is answered later (a listen stream)
        if type(result) is RpcError:
            link.error(rid, result.code, result.message, result.data)
        else:
            link.result(rid, result)

    def _decide(self, method, params):
        # The first request decides the revision: initialize -> the handshake, a 2026-07-28
        # request (server/discover, or the per-request _meta) -> tinymcp.stateless, loaded then.
        revision = self.session.revision
        if revision is HANDSHAKE and not self.session.initialized and method != "initialize":
            meta = params.get("_meta")
            if ((type(meta) is dict and VERSION_META in meta) or method == "server/discover"
                    or method == "subscriptions/listen"):
                try:
                    from tinymcp.stateless import Stateless
                except ImportError:  # a board shipped without it: clients fall back
                    return revision
                return Stateless(self)  # it takes over once the request is well formed
        return revision

    def _notification(self, method, params):
        session = self.session
        if method == "notifications/cancelled":
            rid = params.get("requestId")
            call = session.call
            if call.busy and rid == call.id:
                call.cancelled = True
            elif session.work is None or not session.work.cancel(rid):
                session.revision.cancel(self, rid)  # may end a subscriptions/listen stream
        elif method == OWNER_ENDED and self.leases is not None:  # a host behind a bridge left
            owner = params.get("owner")
            if type(owner) is str:
                self.leases.end(session.number, owner)

    # -- helpers for handlers ------------------------------------------------------------

    def tasks(self):
        # Long tools and tasks (tinymcp/tasks.py), loaded with the first.
        from tinymcp import tasks
        return tasks

    def cached(self, key, build):
        # An encoded result, built once per registry state and protocol revision.
        cache = self.session.cache
        out = cache.get(key)
        if out is None:
            out = jsonrpc.dumps(self.session.revision.finish(self, key, build(self)))
            cache[key] = out
        return out

    def page(self, key, items, params):
        # One page of a list result, cached; the cursor is the index of its first item. Built by
        # tinymcp/listing.py, loaded for it: a page is built once a session (again after a list
        # change, in a new session or another protocol version).
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            if type(cursor) is not str or not cursor.isdigit() or int(cursor) >= len(items):
                raise RpcError(INVALID_PARAMS, "Invalid params: unknown cursor")
            start = int(cursor)
        name = key if start == 0 else key + str(start)
        cache = self.session.cache
        out = cache.get(name)
        if out is None:
            out = cache[name] = once("tinymcp.listing.page", self, key, items, start)
        return out


def describe(e):
    text = str(e)
    return text if text else e.__class__.__name__


def _registry(server, kind):
    registry = getattr(server, kind)
    if registry is None:
        raise RpcError(METHOD_NOT_FOUND, "Method not found: this server has no " + kind)
    return registry


# -- the handlers: fn(server, params) -> a result (dict, encoded bytes or a page's encoded
# pieces, a tool's structured reply) -----------------------------------------------------------

def _initialize(server, params):
    # Once a session: the handshake is tinymcp/declare.py's, loaded for it.
    release("tinymcp.stateless")  # a client that probed 2026-07-28 first and fell back
    return once("tinymcp.declare.initialize", server, params)


def _ping(server, params):
    return _EMPTY


def _set_level(server, params):
    level = params.get("level")
    if level not in LEVELS:
        raise RpcError(INVALID_PARAMS, "Invalid params: level must be one of " + ", ".join(LEVELS))
    server.session.log_level = LEVELS.index(level)
    return _EMPTY


def _tools_list(server, params):
    return server.page("tools", _registry(server, "tools").items, params)


def _tools_call(server, params):
    return _registry(server, "tools").call(server, params)


def _resources_list(server, params):
    return server.page("resources", _registry(server, "resources").static, params)


def _templates_list(server, params):
    return server.page("resourceTemplates", _registry(server, "resources").templates, params)


def _resources_read(server, params):
    return _registry(server, "resources").read(params)


def _subscribe(server, params):
    uri = params.get("uri")
    if type(uri) is not str:
        raise RpcError(INVALID_PARAMS, must("uri", "a string"))
    resources = _registry(server, "resources")
    resources.lookup(uri)
    server.session.subscriptions[uri] = resources.watch(uri)
    return _EMPTY


def _unsubscribe(server, params):
    _registry(server, "resources")
    uri = params.get("uri")
    if type(uri) is not str:
        raise RpcError(INVALID_PARAMS, must("uri", "a string"))
    subs = server.session.subscriptions
    if uri in subs:
        del subs[uri]
    return _EMPTY


def _complete(server, params):
    from tinymcp.complete import complete
    return complete(server, params)


Server.handlers = {
    "initialize": _initialize,
    "ping": _ping,
    "logging/setLevel": _set_level,
    "tools/list": _tools_list,
    "tools/call": _tools_call,
    "resources/list": _resources_list,
    "resources/templates/list": _templates_list,
    "resources/read": _resources_read,
    "resources/subscribe": _subscribe,
    "resources/unsubscribe": _unsubscribe,
    "completion/complete": _complete,
}
