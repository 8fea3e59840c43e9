# Heap probe, run inside MicroPython by tools/bench.py: gc.mem_alloc() costs of the core.
#
#   probe board=MODULE [n=100]    held after import/build/session, bytes per request, and one
#                                 tools/call, ping and tools/list taken apart ("stages")
#   probe modules=1               held per core module imported, per tool and per resource
#   probe session=MODULE          the heap in use at its peak while the board serves a whole
#                                 session through its serve loop (tinymcp.channel)
#   ... probe=1                   that session opened as by a client whose 2026-07-28 era the
#                                 board lacks: server/discover first, then initialize
#   probe serving=MODULE          held once the board's safe boot (ports/micropython/boot.py's
#                                 start) has built it and set up its serve loop over USB
#   probe mdns=MODULE             held by the mDNS responder (ports/mdns.py) of the board built,
#                                 announced (over socket_standin.py: nothing is sent), beyond
#                                 what serving over TCP holds (ports/tcp.py imported)
#   probe inputs=1                held per input driver a board fits (DS18B20, HC-SR04, DHT):
#                                 its module, its driver attached, after a first read
#   ... romfs=IMAGE               import everything from a ROMFS image mounted with vfs.VfsRom
#   probe drivers=1               held by each driver of DRIVERS once attached to a built server
#                                 over stand-in parts: its module, its tools, its buffers
#
# Prints one JSON object. The headline figures use only the public surface (build(),
# Server.handle); the stages and the session reach into core internals, each guarded, so a
# refactor of the core shows up as a missing figure rather than a dead benchmark.
#
# The probe runs as the generator `steps`, which yields where it wants garbage collected: the
# WebAssembly build collects only between two runPython calls (gc.collect() inside one merely
# asks for it), so tools/bench_support/wasm_run.mjs resumes `steps` one call at a time. Other
# builds collect at once: the probe steps itself.
import gc
import io
import json
import sys

opts = {"board": "ref_board", "n": "100", "modules": "", "session": "", "romfs": "", "probe": "",
        "serving": "", "mdns": "", "drivers": "", "inputs": ""}
for arg in sys.argv[1:]:
    key, _, value = arg.partition("=")
    opts[key] = value
N = int(opts["n"])

out = {"impl": sys.implementation.name, "machine": sys.implementation._machine,
       "version": ".".join([str(v) for v in sys.implementation.version[:3]]),
       "word_bits": 64 if sys.maxsize > 2 ** 32 else 32, "n": N}


# Modules that are built into the C firmware of a board but frozen Python in the WebAssembly
# build: imported before any baseline, so their cost is not charged to the core.
platform = {}
for _name in ("time", "binascii", "io", "select"):
    gc.collect()
    _before = gc.mem_alloc()
    try:
        __import__(_name)
    except ImportError:
        continue
    gc.collect()
    platform[_name] = gc.mem_alloc() - _before
if opts["romfs"]:  # the image itself is read into the heap here, before every baseline
    import vfs
    vfs.mount(vfs.VfsRom(open(opts["romfs"], "rb").read()), "/rom")
    sys.path.insert(0, "/rom")
try:
    import machine
    if not hasattr(machine, "ADC"):
        raise ImportError("machine without ADC")
except ImportError:  # boards/rpi_pico's build() needs Pin, ADC, I2C: C types on a board
    _before = gc.mem_alloc()
    import machine_standin
    sys.modules["machine"] = machine_standin
    platform["machine (stand-in)"] = gc.mem_alloc() - _before

out["platform_preimported"] = platform


def held():
    # -> the bytes still in use once garbage is collected (yield from it). On the WebAssembly
    # build the reading is the first thing of its own runPython call: the collection asked for
    # here runs when the call before it returns.
    gc.collect()
    yield  # on the WebAssembly build: back to the top level, where the collection runs
    gc.collect()
    return gc.mem_alloc()


def dump_qstrs(mark):
    # The qstrs interned so far and the modules loaded, printed for tools/bench.py after a
    # "qstrs MARK" line. This
    # script is compiled before its baseline, so its own names are interned then: those a board
    # needs too (build, handle, server...) would be missing from the board's bill. tools/bench.py
    # adds them back from the dump marked "probe" and the .mpy files loaded by each reading.
    try:
        from micropython import qstr_info
    except ImportError:
        return
    print("qstrs " + mark)
    print("modules " + " ".join(sys.modules))
    qstr_info(1)


def per(fn, n=N):
    # Bytes allocated by one fn() in the steady state: warm up once (caches, interning),
    # then count n runs with the collector off so nothing is reclaimed in between.
    fn()
    gc.collect()
    gc.disable()
    try:
        before = gc.mem_alloc()
        for _ in range(n):
            fn()
        after = gc.mem_alloc()
    finally:
        gc.enable()
    return (after - before) // n


def buffer(frame):
    # The serve loop hands handle() a memoryview of its line buffer: do the same.
    return memoryview(bytearray(frame))


# Request ids of a session some way in: one-digit ids would flatter the figures, because
# their text ("7") is an interned string that costs nothing to make.


INIT = buffer(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
              b'"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}')
INITIALIZED = buffer(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
CALLS = {
    "read_adc": buffer(b'{"jsonrpc":"2.0","id":4711,"method":"tools/call",'
                       b'"params":{"name":"read_adc","arguments":{"channel":1}}}'),
    "read_temperature": buffer(b'{"jsonrpc":"2.0","id":4711,"method":"tools/call",'
                               b'"params":{"name":"read_temperature","arguments":{}}}'),
    "set_led": buffer(b'{"jsonrpc":"2.0","id":4711,"method":"tools/call",'
                      b'"params":{"name":"set_led","arguments":{"on":true}}}'),
}
PING = buffer(b'{"jsonrpc":"2.0","id":4712,"method":"ping"}')
LIST = buffer(b'{"jsonrpc":"2.0","id":4713,"method":"tools/list"}')
READ = buffer(b'{"jsonrpc":"2.0","id":4714,"method":"resources/read",'
              b'"params":{"uri":"sensor://temperature"}}')
# The sim board's history, each tool and resource once (tinymcp/historytools.py loads per call).
HISTORY = (
    buffer(b'{"jsonrpc":"2.0","id":4716,"method":"tools/call","params":{"name":"read_history",'
           b'"arguments":{"quantity":"temperature"}}}'),
    buffer(b'{"jsonrpc":"2.0","id":4716,"method":"tools/call","params":{"name":"plot_history",'
           b'"arguments":{"quantity":"temperature"}}}'),
    buffer(b'{"jsonrpc":"2.0","id":4716,"method":"tools/call","params":{"name":"set_alert",'
           b'"arguments":{"quantity":"temperature","above":30}}}'),
    buffer(b'{"jsonrpc":"2.0","id":4716,"method":"resources/read",'
           b'"params":{"uri":"sensor://temperature/history"}}'),
    buffer(b'{"jsonrpc":"2.0","id":4716,"method":"resources/read",'
           b'"params":{"uri":"sensor://alerts"}}'))


def module_costs():
    # Held bytes per module in import order, then per registered tool and resource.
    # "tinymcp" first: its __init__ brings server and jsonrpc. The last three load on demand.
    names = ("tinymcp", "tinymcp.clock", "tinymcp.schema", "tinymcp.tools", "tinymcp.resources",
             "tinymcp.framing", "tinymcp.channel", "tinymcp.prompts", "tinymcp.complete",
             "tinymcp.stateless", "tinymcp.history")
    costs = []
    last = yield from held()
    first = last
    for name in names:
        try:
            __import__(name)
        except ImportError:
            continue
        now = yield from held()
        costs.append([name, now - last])
        last = now
    out["modules"] = costs
    out["modules_total"] = last - first

    from tinymcp import Server
    from tinymcp.schema import integer, number
    server = Server("probe", "1")
    # Each of 8 registered one at a time; the median step is the figure: a step that also
    # grows the interpreter's qstr pool (a few KiB, whenever any code's strings fill it) or
    # a table is no tool's own cost.
    steps = []
    before = yield from held()
    for i in range(8):
        server.tool("read_adc%d" % i, "Read one 16-bit ADC channel (3.3 V reference).",
                    inputs={"channel": integer("ADC channel", 0, 3)},
                    outputs={"raw": integer("Raw reading, 0..65535", 0, 65535),
                             "volts": number("Voltage at the pin")},
                    title="Read ADC channel", read_only=True)(lambda channel: {})
        now = yield from held()
        steps.append(now - before)
        before = now
    out["per_tool"] = sorted(steps)[len(steps) // 2]
    steps = []
    before = yield from held()
    for i in range(8):
        server.resource("sensor://t%d" % i, "temperature", "The latest reading",
                        mime="application/json")(lambda: {})
        now = yield from held()
        steps.append(now - before)
        before = now
    out["per_resource"] = sorted(steps)[len(steps) // 2]
    yield from history_costs()
    yield from events_costs()
    yield from task_costs()


def history_costs():
    # What a board pays for readings over time: RAM per sample kept, and per sample taken.
    from tinymcp.history import History
    import time
    clock = [0]
    sizes = {}
    for depth in (100, 400):
        before = yield from held()
        kept = History(1000, depth, lambda: clock[0])
        kept.track("temperature", lambda: 21.5, "Cel")
        sizes[depth] = (yield from held()) - before
        del kept
    out["history_per_sample"] = (sizes[400] - sizes[100]) / 300
    sampler = History(1000, 300, lambda: clock[0])
    sampler.track("temperature", lambda: 21.5, "Cel")

    def tick():
        clock[0] += 1000  # due every time
        sampler.tick()
    out["history_per_tick"] = per(tick)
    ticks_us = getattr(time, "ticks_us", None)
    if ticks_us is not None:
        start = ticks_us()
        for _ in range(1000):
            tick()
        out["history_tick_us"] = time.ticks_diff(ticks_us(), start) / 1000


def events_costs():
    # What the ring of events (tinymcp/events.py) holds: the empty ring of 16, and per event
    # kept: an alert (the largest kind: its crossing and level too) and a list change.
    from tinymcp.events import Events
    before = yield from held()
    ring = Events(16)
    out["events_ring"] = (yield from held()) - before
    for kind in ("alert", "change"):
        ring = Events(64)
        before = yield from held()
        for i in range(32):
            if kind == "alert":
                ring.add("alert", "sensor://alerts", "temperature", 25.5 + i, "Cel", 1000 * i,
                         {"crossed": "above", "level": 25.0})
            else:
                ring.add("tools_changed")
        out["events_per_" + kind] = ((yield from held()) - before) / 32
    del ring


def task_costs():
    # What long tools cost: the tasks module (loaded with the first), and the RAM held per task
    # kept, while it works and once it ended with its result (a sample's five fields).
    before = yield from held()
    import tinymcp.tasks  # noqa: F401
    out["tasks_module"] = (yield from held()) - before
    from tinymcp import Server
    server = Server("probe", "1")

    @server.tool("sample", "Sample for a while.", task="optional")
    def sample():
        yield
        return {"count": 3, "min": 21.5, "max": 22.5, "mean": 22.0, "unit": "Cel"}

    server.handle(INIT)
    server.handle(INITIALIZED)
    calls = [buffer(('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"sample",'
                     '"task":{"ttl":60000}}}' % (4720 + i)).encode()) for i in range(5)]

    def finish():
        while server.session.work.live:
            server.session.work.step(server)
        del server.outbox[:]

    server.handle(calls[4])  # warm: the first task makes the board's Work
    finish()
    del server.session.work.tasks[:]
    before = yield from held()
    for i in range(4):
        server.handle(calls[i])
    out["per_task_working"] = ((yield from held()) - before) // 4
    finish()
    out["per_task_ended"] = ((yield from held()) - before) // 4


class Feed:
    # A stream that always holds one frame: the serve loop's share is measured with it.
    def __init__(self, frame):
        self.buf = bytearray(bytes(frame) + b"\n")
        self.n = len(self.buf)

    def recv(self, timeout_ms):
        return self.n

    def write(self, data, n):  # one whole answer (or a full-buffer chunk of one)
        pass


def serve_loop(server, frame):
    # -> fn() that passes frame once through a Channel, as a board's serve loop would.
    from tinymcp.channel import Channel, Lines
    lines = Lines(Feed(frame))
    channel = Channel(server, lines)
    channel.deliver(None, INIT)  # a new connection: a new session, initialized through it
    channel.deliver(None, INITIALIZED)

    def once():
        lines.pos = lines.end = 0  # read all again: recv() hands the same frame
        lines.read(channel, 0)
    return once


def board_costs(board_name):
    dump_qstrs("probe")
    base = yield from held()
    import tinymcp  # noqa: F401  (the import is what is measured)
    out["held_core"] = (yield from held()) - base
    board = __import__(board_name, None, None, ["build"])
    out["held_import"] = (yield from held()) - base
    server = board.build()
    out["held_build"] = (yield from held()) - base
    dump_qstrs("build")
    if opts["romfs"]:
        out["from"] = sys.modules["tinymcp.server"].__file__

    for frame in (INIT, INITIALIZED, LIST, PING, READ) + tuple(CALLS.values()):
        reply = server.handle(frame)
        if frame is not INITIALIZED and (reply is None or b'"result"' not in reply
                                         or b'"isError":true' in reply):
            raise SystemExit("unexpected reply: " + str(reply))
    out["held_session"] = (yield from held()) - base  # caches filled: initialize and tools/list encoded
    dump_qstrs("session")
    if server.tools.find("read_history") is not None:
        for frame in HISTORY:
            reply = server.handle(frame)
            if reply is None or b'"result"' not in reply or b'"isError":true' in reply:
                raise SystemExit("unexpected reply: " + str(reply))
        out["held_history"] = (yield from held()) - base

    # handle() returns each answer as bytes of its own: fewer rounds, or a board's heap runs
    # out with the collector off.
    few = max(2, N // 5)
    out["per_call"] = {name: per(lambda: server.handle(CALLS[name]), few) for name in CALLS}
    out["per_call_mean"] = sum(out["per_call"].values()) // len(CALLS)
    out["per_ping"] = per(lambda: server.handle(PING), few)
    out["per_list"] = per(lambda: server.handle(LIST), few)
    out["per_read"] = per(lambda: server.handle(READ), few)
    out["per_initialize"] = per(lambda: server.handle(INIT), few)
    server.handle(INITIALIZED)
    try:
        loop = {name: per(serve_loop(server, CALLS[name])) for name in CALLS}
        out["loop_call"] = loop
        out["loop_call_mean"] = sum(loop.values()) // len(loop)
        out["loop_ping"] = per(serve_loop(server, PING))
        out["loop_list"] = per(serve_loop(server, LIST))
        out["loop_read"] = per(serve_loop(server, READ))
    except Exception as e:
        out["loop (error)"] = e.__class__.__name__ + ": " + str(e)
    session = server.session  # the last channel's: its answers to the outbox from here on
    session.link = None
    session.pump = None
    out["stages"] = stages(server)


def stages(server):
    # One tools/call read_adc, one ping and one tools/list taken apart: -> [[name, bytes], ...]
    # in the order measured (a list: MicroPython's dicts keep no order).
    found = Stages()

    def stage(name, fn):
        try:
            found[name] = per(fn)
        except Exception as e:  # the core moved on: report the gap, keep the rest
            found[name] = None
            found[name + " (error)"] = e.__class__.__name__ + ": " + str(e)

    def discard(piece):
        pass

    from tinymcp import jsonrpc
    compact = (",", ":")
    scratch = io.BytesIO(8192)  # preallocated: a stand-in for a native stream (UART, USB CDC)

    def dump_to_stream(obj):
        scratch.seek(0)
        json.dump(obj, scratch, separators=compact)

    adc = CALLS["read_adc"]
    stage("call: serve loop total (framing, decode, handle, encode, write)", serve_loop(server, adc))
    stage("call:  - json loads of the frame", lambda: jsonrpc.loads(adc))
    try:
        from tinymcp import schema
        from tinymcp.framing import Out
        from tinymcp.entries import FN, INPUTS
        params = jsonrpc.loads(adc)["params"]
        tool = server.tools.find("read_adc")
        args = params["arguments"]
        handler = server.handlers["tools/call"]
        link = jsonrpc.JsonLink(Out(discard))
        reply = handler(server, params)
        stage("call:  - handler tools/call (check, run, shape)", lambda: handler(server, params))
        stage("call:     - schema.arguments of the arguments", lambda: schema.arguments(tool[INPUTS], args))
        stage("call:     - the tool function, fn(**args)", lambda: tool[FN](**args))
        stage("call:  - the JSON link writes the answer (envelope, text mirror)",
              lambda: link.result(4711, reply))
        stage("call:     - alt: json.dump of its dict to a stream", lambda: dump_to_stream(reply[0]))
    except Exception as e:
        found["call stages (error)"] = e.__class__.__name__ + ": " + str(e)
    stage("call: handle() total (a bytes answer)", lambda: server.handle(adc))

    stage("ping: serve loop total", serve_loop(server, PING))
    stage("ping:  - json loads of the frame", lambda: jsonrpc.loads(PING))
    stage("ping: handle() total", lambda: server.handle(PING))

    stage("list: serve loop total", serve_loop(server, LIST))
    stage("list:  - json loads of the frame", lambda: jsonrpc.loads(LIST))
    try:
        handler = server.handlers["tools/list"]
        stage("list:  - handler (cached page lookup)", lambda: handler(server, {}))
        cached = handler(server, {})
        found["list: cached page, bytes long"] = len(cached) if type(cached) is bytes else None
    except Exception as e:
        found["list stages (error)"] = e.__class__.__name__ + ": " + str(e)
    stage("list: handle() total", lambda: server.handle(LIST))

    # Envelope alternatives: what the framing of one answer could cost at best.
    out_buf = bytearray(8192)
    out_view = memoryview(out_buf)
    prefix = b'{"jsonrpc":"2.0","id":'

    def id_into(rid):
        # The decimal digits of an integer id written into out_buf: no str, no bytes.
        n = len(prefix)
        out_buf[0:n] = prefix
        start = n
        while True:
            out_buf[n] = 48 + rid % 10
            rid //= 10
            n += 1
            if not rid:
                break
        i, j = start, n - 1
        while i < j:
            out_buf[i], out_buf[j] = out_buf[j], out_buf[i]
            i += 1
            j -= 1
        return out_view[:n]

    stage("alt: integer id written as digits into a preallocated buffer", lambda: id_into(4712))
    stage("alt: json.dump(id) to a stream", lambda: dump_to_stream(4712))
    return found.pairs


# A whole session, as section (d) of tools/bench.py sends it: every answer is checked at the end.
SESSION = (
    bytes(INIT), bytes(INITIALIZED), bytes(LIST), bytes(CALLS["read_temperature"]),
    bytes(CALLS["read_adc"]), bytes(CALLS["set_led"]), bytes(READ),
    b'{"jsonrpc":"2.0","id":4715,"method":"resources/subscribe",'
    b'"params":{"uri":"sensor://temperature"}}',
    None,  # a 64 KiB line of garbage: the frame limit's test
    bytes(PING))
GARBAGE_BYTES = 65536
# The SDK's mode="auto" probe at a version the board does not speak: answered -32022 naming the
# handshake versions, so the client falls back to initialize (the SDK's _probe.negotiate_auto).
PROBE = (b'{"jsonrpc":"2.0","id":9,"method":"server/discover","params":{"_meta":{'
         b'"io.modelcontextprotocol/protocolVersion":"2099-01-01",'
         b'"io.modelcontextprotocol/clientCapabilities":{}}}}')


class Script:
    # A serve loop's stream over a scripted input: recv() moves the next bytes into buf, as
    # USB CDC's StdioStream (64 B) would; answers go into a preallocated BytesIO.
    def __init__(self, size, room=32768):
        self.src = None
        self.sent = io.BytesIO(room)
        self.buf = bytearray(size)

    def recv(self, timeout_ms):
        return self.src.readinto(self.buf) if self.src else 0

    def write(self, data, n):
        self.sent.write(data, n)


def session_costs(board_name):
    # The heap in use at its peak while the board serves the session: at each step's start
    # what is held (garbage collected), plus all that the step allocates with the collector
    # off. A board's collector may run within a request, so it needs at most this much (and
    # its heap may fragment). Each request is a step; so are import + build and serve()'s setup.
    inputs = []
    frames = ((PROBE,) if opts["probe"] else ()) + SESSION
    for frame in frames:
        if frame is None:
            frame = (bytes(range(32, 127)) * (GARBAGE_BYTES // 95 + 1))[:GARBAGE_BYTES]
        inputs.append(io.BytesIO(frame + b"\n"))
    stream = Script(64)
    steps = []
    base = yield from held()

    def step(name, fn):
        start = yield from held()
        gc.disable()
        try:
            fn()
            steps.append([name, start - base, gc.mem_alloc() - base])
        finally:
            gc.enable()

    made = {}

    def build():
        board = __import__(board_name, None, None, ["build"])
        made["server"] = board.build()

    def setup():
        from tinymcp.channel import Channel, Lines
        import ports.micropython  # noqa: F401  (what serve() imports on a board)
        made["lines"] = Lines(stream)
        made["channel"] = Channel(made["server"], made["lines"])

    yield from step("import + build()", build)
    yield from step("serve loop set up", setup)
    channel = made["channel"]
    lines = made["lines"]
    server = made["server"]
    for i, src in enumerate(inputs):
        def serve(src=src):
            # One turn of Channel.run per recv(): its framing, dispatch and backlog.
            stream.src = src
            while True:
                lines.read(channel, 0)
                channel._turn(False, False)  # what waited in the backlog
                if not lines.end:
                    break
            server.poll()
        frame = frames[i]
        yield from step("garbage line" if frame is None else
                        (json.loads(frame).get("method") or "?"), serve)
    out["session_steps"] = steps
    top = max(steps[1:], key=lambda s: s[2])  # a board collects while it imports: left out
    out["session_peak"] = top[2]
    out["session_peak_at"] = top[0]
    out["session_held_after"] = (yield from held()) - base
    answers = [json.loads(line) for line in stream.sent.getvalue().split(b"\n") if line]
    out["session_check"] = check(answers)


def check(answers):
    # -> None when the answers are those of the session, else what went wrong.
    by_id = {}
    for a in answers:
        if "id" in a:
            by_id[a["id"]] = a
    if by_id.get(1, {}).get("result", {}).get("protocolVersion") != "2025-11-25":
        return "initialize: " + str(by_id.get(1))[:80]
    if len(by_id.get(4713, {}).get("result", {}).get("tools", [])) < 3:
        return "tools/list: " + str(by_id.get(4713))[:80]
    calls = [a for a in answers if a.get("id") == 4711]
    if len(calls) != 3 or [a for a in calls if "error" in a or a["result"].get("isError")]:
        return "tools/call: " + str(calls)[:80]
    if "celsius" not in str(by_id.get(4714)):
        return "resources/read: " + str(by_id.get(4714))[:80]
    if by_id.get(4715, {}).get("result") != {}:
        return "subscribe: " + str(by_id.get(4715))[:80]
    if "error" not in by_id.get(None, {}):
        return "the 64 KiB line got no error"
    if by_id.get(4712, {}).get("result") != {}:
        return "ping after the 64 KiB line: " + str(by_id.get(4712))[:80]
    return None


class Stages:
    def __init__(self):
        self.pairs = []

    def __setitem__(self, key, value):
        self.pairs.append([key, value])


def serving_costs(board_name):
    # What a board holds while it serves: boot.start(build) as its __main__ calls it, with a
    # serve() that sets up the serve loop (a Channel on a 64 B stream, as USB CDC's) and keeps it.
    base = yield from held()
    board = __import__(board_name, None, None, ["build"])
    from ports.micropython.boot import start
    from tinymcp.channel import Channel, Lines
    import ports.micropython  # noqa: F401  (what serve() imports on a board)
    kept = []

    def serve(server, stream):
        channel = Channel(server, Lines(Script(64, 0)))  # nothing is sent
        channel.deliver(None, INITIALIZED)  # the session its first frame opens
        kept.append(channel)
        return "eof"
    if start(board.build, serve=serve) != "eof":
        raise SystemExit("boot.start() did not serve")
    out["held_serving"] = (yield from held()) - base


def mdns_costs(board_name):
    # What announcing the built board over mDNS holds: ports/mdns.py, its responder, its
    # answer packet and query buffer (the socket a stand-in: see socket_standin.py).
    import socket_standin
    real = sys.modules.get("socket")
    sys.modules["socket"] = socket_standin
    board = __import__(board_name, None, None, ["build"])
    server = board.build()
    import ports.tcp  # noqa: F401  (what a board serving over TCP holds anyway)
    base = yield from held()
    from ports.mdns import start
    kept = [start(server, "192.168.1.77", 8765, True, lambda text: None)]
    out["held_mdns"] = (yield from held()) - base
    out["mdns_packet"] = len(kept[0].packet)
    if real is not None:
        sys.modules["socket"] = real


def main():
    if opts["drivers"] or opts["inputs"]:
        # The parts' probes live in parts_probe.py, compiled only for these runs: their names
        # would otherwise be interned before every other probe's baseline (and move where its
        # qstr pools fall), lowering every board's held figure.
        import parts_probe
        yield from parts_probe.costs(opts, out, held, INIT, INITIALIZED)
    elif opts["mdns"]:
        out["board"] = opts["mdns"]
        yield from mdns_costs(opts["mdns"])
    elif opts["serving"]:
        out["board"] = opts["serving"]
        yield from serving_costs(opts["serving"])
    elif opts["modules"]:
        yield from module_costs()
    elif opts["session"]:
        out["board"] = opts["session"]
        yield from session_costs(opts["session"])
    else:
        out["board"] = opts["board"]
        yield from board_costs(opts["board"])
    print(json.dumps(out))


steps = main()
if sys.platform != "webassembly":  # else wasm_run.mjs resumes it, one runPython call a step
    for _ in steps:
        pass
