# JSON-RPC 2.0 envelope: error codes, the one JSON codec of the core, frame encoding.
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


try:  # CPython: one compact encoder, built once (json.dumps builds one per call otherwise)
    _encode = json.JSONEncoder(separators=(",", ":")).encode
except AttributeError:  # MicroPython
    try:
        json.dumps(0, separators=(",", ":"))

        def _encode(obj):
            return json.dumps(obj, separators=(",", ":"))
    except TypeError:  # older MicroPython: default separators, still valid JSON
        _encode = json.dumps


def text(obj):
    # -> str of one line. MicroPython's json leaves "\n" raw inside strings; structural
    # whitespace never contains one, so escaping every newline is exact.
    out = _encode(obj)
    if "\n" in out:
        out = out.replace("\n", "\\n")
    return out


def dumps(obj):
    # -> bytes of one line
    return text(obj).encode()


try:
    json.loads(memoryview(b"0"))
    loads = json.loads  # MicroPython parses any buffer in place
except TypeError:
    def loads(frame):
        # CPython wants bytes or str, not a memoryview of the line buffer.
        if type(frame) is memoryview:
            frame = bytes(frame)
        return json.loads(frame)


def result_frame(id, result):
    if type(result) is bytes:  # a result encoded once and reused
        return b'{"jsonrpc":"2.0","id":' + dumps(id) + b',"result":' + result + b"}"
    return dumps({"jsonrpc": "2.0", "id": id, "result": result})


def error_frame(id, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return dumps({"jsonrpc": "2.0", "id": id, "error": err})


def notification_frame(method, params=None):
    if params is None:
        return dumps({"jsonrpc": "2.0", "method": method})
    return dumps({"jsonrpc": "2.0", "method": method, "params": params})


def request_frame(id, method, params=None):
    msg = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        msg["params"] = params
    return dumps(msg)
