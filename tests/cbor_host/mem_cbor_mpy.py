# Bytes allocated (gc.mem_alloc) and time taken by tinymcp.cbor and json for typical responses, under MicroPython.
#   micropython tests/cbor_host/mem_cbor_mpy.py      (from the repo root; prints a table)
import gc
import json
import sys
import time

sys.path.insert(0, ".")
sys.path.insert(0, "boards/sim")
from tinymcp import cbor  # noqa: E402

import main as sim  # noqa: E402  (boards/sim/main.py: only serves when run as __main__)


def ask(server, method, params):
    frame = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return json.loads(server.handle(json.dumps(frame).encode()))


def allocated(fn, arg):
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    fn(arg)
    used = gc.mem_alloc() - before
    gc.enable()
    return used


def micros(fn, arg):
    start = time.ticks_us()
    for _ in range(200):
        fn(arg)
    return time.ticks_diff(time.ticks_us(), start) // 200


def main():
    server = sim.build()
    ask(server, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                               "clientInfo": {"name": "mem", "version": "0"}})
    blob = bytes(range(256)) * 4
    messages = [("tools/call read_adc", ask(server, "tools/call", {"name": "read_adc", "arguments": {"channel": 1}})),
                ("tools/list", ask(server, "tools/list", {})),
                ("1 KiB blob read", {"jsonrpc": "2.0", "id": 7, "result": {"contents": [
                    {"uri": "blob://1k", "mimeType": "application/octet-stream", "blob": blob}]}})]
    print("message               codec   bytes  dumps alloc  loads alloc  dumps us  loads us")
    for name, message in messages:
        data = cbor.dumps(message)
        print("%-21s cbor   %6d %12d %12d %9d %9d" % (name, len(data), allocated(cbor.dumps, message),
              allocated(cbor.loads, data), micros(cbor.dumps, message), micros(cbor.loads, data)))
        print("%-21s dump() %6s %12d" % (name, "", allocated(lambda m: cbor.dump(m, len), message)))
        if name != "1 KiB blob read":
            text = json.dumps(message)
            print("%-21s json   %6d %12d %12d %9d %9d" % (name, len(text), allocated(json.dumps, message),
                  allocated(json.loads, text), micros(json.dumps, message), micros(json.loads, text)))


main()
