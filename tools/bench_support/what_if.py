# What-if: the serve loop's bytes per request with candidate core changes monkeypatched in, one by one.
#
#   python -c "import sys; sys.path.insert(0, 'tools'); import bench; bench.build_tree('/tmp/tree')"
#   node tools/bench_support/wasm_run.mjs /tmp/tree tools/bench_support/what_if.py
#
# An experiment for the lead, not part of tools/bench.py: it replaces core internals
# (LineFramer.feed, schema.check, tools.shape, Server.respond) as they were at commit 228324f,
# so a later core may need it adjusted. Each row adds one change to the ones above it.
import gc, json, sys

def per(fn, n=100):
    fn(); gc.collect(); gc.disable()
    a = gc.mem_alloc()
    for _ in range(n): fn()
    b = gc.mem_alloc(); gc.enable(); return (b - a) // n
import time, binascii, io
import ref_board
from tinymcp import framing, schema, tools, jsonrpc
from tinymcp.channel import Channel
server = ref_board.build()
def buf(b): return memoryview(bytearray(b))
INIT = buf(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}')
server.handle(INIT)
server.handle(buf(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'))
class Feed:
    def __init__(self, frame):
        self.buf = bytearray(bytes(frame) + b"\n"); self.n = len(self.buf)
    def recv(self, t): return self.n
    def write(self, p): pass
    def send(self, f): pass
    def end(self): pass
def loop(frame):
    feed = Feed(frame); ch = Channel(server, feed)
    def once():
        ch.pos = 0; ch.end = feed.n; ch._drain()
    return once
FR = (  # (column, frame): ids of one digit are interned strings and cost nothing to print
    ("adc#7", b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_adc","arguments":{"channel":1}}}'),
    ("adc#1234", b'{"jsonrpc":"2.0","id":1234,"method":"tools/call","params":{"name":"read_adc","arguments":{"channel":1}}}'),
    ("led#1234", b'{"jsonrpc":"2.0","id":1234,"method":"tools/call","params":{"name":"set_led","arguments":{"on":true}}}'),
    ("ping#8", b'{"jsonrpc":"2.0","id":8,"method":"ping"}'),
    ("ping#1234", b'{"jsonrpc":"2.0","id":1234,"method":"ping"}'),
    ("list#1234", b'{"jsonrpc":"2.0","id":1234,"method":"tools/list"}'),
)
def measure(label):
    row = [per(loop(f)) for _name, f in FR]
    print("%-58s" % label + " ".join("%9d" % v for v in row))
print("%-58s" % "serve loop bytes per request (ref board)" + " ".join("%9s" % k for k, _f in FR))
measure("as is")

# 1. framing: one memoryview of the stream buffer, made once, not two per feed()
orig_feed = framing.LineFramer.feed
def feed(self, data, pos, end):
    self.event = framing.NOTHING
    newline = data.find(b"\n", pos, end)
    stop = end if newline < 0 else newline
    if data.find(b"\x03", pos, stop) >= 0:
        self.event = framing.INTERRUPT
        return end
    count = stop - pos
    if count and not self.dropping:
        if self.fill + count > self.max_frame:
            self.dropping = True; self.fill = 0
        else:
            if data is not self._src:
                self._src = data; self._src_view = memoryview(data)
            self.buf[self.fill:self.fill + count] = self._src_view[pos:stop]
            self.fill += count
    if newline < 0:
        return end
    if self.dropping:
        self.dropping = False; self.event = framing.OVERSIZE
    else:
        size = self.fill; b = self.buf
        while size and b[size - 1] in b"\r \t":
            size -= 1
        if size:
            self.size = size; self.event = framing.FRAME
    self.fill = 0
    return newline + 1
framing.LineFramer._src = None
framing.LineFramer.feed = feed
measure("1. framing: memoryview of the input made once")

# 1b. frame(): zero-copy when the whole line is in the input chunk (no copy, one slice)
# (not patched: the view slice in frame() is the floor, 16 B)

# 2. schema.check: no (kind,) tuple, no (int, float) tuple per call
_NUM = (int, float)
orig_check = schema.check
def check(sch, value, path=""):
    kind = sch.get("type")
    if kind is not None:
        if type(kind) is list:
            for k in kind:
                if schema._type_ok(k, value): break
            else:
                return orig_check(sch, value, path)
        elif not schema._type_ok(kind, value):
            return orig_check(sch, value, path)
    if "enum" in sch and value not in sch["enum"]:
        return orig_check(sch, value, path)
    t = type(value)
    if t is int or t is float:
        if "minimum" in sch and value < sch["minimum"] or "maximum" in sch and value > sch["maximum"]:
            return orig_check(sch, value, path)
        return None
    if t is dict:
        props = sch.get("properties") or {}
        for name in sch.get("required", ()):
            if name not in value: return orig_check(sch, value, path)
        for name in value:
            sub = props.get(name)
            if sub is None:
                return orig_check(sch, value, path)
            if check(sub, value[name], name):
                return orig_check(sch, value, path)
        return None
    return orig_check(sch, value, path)
schema.check = check
measure("2. + schema.check without per-call tuples")

# 3. no text mirror, as pieces: the dict's JSON once
orig_shape = tools.shape
def shape_pieces(value, structured, era):
    if type(value) is dict:
        return (b'{"content":[],"structuredContent":', jsonrpc.text(value), b"}")
    return orig_shape(value, structured, era)
tools.shape = shape_pieces
measure("3. + no text mirror, pieces (one json text of the dict)")
tools.shape = orig_shape
measure("   (3 undone: the mirror is back)")

# 4. answers encoded with json.dump straight into a native stream (here a preallocated
# BytesIO standing in for sys.stdout.buffer / machine.UART): id and dict results never
# become str objects; the mirror is still one str (it must be escaped as a JSON string).
import tinymcp.server as sm
NATIVE = io.BytesIO(8192)
SEP = (",", ":")
def respond(self, frame, write):
    NATIVE.seek(0)
    out = self._answer(frame)
    if out is None:
        return False
    if out is not sm._RESULT:
        NATIVE.write(out)
        return True
    result = self._result
    self._result = None
    NATIVE.write(b'{"jsonrpc":"2.0","id":')
    json.dump(self._result_id, NATIVE)
    NATIVE.write(b',"result":')
    if type(result) is tuple:
        for piece in result:
            if type(piece) is bytes:
                NATIVE.write(piece)
            elif type(piece) is dict:
                json.dump(piece, NATIVE, separators=SEP)
            else:
                NATIVE.write(piece)
    elif type(result) is bytes:
        NATIVE.write(result)
    else:
        json.dump(result, NATIVE, separators=SEP)
    NATIVE.write(b"}")
    return True
sm.Server.respond = respond
measure("4. + json.dump of id/results into the native stream")
def shape_dump(value, structured, era):
    if type(value) is dict:
        mirror = jsonrpc.text(value)
        return (b'{"content":[{"type":"text","text":', jsonrpc.text(mirror), b'}],"structuredContent":', value, b"}")
    return orig_shape(value, structured, era)
tools.shape = shape_dump
measure("4b. + structuredContent dumped from the dict, mirror kept")
def shape_dump2(value, structured, era):
    if type(value) is dict:
        return (b'{"content":[],"structuredContent":', value, b"}")
    return orig_shape(value, structured, era)
tools.shape = shape_dump2
measure("4c. + structuredContent dumped from the dict, no mirror")
def respond_d(self, frame, write):
    NATIVE.seek(0)
    out = self._answer(frame)
    if out is None:
        return False
    if out is not sm._RESULT:
        NATIVE.write(out)
        return True
    result = self._result
    self._result = None
    NATIVE.write(b'{"jsonrpc":"2.0","id":')
    json.dump(self._result_id, NATIVE)
    NATIVE.write(b',"result":')
    if type(result) is tuple:
        for piece in result:
            if type(piece) is bytes:
                NATIVE.write(piece)
            else:  # str mirror (escaped by dump) or dict
                json.dump(piece, NATIVE, separators=SEP)
    elif type(result) is bytes:
        NATIVE.write(result)
    else:
        json.dump(result, NATIVE, separators=SEP)
    NATIVE.write(b"}")
    return True
sm.Server.respond = respond_d
def shape_dump3(value, structured, era):
    if type(value) is dict:
        return (b'{"content":[{"type":"text","text":', jsonrpc.text(value), b'}],"structuredContent":', value, b"}")
    return orig_shape(value, structured, era)
tools.shape = shape_dump3
measure("4d. + mirror kept, its escaping dumped into the stream")
# json.dump() needs a native stream (sys.stdout.buffer, machine.UART, io.BytesIO): a Python
# object with a write() method raises OSError, so the ports would pass their raw stream.
