# A board on Wi-Fi (ESP32, Pico W): its settings file, joining the network, serving MCP over TCP.
#
# The settings live on the board, never in the code: network.json in its root,
#   {"ssid": "bench-lab", "password": "...", "token": "...", "port": 8765}
# written by `tinymcp-deploy --wifi SSID` (docs/network.md). Without the file the
# board serves over USB as usual; with it but without a token it refuses to listen.
import json
import sys

from tinymcp.clock import sleep_ms, ticks_diff, ticks_ms
from tinymcp.protocol import MIN_TOKEN

SETTINGS = "network.json"
PORT = 8765


def settings(path=SETTINGS):
    # -> (settings dict, None) to serve on the network, (None, None) to serve over USB, or
    # (None, why) when the file is there but cannot be used.
    try:
        with open(path) as f:
            found = json.load(f)
    except OSError:
        return None, None
    except ValueError:
        return None, path + " is not valid JSON"
    if type(found) is not dict or type(found.get("ssid")) is not str:
        return None, path + " has no ssid"
    token = found.get("token")
    if type(token) is not str or len(token) < MIN_TOKEN:
        return None, path + " has no token of %d characters or more: anyone on the network " \
                            "could drive the board" % MIN_TOKEN
    port = found.get("port", PORT)
    if type(port) is not int or not 0 < port < 65536:
        return None, path + " has a port that is not 1..65535"
    return found, None


def join(ssid, password, timeout_ms=20000):
    # -> the board's IP address on the network, or raises OSError.
    import network
    wlan = network.WLAN(network.STA_IF)
    wlan.active(True)
    if not wlan.isconnected():
        wlan.connect(ssid, password)
        start = ticks_ms()
        while not wlan.isconnected():
            if ticks_diff(ticks_ms(), start) > timeout_ms:
                raise OSError("could not join Wi-Fi network " + ssid)
            sleep_ms(100)
    return wlan.ifconfig()[0]


def serve(server, found):
    # Join the network and serve clients there, one at a time, for as long as the board runs.
    from ports.tcp import listen
    address = join(found["ssid"], found.get("password", ""))
    port = found.get("port", PORT)
    try:
        listen(server, "0.0.0.0", port, found["token"],
               announce="tinymcp: on Wi-Fi %s as %s; MCP on %s:%d (token required)"
                        % (found["ssid"], address, address, port))
    except OSError as e:
        print("tinymcp: the network server stopped: " + str(e))
        if hasattr(sys, "print_exception"):
            sys.print_exception(e)
    return "network"
