# A board on Wi-Fi (ESP32, Pico W): its settings file, joining the network, serving MCP over TCP
# or through an MQTT broker.
#
# The settings live on the board, never in the code: network.json in its root,
#   {"ssid": "bench-lab", "password": "...", "token": "...", "port": 8765}
# written by `tinymcp-deploy --wifi SSID` (docs/network.md); the board announces itself over mDNS
# (ports/mdns.py: `tinymcp-bridge --port discover` finds it) unless "mdns": false. Without the file the
# board serves over USB as usual; with it but without a token it refuses to listen. With an
# "mqtt" section it serves through that broker instead (no token: the broker's auth decides):
#   "mqtt": {"url": "mqtt://broker.lan:1883", "username": "...", "password": "...",
#            "name": "tinymcp/pico-lab", "id": "pico-e6614c"}     (all but url optional)
# and for mutual TLS (mqtts://) the board's client certificate and key, files on the board:
#            "cert": "mqtt.crt", "key": "mqtt.key"                 (docs/fleet.md)
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
    if "mqtt" in found:
        return _mqtt_settings(found, path)
    token = found.get("token")
    if type(token) is not str or len(token) < MIN_TOKEN:
        return None, path + " has no token of %d characters or more: anyone on the network " \
                            "could drive the board" % MIN_TOKEN
    port = found.get("port", PORT)
    if type(port) is not int or not 0 < port < 65536:
        return None, path + " has a port that is not 1..65535"
    return found, None


def _mqtt_settings(found, path):
    broker = found["mqtt"]
    if type(broker) is not dict or type(broker.get("url")) is not str:
        return None, path + ": mqtt has no url (mqtt://HOST[:PORT])"
    for key in ("username", "password", "name", "id", "cert", "key", "ca"):
        if type(broker.get(key, "")) is not str:
            return None, path + ": mqtt's " + key + " is not a string"
    for key in ("cert", "key", "ca"):
        if broker.get(key) and not _exists(broker[key]):
            return None, path + ": mqtt's " + key + " " + broker[key] + " is not on the board"
    if broker.get("key") and not broker.get("cert"):
        return None, path + ": mqtt has a key but no cert"
    from ports.mqtt import check, parse_url
    try:
        tls = parse_url(broker["url"])[2]
        check(broker.get("name", "tinymcp/board"), broker.get("id", "board"))
    except ValueError as e:
        return None, path + ": " + str(e)
    if tls:
        try:
            import tls  # noqa: F401  (what ports/mqtt5.py uses; ssl.py wraps it)
        except ImportError:
            try:
                import ssl  # noqa: F401
            except ImportError:
                return None, path + ": mqtts:// needs ssl, which this firmware lacks"
    elif broker.get("cert") or broker.get("ca"):
        return None, path + ": mqtt's cert and ca go with mqtts:// only"
    return found, None


def _exists(name):
    try:
        open(name, "rb").close()
        return True
    except OSError:
        return False


def start(server, path=SETTINGS):
    # Serve on the network the settings file names (ports/micropython/boot.py, when the board
    # holds one): -> None once that ended, else why the board cannot (it then serves over USB).
    found, why = settings(path)   # imports ports.mqtt for an "mqtt" section
    if found:
        try:
            serve(server, found)
            return None
        except (ImportError, OSError) as e:  # no radio, or the network would not have it
            why = str(e) or e.__class__.__name__
    return why or path + " cannot be read"


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
    # Join the network and serve clients there, one at a time (or each MQTT client its own
    # session), for as long as the board runs.
    address = join(found["ssid"], found.get("password", ""))
    broker = found.get("mqtt")
    if broker:
        from ports.mqtt import serve as serve_mqtt
        print("tinymcp: on Wi-Fi %s as %s; MCP through the MQTT broker %s"
              % (found["ssid"], address, broker["url"]))
        serve_mqtt(server, broker["url"], broker.get("name"), broker.get("id"),
                   user=broker.get("username"), password=broker.get("password"),
                   cert=broker.get("cert"), key=broker.get("key"), ca=broker.get("ca"))
        return "network"
    from ports.tcp import listen
    port = found.get("port", PORT)
    try:
        listen(server, "0.0.0.0", port, found["token"],
               announce="tinymcp: on Wi-Fi %s as %s; MCP on %s:%d (token required)"
                        % (found["ssid"], address, address, port),
               advertise=False if found.get("mdns") is False else address)
    except OSError as e:
        print("tinymcp: the network server stopped: " + str(e))
        if hasattr(sys, "print_exception"):
            sys.print_exception(e)
    return "network"
