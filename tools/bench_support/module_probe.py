# Module probe, run inside MicroPython by tools/bench_ram.py: what each module holds once imported.
#
#   module_probe.py order=A,B,build(),C board=MODULE   import A, B one at a time (dependency
#                                                order: each one's imports already loaded),
#                                                then MODULE.build(), then C; held after each
#
# After each step it prints "step NAME" and then micropython.qstr_info(), so the host can
# tell the qstrs each module interned; the last line is one JSON object. Like heap_probe.py it
# runs as the generator `steps`, which yields where it wants garbage collected (the
# WebAssembly build collects only between two runPython calls).
import gc
import json
import sys

import micropython

opts = {"order": "", "board": "", "packages": ""}
for arg in sys.argv[1:]:
    key, _, value = arg.partition("=")
    opts[key] = value

# Built into a board's C firmware, frozen Python in this build: loaded before the baseline.
for _name in ("time", "binascii", "io", "select", "json", "math"):
    try:
        __import__(_name)
    except ImportError:
        pass
try:
    import machine
    if not hasattr(machine, "ADC"):
        raise ImportError("machine without ADC")
except ImportError:   # boards/rpi_pico's build() needs Pin, ADC, I2C: C types on a board
    import machine_standin
    sys.modules["machine"] = machine_standin


# Each package as an empty stand-in with its __path__ until its own step: a submodule can then
# be imported (and weighed) before its package's __init__, which may import half the core.
# A stand-in is an empty module (ramx_stub, which bench_ram.py writes), kept for the whole run so
# that its bytes are never freed into a step.
STUBS = [n for n in opts["packages"].split(",") if n]
kept_stubs = []
for _i, _name in enumerate(STUBS):
    _stub = __import__("ramx_stub%d" % _i)
    _stub.__path__ = _name.replace(".", "/")
    sys.modules[_name] = _stub
    kept_stubs.append(_stub)


def held():
    gc.collect()
    yield   # on the WebAssembly build: back to the top level, where the collection runs
    gc.collect()
    return gc.mem_alloc()


def mark(name):
    print("step " + name)
    micropython.qstr_info()


def main():
    out = {"steps": []}
    last = yield from held()
    mark("")
    kept = []
    for name in [n for n in opts["order"].split(",") if n]:
        if name == "build()":
            kept.append(sys.modules[opts["board"]].build())
        elif name in STUBS:
            sys.modules.pop(name)
            __import__(name)
            if "." in name:   # the parent (real or stand-in) names it, as an import would
                setattr(sys.modules[name.rsplit(".", 1)[0]], name.rsplit(".", 1)[1],
                        sys.modules[name])
            for key in list(sys.modules):   # its submodules, loaded before it, under it
                if key.startswith(name + ".") and "." not in key[len(name) + 1:]:
                    setattr(sys.modules[name], key[len(name) + 1:], sys.modules[key])
        else:
            __import__(name)
        now = yield from held()
        out["steps"].append([name, now - last])
        mark(name)
        last = now
    print(json.dumps(out))


steps = main()
if sys.platform != "webassembly":   # else wasm_run.mjs resumes it, one runPython call a step
    for _ in steps:
        pass
