# MicroPython streams: USB CDC / stdio (sys.stdin/stdout.buffer) and machine.UART; serve().
import gc
import sys
import select

from tinymcp.channel import Channel
from tinymcp.clock import sleep_ms

try:
    from micropython import kbd_intr
except ImportError:  # CPython, where the tests exercise the UART stream with a fake UART
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


class UARTStream:
    # A machine.UART, or anything with its any(), readinto(buf, n) and write(buf, n) (the board
    # file builds it, so this module never imports machine). Waits by polling any(): works on
    # every port.
    wait_step_ms = 2

    def __init__(self, uart, size=256):
        self.uart = uart
        self.buf = bytearray(size)

    def recv(self, timeout_ms):
        uart = self.uart
        waited = 0
        while not uart.any():
            if waited >= timeout_ms:
                return 0
            sleep_ms(self.wait_step_ms)
            waited += self.wait_step_ms
        n = uart.readinto(self.buf, min(uart.any(), len(self.buf)))
        return n or 0

    def write(self, data, n):
        self.uart.write(data, n)


def serve(server, stream=None, max_frame=None):
    # Ctrl-C is off while serving so 0x03 reaches the framer, which ends serving on it:
    # mpremote's interrupt then lands the board in the REPL as usual.
    gc.collect()  # building the board left garbage; the line buffer wants one contiguous block
    kbd_intr(-1)
    try:
        return Channel(server, stream or StdioStream(), max_frame).run()
    finally:
        kbd_intr(3)
