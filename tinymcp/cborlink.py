# CBOR link frames (docs/cbor-link.md): escaped CBOR + CRC-32 per line, and the board's side of them.
#
# frame = escape(cbor + crc32(cbor) big-endian) + b"\n"; escape turns each byte of 0x03, 0x04,
# 0x0A, 0x10 (and a last byte of 0x09, 0x0D or 0x20, which line readers strip) into 0x10, byte^0x20.
# On the link every frame omits "jsonrpc": "2.0", byte strings stay raw, a tools/call result with
# structuredContent omits its text mirror ("content"), and a resources/read blob omits the
# requested uri and an application/octet-stream mimeType: the bridge restores them all.
# Loaded by the channel when the first frame starting with a byte >= 0x80 arrives.
from tinymcp import cbor, jsonrpc
from tinymcp.jsonrpc import RpcError, PARSE_ERROR, INVALID_REQUEST

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

_SPECIAL = (b"\x03", b"\x04", b"\n", b"\x10")
_LAST_ESCAPED = b"\x03\x04\n\x10\t\r "  # and whitespace when last: line readers strip it
_ESC = 0x10
_OCTETS = "application/octet-stream"
_STRUCTURED = b'}],"structuredContent":'  # between a dict tool result's mirror and its JSON


class FrameError(ValueError):
    # A frame that fails its CRC or its escaping: corruption on the wire. Dropped and counted.
    pass


class Escaper:
    # A write() for cbor.dump: CRC and escape each piece on its way to out(piece).
    def __init__(self, out):
        self.out = out
        self.crc = 0

    def write(self, piece):
        if type(piece) is memoryview:
            piece = bytes(piece)
        if not piece:
            return
        self.crc = crc32(piece, self.crc)
        out = None
        at = [piece.find(s) for s in _SPECIAL]
        start = 0
        while True:
            pos = -1
            which = 0
            for k in range(4):
                p = at[k]
                if p >= 0 and (pos < 0 or p < pos):
                    pos = p
                    which = k
            if pos < 0:
                break
            if out is None:
                out = bytearray()
            out += piece[start:pos]
            out.append(_ESC)
            out.append(piece[pos] ^ 0x20)
            start = pos + 1
            at[which] = piece.find(_SPECIAL[which], start)
        if out is None:
            self.out(piece)  # the common case: passed on uncopied
        else:
            out += piece[start:]
            self.out(out)

    def finish(self):
        # The CRC, escaped, with its last byte escaped too when it is whitespace.
        crc = self.crc
        tail = bytes(((crc >> 24) & 0xFF, (crc >> 16) & 0xFF, (crc >> 8) & 0xFF, crc & 0xFF))
        last = tail[3]
        self.crc = 0  # write() would change it
        head = tail[:3]
        self.write(head)  # escapes; the CRC of the CRC is never used
        if last in _LAST_ESCAPED:
            self.out(bytes((_ESC, last ^ 0x20)))
        else:
            self.out(tail[3:])


def encode(obj):
    # -> the escaped frame of one message, without its newline.
    parts = []
    esc = Escaper(parts.append)
    cbor.dump(obj, esc.write)
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
    # The board's side: answers CBOR frames on a Channel, in CBOR. Counts what it drops.

    def __init__(self, channel):
        self.channel = channel
        self.server = channel.server
        self.stream = channel.stream
        self.frames = 0     # good CBOR frames received
        self.dropped = 0    # frames that failed their CRC or escaping
        self._cache = {}    # id(cached JSON result) -> (that result, its CBOR)
        self._send_json = self.send_json  # bound once: the server's writer while in CBOR mode

    def dispatch(self, frame):
        # -> False for a corrupt frame before any good one (the channel answers it as JSON
        # garbage); a corrupt frame in CBOR mode is dropped and counted.
        server = self.server
        raw = bytes(frame) if server.busy else None  # kept for the backlog, before unescaping
        try:
            msg = decode(frame)
        except FrameError:
            self.dropped += 1
            return self.frames > 0
        except ValueError:
            self.send({"id": None, "error": {"code": PARSE_ERROR,
                                             "message": "Parse error: not valid CBOR"}})
            return True
        self.frames += 1
        server.write = self._send_json  # unsolicited output follows the last frame's kind
        if type(msg) is not dict:
            self.send({"id": None, "error": {"code": INVALID_REQUEST,
                                             "message": "Invalid Request: expected a map"}})
            return True
        if "jsonrpc" not in msg:
            msg["jsonrpc"] = "2.0"
        method = msg.get("method")
        rid = msg.get("id")
        if raw is not None and method is not None and "id" in msg:
            if method == "ping":
                self.send({"id": rid, "result": {}})
            else:
                server.backlog.append(raw)  # served in order once the running handler returns
            return True
        if method == "resources/read" and "id" in msg and self._read(msg):
            return True
        out = server._answer(msg)
        if out is None:
            return True
        if type(out) is bytes:  # an encoded error frame
            self.send_json(out)
            return True
        result = server._result
        server._result = None
        self._respond(server._result_id, result)
        return True

    def _respond(self, rid, result):
        esc = Escaper(self.stream.write)
        write = esc.write
        write(b"\xa2\x62id")
        cbor.dump(rid, write)
        write(b"\x66result")
        if type(result) is bytes:
            write(self._cbor_of(result))
        elif type(result) is tuple:
            if len(result) == 5 and result[2] == _STRUCTURED:  # tools.shape's pieces: the text
                # mirror is dropped, the bridge rebuilds it from structuredContent
                result = {"structuredContent": jsonrpc.loads(result[3])}
            else:
                result = jsonrpc.loads(b"".join([p.encode() if type(p) is str else p
                                                 for p in result]))
            cbor.dump(result, write)
        else:
            cbor.dump(result, write)
        esc.finish()
        self.stream.end()

    def _cbor_of(self, encoded):
        # A cached JSON result (tools/list, initialize) in CBOR, converted once per cache entry.
        entry = self._cache.get(id(encoded))
        if entry is not None and entry[0] is encoded:
            return entry[1]
        if len(self._cache) >= 8:
            self._cache = {}
        out = cbor.dumps(jsonrpc.loads(encoded))
        self._cache[id(encoded)] = (encoded, out)
        return out

    def _read(self, msg):
        # resources/read with a bytes result: a raw byte string, never base64. -> True if served.
        server = self.server
        params = msg.get("params")
        if (server.resources is None or not server.initialized or server.modern is not None
                or type(params) is not dict or type(params.get("uri")) is not str):
            return False  # the core's path answers (and refuses) these
        rid = msg["id"]
        uri = params["uri"]
        try:
            res, value = server.resources.fetch(uri)
        except RpcError as e:
            err = {"code": e.code, "message": e.message}
            if e.data is not None:
                err["data"] = e.data
            self.send({"id": rid, "error": err})
            return True
        if type(value) in jsonrpc.BINARY:
            # Without the request's own uri and the default mimeType: the bridge restores both.
            item = {"blob": value}
            if res.mime and res.mime != _OCTETS:
                item["mimeType"] = res.mime
            contents = [item]
        elif type(value) is list and value and type(value[0]) is dict and "uri" in value[0]:
            contents = value
        else:
            from tinymcp.resources import content
            contents = [content(uri, value, res.mime)]
        self._respond(rid, {"contents": contents})
        return True

    def send(self, msg):
        esc = Escaper(self.stream.write)
        cbor.dump(msg, esc.write)
        esc.finish()
        self.stream.end()

    def send_json(self, frame):
        # A frame the core encoded as JSON (notifications, errors, requests to the client).
        msg = jsonrpc.loads(frame)
        if type(msg) is dict and "jsonrpc" in msg:
            del msg["jsonrpc"]
        self.send(msg)
