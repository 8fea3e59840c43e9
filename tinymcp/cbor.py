# CBOR (RFC 8949) for the JSON data model plus byte strings, byte-compatible with cbor2's defaults.
#
# Encode: None/bool/int/float/str/bytes-like/list/tuple/dict(str keys), shortest-form heads,
#   definite lengths, floats as float64 (float32 on single-precision boards; NaN and +-inf as
#   cbor2 writes them: half precision),
#   ints beyond 64 bits as bignums (tags 2/3). Anything else is a TypeError.
# Decode: the same, plus indefinite lengths and half/single floats. Map keys must be text.
#   Tags 2/3 give ints and tag 55799 (self-described CBOR) is skipped; every other tag, `undefined`
#   and other simple values, and any malformed or truncated input raise DecodeError (a ValueError).
# Limits are module attributes: max_depth (nested arrays/maps, and tags on decode) and max_size
# (the most bytes loads accepts). Running out of heap or stack while decoding is a DecodeError too.
from struct import pack_into, unpack_from

try:
    from micropython import const
except ImportError:
    def const(x):
        return x

max_depth = 32
max_size = 64 * 1024

_DIRECT = const(64)  # dump(): byte/text strings this long go to write() as they are, uncopied
# A float's head and zeroed room that pack_into() fills in place: float64 as cbor2 writes, but a
# board whose floats are single precision (most MCU ports) writes float32: as exact, 4 bytes shorter.
_FLOAT, _FLOAT_FORMAT = (b"\xfa\0\0\0\0", ">f") if 1.0 + 2.0 ** -30 == 1.0 else (b"\xfb" + bytes(8), ">d")
_INF = float("inf")
_NAN = float("nan")
_BYTES_LIKE = (bytes, bytearray, memoryview)  # built once: a tuple display in a call allocates
_ARRAYS = (list, tuple)

try:
    bytearray().extend("a")  # pyright: ignore[reportArgumentType]  (the probe itself)
    _STR_IS_BUFFER = True
except TypeError:  # CPython
    _STR_IS_BUFFER = False


class DecodeError(ValueError):
    pass


def dumps(obj):
    out = bytearray()
    _encode(obj, out, None, 0)
    return bytes(out)


def dump(obj, write):
    # Streams obj as pieces; a piece may be a reused buffer, so write() must consume it at once.
    out = bytearray()
    _encode(obj, out, write, 0)
    if out:
        write(out)


def _head(out, major, n):
    if n < 24:
        out.append(major | n)
        return
    info = 24  # then 25, 26, 27 for 2, 4, 8 bytes: the shortest that holds n
    size = 1
    while n >> (8 * size):
        info += 1
        size *= 2
    out.append(major | info)
    for shift in range(8 * size - 8, -8, -8):
        out.append((n >> shift) & 0xFF)


def _string(out, write, major, data):
    _head(out, major, len(data))
    if write is not None and len(data) >= _DIRECT:
        write(out)
        out[:] = b""
        write(data)
    else:
        out.extend(data)


def _text(out, write, text):
    if _STR_IS_BUFFER and len(text) < 24:
        # MicroPython: a str is a buffer of its UTF-8 bytes, so short ones skip the encode() copy.
        at = len(out)
        out.append(0)
        out.extend(text)
        size = len(out) - at - 1
        if size < 24:
            out[at] = 0x60 | size
            return
        out[at:] = b""
    _string(out, write, 0x60, text.encode("utf-8"))


def _encode(obj, out, write, depth):
    if obj is None:
        out.append(0xF6)
    elif obj is True:
        out.append(0xF5)
    elif obj is False:
        out.append(0xF4)
    elif isinstance(obj, int):
        if 0 <= obj < 0x10000000000000000:
            _head(out, 0x00, obj)
        elif -0x10000000000000000 <= obj < 0:
            _head(out, 0x20, -1 - obj)
        else:
            tag, n = (0xC2, obj) if obj > 0 else (0xC3, -1 - obj)
            size = 9
            while n >> (8 * size):
                size += 1
            out.append(tag)
            _string(out, write, 0x40, n.to_bytes(size, "big"))
    elif isinstance(obj, float):
        if obj != obj:
            out.extend(b"\xf9\x7e\x00")
        elif obj == _INF or obj == -_INF:
            out.extend(b"\xf9\x7c\x00" if obj > 0 else b"\xf9\xfc\x00")
        else:
            at = len(out)
            out.extend(_FLOAT)
            pack_into(_FLOAT_FORMAT, out, at + 1, obj)
    elif isinstance(obj, str):
        _text(out, write, obj)
    elif isinstance(obj, _BYTES_LIKE):
        if getattr(obj, "itemsize", 1) != 1:
            raise TypeError("cbor: memoryview must have 1-byte items")
        _string(out, write, 0x40, obj)
    else:
        if depth >= max_depth:
            raise ValueError("cbor: nesting deeper than max_depth")
        if isinstance(obj, _ARRAYS):
            _head(out, 0x80, len(obj))
            for item in obj:
                _encode(item, out, write, depth + 1)
        elif isinstance(obj, dict):
            _head(out, 0xA0, len(obj))
            for key in obj:
                if not isinstance(key, str):
                    raise TypeError("cbor: map keys must be str, not " + type(key).__name__)
                _text(out, write, key)
                _encode(obj[key], out, write, depth + 1)
        else:
            raise TypeError("cbor: cannot encode " + type(obj).__name__)


def loads(data):
    if len(data) > max_size:
        raise DecodeError("cbor: input larger than max_size")
    reader = _Reader(data)
    try:
        obj = reader.item(0)
    except MemoryError:  # ~70 bytes of objects per input byte, worst case: may not fit a small heap
        raise DecodeError("cbor: out of memory while decoding")
    except RuntimeError:  # a stack too small for max_depth (MicroPython's "maximum recursion depth")
        raise DecodeError("cbor: out of stack while decoding")
    if reader.pos != reader.end:
        raise DecodeError("cbor: extra bytes after the item")
    return obj


def _half(h):
    exp = (h >> 10) & 0x1F
    mant = h & 0x3FF
    if exp == 0x1F:
        value = _NAN if mant else _INF
    elif exp:
        value = (mant + 0x400) * 2.0 ** (exp - 25)
    else:
        value = mant * 2.0 ** -24  # subnormal
    return -value if h & 0x8000 else value


class _Reader:
    # An index over a memoryview of the input: every read goes through take(), which checks bounds.
    def __init__(self, data):
        self.buf = memoryview(data)
        self.pos = 0
        self.end = len(self.buf)

    def take(self, n):
        pos = self.pos
        if n > self.end - pos:
            raise DecodeError("cbor: truncated input")
        self.pos = pos + n
        return pos

    def uint(self, info):
        if info < 24:
            return info
        if info > 27:
            raise DecodeError("cbor: reserved additional information " + str(info))
        size = 1 << (info - 24)
        buf = self.buf
        n = 0
        start = self.take(size)  # not inline: MicroPython's range() loop reads its stop first
        for i in range(start, start + size):
            n = (n << 8) | buf[i]
        return n

    def at_break(self):
        # For indefinite lengths: consume and report a 0xFF break, or leave the next item alone.
        if self.buf[self.take(1)] == 0xFF:
            return True
        self.pos -= 1
        return False

    def more(self, n, count):
        # Another item in a container of n items, or of indefinite length (n < 0) until its break.
        return count < n if n >= 0 else not self.at_break()

    def room(self, count):
        # Each item needs at least one byte: a count beyond the input is refused before allocating.
        if count > self.end - self.pos:
            raise DecodeError("cbor: truncated input")

    def string(self, major, n):
        start = self.take(n)
        if major == 2:
            return bytes(self.buf[start:self.pos])
        try:
            return str(self.buf[start:self.pos], "utf-8")
        except UnicodeError:
            raise DecodeError("cbor: text string is not UTF-8")

    def item(self, depth):
        initial = self.buf[self.take(1)]
        major = initial >> 5
        info = initial & 0x1F
        if 4 <= major <= 6 and depth >= max_depth:  # arrays, maps and tags nest
            raise DecodeError("cbor: nesting deeper than max_depth")
        if major == 7:
            return self.simple(info)
        n = -1 if info == 31 and 2 <= major <= 5 else self.uint(info)  # -1: indefinite length
        if major == 0:
            return n
        if major == 1:
            return -1 - n
        if major <= 3:
            return self.string(major, n) if n >= 0 else self.chunks(major)
        if major == 4:
            self.room(n)
            items = []
            while self.more(n, len(items)):
                items.append(self.item(depth + 1))
            return items
        if major == 5:
            self.room(2 * n)
            items = {}
            while self.more(n, len(items)):
                key = self.item(depth + 1)
                if type(key) is not str:
                    raise DecodeError("cbor: map key is not a text string")
                if key in items:
                    raise DecodeError("cbor: duplicate map key")
                items[key] = self.item(depth + 1)
            return items
        if n == 2 or n == 3:
            value = self.item(depth + 1)
            if not isinstance(value, bytes):
                raise DecodeError("cbor: bignum tag on a non-byte-string")
            value = int.from_bytes(value, "big")
            return value if n == 2 else -1 - value
        if n == 55799:
            return self.item(depth + 1)
        raise DecodeError("cbor: unsupported tag " + str(n))

    def chunks(self, major):
        chunks = []  # a string in definite-length chunks of its own major type
        while not self.at_break():
            initial = self.buf[self.take(1)]
            if initial >> 5 != major or initial & 0x1F == 31:
                raise DecodeError("cbor: bad chunk in an indefinite-length string")
            chunks.append(self.string(major, self.uint(initial & 0x1F)))
        return (b"" if major == 2 else "").join(chunks)

    def simple(self, info):
        if info == 20:
            return False
        if info == 21:
            return True
        if info == 22:
            return None
        if info == 25:
            return _half(self.uint(25))
        if info == 26:
            return unpack_from(">f", self.buf, self.take(4))[0]
        if info == 27:
            return unpack_from(">d", self.buf, self.take(8))[0]
        if info == 31:
            raise DecodeError("cbor: break outside an indefinite-length item")
        raise DecodeError("cbor: unsupported simple value " + str(info))
