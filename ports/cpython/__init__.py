# CPython streams: binary stdin/stdout or any pair of file descriptors (pipes, ptys, sockets).
import os
import select
import sys

from tinymcp.channel import Channel


class FdStream:
    # Reads into one buffer; writes each message with os.write, whatever Python's own stdout
    # buffering is (PYTHONUNBUFFERED=1 would turn every print-style write into a syscall).
    def __init__(self, rfd=None, wfd=None, size=4096):
        self.rfd = sys.stdin.fileno() if rfd is None else rfd
        self.wfd = sys.stdout.fileno() if wfd is None else wfd
        self.buf = bytearray(size)
        self._bufs = [self.buf]
        self.gone = False

    def recv(self, timeout_ms):
        ready, _, _ = select.select((self.rfd,), (), (), timeout_ms / 1000)
        if not ready:
            return 0
        try:
            n = os.readv(self.rfd, self._bufs)
        except OSError:  # e.g. EIO from a pty whose other side went away
            return -1
        return n if n > 0 else -1

    def write(self, data, n):
        # One message: one os.write, unless the pipe takes it in parts.
        view = memoryview(data)[:n]
        while view and not self.gone:
            try:
                view = view[os.write(self.wfd, view):]
            except BlockingIOError:  # a non-blocking fd whose reader is slow: wait for room
                select.select((), (self.wfd,), ())
            except OSError:  # the reader went away; recv will see the end of input
                self.gone = True


def serve(server, stream=None, max_frame=None):
    return Channel(server, stream or FdStream(), max_frame).run()
