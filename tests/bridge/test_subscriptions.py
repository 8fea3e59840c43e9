# Who listens to what, in memory: the router's record of a board's subscriptions and the
# listen streams' URIs stay true when a board is away or a stream ends half way.
import asyncio
import types

from tinymcp.host.bridge.router import RoutedBoard, Router
from tinymcp.host.bridge.subscriptions import Subscriptions


class Unheard:
    # Hosts that hear nothing of the boards (a seams.HostEvents).
    def on_list_changed(self, method):
        pass

    def on_updated(self, uri, params):
        pass

    def on_log(self, msg):
        pass


class FakeSession:
    def __init__(self):
        self.calls = []

    async def call(self, method, params, **options):
        self.calls.append((method, params))
        return {"result": {}}

    def close(self):
        pass


def test_a_subscription_dropped_while_its_board_is_away_is_not_replayed_when_it_returns():
    async def run():
        router = Router(True, Unheard())
        board = RoutedBoard("pico", router)
        board.session = FakeSession()
        router.boards.append(board)
        assert "result" in await router.subscribe("pico+sensor://t")
        assert router.subs == {"pico": {"sensor://t"}}
        await router.remove(board)               # unplugged
        router.unsubscribe("pico+sensor://t")    # its last listener leaves meanwhile
        return router.subs.get("pico")
    assert not asyncio.run(run())                 # nothing to subscribe again on its return


def test_a_listen_stream_ended_while_subscribing_leaves_nothing_subscribed():
    async def run():
        slow = asyncio.Event()
        dropped = []

        async def subscribe(uri):
            if uri == "b":
                await slow.wait()   # the board takes its time over the second URI
            return {"result": {}}
        subs = Subscriptions(types.SimpleNamespace(subscribe=subscribe,
                                                   unsubscribe=dropped.append))
        session = object()
        wanted = {"resourceSubscriptions": ["a", "b"]}
        listen = asyncio.ensure_future(subs.listen(session, 7, wanted, {}))
        for _ in range(10):
            await asyncio.sleep(0)
        assert "a" in subs.uris
        subs.end(session, 7)        # the host cancelled the stream
        listen.cancel()
        return subs.uris, dropped
    uris, dropped = asyncio.run(run())
    assert uris == {} and dropped == ["a"]
