# What a running tool may use (progress, logging, cancellation, requests to the client), and the
# handshake era's way of asking the client. Loaded for the first tool declared with ctx=True.
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.jsonrpc import RpcError
from tinymcp.protocol import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST

# What a client must have declared before the server may ask it something.
CLIENT_NEEDS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling",
                "roots/list": "roots"}
_FORM_ONLY = {"form": {}}
# In _meta of a request to the client asked under a key (ctx.request(..., key=) or
# ctx.requests): [key, how many were asked together]. A bridge serving a 2026-07-28 host names
# the question by it and gathers the group into one input-required result.
INPUT_META = "io.tinymcp/input"
# The capabilities of the client a request is for: a 2026-07-28 request's own; a bridge puts
# its host's here (the board's session holds the bridge's).
CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"


class Context:
    # One per server: it wraps the Call being handled, in the session being served (handlers
    # run one at a time). Once that call is cancelled nothing more is sent for it: no
    # progress, no log message.

    def __init__(self, server):
        self.server = server

    @property
    def request_id(self):
        return self.server.session.call.id

    @property
    def cancelled(self):
        # Reading input here lets a notifications/cancelled arrive while a long tool runs.
        session = self.server.session
        if not session.call.cancelled and session.pump:
            session.pump(0)
        return session.call.cancelled

    def progress(self, progress, total=None, message=None):
        # Input is read first: a cancel that came while the tool ran stops this notification.
        server = self.server
        session = server.session
        call = session.call
        if call.token is None or self.cancelled or session.batch is not None:
            return  # inside a batch's answer array nothing else may be written (tinymcp/batch.py)
        params = {"progressToken": call.token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and session.era >= 1:
            params["message"] = message
        server.notify("notifications/progress", params)

    def log(self, level, data, logger=None):
        if not self.cancelled:
            self.server.log(level, data, logger)

    def request(self, method, params=None, timeout_ms=None, key=None):
        # Ask the client (sampling, elicitation, roots) and wait for its answer. `key` names
        # the question in a 2026-07-28 input-required result (else "<capability>-<n>").
        return self.requests({key: (method, params)}, timeout_ms)[key]

    def requests(self, asks, timeout_ms=None):
        # Several questions at once, {key: (method, params)} -> {key: answer}: a 2026-07-28
        # client gets them together, in one input-required result.
        server = self.server
        job = _task_job(server.session)
        if job is not None:  # a task's tool: it pauses until the client answers (tasks.py)
            return server.tasks().ask(server, job, asks)
        return server.session.revision.ask(server, asks, timeout_ms or server.client_timeout_ms)

    def can(self, method, params=None):
        # Whether the client this request is for declared what being asked `method` needs.
        session = self.server.session
        job = _task_job(session)
        meta = job.again[3] if job is not None else session.call.meta
        caps = meta.get(CAPABILITIES_META) if meta is not None else None
        if type(caps) is not dict:
            caps = session.client_capabilities
        return missing(caps, method, params or {}) is None


def _task_job(session):
    # The task whose tool is being stepped (tinymcp/tasks.py), or None.
    work = session.work
    job = work.running if work is not None else None
    return job if job is not None and job.task is not None else None


def missing(capabilities, method, params):
    # What a client that declared `capabilities` lacks to be asked `method` with `params`:
    # None, or the capabilities it would have to declare ({"elicitation": {"url": {}}}).
    # Elicitation is asked in a mode ("form" when params name none); an empty elicitation
    # object declares form mode only (2025-11-25, and 2026-07-28 alike).
    need = CLIENT_NEEDS.get(method)
    if need is None:
        return None
    if need not in capabilities:
        return {need: {}}
    if need != "elicitation":
        return None
    mode = params.get("mode", "form") if type(params) is dict else "form"
    modes = capabilities[need]
    if type(modes) is not dict or not modes:
        modes = _FORM_ONLY
    if type(mode) is str and mode in modes:
        return None
    return {need: {str(mode): {}}}


def ask(server, asks, timeout_ms):
    # The handshake era: send the requests now and pump input until all are answered.
    session = server.session
    call = session.call
    for key in asks:
        method, params = asks[key]
        if session.batch is not None:
            raise RpcError(INTERNAL_ERROR, method + " cannot be asked from inside a JSON-RPC batch")
        if session.pump is None:
            raise RpcError(INTERNAL_ERROR, "no client connection to send " + method)
        if call.cancelled:
            raise RpcError(INTERNAL_ERROR, "the request was cancelled: " + method + " not sent")
        lacks = missing(session.client_capabilities, method, params)
        if lacks is not None:
            # Asking anyway would only wait out the timeout for an answer that cannot come.
            need = CLIENT_NEEDS[method]
            if lacks[need]:  # a mode: the client would answer -32602 (2025-11-25 elicitation)
                mode = list(lacks[need])[0]
                raise RpcError(INVALID_PARAMS, "the client does not support " + need + " mode "
                               + mode + ", so it cannot be asked " + method + " in it",
                               {"requiredCapabilities": lacks})
            raise RpcError(INVALID_REQUEST, "the client did not declare the " + need
                           + " capability, so it cannot be asked " + method)
    waiting = session.waiting
    if waiting is None:
        waiting = session.waiting = {}
    ids = {}
    for key in asks:
        method, params = asks[key]
        rid = session.next_id = session.next_id + 1
        waiting[rid] = None
        ids[key] = rid
        if key is not None:
            params = dict(params or {})
            meta = params["_meta"] = dict(params.get("_meta") or {})
            meta[INPUT_META] = [key, len(asks)]
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        server.send(msg)
    start = ticks_ms()
    answers = {}
    try:
        for key in ids:
            rid = ids[key]
            while waiting[rid] is None:
                left = timeout_ms - ticks_diff(ticks_ms(), start)
                if left <= 0 or call.cancelled:
                    raise RpcError(INTERNAL_ERROR, asks[key][0] + " got no answer from the client")
                session.pump(left if left < 100 else 100)
            reply = waiting[rid]
            if "error" in reply:
                err = reply["error"] if type(reply["error"]) is dict else {}
                raise RpcError(err.get("code", INTERNAL_ERROR),
                               err.get("message", "client error"), err.get("data"))
            answers[key] = reply.get("result")
    finally:
        for key in ids:
            del waiting[ids[key]]
    return answers
