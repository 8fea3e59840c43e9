# A board on Wi-Fi: the network.json deploy writes onto it (its settings live there, never in the
# code: ports/micropython/wifi.py reads them at boot), and the check that it answers on the network.
import json
import os
import re
import secrets
import time

from tinymcp.host.deploy import DeployError
from tinymcp.host.lineclient import LineClient
from tinymcp.protocol import LATEST, MIN_TOKEN, TOKEN_LINE

SETTINGS = "network.json"   # the board's ports/micropython/wifi.py SETTINGS
# What the board prints on its console once it listens (ports/micropython/wifi.py serve()).
LISTENING = re.compile(r"tinymcp: on Wi-Fi .* MCP on ([0-9A-Za-z.:\[\]-]+):(\d+)")
NOT_ON_NETWORK = "tinymcp: not on the network: "
# What a board serving through an MQTT broker prints once it is there (ports/mqtt.py), and the
# starts of what it prints when it cannot be.
ON_BROKER = re.compile(r"tinymcp: on the MQTT broker (\S+) as (\S+), server-name (\S+)")
BROKER_TROUBLE = ("tinymcp: the broker refused the connection: ", "tinymcp: the MQTT broker ")
BOARD_FILES = {"cert": "mqtt.crt", "key": "mqtt.key", "ca": "mqtt-ca.crt"}   # on the board
MQTT_URL = re.compile(r"^mqtts?://[^\s/@:]+(:\d{1,5})?/?$")
CONNECT_FOR_S = 10       # how long the check keeps trying to connect to the board
CONNECT_RETRY_S = 0.25
# What deploy asks a board, on its serial line or on the network, to see that it serves.
INITIALIZE = {"protocolVersion": LATEST, "capabilities": {},
              "clientInfo": {"name": "tinymcp-deploy", "version": "0.1.0"}}


def settings(ssid, password, token, port, out, mqtt=None, files=None):
    # -> (network.json bytes, the token). A token is made when none is given, and said once.
    # mqtt: a broker URL to serve through instead (no token then: the broker's auth decides);
    # files: {"cert"/"key"/"ca": its name on the board} (tls_files) for its "mqtt" section.
    if not ssid:
        raise DeployError("--wifi needs the network's name (SSID)")
    if mqtt is not None:
        data = {"ssid": ssid, "password": password or "", "mqtt": broker(mqtt, os.environ)}
        data["mqtt"].update(files or {})
        return (json.dumps(data, indent=1) + "\n").encode(), None
    if not 0 < port < 65536:
        raise DeployError("--listen-port must be 1..65535, not %d" % port)
    if token is None:
        token = secrets.token_urlsafe(24)
        out.write("board token (give it to tinymcp-bridge as $TINYMCP_BOARD_TOKEN; it is not "
                  "shown again): %s\n" % token)
    elif len(token) < MIN_TOKEN:
        raise DeployError("the board token must have at least %d characters (the board refuses "
                          "to listen with a shorter one)" % MIN_TOKEN)
    data = {"ssid": ssid, "password": password or "", "token": token, "port": port}
    return (json.dumps(data, indent=1) + "\n").encode(), token


def broker(url, env):
    # network.json's "mqtt" section: the URL, and the broker login from the environment.
    if not MQTT_URL.match(url):
        raise DeployError("--mqtt wants mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (the login "
                          "comes from $TINYMCP_MQTT_USERNAME and $TINYMCP_MQTT_PASSWORD)")
    section = {"url": url}
    for key, name in (("username", "TINYMCP_MQTT_USERNAME"), ("password", "TINYMCP_MQTT_PASSWORD")):
        if env.get(name):
            section[key] = env[name]
    return section


def tls_files(mqtt, cert, key, ca):
    # --mqtt-cert/--mqtt-key/--mqtt-ca -> [(network.json key, name on the board, bytes)]: the
    # board's client certificate and key (the broker knows the board by it, docs/fleet.md) and
    # the CA its broker's certificate is checked against, copied as given (PEM; the board
    # decodes it for MicroPython's mbedtls).
    if not (cert or key or ca):
        return []
    if mqtt is None or not mqtt.startswith("mqtts://"):
        raise DeployError("--mqtt-cert, --mqtt-key and --mqtt-ca go with "
                          "--mqtt mqtts://HOST[:PORT]")
    if bool(cert) != bool(key):
        raise DeployError("--mqtt-cert and --mqtt-key go together: the board's certificate and "
                          "its private key")
    import ssl
    try:
        context = ssl.create_default_context(cafile=ca) if ca else ssl.create_default_context()
        if cert:
            context.load_cert_chain(cert, key)
    except (OSError, ssl.SSLError, ValueError) as e:
        raise DeployError("--mqtt-cert/--mqtt-key/--mqtt-ca: not a usable certificate, key and "
                          "CA (PEM files, the key unencrypted and the certificate's): %s"
                          % (getattr(e, "strerror", None) or e)) from None
    found = []
    for field, path in (("cert", cert), ("key", key), ("ca", ca)):
        if path:
            with open(path, "rb") as f:
                found.append((field, BOARD_FILES[field], f.read()))
    return found


def on_broker(line):
    # -> "the MQTT broker HOST:PORT as ID, server-name NAME" when the board's console line says
    # it is there; raises DeployError when it says the broker cannot be had; else None.
    found = ON_BROKER.search(line)
    if found:
        return "the MQTT broker %s as %s, server-name %s" % found.groups()
    if line.startswith(BROKER_TROUBLE):
        raise DeployError("the board cannot serve through the broker: " + line[len("tinymcp: "):])
    return None


def listening(line):
    # -> (host, port) when the board's console line says where it serves MCP, else None.
    found = LISTENING.search(line)
    return (found.group(1), int(found.group(2))) if found else None


def verify(host, port, token, timeout=10.0, connect_for=CONNECT_FOR_S):
    # initialize over TCP, presenting the token first -> serverInfo, or a one-line DeployError.
    # The connection is tried again for connect_for seconds: a board that has just joined the
    # network, or a Wi-Fi link that drops the first packets, can refuse or miss the first try.
    give_up = time.monotonic() + connect_for
    while True:
        try:
            client = LineClient.connect(host, port, (TOKEN_LINE + token + "\n").encode(), timeout)
            break
        except OSError as e:
            if time.monotonic() >= give_up:
                raise DeployError("the board listens on %s:%d but cannot be reached from here "
                                  "(tried for %d s): %s" % (host, port, connect_for,
                                                            e.strerror or e)) from None
            time.sleep(CONNECT_RETRY_S)
    try:
        client.start("initialize", INITIALIZE)
        answer = client.message()   # its first answer: the initialize's, or a refusal
    except (TimeoutError, EOFError, OSError):
        raise DeployError("the board on %s:%d did not answer initialize" % (host, port)) from None
    finally:
        client.close()
    if "result" not in answer:
        raise DeployError("the board on %s:%d refused: %s"
                          % (host, port, answer.get("error", {}).get("message")))
    return answer["result"].get("serverInfo", {})
