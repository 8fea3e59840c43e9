# Figures of the MQTT port, printed (never asserted): the heap its modules and a Board hold on
# the 32-bit WebAssembly MicroPython, and the bytes on the wire for one tools/call.
import json
import os
import shutil
import subprocess

from tests.board_process import REPO
from tests.mqtt.conftest import RUNTIMES
from tests.needs import missing
from tests.test_wasm import PACKAGE, node

PROBE = os.path.join("tools", "bench_support", "mqtt_probe.py")


def _varint_size(n):
    size = 1
    while n >= 128:
        n >>= 7
        size += 1
    return size


def publish_size(topic, users, payload):
    # The PUBLISH packet's bytes on the wire (QoS 0), from what the receiver saw.
    props = sum(1 + 2 + len(k.encode()) + 2 + len(v.encode()) for k, v in users.items())
    rest = 2 + len(topic.encode()) + _varint_size(props) + props + len(payload)
    return 1 + _varint_size(rest) + rest


def test_the_mqtt_port_loads_and_answers_on_32_bit_webassembly(tmp_path):
    if not os.path.exists(PACKAGE):
        missing("no WebAssembly MicroPython: run .ci/install-bench")
    tree = tmp_path / "tree"
    for part in ("tinymcp", "ports"):  # device code only, as a board has it
        shutil.copytree(os.path.join(REPO, part), tree / part,
                        ignore=shutil.ignore_patterns("host", "__pycache__"))
    run = subprocess.run([node(), os.path.join("tools", "bench_support", "wasm_run.mjs"),
                          str(tree), PROBE], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    figures = json.loads(run.stdout.strip().splitlines()[-1])
    print("\nMQTT port on 32-bit WebAssembly MicroPython (.py source): " + json.dumps(figures))
    assert figures["word_bits"] == 32
    assert figures["answer_packet"] > 0  # an answer was published


def test_a_tools_call_is_one_publish_each_way(broker, boards, spec_clients):
    sizes = {}
    for runtime in RUNTIMES:
        board = boards(runtime, broker.url, "wire-" + runtime)
        client = spec_clients("wire-client-" + runtime)
        _, name = client.discover(board.id)
        client.initialize(board.id, name)
        client.request("tools/call", {"name": "read_temperature", "arguments": {}})  # warm
        before = len(client.messages)
        call = {"jsonrpc": "2.0", "id": 9001, "method": "tools/call",
                "params": {"name": "read_temperature", "arguments": {}}}
        client.publish(client.rpc, call)
        answer = client.response(9001)
        got = [m for m in client.messages[before:] if m.topic == client.rpc]
        assert len(got) == 1 and "result" in answer  # the answer is one PUBLISH
        sent = publish_size(client.rpc, client.pub_props_dict(), json.dumps(call).encode())
        sizes[runtime] = (sent, publish_size(got[0].topic, got[0].users, got[0].payload),
                          len(client.rpc))
    for runtime, (sent, received, topic) in sizes.items():
        print("\ntools/call read_temperature over MQTT (%s board): request %d B, answer %d B "
              "(PUBLISH packets, QoS 0, topic %d B)" % (runtime, sent, received, topic))
