# Benchmark section (h): the emulated bare-metal board (QEMU mps2-an385 running MicroPython 1.28's
# qemu port built like a board: 32-bit, single-precision floats, 140 KiB of GC heap).
#
# For each place the code can live, with the same modules in each (tinymcp, ports, the sim board,
# the reference board, the probe):
#   frozen   compiled into the firmware (a manifest like tinymcp-firmware's): bytecode in flash
#   romfs    .mpy files in the board's ROMFS partition: bytecode runs in place, no copy in RAM
#   mpy      .mpy files on its littlefs filesystem, as tinymcp-deploy installs them: loaded into RAM
# it measures on the board, with tools/bench_support/heap_probe.py (as section c does on the
# WebAssembly build): the heap held after import + build(), and the bytes allocated per request
# through the serve loop; then the smallest free heap that serves a whole session over the UART
# (a ballast bytearray takes the rest before anything is imported).
#
#   python tools/bench_firmware.py [--quick]      prints the table (bench.py runs it as section h)
import json
import os
import select
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

LAYOUTS = ("frozen", "romfs", "mpy")
LABELS = {"frozen": "frozen", "romfs": "ROMFS", "mpy": ".mpy in RAM"}
BOARDS = (("sim", "boards.sim.main"), ("ref", "ref_board"))
# The same session as section (d): every answer checked, a 64 KiB garbage frame in the middle
# (8 KiB in quick mode: still twice the frame limit, and the board reads it byte by byte).
TOOL_CALLS = (("read_temperature", {}), ("read_adc", {"channel": 1}), ("set_led", {"on": True}))
GARBAGE = bytes(range(32, 127)) * (65536 // 95 + 1)


NOTE = ("QEMU's mps2-an385 (Cortex-M3) running MicroPython 1.28's qemu port built like a board "
        "(tinymcp/host/firmware/qemu: littlefs on its flash, a ROMFS partition, 140 KiB of GC heap, "
        "float32). The same modules (tinymcp, ports, the sim and reference boards, the probe) in "
        "three places: frozen into the firmware; .mpy on its ROMFS, where bytecode runs in place; "
        ".mpy on its filesystem, loaded into RAM, as tinymcp-deploy installs them. Held and "
        "per-request bytes: tools/bench_support/heap_probe.py run on the board (gc.mem_alloc(), as "
        "in c). Smallest free heap: a ballast bytearray leaves that much free before anything is "
        "imported; then the board serves a whole session over its UART (initialize, tools/list, "
        "three calls, a read, a subscription, a 64 KiB garbage frame, a ping; every answer "
        "checked), found by bisection to 1 KiB (16 KiB and an 8 KiB frame in quick mode); bisection "
        "takes a size that works above one that fails, which fragmentation may not always grant "
        "(section d scans instead).")


def sources():
    # (repo path, path on the board) of every module the experiment needs.
    found = []
    for top in ("tinymcp", "ports"):
        for here, dirs, files in os.walk(os.path.join(ROOT, top)):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "host", "cpython"))
            for name in sorted(files):
                if name.endswith(".py"):
                    rel = os.path.relpath(os.path.join(here, name), ROOT).replace(os.sep, "/")
                    found.append((rel, rel))
    found.append(("boards/sim/main.py", "boards/sim/main.py"))
    found.append(("tools/bench_support/ref_board.py", "ref_board.py"))
    found.append(("tools/bench_support/heap_probe.py", "heap_probe.py"))
    return found


def compiled(dest):
    # The modules as .mpy under dest, in their layout on the board.
    from tinymcp.host.deploy.mpy import compile_mpy
    for rel, on_board in sources():
        compile_mpy(ROOT, rel, os.path.join(dest, on_board[:-3] + ".mpy"))
    return dest


def frozen_manifest(path):
    lines = ['include("$(BOARD_DIR)/manifest.py")']
    for rel, on_board in sources():
        base = os.path.join(ROOT, rel[:len(rel) - len(on_board)]) if rel != on_board else ROOT
        lines.append("module(%r, base_path=%r)" % (on_board, base))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def firmwares():
    # -> {layout: (firmware.elf, romfs image or None, .mpy tree to copy or None)}
    from tests.firmware import images
    from tinymcp.host.deploy.romfs import write_image
    from tinymcp.host.firmware.build import build_qemu
    out = os.path.join(images.CACHE, "bench")
    os.makedirs(out, exist_ok=True)
    frozen = build_qemu(images.source(), frozen_manifest(os.path.join(out, "manifest.py")),
                        os.path.join(out, "frozen"), images.WORK)
    tree = os.path.join(out, "mpy")
    if os.path.isdir(tree):
        import shutil
        shutil.rmtree(tree)
    compiled(tree)
    romfs = os.path.join(out, "bench.romfs")
    write_image(tree, romfs)
    plain = images.plain()
    return {"frozen": (frozen, None, None), "romfs": (plain, romfs, None), "mpy": (plain, None, tree)}


class Board:
    # One emulated board and its raw REPL (mpremote's serial transport).
    def __init__(self, elf, romfs=None):
        from mpremote.transport_serial import SerialTransport
        from tinymcp.host.firmware.emulator import Emulator
        self.emulator = Emulator(elf, romfs)
        self.t = SerialTransport(self.emulator.port, 115200, timeout=5)
        self.pending = b""

    def fresh(self):
        # A soft reset from the raw REPL: a clean heap, main.py not run, files and ROMFS kept.
        # First 0x03 ends whatever runs (a serve loop reads greedily: nothing may follow it
        # until it has ended), then the line goes quiet.
        self.t.serial.write(b"\x03")
        self.quiet()
        self.t.enter_raw_repl(soft_reset=True, timeout_overall=20)
        self.pending = b""

    def quiet(self, gap=0.3, most=10.0):
        # Read until nothing came for gap seconds.
        fd, end = self.t.serial.fileno(), time.monotonic() + most
        while time.monotonic() < end and select.select([fd], [], [], gap)[0]:
            os.read(fd, 65536)

    def copy_tree(self, tree):
        for here, dirs, files in os.walk(tree):
            rel = os.path.relpath(here, tree).replace(os.sep, "/")
            if rel != ".":
                self.t.fs_mkdir("/" + rel)
            for name in sorted(files):
                with open(os.path.join(here, name), "rb") as f:
                    dest = name if rel == "." else rel + "/" + name
                    self.t.fs_writefile("/" + dest, f.read(), chunk_size=1024)

    def probe(self, args, timeout=300):
        self.fresh()
        out, err = self.t.exec_raw("import sys\nsys.argv[:] = ['heap_probe'] + %r\nimport heap_probe\n"
                                   % list(args), timeout=timeout)
        if err:
            raise RuntimeError("heap_probe on the board: " + err.decode(errors="replace")[-300:])
        return json.loads(out.decode().strip().splitlines()[-1])

    # -- a session over the UART while the board serves from a raw-REPL exec --------------------

    def _line(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\n" not in self.pending:
            if b"\x04" in self.pending:   # the program ended: the raw REPL's end marker
                raise EOFError(self.pending.split(b"\x04", 1)[1].decode(errors="replace")[-200:])
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer within %.0f s" % timeout)
            fd = self.t.serial.fileno()
            if select.select([fd], [], [], min(left, 0.5))[0]:
                self.pending += os.read(fd, 65536)
        line, _, self.pending = self.pending.partition(b"\n")
        return line

    def request(self, rid, method, params=None, raw=None, timeout=20):
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.t.serial.write((raw if raw is not None else json.dumps(msg).encode()) + b"\n")
        while True:
            line = self._line(timeout).strip()
            if not line.startswith(b"{"):
                continue
            reply = json.loads(line)
            if "method" not in reply:
                return reply

    def serves_with(self, free_bytes, module, garbage=65536):
        # -> (None when a whole session was answered right, else what went wrong, the free heap
        # the board had once the ballast took the rest).
        self.fresh()
        self.t.exec_raw_no_follow(
            "import gc\ngc.collect()\nballast = bytearray(max(gc.mem_free() - %d, 16))\n"
            "gc.collect()\nprint('free', gc.mem_free())\nimport %s as board\n"
            "from ports import serve\nserve(board.build())\n" % (free_bytes, module))
        try:
            free = int(self._line(20).split()[-1])
        except (EOFError, TimeoutError, ValueError) as e:
            return "ballast: %s" % e, None
        try:
            return self._session(garbage), free
        except (EOFError, TimeoutError, ValueError) as e:
            return "%s: %s" % (e.__class__.__name__, str(e).strip()[-80:]), free

    def _session(self, garbage):
        reply = self.request(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                               "clientInfo": {"name": "bench", "version": "1"}})
        if reply.get("result", {}).get("protocolVersion") != "2025-11-25":
            return "initialize: " + str(reply)[:80]
        self.t.serial.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        names = [t.get("name") for t in self.request(2, "tools/list").get("result", {}).get("tools", [])]
        if not all(name in names for name, _ in TOOL_CALLS):
            return "tools/list: %s" % names
        for i, (name, args) in enumerate(TOOL_CALLS):
            reply = self.request(10 + i, "tools/call", {"name": name, "arguments": args})
            if "result" not in reply or reply["result"].get("isError"):
                return name + ": " + str(reply)[:80]
        reply = self.request(20, "resources/read", {"uri": "sensor://temperature"})
        if "celsius" not in reply.get("result", {}).get("contents", [{}])[0].get("text", ""):
            return "resources/read: " + str(reply)[:80]
        if self.request(21, "resources/subscribe", {"uri": "sensor://temperature"}).get("result") != {}:
            return "subscribe refused"
        reply = self.request(None, "garbage", raw=GARBAGE[:garbage], timeout=60)
        if reply.get("id") is not None or "error" not in reply:
            return "%d B frame: %s" % (garbage, str(reply)[:80])
        if self.request(22, "ping").get("result") != {}:
            return "ping after the %d B frame failed" % garbage
        self.t.serial.write(b"\x03")   # serving ends; the exec returns to the raw REPL
        return None

    def close(self):
        self.t.close()
        self.emulator.close()


def smallest_free(board, quick):
    # The smallest free heap (after the ballast) that serves the session, by bisection between a
    # size that fails and one that works; -> {"kib", "failed_below"} in KiB of free heap.
    step, garbage = (16 * 1024, 8192) if quick else (1024, 65536)
    why, free = board.serves_with(200 * 1024, "boards.sim.main", garbage)   # no ballast to speak of
    if why:
        return {"kib": None, "why": why}
    lo, hi, best = 4 * 1024, free, free
    below = None
    while hi - lo > step:
        mid = (lo + hi) // 2
        why, got = board.serves_with(mid, "boards.sim.main", garbage)
        if why is None:
            hi, best = mid, got
        else:
            lo, below = mid, why
    return {"kib": best / 1024, "resolution_kib": step // 1024, "frame": garbage,
            "failed_below": below}


def emulated_board(quick=False):
    from tinymcp.host.firmware import FirmwareError
    # heap_probe counts n requests with the collector off: 20 fit in the board's heap (200, as
    # section c runs, would not), and each request allocates the same in the steady state.
    n = "n=20"
    found = {"notes": []}
    try:
        images = firmwares()
    except (FirmwareError, ImportError, OSError) as e:
        found["notes"].append("the emulated board could not be built: %s" % e)
        return found
    for layout in LAYOUTS:
        elf, romfs, tree = images[layout]
        board = Board(elf, romfs)
        try:
            if tree:
                board.fresh()
                board.copy_tree(tree)
            entry = {name: board.probe(["board=" + module, n]) for name, module in BOARDS}
            entry["smallest"] = smallest_free(board, quick)
            found[layout] = entry
        finally:
            board.close()
    return found


def rows(h, wasm=None, unix_d=None):
    # Rows for bench.py's table: (section, measure, tinymcp, beside it, target, verdict). Beside
    # each figure: the same measure on the 32-bit WebAssembly build (section c, .mpy in RAM).
    found = [("h", note, "", "", "", "") for note in h.get("notes", [])]

    def beside(board, key):
        if not wasm or board not in wasm or key not in wasm[board]:
            return ""
        value = wasm[board][key]
        return "wasm .mpy %s" % ("%.1f KiB" % (value / 1024) if key.startswith("held") else "%d B" % value)

    for layout in LAYOUTS:
        if layout not in h:
            continue
        e, label = h[layout], LABELS[layout]
        for board, what in (("sim", "the sim board"), ("ref", "the reference board")):
            found.append(("h", "emulated board, %s: held, import + build of %s" % (label, what),
                          "%.1f KiB" % (e[board]["held_build"] / 1024), beside(board, "held_build"), "", ""))
        for key, what in (("loop_call_mean", "per tools/call (mean of 3 tools)"),
                          ("loop_ping", "per ping"), ("loop_list", "per tools/list")):
            if key in e["sim"]:
                found.append(("h", "emulated board, %s: %s, serve loop, sim board" % (label, what),
                              "%d B" % e["sim"][key], beside("sim", key), "", ""))
        s = e["smallest"]
        found.append(("h", "emulated board, %s: smallest free heap serving a whole session (UART, "
                      "%d KiB frame, %d KiB steps)" % (label, s.get("frame", 65536) // 1024,
                                                       s.get("resolution_kib", 1)),
                      "%.0f KiB" % s["kib"] if s.get("kib") else "none: %s" % s.get("why", "")[:60],
                      ("64-bit unix .mpy heapsize %s KiB (d)" % unix_d) if unix_d else "", "", ""))
    return found


def table(h, wasm=None):
    # The markdown table docs/benchmarks.md carries: one column per layout.
    present = [l for l in LAYOUTS if l in h]
    lines = ["| emulated board (QEMU mps2-an385, MicroPython 1.28, 32-bit, float32, 140 KiB heap) | "
             + " | ".join(LABELS[l] for l in present) + " | 32-bit wasm, .mpy in RAM (c) |",
             "|---|" + "---|" * (len(present) + 1)]

    def row(what, cell, wasm_cell):
        lines.append("| %s | %s | %s |" % (what, " | ".join(cell(h[l]) for l in present), wasm_cell))

    def w(board, key, fmt):
        return fmt(wasm[board][key]) if wasm and board in wasm and key in wasm[board] else "-"
    kib = "{:.1f} KiB".format
    for board, what in (("sim", "sim board"), ("ref", "reference board (3 tools, 1 resource)")):
        row("held after import + build(), " + what, lambda e, b=board: kib(e[b]["held_build"] / 1024),
            w(board, "held_build", lambda v: kib(v / 1024)))
    for key, what in (("loop_call_mean", "per tools/call (mean of 3 tools), serve loop"),
                      ("loop_ping", "per ping, serve loop"), ("loop_list", "per tools/list, serve loop")):
        row(what + ", sim board", lambda e, k=key: "%d B" % e["sim"][k] if k in e["sim"] else "-",
            w("sim", key, lambda v: "%d B" % v))
    row("smallest free heap serving a whole session (ballast first)",
        lambda e: "%.0f KiB" % e["smallest"]["kib"] if e["smallest"].get("kib") else "none", "-")
    return "\n".join(lines)


if __name__ == "__main__":
    result = emulated_board("--quick" in sys.argv)
    print(json.dumps(result, indent=1))
    for r in rows(result):
        print(" | ".join(r))
    print()
    print(table(result))
