# The bridge's broker connection on its own loop (tinymcp/host/bridge/mqttpump.py) and its short
# read of PUBLISH packets (mqttpackets.py): against paho's own packing and reading, and a real
# Mosquitto: no paho thread, TCP_NODELAY on the socket, keep-alive kept with no traffic.
import asyncio
import socket
import threading
import time

import pytest

from tests.mqtt.conftest import Board
from tests.mqtt.test_bridge import READ

mqtt = pytest.importorskip("paho.mqtt.client")
from paho.mqtt import _packet  # noqa: E402  (paho's own PUBLISH reader, the oracle)
from paho.mqtt.packettypes import PacketTypes  # noqa: E402
from paho.mqtt.properties import Properties  # noqa: E402

from tinymcp.host.bridge import mqtt as bridge_mqtt  # noqa: E402
from tinymcp.host.bridge.mqttpackets import packed, read_publish  # noqa: E402


def publish_body(topic, props, payload):
    # A PUBLISH's variable header and payload (QoS 0), its properties packed by paho.
    raw = topic.encode()
    return bytearray(len(raw).to_bytes(2, "big") + raw + props.pack() + payload)


def props_with(**values):
    props = Properties(PacketTypes.PUBLISH)
    for name, value in values.items():
        setattr(props, name, value)
    return props


@pytest.mark.parametrize("values", [
    {},
    {"UserProperty": [("MCP-MQTT-CLIENT-ID", "b01"), ("MCP-COMPONENT-TYPE", "mcp-server")]},
    {"UserProperty": [("k", "v"), ("k", "w"), ("ünï", "cödé")], "ContentType": "json",
     "PayloadFormatIndicator": 1, "MessageExpiryInterval": 70000, "ResponseTopic": "a/b",
     "CorrelationData": b"\x00\x01", "SubscriptionIdentifier": 300},
])
def test_the_short_read_reads_what_paho_reads(values):
    body = publish_body("$mcp-rpc/c/b01/tinymcp/sim", props_with(**values), b'{"x":1}')
    oracle = _packet.decode_publish(0x30, bytes(body), mqtt.MQTTv5)
    topic, users, payload = read_publish(body)
    assert topic == oracle.topic.decode()
    assert payload == oracle.payload
    assert users == list(getattr(oracle.properties, "UserProperty", None) or [])


@pytest.mark.parametrize("body", [
    b"",                                      # nothing
    b"\x00\x05ab",                            # a topic past the end
    b"\x00\x02\xff\xfe\x00",                  # a topic that is no UTF-8
    b"\x00\x00\x00{}",                        # no topic: an alias
    b"\x00\x01t\x05\x26\x00\x01k\x00",        # a user property past its properties
    b"\x00\x01t\x02\x7f\x00{}",               # a property it has no rule for
    b"\x00\x01t\x80\x80\x80\x80\x01",         # a length of five bytes
])
def test_what_the_short_read_does_not_know_is_left_to_paho(body):
    assert read_publish(bytearray(body)) is None


def test_the_packed_properties_are_pahos_own_bytes():
    users = [("MCP-COMPONENT-TYPE", "mcp-client"), ("MCP-MQTT-CLIENT-ID", "tinymcp-bridge-x")]
    once = packed(Properties, PacketTypes.PUBLISH, users)
    assert once.pack() == once.pack() == props_with(UserProperty=users).pack()
    assert once.UserProperty == users


class Found:
    # A seams.PresentBoards that keeps what the broker found (no router: nothing is served).
    def __init__(self):
        self.keys = []

    def found(self, key, make_link):
        self.keys.append(key)
        make_link(None)
        return key

    async def gone(self, handle):
        pass


def test_on_a_selector_loop_paho_runs_on_it_with_no_delay_and_keeps_alive(broker, monkeypatch):
    # Keep-alive 1 s: with nothing to send for 8 s the bridge must ping, or Mosquitto drops it
    # once 1.5 s pass silent (it looks every few seconds: 8 s without pings lose the bridge);
    # paho's keep-alive is looked after by the loop (no thread does it).
    monkeypatch.setattr(bridge_mqtt, "KEEPALIVE", 1)
    board = Board("python", broker.url, "pumped")
    found = Found()

    async def main():
        b = bridge_mqtt.Broker(broker.url, ["#"], found, insecure=True)
        task = asyncio.get_running_loop().create_task(b.run())
        try:
            for _ in range(300):
                if b.connected and found.keys:
                    break
                await asyncio.sleep(0.05)
            assert b.connected and found.keys == [("pumped", "tinymcp/sim")]
            assert b._pump is not None
            sock = b.client.socket()
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
            names = [t.name for t in threading.enumerate()]
            assert not [n for n in names if n.startswith("paho")], names
            await asyncio.sleep(8)
            assert b.connected and b.client.socket() is sock, "the broker dropped the bridge"
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        assert b.client.socket() is None   # left the broker as it closed
    try:
        asyncio.run(main())
    finally:
        board.stop()


def test_a_call_through_the_pump_is_answered(broker):
    # The whole path on the loop: a routed tools/call out, the board's answer in, on stdio.
    from tests.bridge.conftest import LineClient
    board = Board("python", broker.url, "callee")
    client = LineClient(["--mqtt", broker.url, "--mqtt-insecure"])
    try:
        client.initialize()
        name = "sim-callee_" + READ
        for _ in range(100):
            tools = {t["name"] for t in client.request("tools/list")["result"]["tools"]}
            if name in tools:
                break
            time.sleep(0.2)
        for _ in range(50):   # one at a time, then eight in flight
            reply = client.request("tools/call", {"name": name, "arguments": {}})
            assert "celsius" in str(reply.get("result")), reply
        ids = [client.start("tools/call", {"name": name, "arguments": {}}) for _ in range(8)]
        for rid in ids:
            assert "result" in client.wait(rid)
        assert "Traceback" not in client.stderr(), client.stderr()[-3000:]
    finally:
        client.stop()
        board.stop()


async def on_the_broker(url, deadline=30):
    # A bridge's Broker on this loop, connected -> (it, its task).
    b = bridge_mqtt.Broker(url, ["nothing/here"], Found(), insecure=True)
    task = asyncio.get_running_loop().create_task(b.run())
    end = time.monotonic() + deadline   # for a hang, never a measure
    while not b.connected:
        assert time.monotonic() < end, "the bridge did not reach the broker"
        await asyncio.sleep(0.05)
    assert b._pump is not None
    return b, task


def test_what_one_turn_publishes_leaves_in_one_send_and_all_of_it_arrives(broker):
    # On the loop, paho writes nothing itself: what the bridge publishes in one turn of the
    # loop (calls to several boards from hosts) is written at the end of the turn in one send.
    # It was a send per message: a system call and a wake of the broker each.
    from tests.mqtt.test_trust import Rogue
    watcher = Rogue(broker.port, "joined-watcher")
    watcher.subscribe("joined/#")
    sends = []

    async def main():
        b, task = await on_the_broker(broker.url)
        try:
            real = b.client._sock_send

            def counted(data):
                sends.append(bytes(data))
                return real(data)
            b.client._sock_send = counted
            for i in range(10):
                assert b.publish("joined/%d" % i, b"message %d" % i)
            assert sends == []   # none written yet: at the end of this turn
            for _ in range(5):
                await asyncio.sleep(0)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    try:
        asyncio.run(main())
        assert len(sends) >= 1 and sum(b"joined/" in s for s in sends) == 1, sends
        end = time.monotonic() + 10
        while len(watcher.seen(lambda m: m[0].startswith("joined/"))) < 10:
            assert time.monotonic() < end, watcher.messages
            time.sleep(0.05)
        got = watcher.seen(lambda m: m[0].startswith("joined/"))
        assert [m[1] for m in got] == [b"message %d" % i for i in range(10)]
    finally:
        watcher.close()


def test_messages_read_together_are_each_handled_with_nothing_coming_after(broker):
    # The bridge reads the socket ahead and paho takes one message a call: every message read
    # must be handled then, not left until the socket says something more (nothing does here:
    # the deadline is far below the keep-alive).
    from tests.mqtt.test_trust import Rogue
    sender = Rogue(broker.port, "burst-sender")
    got = []

    async def main():
        b, task = await on_the_broker(broker.url)
        try:
            b.client.on_publication = lambda topic, users, payload: got.append(payload)
            b.client.subscribe("burst/#")
            await asyncio.sleep(0.5)   # the SUBACK (a wait, not a measure)
            await asyncio.to_thread(lambda: [sender.publish("burst/x", b"%d" % i, qos=0,
                                                            wait=False) for i in range(200)])
            end = time.monotonic() + 10
            while len(got) < 200:
                assert time.monotonic() < end, len(got)
                await asyncio.sleep(0.05)
            assert not b.client.buffered()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    try:
        asyncio.run(main())
        assert got == [b"%d" % i for i in range(200)]
    finally:
        sender.close()


@pytest.mark.parametrize("topic,payload", [
    ("$mcp-rpc/tinymcp-bridge-x/b01/tinymcp/sim", b'{"jsonrpc":"2.0","id":1}'),
    ("$mcp-server/b\u00e9/tinymcp/sim", b"x" * 300),   # a two-byte remaining length, UTF-8
    ("t", b""),
])
def test_a_publish_made_on_the_loop_is_the_packet_paho_makes(topic, payload):
    users = [("MCP-COMPONENT-TYPE", "mcp-client"), ("MCP-MQTT-CLIENT-ID", "tinymcp-bridge-x")]
    props = packed(Properties, PacketTypes.PUBLISH, users)
    made = []
    for pumped in (False, True):
        c = bridge_mqtt.fast_client(mqtt)(mqtt.CallbackAPIVersion.VERSION2, client_id="x",
                                          protocol=mqtt.MQTTv5)
        c._sock = socket.socket()   # never written: queued for a register_write
        c.on_socket_register_write = lambda *a: None
        try:
            c.pumped = pumped
            if pumped:
                assert c.publish_now(topic, payload, bytes(props.pack()))
                # a topic paho refuses is left to paho's publish, which says so
                assert not c.publish_now("a/+/b", b"", bytes(props.pack()))
            else:
                assert c.publish(topic, payload, qos=0, properties=props).rc == 0
            made.append(bytes(c._out_packet[-1]["packet"]))
        finally:
            c._sock.close()
            c._sock = None
    assert made[0] == made[1]


def test_messages_read_ahead_are_taken_whole_or_left_to_paho_when_cut():
    # Three PUBLISH packets, the third cut in two reads: the whole ones are taken from the
    # buffer, the cut one read by paho across the two reads; all in order, none twice.
    users = [("MCP-MQTT-CLIENT-ID", "b1")]
    packets = [bytes([0x30]) + _remaining(body) + body for body in (
        publish_body("t/%d" % i, props_with(UserProperty=users), b"payload %d" % i * (i + 1))
        for i in range(3))]
    data = b"".join(packets)
    cut = len(data) - 5
    got = []
    a, b = socket.socketpair()
    c = bridge_mqtt.fast_client(mqtt)(mqtt.CallbackAPIVersion.VERSION2, client_id="x",
                                      protocol=mqtt.MQTTv5)
    try:
        a.setblocking(False)
        c._sock, c.pumped = a, True
        c.on_publication = lambda topic, users, payload: got.append((topic, payload))
        b.sendall(data[:cut])
        c.prefetch()
        assert c.take_publish() and c.take_publish()   # the two whole ones
        assert not c.take_publish()                     # the cut one: paho's
        c.loop_read()
        assert not c.buffered() and len(got) == 2
        b.sendall(data[cut:])
        c.loop_read()
        assert got == [("t/%d" % i, b"payload %d" % i * (i + 1)) for i in range(3)]
    finally:
        c._sock = None
        a.close()
        b.close()


def _remaining(body):
    # MQTT's variable byte integer of len(body).
    n, out = len(body), bytearray()
    while True:
        n, byte = n >> 7, n & 0x7F
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)
