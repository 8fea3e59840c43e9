# CPython's TLS socket as a port stream (mqtts:// on CPython): a TLS record decrypted ahead sits
# in the socket, not in the kernel, so poll() alone would leave it unread; and a non-blocking
# TLS socket would raise "want read" mid-record. So: blocking, with the send wait as timeout,
# and read once poll() or the socket's own buffer says there is something.
import ssl

from ports.tcp import SocketStream


class TlsStream(SocketStream):
    def __init__(self, sock, size=512):
        SocketStream.__init__(self, sock, size)
        sock.settimeout(self.send_wait_ms / 1000)

    def readinto(self, view, timeout_ms):
        # -> bytes read into view, 0 on timeout, -1 when the connection is gone.
        if self.closed:
            return -1
        if not self.sock.pending() and not self.readable.poll(timeout_ms):
            return 0
        try:
            n = self.sock.recv_into(view)
        except (ssl.SSLWantReadError, TimeoutError):   # a record not whole yet
            return 0
        except OSError:
            self.closed = True
            return -1
        if n <= 0:
            self.closed = True
            return -1
        return n
