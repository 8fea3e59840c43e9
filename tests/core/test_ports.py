# The MicroPython port's UART stream, driven by a fake UART with machine.UART's method names.
import json

from tests.core.support import frame
from tinymcp import Server
from ports.micropython import serve
from ports.micropython.uart import UARTStream


class FakeUART:
    def __init__(self, chunks):
        self.chunks = list(chunks)
        self.written = bytearray()

    def any(self):
        if self.chunks and self.chunks[0] is None:  # a quiet moment on the line
            self.chunks.pop(0)
            return 0
        return len(self.chunks[0]) if self.chunks else 0

    def readinto(self, buf, n):
        chunk = self.chunks.pop(0)
        if len(chunk) > n:
            self.chunks.insert(0, chunk[n:])
            chunk = chunk[:n]
        buf[:len(chunk)] = chunk
        return len(chunk)

    def write(self, data, n=None):  # like machine.UART: str or bytes, n of them when given
        data = data.encode() if type(data) is str else data
        self.written.extend(data[:n])
        return len(data[:n])


def test_serving_over_a_uart_until_the_interrupt_byte():
    server = Server("uart", "0")
    server.tool("hi", "Says hi")(lambda: "hi")
    init = frame("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)
    call = frame("tools/call", {"name": "hi"}, id=1)
    uart = FakeUART([init[:10], None, init[10:] + b"\n" + call + b"\n", None, b"\x03"])
    stream = UARTStream(uart, size=32)
    stream.wait_step_ms = 1
    assert serve(server, stream) == "interrupt"
    lines = bytes(uart.written).split(b"\n")
    assert lines[-1] == b""
    answers = [json.loads(line) for line in lines[:-1]]
    assert [a["id"] for a in answers] == [0, 1]
    assert answers[1]["result"]["content"][0]["text"] == "hi"


def test_a_silent_uart_times_out_without_data():
    stream = UARTStream(FakeUART([]), size=8)
    stream.wait_step_ms = 1
    assert stream.recv(5) == 0
