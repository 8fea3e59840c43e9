# What a running tool may use (progress, logging, cancellation, requests to the client), and the
# handshake era's way of asking the client. Loaded for the first tool declared with ctx=True.
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.jsonrpc import RpcError
from tinymcp.protocol import CLIENT_NEEDS, INTERNAL_ERROR, INVALID_REQUEST


class Context:
    # One per server: it speaks for whichever request is running (handlers run one at a time).

    def __init__(self, server):
        self.server = server

    @property
    def request_id(self):
        return self.server.running

    @property
    def cancelled(self):
        # Reading input here lets a notifications/cancelled arrive while a long tool runs.
        server = self.server
        if not server.cancelled and server.pump:
            server.pump(0)
        return server.cancelled

    def progress(self, progress, total=None, message=None):
        server = self.server
        if server.token is None:
            return
        params = {"progressToken": server.token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None and server.era >= 1:
            params["message"] = message
        server.notify("notifications/progress", params)
        if server.pump:
            server.pump(0)

    def log(self, level, data, logger=None):
        self.server.log(level, data, logger)

    def request(self, method, params=None, timeout_ms=None):
        # Ask the client (sampling, elicitation, roots) and wait for its answer.
        server = self.server
        return server.revision.ask(server, method, params, timeout_ms or server.client_timeout_ms)


def ask(server, method, params, timeout_ms):
    # The handshake era: send the request now and pump input until its answer arrives.
    if server.pump is None:
        raise RpcError(INTERNAL_ERROR, "no client connection to send " + method)
    need = CLIENT_NEEDS.get(method)
    if need is not None and need not in server.client_capabilities:
        # Asking anyway would only wait out the timeout for an answer that cannot come.
        raise RpcError(INVALID_REQUEST, "the client did not declare the " + need
                       + " capability, so it cannot be asked " + method)
    waiting = server.waiting
    if waiting is None:
        waiting = server.waiting = {}
    rid = server.next_id = getattr(server, "next_id", 0) + 1
    waiting[rid] = None
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    server.send(msg)
    start = ticks_ms()
    try:
        while waiting[rid] is None:
            left = timeout_ms - ticks_diff(ticks_ms(), start)
            if left <= 0 or server.cancelled:
                raise RpcError(INTERNAL_ERROR, method + " got no answer from the client")
            server.pump(left if left < 100 else 100)
        reply = waiting[rid]
    finally:
        del waiting[rid]
    if "error" in reply:
        err = reply["error"] if type(reply["error"]) is dict else {}
        raise RpcError(err.get("code", INTERNAL_ERROR), err.get("message", "client error"),
                       err.get("data"))
    return reply.get("result")
