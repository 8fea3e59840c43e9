# Measures tinymcp.cbor against cbor2 (C extension) and json on CPython: sizes and time per call.
#   python tests/cbor_host/bench_cbor.py      (from the repo root; prints a table, asserts nothing)
import base64
import importlib.util
import json
import os
import sys
import timeit

import cbor2

sys.path.insert(0, os.getcwd())
from tinymcp import cbor  # noqa: E402


def sim_messages():
    spec = importlib.util.spec_from_file_location("sim_main", "boards/sim/main.py")
    board = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(board)
    server = board.build()

    def ask(method, params):
        frame = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
        return json.loads(server.handle(json.dumps(frame).encode()))

    ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "0"}})
    call = ask("tools/call", {"name": "read_adc", "arguments": {"channel": 1}})
    listing = ask("tools/list", {})
    blob = bytes(range(256)) * 4
    read = {"jsonrpc": "2.0", "id": 7, "result": {"contents": [
        {"uri": "blob://1k", "mimeType": "application/octet-stream", "blob": blob}]}}
    return [("tools/call read_adc", call), ("tools/list", listing), ("1 KiB blob read", read)]


def as_json(message):
    # JSON needs the blob in base64, as the bridge sends it to the host.
    def fix(value):
        if isinstance(value, bytes):
            return base64.b64encode(value).decode()
        if isinstance(value, dict):
            return {k: fix(v) for k, v in value.items()}
        if isinstance(value, list):
            return [fix(v) for v in value]
        return value
    return fix(message)


def per_call_us(fn, arg):
    number = 2000
    return min(timeit.repeat(lambda: fn(arg), number=number, repeat=5)) / number * 1e6


def main():
    json_dumps = lambda m: json.dumps(m, separators=(",", ":")).encode()  # noqa: E731
    print("%-20s %-14s %7s %10s %10s" % ("message", "codec", "bytes", "dumps us", "loads us"))
    for name, message in sim_messages():
        jmsg = as_json(message)
        for codec, dumps, loads, msg in (("tinymcp.cbor", cbor.dumps, cbor.loads, message),
                                         ("cbor2 (C)", cbor2.dumps, cbor2.loads, message),
                                         ("json", json_dumps, json.loads, jmsg)):
            data = dumps(msg)
            assert loads(data) == msg
            print("%-20s %-14s %7d %10.1f %10.1f" % (name, codec, len(data), per_call_us(dumps, msg),
                                                     per_call_us(loads, data)))


if __name__ == "__main__":
    main()
