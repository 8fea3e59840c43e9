# CPython streams: binary stdin/stdout or any pair of file descriptors (pipes, ptys, sockets).
import os
import select
import sys

from tinymcp.channel import Channel


class FdStream:
    def __init__(self, rfd=None, wfile=None, size=4096):
        self.rfd = sys.stdin.fileno() if rfd is None else rfd
        self.wfile = sys.stdout.buffer if wfile is None else wfile
        self.buf = bytearray(size)
        self._bufs = [self.buf]

    def recv(self, timeout_ms):
        ready, _, _ = select.select((self.rfd,), (), (), timeout_ms / 1000)
        if not ready:
            return 0
        try:
            n = os.readv(self.rfd, self._bufs)
        except OSError:  # e.g. EIO from a pty whose other side went away
            return -1
        return n if n > 0 else -1

    def write(self, piece):
        try:
            self.wfile.write(piece.encode() if type(piece) is str else piece)
        except (ValueError, OSError):
            pass  # the reader went away; recv will see the end of input

    def end(self):
        try:
            self.wfile.write(b"\n")
            self.wfile.flush()
        except (ValueError, OSError):
            pass


def serve(server, stream=None, max_frame=None):
    return Channel(server, stream or FdStream(), max_frame).run()
