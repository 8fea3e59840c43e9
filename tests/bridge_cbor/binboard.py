# The simulated board plus binary content and an exact echo: what the CBOR link tests need.
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from tinymcp.schema import string  # noqa: E402
from tests.bridge.testboard import sim_server  # noqa: E402

KIB = bytes((i * 7 + 3) % 256 for i in range(1024))  # every special byte value occurs
PIXELS = bytes(range(256)) * 2


def build():
    server = sim_server()

    @server.tool("echo", "Returns its text.", inputs={"text": string("anything")},
                 outputs={"text": string()}, read_only=True)
    def echo(text):
        return {"text": text}

    @server.tool("snapshot", "A raw image from the camera.", read_only=True)
    def snapshot():
        return [{"type": "image", "data": PIXELS, "mimeType": "image/x-raw"}]

    server.resource("blob://kib", "kib", "1 KiB of bytes", mime="application/octet-stream")(
        lambda: KIB)
    server.resource("bytes://{n}", "first n bytes", "The first n bytes of the 1 KiB blob.",
                    mime="application/octet-stream")(lambda n: KIB[:int(n)])
    return server


if __name__ == "__main__":
    from ports import serve
    serve(build())
