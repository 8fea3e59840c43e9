# Protocol revisions as strategies over the server's one handler table: which methods exist, what
# a request must carry, what a result says, how the client is asked and told. Each has the same
# methods, taking the server they serve. The handshake era (2024-11-05 .. 2025-11-25, opened by
# initialize) is here; the stateless 2026-07-28 revision is tinymcp/stateless.py.
from tinymcp import once
from tinymcp.jsonrpc import RpcError
from tinymcp.protocol import (INVALID_REQUEST, METHOD_NOT_FOUND, NOT_INITIALIZED, REASON,
                              VERSION_META)


class Handshake:
    # Holds nothing of its own: the session it serves (version, capabilities, log level,
    # subscriptions) is server.session. One instance serves every server.

    def gate(self, server, method, params):
        # -> the handler of this request; refusals are raised as RpcError.
        initialized = server.session.initialized
        if initialized:
            meta = params.get("_meta")
            if type(meta) is dict and VERSION_META in meta:
                raise RpcError(INVALID_REQUEST, "Invalid Request: this connection speaks the "
                                                "initialize era; no 2026-07-28 _meta here")
        handler = server.handlers.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, "Method not found: "
                           + once("tinymcp.echo.shown", method))
        if not initialized and method != "initialize" and method != "ping":
            raise RpcError(INVALID_REQUEST, "Server not initialized: send initialize first",
                           {REASON: NOT_INITIALIZED})
        return handler

    def finish(self, server, method, result):
        # The result as this revision sends it: here, as the handler made it.
        return result

    def done(self, server):
        pass

    def ask(self, server, *args):
        # Requests to the client (asks, timeout_ms), asks {key: (method, params)}, sent now
        # and answered while the handler waits -> {key: answer}. (*args: a name "asks" here
        # would be a qstr more, 16 B, on every board that serves the handshake era.)
        from tinymcp.context import ask
        return ask(server, *args)

    def changed(self, server, kind):
        if server.session.initialized:
            server.notify("notifications/" + kind + "/list_changed")

    def updated(self, server, uri):
        if uri in server.session.subscriptions:
            server.notify("notifications/resources/updated", {"uri": uri})

    def cancel(self, server, rid):
        pass


HANDSHAKE = Handshake()
