# The MicroPython serve path: USB CDC / stdio (sys.stdin/stdout.buffer) and serve(). A board
# that serves on a machine.UART passes ports.micropython.uart.UARTStream(uart) instead (that
# module loads only there).
import gc
import sys
import select

from tinymcp.channel import Channel, Lines

try:
    from micropython import kbd_intr
except ImportError:  # CPython, where the tests serve over a fake UART
    def kbd_intr(chr):
        pass


class StdioStream:
    # USB CDC on boards, the terminal on the unix port. Reads byte by byte while input is
    # ready, because stdin's readinto() blocks until its buffer is full.
    def __init__(self, size=64):
        self.rx = sys.stdin.buffer
        self.tx = sys.stdout.buffer
        self.buf = bytearray(size)
        self.one = bytearray(1)
        self.poller = select.poll()
        self.poller.register(sys.stdin, select.POLLIN)

    def recv(self, timeout_ms):
        n = 0
        size = len(self.buf)
        while n < size:
            ready = False
            for _obj, event in self.poller.ipoll(timeout_ms if n == 0 else 0):
                ready = event & select.POLLIN or event & (select.POLLHUP | select.POLLERR)
            if not ready:
                break
            if not self.rx.readinto(self.one):
                return n if n else -1
            self.buf[n] = self.one[0]
            n += 1
        return n

    def write(self, data, n):
        self.tx.write(data, n)


def serve(server, stream=None, max_frame=None):
    # Ctrl-C is off while serving so 0x03 reaches the framer, which ends serving on it:
    # mpremote's interrupt then lands the board in the REPL as usual.
    gc.collect()  # building the board left garbage; the line buffer wants one contiguous block
    kbd_intr(-1)
    try:
        return Channel(server, Lines(stream or StdioStream(), max_frame)).run()
    finally:
        kbd_intr(3)
