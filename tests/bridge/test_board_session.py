# The board session and the line parser on their own: a fake link stands in for the serial port.
import asyncio
import functools
import json

from tinymcp.host.bridge.board import MAX_INIT_WAITING, BoardSession, Unheard
from tinymcp.host.bridge.hosts import Hosts
from tinymcp.host.bridge.link import parse_line
from tinymcp.host.bridge.router import Router

NOT_INITIALIZED = {"code": -32600, "message": "Server not initialized: send initialize first",
                   "data": {"reason": "not-initialized"}}
INIT_RESULT = {"protocolVersion": "2025-11-25", "serverInfo": {"name": "fake", "version": "1"},
               "capabilities": {"resources": {"subscribe": True}}}


class FakeLink:
    device = "/dev/fake"
    mode = "json"
    first_try = False
    network = False

    def __init__(self, events):
        self.connected = True
        self.sent = []
        self.raw = []  # bytes for the board's REPL (restarts)
        self.on_message, self.on_noise, self.on_state = (events.on_message, events.on_noise,
                                                         events.on_state)
        self.closed = asyncio.Event()

    async def run(self):
        await self.closed.wait()

    def close(self):
        self.closed.set()

    def encode(self, msg):
        return json.dumps(msg).encode() + b"\n"

    def write(self, frame, urgent=False):
        if not self.connected:
            return None
        self.sent.append(json.loads(frame))
        return frame

    def withdraw(self, frame):
        return False   # written at once: never waiting

    def send(self, msg, urgent=False):
        return self.write(self.encode(msg), urgent)

    def send_raw(self, data):
        self.raw.append(data)
        return self.connected

    def last(self, method):
        return [m for m in self.sent if m.get("method") == method][-1]

    def answer(self, msg, result=None, error=None):
        reply = {"jsonrpc": "2.0", "id": msg["id"]}
        reply.update({"error": error} if error else {"result": result or {}})
        self.on_message(reply)


async def settle():
    for _ in range(5):
        await asyncio.sleep(0)


async def ready_board(timeout=5.0):
    board = BoardSession(FakeLink, timeout)
    link = board.link
    board.start()
    await settle()
    link.answer(link.last("initialize"), INIT_RESULT)
    await asyncio.wait_for(board.ready.wait(), 1)
    return link, board


class Asked(Unheard):
    # A board session's listener that keeps what the board asks the client.
    def __init__(self, asked):
        self.on_request = asked.append


class Host:
    # A host session on the bridge's hosts' side, what it is sent collected.
    def __init__(self, hosts, capabilities=None):
        self.got = []
        self.session = hosts.open_session(lambda msg, related=None: self.got.append(msg), "test")
        self.capabilities = capabilities or {}

    async def request(self, rid, method, params=None):
        self.session.receive({"jsonrpc": "2.0", "id": rid, "method": method,
                              "params": params or {}})
        while True:
            for msg in self.got:
                if msg.get("id") == rid and "method" not in msg:
                    self.got.remove(msg)
                    return msg
            await asyncio.sleep(0.01)

    async def initialize(self, version="2025-11-25"):
        reply = await self.request(0, "initialize", {"protocolVersion": version,
                                                     "capabilities": self.capabilities})
        assert "result" in reply, reply
        return reply["result"]


async def bridge_with_a_board(timeout=5.0):
    # The hosts' side over a router with one board on a fake link, ready -> (hosts, link, board).
    hosts = Hosts(functools.partial(Router, False), timeout)
    board = hosts.router.add(
        None, lambda events: BoardSession(FakeLink, timeout, events=events)).session
    board.start()
    await settle()
    board.link.answer(board.link.last("initialize"), INIT_RESULT)
    await asyncio.wait_for(board.ready.wait(), 1)
    return hosts, board.link, board


def run(coro):
    asyncio.run(asyncio.wait_for(coro, 10))


def test_parse_line_keeps_frames_and_filters_noise():
    assert parse_line(b'{"jsonrpc":"2.0","id":1,"result":{}}\r') == (
        {"jsonrpc": "2.0", "id": 1, "result": {}}, None)
    assert parse_line(b'>>> {"jsonrpc":"2.0","method":"x"}') == (
        {"jsonrpc": "2.0", "method": "x"}, b">>> ")
    assert parse_line(b"Traceback (most recent call last):") == (
        None, b"Traceback (most recent call last):")
    assert parse_line(b'{"not": "jsonrpc"}') == (None, b'{"not": "jsonrpc"}')
    assert parse_line(b'{"jsonrpc":"2.0", broken') == (None, b'{"jsonrpc":"2.0", broken')
    assert parse_line(b"\xff\xfe\x00") == (None, b"\xff\xfe\x00")
    assert parse_line(b"  \r") == (None, None)


def test_requests_and_answers_pair_by_the_bridges_own_ids():
    async def main():
        link, board = await ready_board()
        a = asyncio.ensure_future(board.call("tools/call", {"name": "a"}))
        b = asyncio.ensure_future(board.call("tools/call", {"name": "b"}))
        await settle()
        sent = [m for m in link.sent if m.get("method") == "tools/call"]
        assert len({m["id"] for m in sent}) == 2
        link.answer(sent[1], {"who": "b"})
        link.answer(sent[0], {"who": "a"})
        assert (await a)["result"] == {"who": "a"}
        assert (await b)["result"] == {"who": "b"}
    run(main())


def test_a_request_the_restarted_board_never_ran_is_sent_again():
    async def main():
        link, board = await ready_board()
        call = asyncio.ensure_future(board.call("tools/call", {"name": "set_led"}))
        await settle()
        first = link.last("tools/call")
        link.answer(first, error=NOT_INITIALIZED)
        await settle()
        assert board.state == "connected"
        link.answer(link.last("initialize"), INIT_RESULT)
        await settle()
        again = link.last("tools/call")
        assert again is not first and again["params"] == first["params"]
        link.answer(again, {"on": True})
        assert (await call)["result"] == {"on": True}
        assert board.resets == 1
    run(main())


def test_a_reset_fails_the_running_call_but_retries_a_read_only_one_once():
    async def main():
        link, board = await ready_board()
        write = asyncio.ensure_future(board.call("tools/call", {"name": "set_led"}))
        read = asyncio.ensure_future(board.call("tools/call", {"name": "read_temperature"},
                                                retry=True))
        await settle()
        link.on_noise(b"MicroPython v1.24.1 on 2024-11-29; Raspberry Pi Pico with RP2040")
        await settle()
        link.answer(link.last("initialize"), INIT_RESULT)
        await settle()
        reply = await write
        assert reply["error"]["data"]["bridge"] == "reset"
        retried = link.last("tools/call")
        assert retried["params"]["name"] == "read_temperature"
        link.answer(retried, {"celsius": 21.5})
        assert (await read)["result"] == {"celsius": 21.5}
    run(main())


def test_a_timeout_answers_cancels_on_the_board_and_probes_it():
    async def main():
        link, board = await ready_board(timeout=0.2)
        reply = await board.call("tools/call", {"name": "slow"})
        assert reply["error"]["code"] == -32001
        request = link.last("tools/call")
        cancel = link.last("notifications/cancelled")
        assert cancel["params"]["requestId"] == request["id"]
        await settle()
        assert link.last("ping")   # is anybody there?
        # Nobody answers the ping either: the board is re-initialized.
        while link.last("initialize")["id"] < link.last("ping")["id"]:
            await asyncio.sleep(0.05)
        assert board.state == "connected"
    run(main())


def test_an_unplugged_board_fails_calls_at_once_and_comes_back():
    async def main():
        link, board = await ready_board()
        call = asyncio.ensure_future(board.call("tools/list"))
        await settle()
        link.connected = False
        link.on_state(False)
        assert (await call)["error"]["data"]["bridge"] == "disconnected"
        reply = await board.call("tools/list")
        assert "disconnected" in reply["error"]["message"].lower()
        link.connected = True
        link.on_state(True)
        await settle()
        link.answer(link.last("initialize"), INIT_RESULT)
        await asyncio.wait_for(board.ready.wait(), 1)
    run(main())


def test_an_echoing_repl_is_not_taken_for_requests_from_the_board():
    async def main():
        asked = []
        board = BoardSession(FakeLink, 5, events=Asked(asked))
        link = board.link
        board.start()
        await settle()
        link.on_message(dict(link.last("initialize")))   # the REPL echoes our frame back
        assert asked == []
        assert link.raw == [b"\x03"]                  # main.py is asked to run again
        await asyncio.sleep(0.4)
        assert link.raw == [b"\x03", b"\x02\x04\n"]
        link.on_message(dict(link.last("initialize")))   # still echoing: not again so soon
        await asyncio.sleep(0.4)
        assert len(link.raw) == 2 and board.restarts == 1
        board.close()
    run(main())


def test_a_board_locked_into_the_2026_era_is_restarted_unless_told_not_to():
    for allowed in (True, False):
        async def main():
            board = BoardSession(FakeLink, 5, restart=allowed)
            link = board.link
            board.start()
            await settle()
            link.answer(link.last("initialize"), error={
                "code": -32601, "message": "Method not found: initialize is not part of "
                "protocol 2026-07-28", "data": {"supported": ["2026-07-28"]}})
            await settle()
            assert link.raw[:1] == ([b"\x03"] if allowed else [])
            board.close()
        run(main())


def test_subscriptions_are_replayed_after_a_reset():
    async def main():
        hosts, link, board = await bridge_with_a_board()
        host = Host(hosts)
        await host.initialize("2025-06-18")
        assert host.session.version == "2025-06-18"
        sub = asyncio.ensure_future(host.request(1, "resources/subscribe", {"uri": "sensor://t"}))
        await settle()
        first = link.last("resources/subscribe")
        link.answer(first)
        assert (await sub)["result"] == {}
        board.reset("test")
        await settle()
        link.answer(link.last("initialize"), INIT_RESULT)
        await settle()
        replay = link.last("resources/subscribe")
        assert replay["params"] == {"uri": "sensor://t"} and replay["id"] != first["id"]
        link.answer(replay)
        await asyncio.wait_for(board.ready.wait(), 1)
    run(main())


def test_a_reset_during_the_replay_starts_over():
    async def main():
        hosts, link, board = await bridge_with_a_board()
        host = Host(hosts)
        await host.initialize()
        sub = asyncio.ensure_future(host.request(1, "resources/subscribe", {"uri": "sensor://t"}))
        await settle()
        link.answer(link.last("resources/subscribe"))
        await sub
        board.reset("first")
        await settle()
        link.answer(link.last("initialize"), INIT_RESULT)
        await settle()
        unanswered = link.last("resources/subscribe")     # the replay, cut short:
        board.reset("second")
        await settle()
        assert link.last("initialize")["id"] > unanswered["id"]
        link.answer(link.last("initialize"), INIT_RESULT)
        await settle()
        replay = link.last("resources/subscribe")
        assert replay["id"] > unanswered["id"]
        link.answer(replay)
        await asyncio.wait_for(board.ready.wait(), 1)
        assert board.state == "ready"
    run(main())


def test_a_board_request_during_the_bridges_own_request_is_refused():
    async def main():
        hosts, link, board = await bridge_with_a_board()
        host = Host(hosts, {"sampling": {}})
        await host.initialize()
        sub = asyncio.ensure_future(hosts.subs.add(host.session, "sensor://t"))   # no host owns it
        await settle()
        assert board.running().method == "resources/subscribe"
        link.on_message({"jsonrpc": "2.0", "id": "s", "method": "sampling/createMessage",
                         "params": {"messages": [], "maxTokens": 1}})
        await settle()
        refusal = [m for m in link.sent if m.get("id") == "s"]
        assert refusal and refusal[0]["error"]["code"] == -32601
        assert host.got == []
        link.answer(link.last("resources/subscribe"))
        assert await sub == {"result": {}}
        assert board.running() is None
    run(main())


def test_what_the_board_runs_is_the_oldest_request_written_and_unanswered():
    async def main():
        link, board = await ready_board(timeout=0.2)
        first = asyncio.ensure_future(board.call("tools/call", {"name": "a"}, owner=("a", 1)))
        await settle()
        second = asyncio.ensure_future(board.call("tools/call", {"name": "b"}, owner=("b", 2),
                                                  timeout=5))
        await settle()
        assert board.running().owner == ("a", 1)
        assert (await first)["error"]["data"]["bridge"] == "timeout"
        assert board.running().owner == ("a", 1) and board.running().gone   # may still run
        sent = [m for m in link.sent if m.get("method") == "tools/call"]
        link.answer(sent[1], {"who": "b"})   # b answered: a, before it, has ended too
        assert (await second)["result"] == {"who": "b"}
        assert board.running() is None
    run(main())


def test_a_routed_call_is_served_without_a_task_and_ends_when_cancelled_or_late():
    # A tools/call to the one board: no task of its own (a future stands for it), answered
    # when the board answers; a host's cancel abandons it on the board, with no answer to the
    # host; a board that never answers gets the host a timeout.
    async def main():
        hosts, link, board = await bridge_with_a_board(timeout=0.3)
        host = Host(hosts)
        await host.initialize()
        tasks = len(asyncio.all_tasks())
        host.session.receive({"jsonrpc": "2.0", "id": "a", "method": "tools/call",
                              "params": {"name": "read_temperature", "arguments": {}}})
        assert len(asyncio.all_tasks()) == tasks   # nor wait_for's, nor a task per request
        assert not isinstance(host.session.tasks["a"], asyncio.Task)
        link.answer(link.last("tools/call"), {"content": []})
        await settle()
        assert host.got.pop() == {"jsonrpc": "2.0", "id": "a", "result": {"content": []}}
        assert host.session.tasks == {}

        host.session.receive({"jsonrpc": "2.0", "id": "b", "method": "tools/call",
                              "params": {"name": "read_temperature", "arguments": {}}})
        asked = link.last("tools/call")
        host.session.receive({"jsonrpc": "2.0", "method": "notifications/cancelled",
                              "params": {"requestId": "b"}})
        await settle()
        assert link.last("notifications/cancelled")["params"]["requestId"] == asked["id"]
        assert host.session.tasks == {} and host.got == []
        link.answer(asked, {"content": []})   # too late: nobody waits for it
        await settle()
        assert host.got == []

        reply = await host.request("c", "tools/call", {"name": "read_temperature"})
        assert reply["error"]["code"] == -32001, reply
        assert host.session.tasks == {}
    run(main())


def test_an_answer_to_an_earlier_initialize_attempt_is_taken_and_attempts_slow_down():
    # A slow board answers the first attempt after the bridge has sent more: that answer serves
    # it. Meanwhile the pause between attempts doubles up to init_interval_max.
    # On a network link the longer network_interval_max applies.
    async def main(network):
        board = BoardSession(FakeLink, 5)
        link = board.link
        link.network = network
        board.init_interval, board.init_interval_max = 0.02, 0.02 if network else 0.16
        board.network_interval_max = 0.16 if network else 0.02
        board.start()
        await asyncio.sleep(1.0)   # 50 attempts at a steady 0.02 s; about 8 doubling to 0.16
        attempts = [m for m in link.sent if m.get("method") == "initialize"]
        assert 3 <= len(attempts) <= 10, len(attempts)
        link.answer(attempts[-min(len(attempts), MAX_INIT_WAITING)], INIT_RESULT)   # the oldest
        # the session still waits for
        await asyncio.wait_for(board.ready.wait(), 1)
        assert board.state == "ready" and not any(
            m.get("method") == "initialize" for m in link.sent[link.sent.index(attempts[-1]) + 1:])
        link.answer(attempts[-1], INIT_RESULT)   # late: the session is not started over
        await settle()
        assert board.state == "ready" and board.pending == {}
        board.close()
    run(main(False))
    run(main(True))


def test_a_reboot_while_the_board_is_silent_brings_the_next_attempt_forward():
    async def main():
        board = BoardSession(FakeLink, 5)
        board.init_interval, board.init_interval_max = 0.05, 30.0   # a serial line's
        link = board.link
        board.start()

        def attempts():
            return [m for m in link.sent if m.get("method") == "initialize"]
        while len(attempts()) < 5:   # 0, 0.05, 0.15, 0.35, 0.75: the next at 1.55 s
            await asyncio.sleep(0.01)
        link.on_noise(b"MPY: soft reboot")
        await asyncio.sleep(0.3)
        # At once (not 0.8 s later), then the pauses start again from init_interval: 0.05 s
        # and 0.1 s later.
        assert 6 <= len(attempts()) <= 8, len(attempts())
        link.answer(attempts()[0], INIT_RESULT)   # sent before the reboot; still taken
        await asyncio.wait_for(board.ready.wait(), 1)
        board.close()
    run(main())


def test_a_board_that_answers_late_is_slow_not_silent_and_not_reset():
    async def main():
        link, board = await ready_board(timeout=0.2)
        reply = await board.call("tools/call", {"name": "slow"})
        assert reply["error"]["data"]["bridge"] == "timeout"
        await settle()
        ping = link.last("ping")   # is anybody there? The ping waits behind the slow call:
        link.answer(link.last("tools/call"), {})   # the call's answer comes, late
        await asyncio.sleep(0.5)   # the ping's 0.2 s pass unanswered
        assert board.state == "ready" and board.resets == 0
        assert [m for m in link.sent if m.get("method") == "initialize"][-1]["id"] < ping["id"]
        board.close()
    run(main())
