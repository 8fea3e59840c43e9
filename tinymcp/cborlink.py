# CBOR link frames (docs/cbor-link.md): escaped CBOR + CRC-32 per line, and the board's side of them.
#
# frame = escape(cbor + crc32(cbor) big-endian) + b"\n"; escape turns each byte a REPL or a
# terminal acts on (0x00-0x1F, 0x7F; 0x10 itself too) and a last 0x20, which line readers strip,
# into 0x10, byte^0x20: a board that has fallen to its REPL never sees a raw CR, Ctrl-A..E or ESC.
# On the link every frame omits "jsonrpc": "2.0", byte strings stay raw, a tools/call result with
# structuredContent omits its text mirror ("content"), and a resources/read blob omits the
# requested uri and an application/octet-stream mimeType: the bridge restores them all.
# Loaded by a channel that offers the CBOR link; used from the first CBOR frame on.
from tinymcp import cbor, jsonrpc
from tinymcp.protocol import PARSE_ERROR

# CRC-32 (IEEE, as zlib) a nibble at a time: 16 table entries, for ports without binascii.crc32.
_TABLE = (0x00000000, 0x1DB71064, 0x3B6E20C8, 0x26D930AC, 0x76DC4190, 0x6B6B51F4, 0x4DB26158,
          0x5005713C, 0xEDB88320, 0xF00F9344, 0xD6D6A3E8, 0xCB61B38C, 0x9B64C2B0, 0x86D3D2D4,
          0xA00AE278, 0xBDBDF21C)


def crc32_nibbles(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = (crc >> 4) ^ _TABLE[(crc ^ b) & 15]
        crc = (crc >> 4) ^ _TABLE[(crc ^ (b >> 4)) & 15]
    return crc ^ 0xFFFFFFFF


try:
    from binascii import crc32
    crc32(b"")
except (ImportError, AttributeError, NameError):
    try:
        from zlib import crc32
    except ImportError:
        crc32 = crc32_nibbles

_ESC = 0x10
_SPACE = 0x20
_OCTETS = "application/octet-stream"
_CHUNK = 64  # bytes of escaped output gathered before they go on (a buffer made once per link)


class FrameError(ValueError):
    # A frame that fails its CRC or its escaping: corruption on the wire. Dropped and counted.
    pass


def clean(piece):
    # True when piece holds no byte a REPL or a terminal acts on (0x00-0x1F, 0x7F): it goes on
    # as it is. min() and find() run in C and allocate nothing.
    return min(piece) > 0x1F and piece.find(b"\x7f") < 0


class Escaper:
    # A write() for cbor.dump: CRC and escape each piece on its way to out(piece). A clean piece
    # is passed on uncopied; the others are escaped through buf (bytearray(_CHUNK), reused: out()
    # must take each piece at once, as a channel's Out does).
    def __init__(self, out, buf=None):
        self.out = out
        self.crc = 0
        self.buf = buf if buf is not None else bytearray(_CHUNK)

    def write(self, piece):
        if type(piece) is memoryview:
            piece = bytes(piece)
        if not piece:
            return
        self.crc = crc32(piece, self.crc)
        if clean(piece):
            self.out(piece)  # the common case for long strings and blobs: passed on uncopied
            return
        buf = self.buf
        size = len(buf)
        out = self.out
        n = 0
        for i in range(len(piece)):  # range(): no iterator allocated
            b = piece[i]
            if b < 0x20 or b == 0x7F:
                buf[n] = _ESC
                n += 1
                if n == size:
                    out(buf)
                    n = 0
                b ^= 0x20
            buf[n] = b
            n += 1
            if n == size:
                out(buf)
                n = 0
        if n:
            out(memoryview(buf)[:n])

    def finish(self):
        # The CRC, escaped. Its last byte must survive line readers that strip trailing
        # whitespace: 0x20 goes as 0x10 0x00, and 0x00 raw (escaped it would end in 0x20). The
        # whole-frame encode() below writes such a message another way: no NUL reaches a board.
        crc = self.crc
        tail = bytes(((crc >> 24) & 0xFF, (crc >> 16) & 0xFF, (crc >> 8) & 0xFF, crc & 0xFF))
        self.crc = 0  # write() would change it
        last = tail[3]
        if last == _SPACE or last == 0:
            self.write(tail[:3])  # escapes; the CRC of the CRC is never used
            self.out(b"\x10\x00" if last else b"\x00")
        else:
            self.write(tail)


def _body(obj):
    # -> the CBOR of obj; when its CRC would end in 0x20 or 0x00, with the map head in a longer
    # form (every decoder takes it, and the frame still starts with a map head) that changes it.
    body = cbor.dumps(obj)
    if crc32(body) & 0xDF or not 0xA0 <= body[0] <= 0xB7:
        return body
    n = body[0] - 0xA0
    rest = body[1:]
    for head in ((0xB8, n), (0xB9, 0, n), (0xBA, 0, 0, 0, n), (0xBB, 0, 0, 0, 0, 0, 0, 0, n)):
        body = bytes(head) + rest
        if crc32(body) & 0xDF:
            break
    return body


def encode(obj):
    # -> the escaped frame of one message, without its newline: no byte in it is 0x00-0x1F
    # or 0x7F but the escape 0x10 (docs/cbor-link.md).
    parts = []
    esc = Escaper(lambda piece: parts.append(bytes(piece)))  # pieces may be reused buffers
    esc.write(_body(obj))
    esc.finish()
    return b"".join(parts)


def decode(line):
    # A received line (without its newline) -> the message. line is unescaped in place when
    # it is writable (the board's line buffer), else copied. Raises FrameError on corruption,
    # cbor.DecodeError on a frame that is intact but not CBOR we accept.
    buf = line if type(line) in (bytearray, memoryview) else bytearray(line)
    n = len(buf)
    r = w = 0
    while r < n:
        b = buf[r]
        r += 1
        if b == _ESC:
            if r == n:
                raise FrameError("escape at the end of a frame")
            b = buf[r] ^ 0x20
            r += 1
        elif b == 3 or b == 4:
            raise FrameError("raw control byte in a frame")
        buf[w] = b
        w += 1
    if w < 5:
        raise FrameError("frame too short")
    body = memoryview(buf)[:w - 4]
    sent = (buf[w - 4] << 24) | (buf[w - 3] << 16) | (buf[w - 2] << 8) | buf[w - 1]
    if crc32(body) & 0xFFFFFFFF != sent:
        raise FrameError("CRC mismatch")
    return cbor.loads(body)


class CborLink:
    # The board's side: decodes CBOR frames and writes messages as CBOR frames through the
    # stream's Out, with the JSON link's interface. Counts what it drops.

    def __init__(self, json):
        # json: the stream's JSON link, whose Out this link writes through too, and which
        # answers garbage before any good CBOR frame.
        self.out = json.out
        self.json = json
        self.frames = 0     # good CBOR frames received
        self.dropped = 0    # frames that failed their CRC or escaping
        self.read_uri = None  # the uri of the resources/read being answered: its blobs omit it
        self._cache = {}    # id(cached JSON result) -> (that result, its CBOR)
        self._buf = bytearray(_CHUNK)  # where every frame's escaped pieces are gathered

    def decode(self, frame):
        # -> the message. ValueError when the frame holds none: answered when it is intact but
        # not CBOR we accept, or garbage before any good CBOR frame (answered as JSON); else
        # dropped and counted (FrameError: the bridge's timeout handles the loss).
        try:
            msg = decode(frame)
        except FrameError:
            self.dropped += 1
            if not self.frames:
                self.json.error(None, PARSE_ERROR, "Parse error: not valid UTF-8 JSON")
            raise
        except ValueError:
            self.error(None, PARSE_ERROR, "Parse error: not valid CBOR")
            raise
        self.frames += 1
        if type(msg) is dict:
            if "jsonrpc" not in msg:
                msg["jsonrpc"] = "2.0"
            params = msg.get("params")
            self.read_uri = (params.get("uri") if msg.get("method") == "resources/read"
                             and type(params) is dict else None)
        return msg

    def _frame(self, msg):
        esc = Escaper(self.out.put, self._buf)
        cbor.dump(msg, esc.write)
        esc.finish()
        self.out.end()

    def result(self, rid, result):
        esc = Escaper(self.out.put, self._buf)
        write = esc.write
        write(b"\xa2\x62id")
        cbor.dump(rid, write)
        write(b"\x66result")
        if type(result) is bytes or type(result) is tuple:  # a cached JSON result or page
            write(self._cbor_of(result))
        elif type(result) is list:  # a tool's dict (jsonrpc.py's structured reply)
            # The text mirror is left out: the bridge rebuilds it from structuredContent.
            value, full, tail = result
            value = {"structuredContent": value} if full else \
                {"content": [{"type": "text", "text": jsonrpc.text(value)}]}
            if tail:  # fields a revision adds, kept as JSON for the JSON link
                value.update(jsonrpc.loads(b"{" + tail[1:] + b"}"))
            cbor.dump(value, write)
        else:
            cbor.dump(self._trim(result), write)
        esc.finish()
        self.out.end()

    def _trim(self, result):
        # A blob read without the requested uri and the default mimeType: the bridge restores both.
        uri = self.read_uri
        contents = result.get("contents") if uri is not None and type(result) is dict else None
        if type(contents) is not list:
            return result
        trimmed = []
        for item in contents:
            if type(item) is dict and "blob" in item and item.get("uri") == uri:
                item = dict(item)
                del item["uri"]
                if item.get("mimeType") == _OCTETS:
                    del item["mimeType"]
            trimmed.append(item)
        return {"contents": trimmed}

    def _cbor_of(self, encoded):
        # A cached JSON result in CBOR, converted once per cache entry.
        entry = self._cache.get(id(encoded))
        if entry is not None and entry[0] is encoded:
            return entry[1]
        if len(self._cache) >= 8:
            self._cache = {}
        out = cbor.dumps(jsonrpc.loads(encoded if type(encoded) is bytes else b"".join(encoded)))
        self._cache[id(encoded)] = (encoded, out)
        return out

    def error(self, rid, code, message, data=None):
        err = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self._frame({"id": rid, "error": err})

    def send(self, msg):
        # A notification or a request to the client: "jsonrpc" stays off the link.
        if "jsonrpc" in msg:
            msg = dict(msg)
            del msg["jsonrpc"]
        self._frame(msg)
