# A board that shares tool names with the sim board but not their schemas (for the bridge's
# --compact tests): its read_adc has eight channels, and its locate takes an argument named board.
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from tinymcp import Server  # noqa: E402
from tinymcp.schema import integer, string  # noqa: E402


def build():
    server = Server("tinymcp-variant", "0.1.0", instructions="An eight-channel ADC board.")

    @server.tool("read_adc", "Read one of eight ADC channels.",
                 inputs={"channel": integer("ADC channel", 0, 7)}, read_only=True)
    def read_adc(channel):
        return {"raw": 1000 * channel}

    @server.tool("locate", "Blink the LED of a board on this one's bus.",
                 inputs={"board": string("the bus address")}, read_only=True)
    def locate(board):
        return {"blinking": board}

    return server


if __name__ == "__main__":
    from ports import serve
    serve(build())
