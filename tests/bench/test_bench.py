# The benchmark in its quick mode: it must finish and report every section with figures (no targets checked).
import json
import os
import re
import subprocess
import sys

import pytest

from tests.needs import missing

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "tools", "bench.py")
WASM = os.path.join(ROOT, "tools", "bench_support", "node_modules", "@micropython",
                    "micropython-webassembly-pyscript", "package.json")
NUMBER = re.compile(r"\d")
# Alone (./run test runs it after the parallel run): its figures, and its own 15 s deadlines
# for a server's start, assume nothing else is running.
pytestmark = pytest.mark.alone


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    md, raw = out / "benchmarks.md", out / "bench.json"
    done = subprocess.run([sys.executable, BENCH, "--quick", "--out", str(md), "--json", str(raw)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, md.read_text(), json.loads(raw.read_text())


def rows(markdown):
    # The figures table: (section, measure, tinymcp figure) per row.
    found = []
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch("[a-h]", cells[0]):
            found.append((cells[0], cells[1], cells[2]))
    return found


def test_every_section_reports_figures(quick_run):
    stdout, markdown, _raw = quick_run
    for text in (stdout, markdown):
        table = rows(text)
        for section in "abcdef":
            figures = [r for r in table if r[0] == section]
            assert figures, "section %s missing" % section
            assert all(NUMBER.search(r[2]) for r in figures), figures


def test_report_names_the_machine_the_command_and_the_targets(quick_run):
    _stdout, markdown, _raw = quick_run
    assert "Command: `python tools/bench.py --quick" in markdown
    assert "Machine:" in markdown and "micropython" in markdown
    for target in (">= 10x", ">= 20x", ">= 0.5x", "<= 40960 B", "<= 14336 B", "<= 32768 B",
                   "<= 256 B", "<= 64 B", "<= 48 KiB"):
        assert target in markdown, target


def test_round_trips_were_all_answered(quick_run):
    _stdout, _markdown, raw = quick_run
    servers = {label: run for label, run in raw["a"].items() if label != "writes"}
    assert "canned-answer floor" in servers and len(servers) == 4
    for label, run in servers.items():
        assert run["bad"] == 0, label
        assert run["calls_per_s"] > 0 and run["flight_per_s"] > 0, label
        assert label == "canned-answer floor" or run["reads_per_s"] > 0, label


def test_every_answer_is_one_write_on_both_runtimes(quick_run):
    # strace counts write(2) per answer of a tools/call session (issue: one write per message).
    _stdout, _markdown, raw = quick_run
    writes = raw["a"]["writes"]
    if None in writes.values():
        if os.environ.get("CI"):
            pytest.fail("strace is missing in CI: .ci/install-bench installs it")
        pytest.skip("strace not installed")
    assert writes == {"tinymcp (CPython)": 1.0, "tinymcp (MicroPython unix)": 1.0}, writes


def wasm(raw):
    # Section c's figures from the 32-bit WebAssembly MicroPython.
    if "wasm" not in raw["c"]:
        missing("the WebAssembly MicroPython is not installed (.ci/install-bench)")
    return raw["c"]["wasm"]


def test_heap_figures_on_32_bit_micropython(quick_run):
    _stdout, _markdown, raw = quick_run
    sim = wasm(raw)["sim"]
    assert wasm(raw)["ref"]["word_bits"] == 32
    for key in ("held_build", "per_call_mean", "per_ping", "per_list", "loop_call_mean"):
        assert sim[key] > 0, key



def test_heapsize_search_and_board_images(quick_run):
    _stdout, _markdown, raw = quick_run
    assert raw["d"]["py"]["kib"] is not None, raw["d"]
    assert "sim" in raw["e"]
    assert all(info["total"] > 0 and info["files"] for info in raw["e"].values())


def test_held_ram_of_three_boards_as_mpy_in_ram_and_on_romfs(quick_run):
    _stdout, markdown, raw = quick_run
    c = raw["c"]
    for runner in ("wasm", "unix"):
        if runner in c:
            for board in ("ref", "pico", "sim"):
                assert c[runner][board]["held_build"] > 0, (runner, board)
    romfs = c["romfs"]
    assert romfs is not None, c["notes"]
    for board in ("ref", "pico", "sim"):
        # bytecode run in place from the image holds less heap than the same .mpy loaded into RAM
        assert 0 < romfs[board]["held_build"] < c[romfs["runner"]][board]["held_build"], board
        assert romfs[board]["from"].startswith("/rom/"), romfs[board]["from"]
    assert "ROMFS (vfs.VfsRom): held, import + build of boards/rpi_pico" in markdown
    assert "Frozen code needs a firmware build and is not measured here" in markdown


def test_a_whole_session_served_on_32_bit_micropython(quick_run):
    _stdout, markdown, raw = quick_run
    session = wasm(raw)["session"]
    assert session["session_check"] is None, session["session_check"]
    steps = [name for name, _start, _peak in session["session_steps"]]
    assert "garbage line" in steps and steps.count("tools/call") == 3, steps
    # the peak covers the heap held after the board was built
    assert session["session_peak"] >= session["session_steps"][1][1] > 0
    assert session["session_peak_at"] in steps[1:]
    assert "heap in use at its peak serving a whole session" in markdown


def test_the_held_heap_on_32_bit_micropython_counts_no_garbage(quick_run):
    # The WebAssembly build collects only between runPython calls: the probe steps back to the
    # top level to read the held heap. Counted garbage would make a tool cost kilobytes.
    _stdout, _markdown, raw = quick_run
    modules = wasm(raw)["modules"]
    assert 0 < modules["per_tool"] <= raw["c"]["unix"]["modules"]["per_tool"], modules


def test_the_probes_own_strings_that_a_board_needs_are_billed_to_the_board(quick_run):
    # The probe is compiled before its baseline, interning its names (build, handle, server...):
    # those a board's loaded .mpy files intern too are added back to the held figures (issue 27).
    _stdout, markdown, raw = quick_run
    for board in ("ref", "pico", "sim"):
        unbilled = wasm(raw)[board]["unbilled"]
        count, missing = unbilled["build"]
        assert 0 < count and count * 8 <= missing, (board, unbilled)
        assert unbilled["session"][0] >= count, (board, unbilled)
    assert "reference board, with the probe's own strings billed" in markdown


@pytest.mark.skipif(not os.path.exists(WASM), reason="WebAssembly MicroPython not installed")
def test_held_ram_module_by_module_adds_up_to_the_boards_held_heap(quick_run):
    _stdout, markdown, raw = quick_run
    h = raw["h"]
    for label, key in (("reference board", "ref"), ("boards/rpi_pico", "pico"),
                       ("boards/sim", "sim")):
        rows = h["boards"][label]
        # Each row with a new qstr pool put aside, as the report sums them (docs/ram.md: section
        # h leaves out the pools allocated ahead of need, section c counts them). Counted in,
        # the reference board's rows held one pool more than section c (1152 B, which section
        # c's baseline holds already): 11% apart once its build fell under 26 KiB.
        built = sum(r["held"] - max(0, r["pool"] - r["qstr_bytes"]) for r in rows
                    if r["group"] == "build")
        # two measurements of one heap: module by module, and import + build in one go
        # (stand-ins and qstr pools placed differently: within a tenth)
        whole = wasm(raw)[key]["held_build"]
        assert abs(built - whole) < whole / 10, (label, built, whole)
        modules = [r["module"] for r in rows]
        assert "tinymcp.server" in modules and "build()" in modules
        assert all(r["mpy"] for r in rows if r["module"] != "build()"), label
    pico = [r["module"] for r in h["boards"]["boards/rpi_pico"]]
    assert not [m for m in pico if m.startswith(("ports.tcp", "ports.mqtt", "ports.micropython.wifi"))]
    per = {e["name"]: e["per_one"] for e in h["experiments"]}
    assert per["consts"] < 2 < per["public_consts"] < per["defs"] < per["classes"], per
    assert "| tinymcp.server | build |" in markdown
    assert re.search(r"\| h \| 32-bit wasm, mpy: held, import \+ build, boards/rpi_pico", markdown)


def test_the_image_per_board_without_and_with_a_network_json(quick_run):
    _stdout, markdown, raw = quick_run
    pico = raw["e"]["rpi_pico"]
    assert not [f for f in pico["files"] if f.startswith(("ports/tcp", "ports/mqtt"))]
    assert pico["total"] < pico["modes"]["tcp"]["total"] < pico["modes"]["mqtt"]["total"]
    assert "image, boards/rpi_pico with a network.json for MQTT" in markdown


def test_each_output_driver_s_held_ram_is_reported(quick_run):
    # Held once attached (tools/bench_support/heap_probe.py drivers=1): module, tools, buffers.
    _stdout, markdown, raw = quick_run
    found = dict((key, held) for key, _what, held in wasm(raw)["drivers"]["drivers"])
    assert {"ssd1306", "ws2812", "servo"} <= set(found)
    for key in found:
        assert 0 < found[key] < 8 * 1024, (key, found[key])
    assert found["ssd1306"] > found["servo"] + 1024 / 2   # its 1 KiB frame at least shows
    for key in ("ssd1306", "ws2812", "servo"):
        assert [r for r in rows(markdown) if "tinymcp/sensors/%s.py" % key in r[1]], key
def test_held_ram_per_input_driver(quick_run):
    # Issue 31: what a board pays for the DS18B20, HC-SR04 and DHT drivers once it wires the part.
    _stdout, markdown, raw = quick_run
    c = raw["c"]
    measured = [runner for runner in ("wasm", "unix") if runner in c]
    assert measured, c["notes"]
    for runner in measured:
        inputs = c[runner]["inputs"]["inputs"]
        for name in ("ds18b20", "hcsr04", "dhtxx"):
            assert inputs[name]["module"] > 0 and inputs[name]["attach"] > 0, (runner, name)
            assert 0 <= inputs[name]["read"] < 1024, (runner, name)
    for part in ("DS18B20", "HC-SR04", "DHT22"):
        assert "held where a board wires it, the %s" % part in markdown, part
