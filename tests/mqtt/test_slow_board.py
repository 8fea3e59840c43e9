# A board behind the broker slower to answer initialize than the bridge's pause between asks (a
# loaded fleet starting): it is served on its first answer, not after the bridge's asks catch up.
import json
import queue
import threading

import anyio
from mcp import Client

from tests.mqtt.test_bridge import tools_when
from tests.mqtt.test_trust import Rogue

DELAY = 4.0   # seconds the board takes over each initialize: the bridge asks again after 2 s
TOOL = {"name": "echo", "description": "Answers its arguments.", "inputSchema": {"type": "object"}}


class SlowBoard(Rogue):
    # A board on the broker (its own paho client) serving one request at a time in the order
    # received, delay over each initialize. .events: what it was sent and what it answered.
    delay = DELAY
    tools = [TOOL]
    def __init__(self, port, server_id):
        Rogue.__init__(self, port, server_id)
        self.events = []
        self.work = queue.Queue()
        self.client.on_message = self._arrived
        threading.Thread(target=self._serve, daemon=True).start()
        self.subscribe("$mcp-server/%s/tinymcp/sim" % server_id)
        self.subscribe("$mcp-rpc/+/%s/tinymcp/sim" % server_id)
        self.publish("$mcp-server/presence/%s/tinymcp/sim" % server_id, {
            "jsonrpc": "2.0", "method": "notifications/server/online",
            "params": {"server_name": "tinymcp/sim", "description": "slow", "meta": {}}},
            sender=server_id, retain=True)

    def _arrived(self, client, userdata, m):
        # paho's thread: what arrives is noted at once, and served in turn.
        try:
            msg = json.loads(m.payload)
        except ValueError:
            return
        if type(msg) is dict and "method" in msg and "id" in msg:
            self.events.append(("asked", msg["method"]))
            self.work.put((dict(m.properties.UserProperty)["MCP-MQTT-CLIENT-ID"], msg))

    def _serve(self):
        while True:
            item = self.work.get()
            if item is None:
                return
            sender, msg = item
            self.respond("$mcp-rpc/%s/%s/tinymcp/sim" % (sender, self.id), msg)

    def respond(self, rpc, msg):
        # One request answered on rpc, the topic back to whoever asked.
        if msg["method"] == "initialize":
            threading.Event().wait(self.delay)
            result = {"protocolVersion": msg["params"]["protocolVersion"],
                      "capabilities": {"tools": {}},
                      "serverInfo": {"name": "slow-board", "version": "1"}}
            self.events.append(("answered", "initialize"))
        elif msg["method"] == "tools/list":
            result = {"tools": self.tools}
        elif msg["method"] == "tools/call":
            result = {"content": [{"type": "text", "text": "{}"}], "structuredContent": {}}
        else:
            result = {}
        self.publish(rpc, {"jsonrpc": "2.0", "id": msg["id"], "result": result},
                     sender=self.id, qos=0, wait=False)

    def close(self):
        self.work.put(None)
        self.publish("$mcp-server/presence/%s/tinymcp/sim" % self.id, b"", sender=self.id,
                     retain=True)
        Rogue.close(self)


def test_a_board_slower_than_the_asks_is_served_on_its_first_answer(broker, bridges):
    board = SlowBoard(broker.port, "slow")
    try:
        url, bridge = bridges("--mqtt", broker.url, "--mqtt-insecure")

        async def main():
            async with Client(url, mode="legacy") as client:
                names = await tools_when(client, lambda names: "sim-slow_echo" in names,
                                         timeout=60)
                assert names == {"sim-slow_echo"}, names
                result = await client.call_tool("sim-slow_echo", {})
                assert not result.is_error, result
        try:
            anyio.run(main)
        except BaseException:
            raise AssertionError("not served: %r\n%s" % (board.events, bridge.stderr()[-3000:]))
        # Served (anything but initialize asked of it) after its first answer, not its third:
        # before, each answer went to an ask the bridge had already given up on.
        first = next(i for i, e in enumerate(board.events) if e == ("asked", "tools/list"))
        answered = [e for e in board.events[:first] if e == ("answered", "initialize")]
        assert len(answered) == 1, board.events
        asked = [e for e in board.events if e == ("asked", "initialize")]
        assert len(asked) <= 3, board.events   # 0 s, 2 s; the answer came at 4 s
    finally:
        board.close()
