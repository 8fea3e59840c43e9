# CPython streams: binary stdin/stdout or any pair of file descriptors (pipes, ptys, sockets).
import os
import select
import sys

from tinymcp.channel import Channel, Lines


class FdStream:
    # Reads into one buffer; writes each message with os.write, whatever Python's own stdout
    # buffering is (PYTHONUNBUFFERED=1 would turn every print-style write into a syscall).
    def __init__(self, rfd=None, wfd=None, size=4096):
        self.rfd = sys.stdin.fileno() if rfd is None else rfd
        self.wfd = sys.stdout.fileno() if wfd is None else wfd
        self.buf = bytearray(size)
        self._bufs = [self.buf]
        self._chunks = None   # a queue filled by a reader thread, where select cannot wait
        self.gone = False

    def recv(self, timeout_ms):
        if self._chunks is not None:
            return self._recv_queued(timeout_ms)
        try:
            ready, _, _ = select.select((self.rfd,), (), (), timeout_ms / 1000)
        except OSError:   # Windows selects sockets only: a pipe or a console is read in a thread
            self._start_reader()
            return self._recv_queued(timeout_ms)
        if not ready:
            return 0
        try:
            n = os.readv(self.rfd, self._bufs)
        except OSError:  # e.g. EIO from a pty whose other side went away
            return -1
        return n if n > 0 else -1

    def _start_reader(self):
        import queue
        import threading
        self._chunks = queue.Queue(1)   # one chunk ahead: the writer is slowed, not buffered

        def run():
            while True:
                try:
                    chunk = os.read(self.rfd, len(self.buf))
                except OSError:
                    chunk = b""
                self._chunks.put(chunk)
                if not chunk:
                    return
        threading.Thread(target=run, daemon=True).start()

    def _recv_queued(self, timeout_ms):
        import queue
        try:
            chunk = self._chunks.get(timeout=timeout_ms / 1000)
        except queue.Empty:
            return 0
        if not chunk:
            self._chunks.put(chunk)   # the end stays the end
            return -1
        self.buf[:len(chunk)] = chunk
        return len(chunk)

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
    return Channel(server, Lines(stream or FdStream(), max_frame)).run()
