# A board whose temperature history holds known samples (so a test knows where the plot's line
# runs), and a tool that answers hostile SVG images, for the bridge's pictures (pictures.py).
# Runs as a script: `tinymcp-bridge --sim tests/bridge/plotboard.py`.
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from tinymcp import Server, history  # noqa: E402
from tinymcp.schema import string  # noqa: E402

# (ms since the sampler started, Cel): min 10 at 1 s, max 30 at 4 s, 10 samples over 9 s.
SAMPLES = ((0, 15.0), (1000, 10.0), (2000, 20.0), (3000, 25.0), (4000, 30.0), (5000, 22.0),
           (6000, 18.0), (7000, 12.0), (8000, 16.0), (9000, 24.0))
# An image on the bridge's disk (the test makes it): a renderer asked would draw it in.
RED = os.environ.get("PLOTBOARD_IMAGE", "/nonexistent/red.png")
# Each SVG a board might send that the bridge must not render as it asks (pictures.screen).
HOSTILE = {
    "file": '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><image href="%s" '
            'width="40" height="40"/></svg>' % RED,
    "file-url": '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><image '
                'href="file://%s" width="40" height="40"/></svg>' % RED,
    "http": '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" '
            'height="40" style="fill: url(http://127.0.0.1:9/x.svg#p)"/></svg>',
    "entities": '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b '
                '"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
                '<svg xmlns="http://www.w3.org/2000/svg"><text>&c;</text></svg>',
    "malformed": '<svg xmlns="http://www.w3.org/2000/svg" width="40"><rect width="40"</svg>',
    "huge": '<svg xmlns="http://www.w3.org/2000/svg" width="100000" height="50000"><rect '
            'width="100%" height="100%" fill="#1f77b4"/></svg>',
}


def _no_sensor():
    raise OSError("the samples are the test's")   # the sampler adds none of its own


def build():
    server = Server("tinymcp-plot-test", "0.0.1")
    readings = history.History(1000, 16, clock=lambda: 0)
    temperature = readings.track("temperature", _no_sensor, "Cel")
    for t, value in SAMPLES:
        temperature.add(t, value)
    history.attach(server, readings)

    @server.tool("hostile_picture", "An SVG image no bridge should draw as it asks",
                 inputs={"kind": string("Which", enum=sorted(HOSTILE))}, read_only=True)
    def hostile_picture(kind):
        return [{"type": "image", "data": HOSTILE[kind].encode(), "mimeType": "image/svg+xml"}]

    @server.tool("plot_as_task", "The huge picture, drawn after a step, as a task may",
                 read_only=True, task="optional")
    def plot_as_task():
        yield 0.5
        return [{"type": "image", "data": HOSTILE["huge"].encode(),
                 "mimeType": "image/svg+xml"}, {"type": "text", "text": "drawn later"}]

    return server


if __name__ == "__main__":
    from ports import serve
    serve(build())
