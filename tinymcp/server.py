# The MCP server: lifecycle, dispatch, notifications. Tools, resources and prompts load on first use.
from tinymcp import jsonrpc
from tinymcp.jsonrpc import RpcError
from tinymcp.protocol import (VERSIONS, LATEST, LEVELS, CLIENT_NEEDS, LINK_KEY, REASON,
                              NOT_INITIALIZED, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS,
                              INTERNAL_ERROR, PARSE_ERROR, VERSION_META as MODERN_KEY)
_EMPTY = b"{}"
_NO_PARAMS = {}
_RESULT = object()  # marks "a result is ready" inside respond()


class Context:
    # What a running handler may use: progress, logging, cancellation, requests to the client.
    # One per server, reset for every request: handlers run one at a time.

    def __init__(self, server):
        self.server = server
        self.request_id = None
        self.progress_token = None
        self._cancelled = False

    @property
    def cancelled(self):
        # Reading input here lets a notifications/cancelled arrive while a long tool runs.
        server = self.server
        if not self._cancelled and server.pump:
            server.pump(0)
        return self._cancelled

    def progress(self, progress, total=None, message=None):
        if self.progress_token is None:
            return
        params = {"progressToken": self.progress_token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and self.server.era >= 1:
            params["message"] = message
        self.server.notify("notifications/progress", params)
        if self.server.pump:
            self.server.pump(0)

    def log(self, level, data, logger=None):
        self.server.log(level, data, logger)

    def request(self, method, params=None, timeout_ms=60000):
        # Send a request to the client (sampling, elicitation, roots) and wait for its answer.
        return self.server.request(method, params, timeout_ms)


def describe_head(item, era):
    # The fields a tool, prompt or resource entry of a list result starts with.
    d = {"name": item.name}
    if item.title and era >= 2:
        d["title"] = item.title
    if item.description:
        d["description"] = item.description
    return d


class Registry:
    # Named entries (tools, prompts) in registration order; a new one replaces its namesake.
    def __init__(self):
        self.items = []

    def put(self, item):
        self.remove(item.name)
        self.items.append(item)

    def remove(self, name):
        item = self.find(name)
        if item is None:
            return False
        self.items.remove(item)
        return True

    def find(self, name):
        for item in self.items:
            if item.name == name:
                return item
        return None


class Server:
    page_size = 50          # items per tools/resources/prompts list page
    client_timeout_ms = 60000
    link_modes = None       # advertised in initialize as experimental["tinymcp/link"]

    def __init__(self, name, version, title=None, instructions=None):
        info = {"name": name, "version": version}
        if title:
            info["title"] = title
        self.info = info
        self.instructions = instructions
        self.tools = None       # registries, created with their first entry
        self.resources = None
        self.prompts = None
        self.write = None       # set by a channel: sends one encoded frame
        self.pump = None        # set by a channel: reads and routes input while a handler runs
        self.outbox = []        # frames sent while no channel is attached (tests)
        self.backlog = []       # requests that arrived while a handler was busy
        self.modern = None      # tinymcp.modern.Modern once a 2026-07-28 request decides the era
        self.ctx = Context(self)
        self.busy = False
        self.has_completions = False
        self._cache = {}        # encoded static results; cleared whenever a registry changes
        self._waiting = {}      # id of a request we sent -> its response, once it arrives
        self._next_id = 0
        self._result = None
        self._result_id = None
        self._reset_session()

    def _reset_session(self):
        self.initialized = False   # initialize answered: requests are served
        self.version = None
        self.era = len(VERSIONS) - 1
        self.client_capabilities = {}
        self.log_level = 1         # info, until the client sets one
        self.subscriptions = {}    # uri -> last value seen by the resource's watch

    # -- registration -------------------------------------------------------------------

    def tool(self, name, description=None, inputs=None, outputs=None, title=None,
             read_only=None, destructive=None, idempotent=None, open_world=None, ctx=False):
        # Decorator: the function gets the validated arguments as keywords (and ctx=Context).
        def register(fn):
            if self.tools is None:
                from tinymcp.tools import Tools
                self.tools = Tools()
            annotations = {}
            for key, value in (("readOnlyHint", read_only), ("destructiveHint", destructive),
                               ("idempotentHint", idempotent), ("openWorldHint", open_world)):
                if value is not None:
                    annotations[key] = value
            self.tools.add(fn, name, description, inputs, outputs, title, annotations, ctx)
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
                self.has_completions = True
            self.changed("resources")
            return fn
        return register

    def prompt(self, name, description=None, args=None, title=None, complete=None):
        # Decorator: args is {"name": "description", "optional?": "description"}.
        def register(fn):
            if self.prompts is None:
                from tinymcp.prompts import Prompts
                self.prompts = Prompts()
            self.prompts.add(fn, name, description, args, title, complete)
            if complete:
                self.has_completions = True
            self.changed("prompts")
            return fn
        return register

    def remove(self, kind, key):
        # Remove a tool/prompt by name or a resource by uri; tells the client.
        registry = getattr(self, kind)
        if registry is not None and registry.remove(key):
            self.changed(kind)

    def changed(self, kind):
        self._cache = {}
        if self.initialized:
            self.notify("notifications/" + kind + "/list_changed")
        elif self.modern is not None:
            self.modern.changed(kind)

    # -- output ---------------------------------------------------------------------------

    def send(self, frame):
        if self.write is not None:
            self.write(frame)
        else:
            self.outbox.append(frame)

    def notify(self, method, params=None):
        self.send(jsonrpc.notification_frame(method, params))

    def log(self, level, data, logger=None):
        # notifications/message, when the level passes the client's filter.
        try:
            rank = LEVELS.index(level)
        except ValueError:
            rank = 3
        if rank < self.log_level or (not self.initialized and self.modern is None):
            return
        params = {"level": level, "data": data}
        if logger:
            params["logger"] = logger
        self.notify("notifications/message", params)

    def resource_updated(self, uri):
        if self.modern is not None:  # to the subscriptions/listen streams that asked for it
            self.modern.resource_updated(uri)
        elif uri in self.subscriptions:
            self.notify("notifications/resources/updated", {"uri": uri})

    def poll(self):
        # Called by the serve loop when idle: report subscribed resources whose watch changed.
        subs = self.subscriptions
        if not subs or self.resources is None:
            return
        for uri in subs:
            found = self.resources.resolve(uri)
            if found is None or found[0].watch is None:
                continue
            try:
                value = found[0].watch(**found[1])
            except Exception:
                continue
            if value != subs[uri]:
                subs[uri] = value
                self.resource_updated(uri)

    def request(self, method, params=None, timeout_ms=None):
        # A request to the client, answered through the pump; returns the result or raises.
        if self.modern is not None:  # 2026-07-28: asked in the result, answered by a retry
            return self.modern.request(method, params)
        if self.pump is None:
            raise RpcError(INTERNAL_ERROR, "no client connection to send " + method)
        need = CLIENT_NEEDS.get(method)
        if need is not None and need not in self.client_capabilities:
            # Asking anyway would only wait out the timeout for an answer that cannot come.
            raise RpcError(INVALID_REQUEST, "the client did not declare the " + need
                           + " capability, so it cannot be asked " + method)
        self._next_id += 1
        rid = self._next_id
        self._waiting[rid] = None
        self.send(jsonrpc.request_frame(rid, method, params))
        from tinymcp.clock import ticks_ms, ticks_diff
        start = ticks_ms()
        limit = timeout_ms or self.client_timeout_ms
        try:
            while self._waiting[rid] is None:
                left = limit - ticks_diff(ticks_ms(), start)
                if left <= 0 or self.ctx._cancelled:
                    raise RpcError(INTERNAL_ERROR, method + " got no answer from the client")
                self.pump(left if left < 100 else 100)
            reply = self._waiting[rid]
        finally:
            del self._waiting[rid]
        if "error" in reply:
            err = reply["error"] if type(reply["error"]) is dict else {}
            raise RpcError(err.get("code", INTERNAL_ERROR), err.get("message", "client error"),
                           err.get("data"))
        return reply.get("result")

    # -- input ----------------------------------------------------------------------------

    def handle(self, frame):
        # One frame in, the encoded answer out (None for notifications and responses).
        parts = []
        if not self.respond(frame, parts.append):
            return None
        return b"".join([p.encode() if type(p) is str else p for p in parts])

    def respond(self, frame, write):
        # Answer one frame by passing its pieces (bytes or str) to write(), so a big cached
        # result reaches the stream without being copied into one response buffer. Returns
        # True when an answer was written; the caller ends the line.
        out = self._answer(frame)
        if out is None:
            return False
        if out is not _RESULT:
            write(out)
            return True
        result = self._result
        self._result = None
        write(b'{"jsonrpc":"2.0","id":')
        write(jsonrpc.text(self._result_id))
        write(b',"result":')
        if type(result) is tuple:  # pieces of an encoded result
            for piece in result:
                write(piece)
        elif type(result) is bytes:
            write(result)
        else:
            if type(result) is dict and type(result.get("content")) is list:
                result = _base64_data(result)
            write(jsonrpc.text(result))
        write(b"}")
        return True

    def _answer(self, frame):
        # -> None (nothing to say), an encoded error frame, or _RESULT with the result and its
        # id left in self._result / self._result_id.
        try:  # a dict: a message tinymcp.cborlink decoded from a CBOR frame
            msg = frame if type(frame) is dict else jsonrpc.loads(frame)
        except Exception:  # ValueError or UnicodeError, by runtime
            return jsonrpc.error_frame(None, PARSE_ERROR, "Parse error: not valid UTF-8 JSON")
        if type(msg) is not dict:
            why = "batches are not supported" if type(msg) is list else "expected a JSON object"
            return jsonrpc.error_frame(None, INVALID_REQUEST, "Invalid Request: " + why)
        rid = msg.get("id")
        good_id = type(rid) is int or type(rid) is str
        if msg.get("jsonrpc") != "2.0":
            return jsonrpc.error_frame(rid if good_id else None, INVALID_REQUEST,
                                       'Invalid Request: "jsonrpc" must be "2.0"')
        method = msg.get("method")
        if method is None and ("result" in msg or "error" in msg):
            if good_id and rid in self._waiting:
                self._waiting[rid] = msg
            return None
        if type(method) is not str:
            return jsonrpc.error_frame(rid if good_id else None, INVALID_REQUEST,
                                       'Invalid Request: "method" must be a string')
        params = msg.get("params")
        if params is None:
            params = _NO_PARAMS  # shared, never written: no dict per ping
        if "id" not in msg:
            if type(params) is dict:
                self._notification(method, params)
            return None
        if not good_id:
            return jsonrpc.error_frame(None, INVALID_REQUEST,
                                       'Invalid Request: "id" must be a string or an integer')
        if type(params) is not dict:
            return jsonrpc.error_frame(rid, INVALID_PARAMS, 'Invalid params: "params" must be an object')
        return self._request(rid, method, params)

    def _request(self, rid, method, params):
        # The first request decides the era: initialize -> the handshake era, a 2026-07-28
        # request (server/discover, or the per-request _meta) -> tinymcp.modern, loaded then.
        modern = self.modern
        if modern is None and method != "initialize" and _modern(self, method, params):
            try:
                from tinymcp.modern import Modern
                modern = Modern(self)
            except ImportError:  # a board shipped without it: clients fall back to initialize
                modern = None
        if modern is not None:
            return modern.serve(rid, method, params)
        fn = _METHODS.get(method)
        if fn is None:
            return jsonrpc.error_frame(rid, METHOD_NOT_FOUND, "Method not found: " + method)
        if not self.initialized and method != "initialize" and method != "ping":
            return jsonrpc.error_frame(rid, INVALID_REQUEST,
                                       "Server not initialized: send initialize first",
                                       {REASON: NOT_INITIALIZED})
        return self._run(rid, fn, params)

    def _run(self, rid, fn, params):
        # Run one handler with the context set up; -> an error frame, None, or _RESULT.
        ctx = self.ctx
        ctx.request_id = rid
        ctx._cancelled = False
        meta = params.get("_meta")
        ctx.progress_token = meta.get("progressToken") if type(meta) is dict else None
        self.busy = True
        try:
            result = fn(self, params)
        except RpcError as e:
            return jsonrpc.error_frame(rid, e.code, e.message, e.data)
        except Exception as e:
            return jsonrpc.error_frame(rid, INTERNAL_ERROR, "Internal error: " + _describe(e))
        finally:
            self.busy = False
            ctx.request_id = None
        if ctx._cancelled or result is None:
            return None  # the client gave up on it, or it is answered later (a listen stream)
        self._result_id = rid
        self._result = result
        return _RESULT

    def interject(self, frame):
        # A frame that arrived while a handler runs: cancellations, responses and pings are
        # served now, other requests wait in the backlog.
        try:
            msg = jsonrpc.loads(frame)
        except Exception:
            msg = None
        if type(msg) is dict:
            method = msg.get("method")
            if method is None or "id" not in msg:
                self.handle(frame)
                return
            rid = msg.get("id")
            if method == "ping" and self.modern is None and (type(rid) is int or type(rid) is str):
                # Answered here, not through handle(): that would reset the running request's
                # context (its id, its cancel flag) under the handler's feet.
                self.send(jsonrpc.result_frame(rid, _EMPTY))
                return
        self.backlog.append(bytes(frame))

    def _notification(self, method, params):
        if method == "notifications/cancelled":
            rid = params.get("requestId")
            if self.busy and rid == self.ctx.request_id:
                self.ctx._cancelled = True
            elif self.modern is not None:
                self.modern.cancel(rid)  # may end a subscriptions/listen stream

    # -- helpers for handlers ------------------------------------------------------------

    def cached(self, key, build):
        # An encoded result, built once per registry state and protocol era.
        out = self._cache.get(key)
        if out is None:
            out = jsonrpc.dumps(build(self))
            self._cache[key] = out
        return out

    def page(self, key, items, params):
        # One page of a list result, cached; the cursor is the index of its first item.
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            if type(cursor) is not str or not cursor.isdigit() or int(cursor) >= len(items):
                raise RpcError(INVALID_PARAMS, "Invalid params: unknown cursor")
            start = int(cursor)
        name = key if start == 0 else key + str(start)
        out = self._cache.get(name)
        if out is None:
            end = start + self.page_size
            era = self.era
            body = {key: [item.describe(era) for item in items[start:end]]}
            if end < len(items):
                body["nextCursor"] = str(end)
            if self.modern is not None:
                self.modern.complete(body, self.modern.list_ttl_ms, "public")
            out = jsonrpc.dumps(body)
            self._cache[name] = out
        return out

    def capabilities(self):
        caps = {"logging": {}}
        if self.tools is not None:
            caps["tools"] = {"listChanged": True}
        if self.resources is not None:
            caps["resources"] = {"subscribe": True, "listChanged": True}
        if self.prompts is not None:
            caps["prompts"] = {"listChanged": True}
        if self.has_completions and self.era >= 1:
            caps["completions"] = {}
        return caps


def _modern(server, method, params):
    # A request of the 2026-07-28 revision: its per-request _meta, or (era undecided) one of
    # its own methods.
    meta = params.get("_meta")
    if type(meta) is dict and MODERN_KEY in meta:
        return True
    return not server.initialized and (method == "server/discover"
                                       or method == "subscriptions/listen")


def _base64_data(result):
    # Content blocks may carry raw bytes as "data" (a CBOR link sends them so); JSON wants base64.
    blocks = result["content"]
    for i in range(len(blocks)):
        block = blocks[i]
        if type(block) is dict and type(block.get("data")) in jsonrpc.BINARY:
            from binascii import b2a_base64
            if blocks is result["content"]:  # copies: the tool's own list stays as it gave it
                result = dict(result)
                blocks = result["content"] = list(blocks)
            block = dict(block)
            block["data"] = b2a_base64(block["data"]).decode().rstrip("\n")
            blocks[i] = block
    return result


def _describe(e):
    text = str(e)
    return text if text else e.__class__.__name__


def _need(params, key, kind, what):
    value = params.get(key)
    if type(value) is not kind:
        raise RpcError(INVALID_PARAMS, "Invalid params: " + what)
    return value


def _registry(server, kind):
    registry = getattr(server, kind)
    if registry is None:
        raise RpcError(METHOD_NOT_FOUND, "Method not found: this server has no " + kind)
    return registry


# -- method handlers: fn(server, params) -> result (a dict or pre-encoded bytes) ----------

def _initialize(server, params):
    asked = _need(params, "protocolVersion", str, '"protocolVersion" must be a string')
    previous = server.version
    server._reset_session()
    version = asked if asked in VERSIONS else LATEST
    era = len(VERSIONS) - 1 - VERSIONS.index(version)
    if version != previous:
        server._cache = {}  # cached results are written for one protocol version
    server.version = version
    server.era = era
    caps = params.get("capabilities")
    server.client_capabilities = caps if type(caps) is dict else {}
    server.initialized = True
    return server.cached("initialize", _initialize_result)


def _initialize_result(server):
    info = server.info
    if server.era < 2 and "title" in info:
        info = {"name": info["name"], "version": info["version"]}
    caps = server.capabilities()
    if server.link_modes:  # set by a channel: frame kinds this link accepts (docs/cbor-link.md)
        caps["experimental"] = {LINK_KEY: server.link_modes}
    result = {"protocolVersion": server.version, "capabilities": caps, "serverInfo": info}
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def _ping(server, params):
    return _EMPTY


def _set_level(server, params):
    level = params.get("level")
    if level not in LEVELS:
        raise RpcError(INVALID_PARAMS, "Invalid params: level must be one of " + ", ".join(LEVELS))
    server.log_level = LEVELS.index(level)
    return _EMPTY


def _tools_list(server, params):
    return server.page("tools", _registry(server, "tools").items, params)


def _tools_call(server, params):
    tools = _registry(server, "tools")
    name = _need(params, "name", str, '"name" must be a string')
    tool = tools.find(name)
    if tool is None:
        raise RpcError(INVALID_PARAMS, "Unknown tool: " + name)
    args = params.get("arguments")
    if args is None:
        args = {}
    return tools.call(tool, args, server.ctx, server.era)


def _resources_list(server, params):
    return server.page("resources", _registry(server, "resources").static, params)


def _templates_list(server, params):
    return server.page("resourceTemplates", _registry(server, "resources").templates, params)


def _resources_read(server, params):
    resources = _registry(server, "resources")
    return resources.read(_need(params, "uri", str, '"uri" must be a string'))


def _subscribe(server, params):
    resources = _registry(server, "resources")
    uri = _need(params, "uri", str, '"uri" must be a string')
    found = resources.lookup(uri)
    watch = found[0].watch
    server.subscriptions[uri] = watch(**found[1]) if watch else None
    return _EMPTY


def _unsubscribe(server, params):
    _registry(server, "resources")
    uri = _need(params, "uri", str, '"uri" must be a string')
    if uri in server.subscriptions:
        del server.subscriptions[uri]
    return _EMPTY


def _prompts_list(server, params):
    return server.page("prompts", _registry(server, "prompts").items, params)


def _prompts_get(server, params):
    prompts = _registry(server, "prompts")
    return prompts.get(_need(params, "name", str, '"name" must be a string'), params.get("arguments"))


def _complete(server, params):
    from tinymcp.complete import complete
    return complete(server, params)


_METHODS = {
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
    "prompts/list": _prompts_list,
    "prompts/get": _prompts_get,
    "completion/complete": _complete,
}
