# tinymcp.framing.Out on CPython (framing.py's BytesOut is MicroPython's): never shipped to a
# board (tinymcp/host/deploy/files.py HOST_ONLY), so its code costs a board nothing.
import json

_encode = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


class JoinedOut:
    # CPython: the pieces of a message are joined and leave through `send` in one write
    # (send(data, len(data)), the same call as BytesOut's).
    size = 0

    def __init__(self, send, size=None):
        self.send = send
        self.parts = []

    def put(self, piece):  # a bytearray or memoryview may be reused by the caller: copied
        kind = type(piece)
        self.parts.append(piece if kind is bytes else
                          piece.encode() if kind is str else bytes(piece))

    def json(self, value):
        self.parts.append(str(value).encode() if type(value) is int else
                          _encode(value).encode())

    def mirror(self, value, middle, again):  # see framing.BytesOut.mirror
        text = _encode(value)
        parts = self.parts
        parts.append(_encode(text).encode())
        parts.append(middle)
        if again:
            parts.append(text.encode())
        return True

    def end(self, tail=b"\n"):
        parts = self.parts
        parts.append(tail)
        data = b"".join(parts)
        parts.clear()
        self.send(data, len(data))

    def reset(self):
        self.parts.clear()
