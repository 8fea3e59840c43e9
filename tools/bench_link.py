# Benchmark section (g): bytes and time on a 115200-baud board link, JSON lines versus CBOR frames.
#
# The sim board (plus a 1 KiB blob resource) serves in this process on an in-memory stream, so
# the figures are the exact bytes each direction carries: requests as the bridge writes them,
# answers as the board's channel writes them, newlines included.
import importlib.util
import json
import os
import random

from tinymcp.channel import Channel, Lines
from tinymcp.host.bridge.link import to_link

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BAUD = 115200
BITS_PER_BYTE = 10  # 8N1
BLOB = random.Random(1024).randbytes(1024)  # random bytes: the usual share of escapes
MESSAGES = (("tools/list", "tools/list", None),
            ("tools/call read_adc", "tools/call", {"name": "read_adc", "arguments": {"channel": 1}}),
            ("resources/read 1 KiB blob", "resources/read", {"uri": "blob://kib"}))


class Wire:
    # A port stream that records each line the board writes.
    def __init__(self):
        self.buf = bytearray(4096)
        self.pending = []
        self.lines = []
        self.line = bytearray()

    def recv(self, timeout_ms):
        if not self.pending:
            return -1
        data = self.pending.pop(0)
        self.buf[:len(data)] = data
        return len(data)

    def write(self, data, n):  # one message (or a full-buffer chunk of one)
        self.line += data[:n]
        while b"\n" in self.line:
            at = self.line.find(b"\n") + 1
            self.lines.append(bytes(self.line[:at]))
            self.line = self.line[at:]


def sim_board():
    spec = importlib.util.spec_from_file_location("sim_for_bench",
                                                  os.path.join(ROOT, "boards", "sim", "main.py"))
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    server = sim.build()
    server.resource("blob://kib", "kib", "1 KiB of samples", mime="application/octet-stream")(
        lambda: BLOB)
    return server


def exchange(mode, method, params, rid=2):
    # -> (request bytes, response bytes) of one request after initialize, in mode json|cbor.
    server = sim_board()
    wire = Wire()
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                       "clientInfo": {"name": "bench", "version": "1"}}}
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    request = (to_link(msg) if mode == "cbor"
               else json.dumps(msg, separators=(",", ":")).encode() + b"\n")
    wire.pending = [json.dumps(init).encode() + b"\n", request]
    Channel(server, Lines(wire)).run()
    assert len(wire.lines) == 2, wire.lines
    return len(request), len(wire.lines[1])


def link_sizes():
    out = {}
    for label, method, params in MESSAGES:
        entry = {}
        for mode in ("json", "cbor"):
            req, resp = exchange(mode, method, params)
            entry[mode] = [req, resp]
            entry[mode + "_ms"] = (req + resp) * BITS_PER_BYTE * 1000 / BAUD
        entry["ratio"] = sum(entry["cbor"]) / sum(entry["json"])
        out[label] = entry
    blob = out["resources/read 1 KiB blob"]
    blob["raw_ratio"] = blob["cbor"][1] / len(BLOB)
    # Escapes depend on the data: the same answer's mean size over other random 1 KiB blobs.
    rng = random.Random(7)
    sizes = [len(to_link({"id": 2, "result": {"contents": [{"blob": rng.randbytes(1024)}]}}))
             for _ in range(200)]
    blob["mean_raw_ratio"] = sum(sizes) / len(sizes) / 1024
    return out


def rows(g):
    # Rows for bench.py's table: (section, measure, tinymcp, beside it, target, verdict).
    found = []
    for label, entry in g.items():
        target = ""
        verdict = ""
        if label.startswith("tools/call"):
            target = "<= 0.7x"
            verdict = "met" if entry["ratio"] <= 0.7 else "missed"
        found.append(("g", "%s: CBOR request + response bytes, time at %d baud" % (label, BAUD),
                      "%d + %d B, %.1f ms (%.2fx JSON)" % (entry["cbor"][0], entry["cbor"][1],
                                                           entry["cbor_ms"], entry["ratio"]),
                      "JSON %d + %d B, %.1f ms" % (entry["json"][0], entry["json"][1],
                                                   entry["json_ms"]), target, verdict))
        if "raw_ratio" in entry:
            found.append(("g", "1 KiB blob answer over its raw size, CBOR link",
                          "%.3fx" % entry["raw_ratio"], "JSON %.3fx (base64)"
                          % (entry["json"][1] / len(BLOB)), "<= 1.05x",
                          "met" if entry["raw_ratio"] <= 1.05 else "missed"))
            found.append(("g", "the same, mean over 200 random 1 KiB blobs",
                          "%.3fx" % entry["mean_raw_ratio"], "escapes vary with the data",
                          "<= 1.05x", "met" if entry["mean_raw_ratio"] <= 1.05 else "missed"))
    return found


if __name__ == "__main__":
    for row in rows(link_sizes()):
        print(" | ".join(row))
