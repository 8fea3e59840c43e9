# A board behind the broker whose answers spell NaN or an infinity (no JSON has them: a hostile
# board, or a board's float from a sensor that read one): the host over HTTP gets null in their
# place, whether the answer goes as it came (a read-only tool: the express lane) or the general
# way, and every line it gets is JSON a strict parser reads.
import json
import time

from tests.hostile.conftest import HttpHost
from tests.mqtt.test_slow_board import SlowBoard

TOOLS = [{"name": "read", "description": "Reads.", "inputSchema": {"type": "object"},
          "annotations": {"readOnlyHint": True}},
         {"name": "echo", "description": "Answers.", "inputSchema": {"type": "object"}}]
SPELLED = [b"NaN", b"Infinity", b"-Infinity"]


class NonFiniteBoard(SlowBoard):
    # SlowBoard's paho board, answering at once: tools/call with SPELLED[arguments.n] raw.
    delay = 0
    tools = TOOLS

    def respond(self, rpc, msg):
        if msg["method"] != "tools/call":
            SlowBoard.respond(self, rpc, msg)
            return
        n = msg["params"]["arguments"]["n"]
        self.publish(rpc, b'{"jsonrpc":"2.0","id":%d,"result":{"content":[],'
                     b'"structuredContent":{"v":%s,"w":2.5}}}' % (msg["id"], SPELLED[n]),
                     sender=self.id, qos=0, wait=False)


def strict(text):
    def refuse(name):
        raise AssertionError("%s reached the host: %s" % (name, text[:300]))
    return json.loads(text, parse_constant=refuse)


def test_no_host_gets_a_nan_or_an_infinity_from_a_board_behind_the_broker(broker, bridges):
    board = NonFiniteBoard(broker.port, "nf")
    try:
        url, bridge = bridges("--mqtt", broker.url, "--mqtt-insecure")
        host = HttpHost(url)
        host.initialize()
        end = time.monotonic() + 60
        names = set()
        while not {"sim-nf_read", "sim-nf_echo"} <= names:
            assert time.monotonic() < end, bridge.stderr()[-3000:]
            time.sleep(0.2)
            names = {t["name"] for t in host.request("tools/list")["result"]["tools"]}
        answers = 0
        for n in range(len(SPELLED)):
            for name in ("sim-nf_read", "sim-nf_echo"):   # the lane's way, the general way
                response, _ = host.post({"jsonrpc": "2.0", "id": 100 + n, "method": "tools/call",
                                         "params": {"name": name, "arguments": {"n": n}}})
                for line in response.text.splitlines():
                    if line.startswith("data:") and line[5:].strip():
                        got = strict(line[5:])
                        assert got["result"]["structuredContent"] == {"v": None, "w": 2.5}, got
                        answers += 1
        assert answers == 2 * len(SPELLED), answers
        assert host.request("ping")["result"] == {}
    finally:
        board.close()
