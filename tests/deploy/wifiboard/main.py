# A board with a simulated radio, for tinymcp-deploy --wifi: network.WLAN joins at once and the
# board's address is the loopback, so the real boot.start() -> wifi.serve() -> ports.tcp path runs
# under the MicroPython unix port.
import sys

from tinymcp import Server


class _WLAN:
    def __init__(self, interface):
        self.up = False

    def active(self, on=None):
        self.up = True

    def isconnected(self):
        return self.up

    def connect(self, ssid, password):
        self.up = True

    def ifconfig(self):
        return ("127.0.0.1", "255.0.0.0", "127.0.0.1", "127.0.0.1")


class _Network:
    STA_IF = 0
    WLAN = _WLAN


def build():
    server = Server("wifi-test-board", "0.1.0")
    server.tool("hello", "Says hello")(lambda: "hello")
    return server


if __name__ == "__main__":
    sys.modules["network"] = _Network()
    from ports.micropython.boot import start
    start(build)
