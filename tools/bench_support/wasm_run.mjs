// Runs a Python script on the 32-bit WebAssembly MicroPython with a host directory as its filesystem.
//
//   node wasm_run.mjs TREE SCRIPT.py [ARG...]      (heap size: $WASM_HEAP bytes, default 1 MiB)
//
// TREE (e.g. a .mpy build of tinymcp/, ports/ and boards/) is copied into the in-memory
// filesystem at /app, which becomes the working directory and the head of sys.path; the
// script's stdout lines are passed through. Exit status 1 when the script raises.
//
// This build collects garbage only between two runPython calls (gc.collect() inside one merely
// asks for a collection), so a script that leaves a generator in the global `steps` is resumed
// one call per step: it yields where it wants its garbage collected.
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const [tree, script, ...args] = process.argv.slice(2);
const heap = process.env.WASM_HEAP;
if (!tree || !script) {
  console.error("usage: node wasm_run.mjs TREE SCRIPT.py [ARG...]");
  process.exit(2);
}

// Resolve the package from this file's directory, where .ci/install-bench puts node_modules.
const here = fileURLToPath(new URL(".", import.meta.url));
const require = createRequire(join(here, "package.json"));
const entry = require.resolve("@micropython/micropython-webassembly-pyscript/micropython.mjs");
const { loadMicroPython } = await import(pathToFileURL(entry).href);

const mp = await loadMicroPython({
  heapsize: heap ? Number(heap) : 1024 * 1024,
  stdout: (line) => process.stdout.write(line + "\n"),
  stderr: (line) => process.stderr.write(line + "\n"),
});

function copyTree(src, dst) {
  mp.FS.mkdir(dst);
  for (const name of readdirSync(src)) {
    const from = join(src, name);
    const to = dst + "/" + name;
    if (statSync(from).isDirectory()) copyTree(from, to);
    else mp.FS.writeFile(to, readFileSync(from));
  }
}

copyTree(tree, "/app");
mp.FS.chdir("/app");
try {
  mp.globals.set("_argv", JSON.stringify([script, ...args]));
  mp.runPython("import sys, json\nsys.path.insert(0, '/app')\nsys.argv[:] = json.loads(_argv)\n"
               + "del _argv\n");
  mp.runPython(readFileSync(script, "utf8"));
  const step = "try:\n    next(steps)\n    _more = 1\nexcept StopIteration:\n    _more = 0\n";
  while (mp.globals.get("steps") !== undefined) {
    mp.runPython(step);
    if (!mp.globals.get("_more")) break;
  }
} catch (err) {
  process.stderr.write(String(err && err.message ? err.message : err) + "\n");
  process.exit(1);
}
