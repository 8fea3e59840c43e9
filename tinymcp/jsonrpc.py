# JSON-RPC 2.0 as JSON: parsing a frame, and the JSON link that writes answers into an Out.
import json

from tinymcp.protocol import (const, PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND,  # noqa: F401
                              INVALID_PARAMS, INTERNAL_ERROR, RESOURCE_NOT_FOUND)

BINARY = (bytes, bytearray, memoryview)  # built once: a tuple display in a test allocates


class RpcError(Exception):
    # Raised by a handler to answer with a JSON-RPC error instead of a result.
    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def must(field, kind, what="params"):
    # 'Invalid params: "uri" must be a string': made from short parts (qstrs) when needed, as a
    # whole sentence each would be a str object held in RAM for as long as its module is loaded.
    return "Invalid " + what + ': "' + field + '" must be ' + kind


try:  # CPython: one compact encoder, built once (json.dumps builds one per call otherwise)
    _encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode
except AttributeError:  # MicroPython
    try:
        json.dumps(0, separators=(",", ":"))

        def _encode(obj):
            return json.dumps(obj, separators=(",", ":"))
    except TypeError:  # older MicroPython: default separators, still valid JSON
        _encode = json.dumps


def text(obj):
    # -> str of one line. Old MicroPython firmware leaves "\n" raw inside strings; structural
    # whitespace never contains one, so escaping every newline is exact.
    out = _encode(obj)
    if "\n" in out:
        out = out.replace("\n", "\\n")
    return out


def dumps(obj):
    # -> bytes of one line: how results that never change are kept, encoded once
    return text(obj).encode()


try:
    json.loads(memoryview(b"0"))
    loads = json.loads  # MicroPython parses any buffer in place
except TypeError:  # CPython: bytes -> str straight from the buffer, then one decoder made once
    _decode = json.JSONDecoder().decode

    def loads(frame):
        return _decode(frame if type(frame) is str else str(frame, "utf-8"))


# A tools/call answer for a dict, structuredContent with its JSON text mirror in content, is a
# list [value, full, tail] (no other result is a list): full, structuredContent too (protocol
# 2025-06-18 and later); tail, pre-encoded JSON fields the revision adds to every result. One per
# server (Server.structured), refilled for every call (no allocation); each link writes it its
# way.


_HEAD = b'{"jsonrpc":"2.0","id":'


class JsonLink:
    # The JSON link: each message one line of JSON, written through the channel's Out.
    def __init__(self, out):
        self.out = out

    def result(self, rid, result):
        out = self.out
        out.put(_HEAD)
        out.json(rid)
        out.put(b',"result":')
        try:
            if type(result) is bytes:      # encoded once, reused (initialize)
                out.put(result)
            elif type(result) is tuple:    # a list page, encoded once, kept in pieces
                for piece in result:
                    out.put(piece)
            elif type(result) is list:     # a tool's dict (a structured reply, above)
                self._structured(result)
            else:
                out.json(_base64_data(result))
        except ValueError:  # CPython: NaN or infinity in a result is not JSON
            out.reset()
            self.error(rid, INTERNAL_ERROR, "Internal error: the result holds a number JSON "
                                            "cannot carry (NaN or infinity)")
            return
        out.put(b"}")
        out.end()

    def _structured(self, reply):
        value, full, tail = reply
        out = self.out
        out.put(b'{"content":[{"type":"text","text":')
        middle = b'}],"structuredContent":' if full else b"}]"
        if not out.mirror(value, middle, full):
            mirror = text(value)
            out.json(mirror)
            out.put(middle)
            if full:
                out.put(mirror)
        if tail:
            out.put(tail)
        out.put(b"}")

    def error(self, rid, code, message, data=None):
        err = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        out = self.out
        out.put(_HEAD)
        out.json(rid)
        out.put(b',"error":')
        out.json(err)
        out.put(b"}")
        out.end()

    def send(self, msg):
        # A notification or a request to the client, as a dict with "jsonrpc".
        self.out.json(msg)
        self.out.end()


def _base64_data(result):
    # Content blocks may carry raw bytes ("data" of an image, "blob" of a resource): a CBOR
    # link sends them raw, JSON wants base64. The handler's own lists are left as they were.
    if type(result) is not dict:
        return result
    for key, field in (("content", "data"), ("contents", "blob")):
        blocks = result.get(key)
        if type(blocks) is not list:
            continue
        for i in range(len(blocks)):
            block = blocks[i]
            if type(block) is dict and type(block.get(field)) in BINARY:
                from binascii import b2a_base64
                if blocks is result[key]:
                    result = dict(result)
                    blocks = result[key] = list(blocks)
                block = dict(block)
                block[field] = b2a_base64(block[field]).decode().rstrip("\n")
                blocks[i] = block
    return result
