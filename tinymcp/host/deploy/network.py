# A board on Wi-Fi: the network.json deploy writes onto it (its settings live there, never in the
# code: ports/micropython/wifi.py reads them at boot), and the check that it answers on the network.
import json
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
CONNECT_FOR_S = 10       # how long the check keeps trying to connect to the board
CONNECT_RETRY_S = 0.25
# What deploy asks a board, on its serial line or on the network, to see that it serves.
INITIALIZE = {"protocolVersion": LATEST, "capabilities": {},
              "clientInfo": {"name": "tinymcp-deploy", "version": "0.1.0"}}


def settings(ssid, password, token, port, out):
    # -> (network.json bytes, the token). A token is made when none is given, and said once.
    if not ssid:
        raise DeployError("--wifi needs the network's name (SSID)")
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
