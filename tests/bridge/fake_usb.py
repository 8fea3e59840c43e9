# tinymcp-bridge with a test double of pyserial's port list: the serial ports and their USB
# identities come from the JSON file named by $FAKE_USB_PORTS, which a test rewrites as it plugs
# and unplugs boards ([{"device", "vid", "pid", "product"}, ...]); the traffic goes over real ptys.
import json
import os
import sys

from serial.tools import list_ports, list_ports_common


def comports(include_links=False):
    try:
        with open(os.environ["FAKE_USB_PORTS"]) as f:
            plugged = json.load(f)
    except (OSError, ValueError):
        plugged = []
    ports = []
    for entry in plugged:
        port = list_ports_common.ListPortInfo(entry["device"], skip_link_detection=True)
        port.vid, port.pid = entry.get("vid"), entry.get("pid")
        port.product = port.description = entry.get("product", "n/a")
        ports.append(port)
    return ports


if __name__ == "__main__":
    list_ports.comports = comports
    from tinymcp.host.bridge.cli import main
    sys.exit(main())
