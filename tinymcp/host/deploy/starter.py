# tinymcp-deploy --new DIR: a starter board, DIR/main.py, that runs as written (the README's first
# board is this text, with the name "myboard").
import os
import re

from tinymcp.host.deploy import DeployError

MAIN_PY = '''\
# {name}: a board of your own. Run it: python main.py (it speaks MCP on stdin/stdout).
import random

from tinymcp import Server
from tinymcp.schema import integer, number
from tinymcp.sensors.common import reading, typed

UNITS = {{"celsius": "Cel"}}   # UCUM unit codes: "Cel", "%", "hPa", "V", "1" for counts


def read_celsius():
    return 21.5 + random.uniform(-0.2, 0.2)   # simulated: put your sensor's reading here


def build():
    server = Server("{name}", "0.1.0", instructions="A board with one temperature sensor.")

    @server.tool("read_temperature", "The air temperature, averaged over a few readings.",
                 inputs={{"samples?": integer("How many readings to average", 1, 10)}},
                 outputs=typed({{"celsius": number("Air temperature")}}, UNITS), read_only=True)
    def read_temperature(samples=1):
        total = sum(read_celsius() for _ in range(samples))
        return reading({{"celsius": round(total / samples, 2)}}, UNITS)

    @server.resource("sensor://temperature", "temperature", "The latest air temperature",
                     mime="application/json")
    def temperature():
        return reading({{"celsius": round(read_celsius(), 2)}}, UNITS)

    return server


if __name__ == "__main__":
    from tinymcp.port import serve
    serve(build())
'''

NEXT_STEPS = (("python %s", "it speaks MCP on stdin/stdout: type a JSON-RPC request, one a line"),
              ("tinymcp-bridge --sim %s", "the board behind the bridge, for an MCP host"),
              ("tinymcp-deploy --board %s", "onto a MicroPython board on USB"))


def main_py(name="myboard"):
    return MAIN_PY.format(name=name)


def write(folder, out):
    # Refuses to overwrite a main.py: the user's board may be in it.
    main = os.path.join(folder, "main.py")
    if os.path.exists(main):
        raise DeployError("%s exists: the starter never overwrites a board" % main)
    name = os.path.basename(os.path.abspath(folder))
    if not re.match(r"^[A-Za-z0-9_.-]+$", name):
        name = "myboard"
    os.makedirs(folder, exist_ok=True)
    with open(main, "x") as f:
        f.write(main_py(name))
    if not os.path.isabs(folder) and not folder.startswith(os.curdir):
        folder = os.path.join(os.curdir, folder)   # ./sim is this folder, sim the bundled board
        main = os.path.join(folder, "main.py")
    steps = [(command % (main if i == 0 else folder), why) for i, (command, why) in enumerate(NEXT_STEPS)]
    width = max(len(command) for command, _why in steps)
    out.write("wrote %s; next:\n" % main)
    for command, why in steps:
        out.write("  %-*s   %s\n" % (width, command, why))
