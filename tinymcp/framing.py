# Answers on a byte stream: the output buffer a message is written into and leaves from in one
# write (the line framer of the input is tinymcp/channel.py's, which alone reads a stream).
import sys


if sys.implementation.name == "micropython":
    import io
    import json

    try:
        json.dump(0, io.BytesIO(4), separators=(",", ":"))

        def _dump(value, stream):
            json.dump(value, stream, separators=(",", ":"))
    except TypeError:  # older firmware: default separators, still valid JSON
        _dump = json.dump

    class BytesOut:
        # A message is written into a preallocated BytesIO (json.dump writes there without
        # allocating) and leaves through `send` in one write, from a preallocated buffer; a
        # message longer than the buffer leaves in full-buffer chunks. send(buf, n) sends
        # buf[:n] before it returns: buf is reused.
        size = 512

        def __init__(self, send, size=None):
            self.send = send
            size = size or self.size
            self.bio = io.BytesIO(size)
            self.buf = bytearray(size)

        def put(self, piece):  # bytes, bytearray, memoryview or str: all are buffers here
            bio = self.bio
            if len(piece) > len(self.buf) and type(piece) is not str:
                # A long encoded piece (a cached page) leaves as it is, after what precedes it.
                n = bio.tell()
                if n:
                    bio.seek(0)
                    bio.readinto(self.buf)
                    self.send(self.buf, n)
                    bio.seek(0)
                self.send(piece, len(piece))
                return
            bio.write(piece)
            if bio.tell() > len(self.buf):
                self._spill()

        def json(self, value):
            _dump(value, self.bio)
            if self.bio.tell() > len(self.buf):
                self._spill()

        def mirror(self, value, middle, again):
            # value's JSON text as a JSON string, then middle, then (when again) the text
            # itself: a tool's text mirror and its structured content, without making the text
            # a str. The text is dumped in place, copied to the send buffer (free until end())
            # and written back escaped. -> False, with nothing written, when the message would
            # outgrow the buffer on the way (or old firmware left a raw newline in a string):
            # the caller then makes the str.
            bio = self.bio
            buf = self.buf
            start = bio.tell()
            _dump(value, bio)
            m = bio.tell() - start
            bio.seek(start)
            if start + 3 * m + 2 + len(middle) > len(buf):
                return False
            bio.readinto(buf, m)
            if buf.find(b"\n", 0, m) >= 0:
                bio.seek(start)
                return False
            bio.seek(start)
            bio.write(b'"')
            pos = 0
            while pos < m:  # a backslash before each '"' and '\\'
                q = buf.find(b'"', pos, m)
                if q < 0:
                    q = m
                k = buf.find(b"\\", pos, q)
                if k >= 0:
                    q = k
                bio.write(buf, pos, q - pos)
                if q == m:
                    break
                bio.write(b"\\")
                bio.write(buf, q, 1)
                pos = q + 1
            bio.write(b'"')
            bio.write(middle)
            if again:
                bio.write(buf, 0, m)
            return True

        def _spill(self):
            # Send the full chunks of a long message now; what is left moves to the front.
            bio = self.bio
            buf = self.buf
            size = len(buf)
            n = bio.tell()
            bio.seek(0)
            while n >= size:
                bio.readinto(buf)
                self.send(buf, size)
                n -= size
            bio.readinto(buf, n)
            bio.seek(0)
            bio.write(buf, 0, n)

        def end(self, tail=b"\n"):  # tail: what ends the message (a batch's answers: none)
            bio = self.bio
            bio.write(tail)
            n = bio.tell()
            bio.seek(0)
            buf = self.buf
            size = len(buf)
            while n > 0:
                bio.readinto(buf)  # may read past n: bytes of an earlier, longer message
                self.send(buf, n if n < size else size)
                n -= size
            bio.seek(0)

        def reset(self):  # drop a message half written
            self.bio.seek(0)

    Out = BytesOut

else:   # CPython: its Out lives in a module no board loads or is sent (deploy's HOST_ONLY)
    from tinymcp.joined import JoinedOut as Out
