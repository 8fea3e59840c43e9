# The reference board's held heap step by step (docs/ram.md, "Cuts (session 10)"): its modules one
# at a time, build(), then a session through Server.handle(), on the 32-bit WebAssembly MicroPython
# (.mpy in RAM, as tools/bench.py section c), with the qstrs each step interned and the pools.
#
#   python tools/bench_steps.py [board=MODULE]
#
# Prints one row a step: held bytes, new qstr pools, new qstrs, their string bytes, and the bytes
# the qstr table grew by (strings and pools). Its baseline is its own probe's
# (tools/bench_support/step_probe.py), not section c's: the rows are what it is for.
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import SUPPORT, find_node  # noqa: E402
from bench_tree import build_tree  # noqa: E402


def main(args):
    node = find_node()
    if node is None:
        sys.exit("no Node: run .ci/install-node and .ci/install-bench")
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "mpy")
        build_tree(tree)
        done = subprocess.run([node, os.path.join(SUPPORT, "wasm_run.mjs"), tree,
                               os.path.join(SUPPORT, "step_probe.py")] + args,
                              capture_output=True, text=True, timeout=120)
    if done.returncode:
        sys.exit("step_probe.py failed: " + done.stderr.strip()[-500:])
    lines = done.stdout.strip().splitlines()
    found = json.loads(lines[-1])
    qstrs, step = {}, None
    for line in lines[:-1]:   # "step NAME", then micropython.qstr_info()'s first line
        if line.startswith("step "):
            step = line[5:]
        elif line.startswith("qstr pool:") and step is not None:
            qstrs[step] = [int(kv.split("=")[1]) for kv in line[len("qstr pool:"):].split(",")]
    print("%-28s %6s %6s %6s %7s %7s" % ("step", "held", "pools", "qstrs", "strings", "table"))
    last = qstrs[""]
    total = 0
    for name, held in found["steps"]:
        now = qstrs[name]
        total += held
        print("%-28s %6d %6d %6d %7d %7d" % ((name, held) + tuple(b - a for a, b in
                                                                zip(last[:4], now[:4]))))
        last = now
    print("%-28s %6d   (qstrs: %d in %d pools at the start, %d at the end)"
          % ("total", total, qstrs[""][1], qstrs[""][0], last[1]))


if __name__ == "__main__":
    main(sys.argv[1:])
