# The relay's express lane (issue 30): a host's tools/call of a read-only tool on a board goes to
# the board as the host wrote it, the board's id in it (wire.routable; with several boards the
# board's own tool name in it too), and the board's result comes back as the board wrote it,
# the host's id in it (wire.BoardAnswer): no task, no layer between the host session and the
# board session. The stdio front (stdio.py) and the HTTP front (streamable.py) each give it
# their host's messages. Anything else (notifications, other methods, progress, tasks, compact
# names, a tool that is not read-only, an error, a picture, a result whose URIs are relabelled)
# takes the general way: HostSession.receive, Router.start.
import logging

from tinymcp.protocol import INTERNAL_ERROR

from tinymcp.host.bridge.events import TOOL as WAIT_TOOL
from tinymcp.host.bridge.handshake import CALLS_AS_IS, HostCall
from tinymcp.host.bridge.host import err
from tinymcp.host.bridge.wire import BoardAnswer, HostParams, dump, routable

log = logging.getLogger("tinymcp.bridge.express")

SVG = b"image/svg+xml"   # an answer holding a picture is drawn first (pictures.py)


class ExpressLane:
    # One host session's lane to the router's boards. put(rid, data) hands the host the answer
    # to its request rid: data, the answer's JSON (no newline), in the order answers come.

    def __init__(self, session, router, put):
        self.session = session
        self.router = router
        self.put = put
        self.taken = 0   # calls served here (logged at the end, for tests and the curious)

    def take(self, msg, line, alone=False, routed=None):
        # A host's message decoded from line -> True when it was served here, else False (and
        # nothing was done with it). alone: the line is all the chunk of input held, so its
        # frame goes to the board at once, not at the end of the chunk. routed: its params as
        # wire.routable makes them, when they are made already (wire.tools_call).
        try:
            route = self.route(msg, line, routed)
        except Exception:   # a bug costs this message, never the session (HostSession.receive)
            log.exception("the express lane, on a message from %s", self.session.label)
            return True
        if route is None:
            return False
        self.relay(msg["id"], route, alone)
        return True

    def route(self, msg, line, routed=None):
        # -> (the board, the params as they go to it: a wire.HostParams) when the lane serves
        # msg, else None. Nothing is done with it here. routed: as take() has it.
        session = self.session
        if session.era != "handshake" or session.version < CALLS_AS_IS:
            return None
        if routed is None and (
                type(msg) is not dict or len(msg) != 4 or msg.get("method") != "tools/call"
                or type(msg.get("id")) not in (int, str) or type(msg.get("params")) is not dict
                or msg.get("jsonrpc") != "2.0" or "_meta" in msg["params"]
                or "task" in msg["params"]):
            return None   # a bad id, progress, a task: said the general way. (What
                          # wire.tools_call reads has none of them: its shape says so.)
        if msg["id"] in session.tasks:
            return None   # a duplicate id: said the general way
        params = msg["params"]
        name = params.get("name")
        if type(name) is not str or name == WAIT_TOOL:
            return None
        router = self.router
        found = router.routes.express(name)
        if found is None:
            return None
        board, own = found
        catalog = board.catalog
        board_session = board.session
        # Read-only (no owner to add to its _meta), not a task tool (no longer deadline), on a
        # board serving now (nothing held, nothing refused): what Router._begin adds nothing to.
        if (catalog.read_only.get(own) is not True or own in catalog.task_support
                or board_session.state != "ready" or board_session.suspect is not None
                or router.routes.refusal(board, "tools", own) is not None):
            return None   # hidden or withheld by the pins too: the general way says why
        if routed is None:
            routed = routable(msg, line)
        if type(routed) is not HostParams:
            return None
        if own != name:   # LABEL_TOOL: the board's own name in the bytes it gets
            routed = routed.renamed(name, own)
            if routed is None:
                return None
        return board, routed

    def relay(self, rid, route, alone):
        # The host's request rid to the board route() chose, its answer to put() (or, when
        # anything is to be done to it, through the session's general way).
        board, routed = route
        session = self.session
        router = self.router
        several = router.several
        board_session = board.session
        call = HostCall(session, rid)
        try:
            p = board_session.relay(routed, call, alone)
        except Exception as e:   # a bug costs this call, never the session
            log.exception("the express lane, on a message from %s", session.label)
            session.served(rid, err(INTERNAL_ERROR, "Internal error in the bridge: %s" % e))
            return
        future = p.future
        tasks = session.tasks

        def ended(future):
            # Cancelled by the host, or as the session ends (an answer takes this off first).
            if tasks.get(rid) is future:
                del tasks[rid]
            board_session.abandon(p, "cancelled by the client")
            session.unanswered(rid)

        def answered(reply):
            # p.then: the board's answer (or its deadline), before p.future is done.
            if tasks.get(rid) is future:
                del tasks[rid]
            future.remove_done_callback(ended)
            rest = reply.rest if type(reply) is BoardAnswer else None
            result = reply.get("result")
            # A task (a result's own "task" key) is kept by the router; a picture is drawn.
            if (rest is None or type(result) is not dict or "task" in result
                    or rest.find(SVG) >= 0   # find, not `in`: wire.py says why
                    or rest.find(b"\r") >= 0   # an SSE line would end there (streamable.py)
                    or session.closed or (several and router.routes.outward_reply(
                        board, "tools/call", reply) is not reply)):
                router.answer_routed(board, "tools/call", routed, call, None, reply,
                                     lambda out: session.served(rid, out))
                return
            self.put(rid, b'{"jsonrpc":"2.0","id":' + (b"%d" % rid if type(rid) is int else
                                                        dump(rid).encode()) + rest)

        self.taken += 1
        tasks[rid] = future
        if future.done():   # refused as it was encoded (too long for the board, not Unicode)
            answered(future.result())
            return
        p.then = answered
        future.add_done_callback(ended)
