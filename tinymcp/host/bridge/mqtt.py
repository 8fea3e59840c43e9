# --mqtt: boards behind an MQTT 5 broker, as EMQX's "MCP over MQTT" specification says for a
# client. One broker connection per --mqtt URL (paho-mqtt, its own thread); a board's retained
# presence is its discovery, an empty one (its will, or its goodbye) its unplug. Each board found
# is one more board of the router, with an MqttLink under its BoardSession: initialize goes to
# the board's control topic, everything after to its RPC topic; what the board says comes from
# the RPC topic and its capability topic (list changes, resource updates). A board that goes
# away and comes back gets its label again. paho is imported only when --mqtt is given.
import asyncio
import collections
import hashlib
import json
import logging
import os
import re
import ssl
import sys
import threading
import uuid
from urllib.parse import urlsplit

from tinymcp.host.bridge.catalog import LABEL
from tinymcp.host.bridge.host import log_failure
from tinymcp.host.bridge.link import MAX_LINE, PortError

log = logging.getLogger("tinymcp.bridge.mqtt")

USERNAME_ENV = "TINYMCP_MQTT_USERNAME"
PASSWORD_ENV = "TINYMCP_MQTT_PASSWORD"
CA_ENV = "TINYMCP_MQTT_CA"
COMPONENT = "MCP-COMPONENT-TYPE"
SENDER = "MCP-MQTT-CLIENT-ID"
DISCONNECTED = b'{"jsonrpc":"2.0","method":"notifications/disconnected"}'
KEEPALIVE = 30            # seconds: the bridge's own keep-alive with the broker
RETRY = (1, 30)           # seconds between attempts to reach the broker: first, at most
MAX_QUEUED = 256          # messages of one board waiting for the loop before its next are dropped
DRAIN = 64                # messages handled per turn of the loop, so nothing else starves
MAX_BOARDS = 1024         # boards one broker may announce before new ones are ignored


class Frame(bytes):
    # One message as published; .control: it goes to the board's control topic (initialize).
    control = False


def parse_url(url):
    # "mqtt://HOST[:PORT]" or "mqtts://HOST[:PORT]" -> (host, port, tls); PortError otherwise.
    usage = ("%s is not a broker URL: mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (PORT 1..65535)"
             % url)
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts") or parts.path.strip("/") or parts.query:
        raise PortError(usage)
    if "@" in parts.netloc:
        raise PortError("%s: no credentials in the URL (every local user can read a command "
                        "line); set $%s and $%s" % (parts.scheme + "://" + parts.hostname
                                                    if parts.hostname else url,
                                                    USERNAME_ENV, PASSWORD_ENV))
    try:
        port = parts.port
    except ValueError:
        raise PortError(usage) from None
    if not parts.hostname:
        raise PortError(usage)
    tls = parts.scheme == "mqtts"
    return parts.hostname, port or (8883 if tls else 1883), tls


def check_filter(name_filter):
    # A server-name filter as the presence subscription takes it; PortError otherwise.
    parts = name_filter.split("/")
    bad = not name_filter or any(("+" in p or "#" in p) and p not in ("+", "#") for p in parts)
    if bad or "#" in parts[:-1]:
        raise PortError("--mqtt-filter %r is not a topic filter for server names (levels "
                        "split by /, + for one level, # last for the rest)" % name_filter)


def check(urls, filters):
    # The --mqtt options before anything starts: PortError with the one line to say.
    for url in urls:
        _host, _port, tls = parse_url(url)
        ca = os.environ.get(CA_ENV) or None
        if tls and ca is not None:
            try:
                ssl.create_default_context(cafile=ca)
            except (OSError, ssl.SSLError, ValueError) as e:
                raise PortError("$%s: %s is not a usable CA certificate (PEM): %s"
                                % (CA_ENV, ca, getattr(e, "strerror", None) or e)) from None
    for name_filter in filters:
        check_filter(name_filter)
    try:
        import paho.mqtt.client  # noqa: F401  (only --mqtt needs it)
    except ImportError:
        raise PortError("--mqtt needs paho-mqtt 2.x: pip install 'tinymcp[host]' "
                        "(or pip install paho-mqtt)") from None


def label_for(server_id, server_name, taken):
    # A label (a-z0-9-, a letter first, at most 24) from the server-name's last level and the
    # server-id: "tinymcp/sim" + "sim-python" -> "sim-python"; "tinymcp/pico" + "3c61..." ->
    # "pico-3c61..."; made unique against taken with -2, -3 ...
    def clean(text):
        return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    base = clean(server_name.rsplit("/", 1)[-1]) or "board"
    if not base[0].isalpha():
        base = "b-" + base
    own = clean(server_id)
    label = own if own.startswith(base) else ("%s-%s" % (base, own)).strip("-")
    if len(label) > 24:
        label = "%s-%s" % (base[:15].strip("-"),
                           hashlib.sha1(server_id.encode()).hexdigest()[:8])
    first, n = label, 1
    while label in taken or not LABEL.match(label):
        n += 1
        label = "%s-%d" % (first[:20].strip("-"), n)
    return label


def _decode(payload):
    # A JSON-RPC message from a payload -> the dict, or None for anything else.
    try:
        msg = json.loads(payload)
    except (ValueError, RecursionError):
        return None
    return msg if type(msg) is dict and msg.get("jsonrpc") == "2.0" else None


class MqttLink:
    # The link of one board behind the broker, as a BoardSession uses a serial Link: up while
    # the broker connection is (the board is only served while its presence is there).
    network = True
    first_try = True

    def __init__(self, broker, server_id, server_name, *, on_message, on_noise, on_state):
        self.broker = broker
        self.server_id = server_id
        self.server_name = server_name
        self.device = "%s %s/%s" % (broker.shown, server_id, server_name)
        self.control = "$mcp-server/%s/%s" % (server_id, server_name)
        self.rpc = "$mcp-rpc/%s/%s/%s" % (broker.client_id, server_id, server_name)
        self.on_message = on_message
        self.on_state = on_state
        self.mode = "json"
        self.frames_in = 0
        self._closed = None

    @property
    def connected(self):
        return self.broker.connected

    async def run(self):
        self._closed = asyncio.get_running_loop().create_future()
        if self.broker.connected:
            self.on_state(True)
        await self._closed

    def deliver(self, msg):
        self.frames_in += 1
        try:
            self.on_message(msg)
        except Exception:  # one odd message must not cost the messages behind it
            log.exception("handling a message from %s: %s", self.device, str(msg)[:200])

    def encode(self, msg):
        frame = Frame(json.dumps(msg, separators=(",", ":")).encode())
        frame.control = msg.get("method") == "initialize"
        return frame

    def send(self, msg, urgent=False):
        return self.write(self.encode(msg), urgent)

    def write(self, frame, urgent=False):
        # Publish one message -> the frame, or None when the broker is out of reach.
        topic = self.control if getattr(frame, "control", False) else self.rpc
        return frame if self.broker.publish(topic, bytes(frame)) else None

    def withdraw(self, frame):
        return False   # a publish is handed to the broker at once: never taken back

    def send_raw(self, data):
        return False   # no REPL behind a broker

    def close(self):
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)


class Broker:
    # One --mqtt URL: the connection (paho's thread), the boards its presences announce.
    # serve(server_id, server_name, make_link) -> a handle for a board found; let_go(handle)
    # (async) when its presence is cleared or the broker is lost; on_state(up) after changes.

    def __init__(self, url, filters, serve, let_go):
        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties
        self.mqtt = mqtt
        self.url = url
        self.host, self.port, self.tls = parse_url(url)
        self.shown = "%s://%s:%d" % ("mqtts" if self.tls else "mqtt", self.host, self.port)
        self.filters = filters        # server-name filters of the presence subscription
        self.serve = serve
        self.let_go = let_go
        self.client_id = "tinymcp-bridge-" + uuid.uuid4().hex[:12]
        self.boards = {}              # (server-id, server-name) -> (link, handle)
        self.connected = False
        self.loop = None
        self._said = None             # the last connection trouble logged: said once
        self._queue = collections.deque()
        self._queued = collections.Counter()   # server-id -> its messages in the queue
        self._lock = threading.Lock()
        self._draining = False
        self._dropped = collections.Counter()
        users = [(COMPONENT, "mcp-client"), (SENDER, self.client_id)]
        self.props = Properties(PacketTypes.PUBLISH)
        self.props.UserProperty = users
        self.connect_props = Properties(PacketTypes.CONNECT)
        self.connect_props.SessionExpiryInterval = 0
        self.connect_props.MaximumPacketSize = MAX_LINE   # larger ones the broker never sends
        self.connect_props.UserProperty = [
            (COMPONENT, "mcp-client"),
            ("MCP-META", json.dumps({"implementation": "tinymcp-bridge"}))]
        c = self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=self.client_id,
                                      protocol=mqtt.MQTTv5)
        will = Properties(PacketTypes.WILLMESSAGE)
        will.UserProperty = users
        c.will_set(self.presence_topic, DISCONNECTED, properties=will)
        user = os.environ.get(USERNAME_ENV)
        if user:
            c.username_pw_set(user, os.environ.get(PASSWORD_ENV))
        if self.tls:   # the CA of $TINYMCP_MQTT_CA (checked at the start), else the system's
            c.tls_set(ca_certs=os.environ.get(CA_ENV) or None, cert_reqs=ssl.CERT_REQUIRED)
        c.reconnect_delay_set(*RETRY)
        c.on_connect = self._connected
        c.on_disconnect = self._disconnected
        c.on_message = self._message
        c.on_connect_fail = self._connect_failed

    @property
    def presence_topic(self):
        return "$mcp-client/presence/" + self.client_id

    # -- the broker connection (paho's thread) ----------------------------------------------

    async def run(self):
        self.loop = asyncio.get_running_loop()
        log.info("--mqtt: reaching the broker %s as %s", self.shown, self.client_id)
        self.client.connect_async(self.host, self.port, keepalive=KEEPALIVE, clean_start=True,
                                  properties=self.connect_props)
        self.client.loop_start()
        try:
            await asyncio.Event().wait()   # for as long as the bridge runs
        finally:
            await self.close()

    async def close(self):
        await asyncio.gather(*(self._withdraw(key) for key in list(self.boards)))
        client = self.client
        if client.is_connected():   # as the specification says a client leaves
            client.publish(self.presence_topic, DISCONNECTED, properties=self.props)
        client.disconnect()
        await asyncio.get_running_loop().run_in_executor(None, client.loop_stop)

    def _call(self, callback, *args):
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:   # the loop has closed: the bridge is ending
            pass

    def _connected(self, client, userdata, flags, reason, properties):
        if reason.is_failure:
            self._call(self._trouble, "the broker %s refused the connection: %s%s"
                       % (self.shown, reason, "" if "author" not in str(reason).lower() and
                          "password" not in str(reason).lower() else
                          " (check $%s and $%s)" % (USERNAME_ENV, PASSWORD_ENV)))
            return
        from paho.mqtt.subscribeoptions import SubscribeOptions
        plain = SubscribeOptions(qos=0)
        topics = []
        for name_filter in self.filters:   # as the specification says, so ACLs can say it too
            topics += [("$mcp-server/presence/+/" + name_filter, plain),
                       ("$mcp-server/capability/+/" + name_filter, plain),
                       ("$mcp-rpc/%s/+/%s" % (self.client_id, name_filter),
                        SubscribeOptions(qos=0, noLocal=True))]
        client.subscribe(topics)
        self._call(self._up)

    def _connect_failed(self, client, userdata):
        # Called from paho's except clause: the exception is the reason.
        e = sys.exc_info()[1]
        why = (getattr(e, "strerror", None) or str(e) or e.__class__.__name__) if e else "?"
        if isinstance(e, ssl.SSLCertVerificationError):
            why += "; $%s names the CA that signed the broker's certificate" % CA_ENV
        self._call(self._trouble, "the broker %s is out of reach (%s)" % (self.shown, why))

    def _disconnected(self, client, userdata, flags, reason, properties):
        self._call(self._down, str(reason))

    def _message(self, client, userdata, m):
        # paho's thread: queued for the loop, at most MAX_QUEUED per board (a flood waits for
        # nobody but its own board).
        topic = m.topic
        who = self._server_id(topic)
        with self._lock:
            if self._queued[who] >= MAX_QUEUED:
                self._dropped[who] += 1
                return
            self._queued[who] += 1
            props = getattr(m, "properties", None)
            users = dict(getattr(props, "UserProperty", None) or [])
            self._queue.append((who, topic, m.payload, users.get(SENDER)))
            wake = not self._draining
            self._draining = True
        if wake:
            self._call(self._drain)

    @staticmethod
    def _server_id(topic):
        # The server-id in every topic the bridge subscribes to is the third level.
        parts = topic.split("/", 3)
        return parts[2] if len(parts) > 2 else ""

    # -- on the loop ------------------------------------------------------------------------

    def _trouble(self, line):
        self.connected = False
        if line != self._said:
            self._said = line
            log.error("%s; trying again (every %d s at most)", line, RETRY[1])
        else:
            log.debug("%s", line)

    def _up(self):
        self.connected = True
        if self._said is not None:
            log.warning("back on the broker %s", self.shown)
        else:
            log.info("on the broker %s; looking for boards under %s", self.shown,
                     ", ".join(self.filters))
        self._said = None

    def _down(self, reason):
        if not self.connected:
            return
        self.connected = False
        self._trouble("lost the broker %s (%s)" % (self.shown, reason))
        for key in list(self.boards):   # found again by their presence when it is back
            self._withdraw(key)

    def _drain(self):
        for _ in range(DRAIN):
            with self._lock:
                if not self._queue:
                    self._draining = False
                    break
                who, topic, payload, sender = self._queue.popleft()
                self._queued[who] -= 1
                if not self._queued[who]:
                    del self._queued[who]
            try:
                self._handle(topic, payload, sender)
            except Exception:
                log.exception("handling a message on %s", topic[:200])
        else:
            self.loop.call_soon(self._drain)
        for who, n in list(self._dropped.items()):
            log.warning("board %s floods the broker: %d messages dropped", who, n)
            del self._dropped[who]

    def _handle(self, topic, payload, sender):
        kind, server_id, server_name = self._parse(topic)
        if kind is None:
            log.debug("ignored a message on %s", topic[:200])
            return
        key = (server_id, server_name)
        if kind == "presence":
            self._presence(key, payload)
            return
        served = self.boards.get(key)
        if served is None:
            return
        if sender != server_id:   # someone else on the board's topics
            log.debug("dropped a message on %s from %r, not the board", topic[:200], sender)
            return
        msg = _decode(payload)
        if msg is None:
            log.debug("%s: dropped a payload that is not a JSON-RPC message: %r",
                      served[0].device, bytes(payload[:200]))
            return
        served[0].deliver(msg)

    def _parse(self, topic):
        # -> (kind, server-id, server-name): presence, capability or rpc; (None, ..) otherwise.
        for kind, prefix in (("presence", "$mcp-server/presence/"),
                             ("capability", "$mcp-server/capability/"),
                             ("rpc", "$mcp-rpc/%s/" % self.client_id)):
            if topic.startswith(prefix):
                server_id, _, server_name = topic[len(prefix):].partition("/")
                if server_id and server_name:
                    return kind, server_id, server_name
        return None, None, None

    def _presence(self, key, payload):
        if not payload:
            if key in self.boards:
                log.info("board %s/%s went offline", *key)
                self._withdraw(key)
            return
        msg = _decode(payload)
        if msg is None or msg.get("method") != "notifications/server/online":
            log.debug("ignored a presence on %s/%s that is not server/online", *key)
            return
        if key in self.boards:
            return
        if len(self.boards) >= MAX_BOARDS:
            log.warning("more than %d boards on %s: %s/%s is not served", MAX_BOARDS,
                        self.shown, *key)
            return
        log.info("board %s/%s is online on %s", key[0], key[1], self.shown)
        made = []

        def make_link(**callbacks):
            made.append(MqttLink(self, key[0], key[1], **callbacks))
            return made[0]
        handle = self.serve(key, make_link)
        self.boards[key] = (made[0], handle)

    def _withdraw(self, key):
        # The board is served no more from now on (a presence that comes next is a new one);
        # -> the task letting it go.
        link, handle = self.boards.pop(key)
        task = asyncio.get_running_loop().create_task(self.let_go(handle))
        task.add_done_callback(log_failure)
        return task

    def publish(self, topic, payload):
        # Any thread -> True when paho took the message for the broker.
        if not self.connected:
            return False
        info = self.client.publish(topic, payload, qos=0, properties=self.props)
        return info.rc == self.mqtt.MQTT_ERR_SUCCESS


def serve_brokers(urls, filters, router, make_session):
    # -> a Broker for each --mqtt URL; each board one finds is added to router under its label,
    # the same label each time it comes back.
    labels = {}      # (server-id, server-name) -> label, across the URLs
    leaving = set()  # boards being let go: their labels are free again

    def serve(key, make_link):
        here = {b.label for b in router.boards if b not in leaving}
        if len(labels) >= 4 * MAX_BOARDS:   # presences of ever new ids: forget those gone
            for gone in [k for k, label in labels.items() if label not in here]:
                del labels[gone]
        label = labels.get(key)
        if label is None or label in here:
            label = label_for(key[0], key[1], here | set(labels.values()))
            labels[key] = label
        return router.add(label, make_session(make_link))

    async def let_go(board):
        leaving.add(board)
        try:
            await router.remove(board)
        finally:
            leaving.discard(board)
    return [Broker(url, filters or ["#"], serve, let_go) for url in urls]
