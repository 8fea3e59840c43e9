# A board served on a machine.UART instead of USB CDC:
#
#   from ports.micropython.uart import UARTStream
#   start(build, stream=UARTStream(machine.UART(0, 115200)))
from tinymcp.clock import sleep_ms


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
