# Who listens to what, for hosts of both revisions: a handshake-era session subscribes to URIs one
# at a time (resources/subscribe); a 2026-07-28 stream (subscriptions/listen) asks for URIs and
# list changes at once. The board is subscribed while anyone listens to a URI, and each change
# goes to each listener in its own revision's form.
from tinymcp.stateless import SUBSCRIPTION_META

# listen flag -> the capability a server needs to have it granted
LISTEN_FLAGS = (("toolsListChanged", "tools"), ("promptsListChanged", "prompts"),
                ("resourcesListChanged", "resources"))


class Subscriptions:
    # A listener is (host session, stream): stream None for a handshake-era session, else the
    # id of its 2026-07-28 listen request (the stream its notifications are tagged with).

    def __init__(self, boards):
        # boards (a seams.SubscribingBoards: the router): async subscribe(uri) -> the board's
        # reply, for a first listener; unsubscribe(uri) when the last listener has gone.
        self.boards = boards
        self.uris = {}                    # uri -> {listener}
        self.streams = {}                 # (session, stream) -> what the stream was granted

    async def add(self, session, uri, stream=None):
        # -> {"result": {}}, or the board's error when it refused the first subscription.
        if uri not in self.uris:
            reply = await self.boards.subscribe(uri)
            if "result" not in reply:
                return reply
        self.uris.setdefault(uri, set()).add((session, stream))
        return {"result": {}}

    def remove(self, session, uri, stream=None):
        listeners = self.uris.get(uri)
        if listeners is None:
            return
        listeners.discard((session, stream))
        if not listeners:
            del self.uris[uri]
            self.boards.unsubscribe(uri)

    async def listen(self, session, stream, wanted, capabilities):
        # A 2026-07-28 listen request's notifications object -> what it is granted (the list
        # changes the server can tell, the URIs the board accepted).
        granted = {}
        for flag, kind in LISTEN_FLAGS:
            if wanted.get(flag) is True and kind in capabilities:
                granted[flag] = True
        self.streams[(session, stream)] = granted
        # Kept in granted as each is added: a stream cancelled meanwhile (end()) drops them.
        uris = granted["resourceSubscriptions"] = []
        for uri in wanted.get("resourceSubscriptions") or ():
            if type(uri) is str and uri not in uris and "result" in await self.add(session, uri,
                                                                                    stream):
                uris.append(uri)
        if not uris:
            del granted["resourceSubscriptions"]
        return granted

    def end(self, session, stream):
        granted = self.streams.pop((session, stream), None) or {}
        for uri in granted.get("resourceSubscriptions", ()):
            self.remove(session, uri, stream)

    def drop(self, session):
        # The session has gone: everything it listened to.
        for key in [key for key in self.streams if key[0] is session]:
            self.end(*key)
        for uri in list(self.uris):
            for listener in [l for l in self.uris.get(uri, ()) if l[0] is session]:
                self.remove(session, uri, listener[1])

    def updated(self, uri, params):
        # notifications/resources/updated from the board, to everyone listening to uri.
        method = "notifications/resources/updated"
        for session, stream in list(self.uris.get(uri, ())):
            if stream is None:
                session.send({"jsonrpc": "2.0", "method": method, "params": params})
            else:
                self._tell(session, stream, method, params)

    def list_changed(self, method):
        # A list changed: to every listen stream that asked for it (handshake-era sessions all
        # hear it from the hosts' broadcast).
        flag = method[len("notifications/"):].split("/")[0] + "ListChanged"
        for (session, stream), granted in list(self.streams.items()):
            if flag in granted:
                self._tell(session, stream, method, {})

    @staticmethod
    def _tell(session, stream, method, params):
        tagged = dict(params or {}, _meta={SUBSCRIPTION_META: stream})
        session.send({"jsonrpc": "2.0", "method": method, "params": tagged}, stream)
