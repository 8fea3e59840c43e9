# The hosts' side of the bridge: every host session (stdio, HTTP, the demo), each served in the
# protocol revision it speaks, all through one router to the boards.
import itertools
import logging

from tinymcp.protocol import LEVELS

from tinymcp.host.bridge.handshake import HandshakeEra
from tinymcp.host.bridge.host import HostSession
from tinymcp.host.bridge.stateless import StatelessEra
from tinymcp.host.bridge.subscriptions import Subscriptions

log = logging.getLogger("tinymcp.bridge.hosts")


class Hosts:
    # make_router(hosts) -> the router, which tells these hosts (a seams.HostEvents) what the
    # boards say that belongs to no single host call. Each host session (a seams.SessionEvents)
    # serves its requests in one of the two eras held here, and tells its notifications and
    # its end; the fronts open sessions here (a seams.HostFront). timeout: how long a board has
    # to answer.

    def __init__(self, make_router, timeout):
        self.timeout = timeout
        self.sessions = []
        self.router = make_router(self)
        self.subs = Subscriptions(self.router)
        self.handshake = HandshakeEra(self.router, self.subs, timeout)
        self.stateless = StatelessEra(self.router, self.subs, timeout)
        self._owners = itertools.count(1)

    def open_session(self, send, label, unanswered=None):
        session = HostSession(send, label, self, unanswered=unanswered)
        session.owner = "host-%d" % next(self._owners)   # its name to the boards (leases)
        self.sessions.append(session)
        log.info("host session %s opened", label)
        return session

    def notified(self, session, method, params):
        if method == "notifications/initialized":
            return
        if method == "notifications/cancelled":
            session.cancel(params.get("requestId"))
        elif method == "notifications/roots/list_changed":
            self.router.notify_boards(method, params or None)
        else:
            log.debug("dropped %s from %s", method, session.label)

    def closed(self, session):
        if session in self.sessions:
            self.sessions.remove(session)
        self.subs.drop(session)
        self.router.forget(session)
        self.router.owner_ended(session.owner)
        log.info("host session %s closed", session.label)

    # -- what the boards say to every host --------------------------------------------------

    def _handshake_sessions(self):
        return [s for s in self.sessions if s.initialized and s.era == "handshake"]

    def on_list_changed(self, method):
        for session in self._handshake_sessions():
            session.send({"jsonrpc": "2.0", "method": method})
        self.subs.list_changed(method)

    def on_updated(self, uri, params):
        self.subs.updated(uri, params)

    def on_log(self, msg):
        # A board's log line during none of the hosts' calls: to every handshake-era host that
        # asked for that level.
        rank = LEVELS.index(msg["params"]["level"])
        for session in self._handshake_sessions():
            if rank >= session.level:
                session.send_log(msg)
