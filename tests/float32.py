# Floats as a single-precision board (rp2, esp32) holds them, on any build: f32(x) is x rounded
# to float32, as array("f") stores it. Sums and quotients of float32 values rounded after each
# step are what float32 arithmetic gives (a double's 53 bits round each such result exactly
# once more), so a double-precision build can check what a board computes.
from array import array

SINGLE = 1.0 + 2.0 ** -30 == 1.0   # this build's own floats are float32


def f32(x):
    return array("f", [x])[0]


def mean32(values):
    # The mean a float32 board computes of float32 samples: a running sum, then one division.
    total = 0.0
    for v in values:
        total = f32(total + f32(v))
    return f32(total / len(values))


class Float32Cbor:
    # with Float32Cbor(): the CBOR codec as a float32 board sets it up at import (its float head
    # and format), whatever this build's own floats are.
    def __enter__(self):
        from tinymcp import cbor
        self.saved = cbor._FLOAT, cbor._FLOAT_FORMAT
        cbor._FLOAT, cbor._FLOAT_FORMAT = b"\xfa\0\0\0\0", ">f"

    def __exit__(self, *exc):
        from tinymcp import cbor
        cbor._FLOAT, cbor._FLOAT_FORMAT = self.saved
