# Step probe, run inside MicroPython by hand: what each step of a board's life adds to the heap.
#
#   step_probe.py [board=ref_board]     (node tools/bench_support/wasm_run.mjs TREE this [args])
#
# The reference board's modules imported one at a time in dependency order, its build(), then
# what a session driven through Server.handle() makes, frame by frame; held after each step (each
# reading the first thing of its own runPython call, as heap_probe.py's) and the qstrs interned
# (micropython.qstr_info after "step NAME": their count, string bytes and pools). Its baseline is not section c's:
# this script interns its own names first; the steps' differences are what it is for.
import gc
import json
import sys

import micropython

opts = {"board": "ref_board"}
for arg in sys.argv[1:]:
    key, _, value = arg.partition("=")
    opts[key] = value
for _name in ("time", "binascii", "io", "select"):  # C modules on a board, frozen Python here
    try:
        __import__(_name)
    except ImportError:
        pass

MODULES = ("tinymcp", "tinymcp.protocol", "tinymcp.jsonrpc", "tinymcp.revision", "tinymcp.server",
           "tinymcp.schema", "tinymcp.registry", "tinymcp.tools",
           "tinymcp.resources")
FRAMES = (
    ("initialize", b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                   b'"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}'),
    ("notifications/initialized", b'{"jsonrpc":"2.0","method":"notifications/initialized"}'),
    ("tools/list", b'{"jsonrpc":"2.0","id":4713,"method":"tools/list"}'),
    ("ping", b'{"jsonrpc":"2.0","id":4712,"method":"ping"}'),
    ("resources/read", b'{"jsonrpc":"2.0","id":4714,"method":"resources/read",'
                       b'"params":{"uri":"sensor://temperature"}}'),
    ("tools/call", b'{"jsonrpc":"2.0","id":4711,"method":"tools/call",'
                   b'"params":{"name":"read_adc","arguments":{"channel":1}}}'))


def held():
    gc.collect()
    yield  # on the WebAssembly build: back to the top level, where the collection runs
    gc.collect()
    return gc.mem_alloc()


def mark(name):
    # qstr_info's figures after a step, for the host to read: "step NAME", then its lines.
    print("step " + name)
    micropython.qstr_info()


def main():
    rows = []
    kept = {}
    last = yield from held()
    mark("")

    for name in MODULES + (opts["board"], "build()", "tinymcp.framing", "tinymcp.direct") + tuple(
            f[0] for f in FRAMES):
        if name == "build()":
            kept["server"] = sys.modules[opts["board"]].build()
        elif name.startswith("tinymcp.") or name == "tinymcp" or name == opts["board"]:
            __import__(name)
        else:
            frame = [f[1] for f in FRAMES if f[0] == name][0]
            reply = kept["server"].handle(memoryview(bytearray(frame)))
            if reply is not None and b'"error"' in reply:
                raise SystemExit("unexpected reply: " + str(reply))
        now = yield from held()
        mark(name)
        rows.append([name, now - last])
        last = now
    print(json.dumps({"steps": rows}))


steps = main()
if sys.platform != "webassembly":  # else wasm_run.mjs resumes it, one runPython call a step
    for _ in steps:
        pass
