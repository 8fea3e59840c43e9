// The shared MicroPython suites (tests/mprun.py) on the 32-bit WebAssembly MicroPython, in Node.
//
//   node tests/wasm.mjs tests/core [tests/sensors ...]     (from the repo root)
//   (one target a run, as tests/test_wasm.py does: all four at once hold more than a Pico has)
//
// The code under test and the suites are copied into the port's in-memory filesystem, which
// becomes the working directory. The heap starts at $WASM_HEAP bytes (default 192 KiB, about a
// Raspberry Pi Pico's). This port never collects inside a call from JavaScript (it cannot scan
// the wasm stack): it grows its heap instead, and collects between calls. So each test is a call
// of its own, its garbage gone before the next; after each, what stays held (gc.mem_alloc, once
// collected) and the heap's total (micropython.mem_info) are read. The modules run one at a time,
// each let go of after its tests. The run fails when what stays held (the core the tests loaded
// and the module running) outgrows the starting heap; a test's own garbage may grow it (printed,
// not a cap).
// The package comes from tools/bench_support, where .ci/install-bench puts it.
// Exit status: 0 when no test failed and the held heap stayed within its start, else 1.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const SOURCES = ["tinymcp", "ports", "boards", "tests/__init__.py", "tests/mprun.py", "tests/float32.py",
                 "tests/core", "tests/sensors", "tests/cbor", "tests/cborlink"];
const LEFT_OUT = new Set(["__pycache__", "host", "cpython"]);  // CPython-only code

const targets = process.argv.slice(2);
const heap = Number(process.env.WASM_HEAP || 192 * 1024);
const repo = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(join(repo, "tools", "bench_support", "package.json"));
const entry = require.resolve("@micropython/micropython-webassembly-pyscript/micropython.mjs");
const { loadMicroPython } = await import(pathToFileURL(entry).href);

let total = 0;
const mp = await loadMicroPython({
  heapsize: heap,
  stdout: (line) => {
    const gc = /^GC: total: (\d+),/.exec(line);
    if (gc) total = Math.max(total, Number(gc[1]));
    else if (!/^(stack:| No\. of| Max)/.test(line)) process.stdout.write(line + "\n");
  },
  stderr: (line) => process.stderr.write(line + "\n"),
});

function copy(src, dst) {
  if (!statSync(src).isDirectory()) return mp.FS.writeFile(dst, readFileSync(src));
  mp.FS.mkdir(dst);
  for (const name of readdirSync(src)) if (!LEFT_OUT.has(name)) copy(join(src, name), dst + "/" + name);
}

mp.FS.mkdir("/app");
mp.FS.mkdir("/app/tests");
for (const source of SOURCES) copy(join(repo, source), "/app/" + source);
mp.FS.chdir("/app");
mp.globals.set("_targets", JSON.stringify(targets.length ? targets : ["tests/core"]));
mp.runPython("import gc, json, micropython, sys\nsys.path.insert(0, '/app')\nfrom tests import mprun\n"
             + "_paths = [p for t in json.loads(_targets) for p in mprun.modules(t)]\n"
             + "_count = len(_paths)\n_counts = [0, 0, 0]\n");
// One test module at a time, let go of after its tests (as a board would run them): what is
// held is the core the tests loaded plus the module being run, not every suite's code at once.
let held = 0;
for (let m = 0; m < mp.globals.get("_count"); m++) {
  mp.runPython(`_tests = mprun.collect([_paths[${m}]])\n_n = len(_tests)\n`);
  for (let i = 0; i < mp.globals.get("_n"); i++) {
    mp.runPython(`mprun.run(*_tests[${i}], _counts)\nmicropython.mem_info()\ngc.collect()\n`);
    mp.runPython("_held = gc.mem_alloc()\n");  // collected on the way in
    held = Math.max(held, mp.globals.get("_held"));
  }
  mp.runPython(`_tests = None\nmprun.release(_paths[${m}])\n`);
}
mp.runPython("_failed = mprun.summary(_counts)\n");
const outgrown = held > heap;
console.log(`heap: started at ${heap} B, held at most ${held} B, grew to at most ${total} B`
            + (outgrown ? ": the suites hold more than the heap they started with" : ""));
process.exit(mp.globals.get("_failed") || outgrown ? 1 : 0);
