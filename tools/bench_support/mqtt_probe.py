# MQTT port probe, run inside MicroPython (32-bit WebAssembly by tests/mqtt/test_figures.py):
# the heap the MQTT 5 client and the MCP binding hold, without sockets (the WebAssembly build has
# none): their modules imported, the adapter (Topics) built, one answer published (its packet
# dropped here).
# Prints one JSON object. Runs as the generator `steps`, like heap_probe.py: the WebAssembly
# build collects garbage only between two runPython calls.
import gc
import json
import sys

out = {"impl": sys.implementation.name, "word_bits": 64 if sys.maxsize > 2 ** 32 else 32}


def held(since):
    gc.collect()
    return gc.mem_alloc() - since


def main():
    from tinymcp import Server  # the core is charged to the core, not to this port
    from tinymcp import framing, jsonrpc  # noqa: F401
    server = Server("tinymcp-probe", "0.1.0")
    yield
    gc.collect()
    start = gc.mem_alloc()
    import ports.mqtt5  # noqa: F401
    yield
    out["import_mqtt5"] = held(start)
    start = gc.mem_alloc()
    from ports.mqtt import Topics
    yield
    out["import_mqtt"] = held(start)
    start = gc.mem_alloc()
    topics = Topics(server, "broker.lan", 1883, "tinymcp/probe", "probe-1")
    yield
    out["board"] = held(start)
    out["tx_buffer"] = len(topics.tx)
    out["rx_buffer_on_connect"] = topics.client.max_packet  # the socket stream's, not made here
    sent = []
    topics.client.send_packet = lambda buf, first, end: sent.append(end - first)
    topics.client.subscribe = lambda filters: None  # no broker here
    from tinymcp.channel import Channel
    channel = Channel(server, topics)
    channel.deliver("client-1", b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
    link = channel.sessions["client-1"].link
    yield
    start = gc.mem_alloc()
    link.result(1, b"{}")
    out["per_answer"] = gc.mem_alloc() - start  # allocated (not held) publishing one answer
    out["answer_packet"] = sent[-1]
    print(json.dumps(out))
    yield


steps = main()
if sys.platform != "webassembly":  # else wasm_run.mjs resumes it, one runPython call a step
    for _ in steps:
        pass
