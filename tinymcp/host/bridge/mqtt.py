# --mqtt: boards behind an MQTT 5 broker, as EMQX's "MCP over MQTT" specification says for a
# client. One broker connection per --mqtt URL (paho-mqtt, driven by the bridge's loop where it
# can watch sockets: mqttpump.py; else paho's own thread); a board's retained
# presence is its discovery, an empty one (its will, or its goodbye) its unplug. Each board found
# is one more board of the router, with a BrokerLink under its BoardSession: initialize goes to
# the board's control topic, everything after to its RPC topic; what the board says comes from
# the RPC topic and its capability topic (list changes, resource updates). A board that goes
# away and comes back gets its label again. paho is imported only when --mqtt is given.
#
# Trust (docs/fleet.md): only the broker can prove who published a message, so a broker is
# served only when the bridge logs in (a user name or a client certificate) and the broker
# denies it a publish that its ACL must deny (the probe, at each connect); --mqtt-insecure
# serves one that does not, its boards' tools marked unverified. Every message on a board's
# topics counts only when its MCP-MQTT-CLIENT-ID is the server-id its topic names. A board is
# added to the router only once it has answered initialize (asked at most NEW_PER_S times a
# second per broker, again after a growing pause): a flood of presences costs a small record
# each, at most MAX_BOARDS per broker and MAX_NAMES per server-id.
import asyncio
import collections
import hashlib
import itertools
import json
import logging
import os
import re
import ssl
import sys
import threading
import uuid
from urllib.parse import urlsplit

from tinymcp.host.bridge.board import CLIENT_CAPABILITIES, MAX_INIT_WAITING, PROTOCOL
from tinymcp.host.bridge.routes import LABEL
from tinymcp.host.bridge.host import log_failure
from tinymcp.host.bridge.link import MAX_LINE, PortError
from tinymcp.host.bridge.wire import BoardAnswer, board_json, board_nonfinite, dump
from tinymcp.host.bridge.mqttpackets import fast_client, packed
from tinymcp.host.bridge.mqttpump import Pump, drives, no_delay

log = logging.getLogger("tinymcp.bridge.mqtt")

USERNAME_ENV = "TINYMCP_MQTT_USERNAME"
PASSWORD_ENV = "TINYMCP_MQTT_PASSWORD"
CA_ENV = "TINYMCP_MQTT_CA"
CERT_ENV = "TINYMCP_MQTT_CERT"   # the bridge's own client certificate (PEM), for mqtts://
KEY_ENV = "TINYMCP_MQTT_KEY"     # its private key (PEM); default: in the certificate's file
ACL_DOC = "docs/fleet.md's ACL"
UNVERIFIED = "[origin unverified: MQTT broker %s enforces no ACL] "
COMPONENT = "MCP-COMPONENT-TYPE"
SENDER = "MCP-MQTT-CLIENT-ID"
DISCONNECTED = b'{"jsonrpc":"2.0","method":"notifications/disconnected"}'
KEEPALIVE = 30            # seconds: the bridge's own keep-alive with the broker
RETRY = (1, 30)           # seconds between attempts to reach the broker: first, at most
MAX_QUEUED = 256          # paho's thread: messages of one board waiting for the loop before its
                          # next are dropped
DRAIN = 64                # paho's thread: messages handled per turn of the loop
MAX_BOARDS = 256          # boards (served or being asked) of one broker; more are ignored
MAX_NAMES = 16            # server-names one server-id may announce at once; more are ignored
NEW_PER_S = 10            # initialize sent to boards not yet served, per second and broker
ANONYMOUS_WAIT = 5         # seconds for the broker to answer a client without a login
ASK_AGAIN = (2, 120)      # seconds before asking a silent board again: first, at most
LOOK = 5.0                # seconds a broker's first look at its boards may take (hosts' first
                          # lists wait for it): from the start, or from a reconnect
CLIENT_INFO = {"name": "tinymcp-bridge", "version": "0.1.0"}   # BoardSession's default


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


def credentials(env=os.environ):
    # -> how the bridge proves itself to a broker ("a login", "a client certificate"), or None.
    if env.get(CERT_ENV):
        return "a client certificate"
    return "a login" if env.get(USERNAME_ENV) else None


def anonymous_line(shown):
    return ("--mqtt: not serving the boards on %s: the bridge has no login for it ($%s) and "
            "no client certificate ($%s), so the broker cannot tell who speaks for a board; "
            "give every board and bridge its own login and %s, or pass --mqtt-insecure"
            % (shown, USERNAME_ENV, CERT_ENV, ACL_DOC))


def check(urls, filters, insecure=False, alone=False):
    # The --mqtt options before anything starts: PortError with the one line to say.
    # alone: the brokers are the bridge's only boards (a broker it will not serve: exit 2).
    cert = os.environ.get(CERT_ENV) or None
    for url in urls:
        _host, _port, tls = parse_url(url)
        if cert is not None:
            if not tls:
                raise PortError("$%s: a client certificate goes with mqtts:// only (%s)"
                                % (CERT_ENV, url))
            try:
                ssl.create_default_context().load_cert_chain(
                    cert, os.environ.get(KEY_ENV) or None)
            except (OSError, ssl.SSLError, ValueError) as e:
                raise PortError("$%s/$%s: %s is not a usable certificate and key (PEM): %s"
                                % (CERT_ENV, KEY_ENV, cert,
                                   getattr(e, "strerror", None) or e)) from None
        ca = os.environ.get(CA_ENV) or None
        if tls and ca is not None:
            try:
                ssl.create_default_context(cafile=ca)
            except (OSError, ssl.SSLError, ValueError) as e:
                raise PortError("$%s: %s is not a usable CA certificate (PEM): %s"
                                % (CA_ENV, ca, getattr(e, "strerror", None) or e)) from None
    for name_filter in filters:
        check_filter(name_filter)
    if alone and not insecure and credentials() is None:
        raise PortError(anonymous_line(" and ".join(urls)))
    try:
        import paho.mqtt.client  # noqa: F401  (only --mqtt needs it)
    except ImportError:
        raise PortError("--mqtt needs paho-mqtt 2.x: pip install 'tinymcp[host]' "
                        "(or pip install paho-mqtt)") from None


def label_for(server_id, server_name, taken):
    # A label (a-z0-9-, a letter first, at most 24) from the server-name's last level and the
    # server-id: "tinymcp/sim" + "sim-python" -> "sim-python"; "tinymcp/pico" + "3c61..." ->
    # "pico-3c61..."; made unique against taken with -2, -3 ... A server-id or name that had to
    # be folded (case, other characters) ends in a hash of the server-id instead, so "Sim-1"
    # never gets the label "sim-1" belongs to, whichever of them comes first.
    def clean(text):
        return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    last = server_name.rsplit("/", 1)[-1]
    base = clean(last) or "board"
    if not base[0].isalpha():
        base = "b-" + base
    own = clean(server_id)
    label = own if own.startswith(base) else ("%s-%s" % (base, own)).strip("-")
    if own != server_id or base != last:   # folded: marked by a hash of what it was
        mark = hashlib.sha1(("%s/%s" % (server_id, server_name)).encode()).hexdigest()
        label = ("%s-%s" % (label, mark[:6]) if len(label) <= 17 else
                 "%s-%s" % (base[:15].strip("-"), mark[:8]))
    elif len(label) > 24:
        label = "%s-%s" % (base[:15].strip("-"),
                           hashlib.sha1(server_id.encode()).hexdigest()[:8])
    first, n = label, 1
    while label in taken or not LABEL.match(label):
        n += 1
        label = "%s-%d" % (first[:20].strip("-"), n)
    return label


def _decode(payload):
    # A JSON-RPC message from a payload -> the dict, or None for anything else. A NaN or an
    # infinity it spells is noted (wire.board_nonfinite): BoardAnswer.of leaves it to be encoded
    # again, never passed on as it came.
    if board_nonfinite:
        board_nonfinite.clear()
    try:
        msg = board_json.decode(payload.decode(json.detect_encoding(payload), "surrogatepass"))
    except (ValueError, RecursionError):   # UnicodeDecodeError is one too
        return None
    return msg if type(msg) is dict and msg.get("jsonrpc") == "2.0" else None


class BrokerLink:
    # The link of one board behind the broker, as a BoardSession uses a serial Link: up while
    # the broker connection is (the board is only served while its presence is there).
    # welcome: the board's answer to the broker's initialize, which found it: the session's
    # first initialize is answered with it (one initialize on the wire, as the spec has it).
    network = True
    first_try = True
    frame_end = b""   # a message is a publish of its own, no newline (BoardSession.relay)

    def __init__(self, broker, server_id, server_name, *, events, welcome=None):
        self.broker = broker
        self.server_id = server_id
        self.server_name = server_name
        self.device = "%s %s/%s" % (broker.shown, server_id, server_name)
        self.control = "$mcp-server/%s/%s" % (server_id, server_name)
        self.rpc = "$mcp-rpc/%s/%s/%s" % (broker.client_id, server_id, server_name)
        self.events = events      # a seams.LinkEvents: its board session
        self.welcome = welcome
        self.unverified = broker.unverified   # --mqtt-insecure on a broker without ACLs
        self.mode = "json"
        self.frames_in = 0
        self._closed = None

    @property
    def connected(self):
        return self.broker.connected

    async def run(self):
        self._closed = asyncio.get_running_loop().create_future()
        if self.broker.connected:
            self.events.on_state(True)
        await self._closed

    def deliver(self, msg, payload=None):
        # msg: a message from the board, parsed from payload (its bytes, when it has them): an
        # answer may go to a host as it came (wire.BoardAnswer), unless the bridge changed it.
        self.frames_in += 1
        if self.unverified and _mark_unverified(msg, self.broker.shown):
            payload = None
            if type(msg) is BoardAnswer:
                msg.rest = None   # changed: encoded again
        elif payload is not None and "method" not in msg and type(msg) is not BoardAnswer:
            msg = BoardAnswer.of(msg, payload)
        try:
            self.events.on_message(msg)
        except Exception:  # one odd message must not cost the messages behind it
            log.exception("handling a message from %s: %s", self.device, str(msg)[:200])

    def encode(self, msg):
        frame = Frame(dump(msg).encode())
        frame.control = msg.get("method") == "initialize"
        frame.rid = msg.get("id")
        return frame

    def send(self, msg, urgent=False):
        return self.write(self.encode(msg), urgent)

    def write(self, frame, urgent=False, now=False):
        # Publish one message -> the frame, or None when the broker is out of reach. now
        # (link.Link's) changes nothing: a publish leaves at the end of this turn of the loop.
        control = getattr(frame, "control", False)
        if control and self.welcome is not None and self.broker.connected:
            result, self.welcome = self.welcome, None   # answered already: once
            asyncio.get_running_loop().call_soon(
                self.deliver, {"jsonrpc": "2.0", "id": frame.rid, "result": result})
            return frame
        topic = self.control if control else self.rpc
        return frame if self.broker.publish(topic, bytes(frame)) else None

    def withdraw(self, frame):
        return False   # a publish is handed to the broker at once: never taken back

    def send_raw(self, data):
        return False   # no REPL behind a broker

    def close(self):
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)


def _mark_unverified(msg, shown):
    # A tools/list answer from a board of an unverified broker: each description says so.
    # -> True when msg was such an answer (and is changed).
    result = msg.get("result")
    tools = result.get("tools") if type(result) is dict else None
    if type(tools) is not list:
        return False
    mark = UNVERIFIED % shown
    for tool in tools:
        if type(tool) is dict:
            text = tool.get("description")
            tool["description"] = mark + (text if type(text) is str else "")
    return True


class Broker:
    # One --mqtt URL: the connection (paho on the loop, or its thread), the boards its presences
    # announce.
    # Tells present (a seams.PresentBoards) of each board found (found((server-id, server-name),
    # make_link) -> its handle) and gone (gone(handle): its presence cleared, the broker lost).
    # insecure (--mqtt-insecure): serve it even anonymous or without ACLs, tools marked so.

    def __init__(self, url, filters, present, insecure=False):
        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties
        self.mqtt = mqtt
        self.url = url
        self.host, self.port, self.tls = parse_url(url)
        self.shown = "%s://%s:%d" % ("mqtts" if self.tls else "mqtt", self.host, self.port)
        self.filters = filters        # server-name filters of the presence subscription
        self.present = present
        self.insecure = insecure
        self.unverified = False       # served although it enforces no ACL (--mqtt-insecure)
        self.client_id = "tinymcp-bridge-" + uuid.uuid4().hex[:12]
        self.boards = {}              # (server-id, server-name) -> (link, handle)
        self.asking = {}              # the same -> Asked: announced, not yet answering
        self.connected = False
        self.loop = None
        self._said = None             # the last connection trouble logged: said once
        self._warned = set()          # the limits said once each
        self._probe = None            # the message id of the ACL probe in flight
        self._asks = None             # the task asking boards to initialize
        self._look_until = 0.0        # the loop's time the first look ends by (0: no look)
        self._looked = False          # the retained presences are all in (the marker came)
        self._marker = None           # the SUBSCRIBE whose SUBACK comes after them
        self._wake = None
        self._pump = None             # paho driven by the loop (mqttpump.Pump); None: its thread
        self._queue = collections.deque()
        self._queued = collections.Counter()   # server-id -> its messages in the queue
        self._lock = threading.Lock()
        self._draining = False
        self._dropped = collections.Counter()
        users = [(COMPONENT, "mcp-client"), (SENDER, self.client_id)]
        self.props = packed(Properties, PacketTypes.PUBLISH, users)
        self.packed_props = bytes(self.props.pack())   # the same bytes (publish_now)
        self.connect_props = Properties(PacketTypes.CONNECT)
        self.connect_props.SessionExpiryInterval = 0
        self.connect_props.MaximumPacketSize = MAX_LINE   # larger ones the broker never sends
        self.connect_props.UserProperty = [
            (COMPONENT, "mcp-client"),
            ("MCP-META", json.dumps({"implementation": "tinymcp-bridge"}))]
        c = self.client = fast_client(mqtt)(mqtt.CallbackAPIVersion.VERSION2,
                                            client_id=self.client_id, protocol=mqtt.MQTTv5)
        will = Properties(PacketTypes.WILLMESSAGE)
        will.UserProperty = users
        c.will_set(self.presence_topic, DISCONNECTED, properties=will)
        user = os.environ.get(USERNAME_ENV)
        if user:
            c.username_pw_set(user, os.environ.get(PASSWORD_ENV))
        self.proven = credentials()   # how the bridge logs in, or None: anonymous
        if self.tls:   # the CA of $TINYMCP_MQTT_CA (checked at the start), else the system's
            c.tls_set(ca_certs=os.environ.get(CA_ENV) or None,
                      certfile=os.environ.get(CERT_ENV) or None,
                      keyfile=os.environ.get(KEY_ENV) or None, cert_reqs=ssl.CERT_REQUIRED)
        c.reconnect_delay_set(*RETRY)
        c.on_connect = self._connected
        c.on_disconnect = self._disconnected
        c.on_message = self._message
        c.on_publication = self._publication
        c.on_connect_fail = self._connect_failed
        c.on_subscribe = self._subscribed
        c.on_socket_open = no_delay

    @property
    def presence_topic(self):
        return "$mcp-client/presence/" + self.client_id

    # -- the broker connection (paho's callbacks: on the loop, or in paho's thread) -----------

    async def run(self):
        self.loop = asyncio.get_running_loop()
        if self.proven is None:
            if not self.insecure:   # nobody on it is anybody: none of its boards is served
                log.error("%s", anonymous_line(self.shown))
                await asyncio.Event().wait()
            log.warning("--mqtt-insecure: the bridge reaches %s without a login: any client "
                        "there can speak for any of its boards", self.shown)
        log.info("--mqtt: reaching the broker %s as %s", self.shown, self.client_id)
        self._look_until = self.loop.time() + LOOK
        self._wake = asyncio.Event()
        self._asks = self.loop.create_task(self._ask_boards())
        self._asks.add_done_callback(log_failure)
        self.client.connect_async(self.host, self.port, keepalive=KEEPALIVE, clean_start=True,
                                  properties=self.connect_props)
        try:
            if drives(self.loop):
                self._pump = Pump(self.client, self.loop, self._connect_failed, RETRY)
                await self._pump.run()   # for as long as the bridge runs
            else:
                self.client.loop_start()
                await asyncio.Event().wait()
        finally:
            await self.close()

    async def close(self):
        if self._asks is not None:
            self._asks.cancel()
        await asyncio.gather(*(self._withdraw(key) for key in list(self.boards)))
        client = self.client
        if client.is_connected():   # as the specification says a client leaves
            client.publish(self.presence_topic, DISCONNECTED, properties=self.props)
        self.connected = False   # leaving, not lost: nothing to log when paho says it is gone
        client.disconnect()
        if self._pump is not None:   # no later turn writes them: the loop is ending
            self._pump.flush()
        if self._pump is None:
            await asyncio.get_running_loop().run_in_executor(None, client.loop_stop)

    def _call(self, callback, *args):
        # A paho callback's work, on the loop: later in this turn when paho runs on the loop,
        # else through the loop's wake from paho's thread.
        if self._pump is not None and threading.get_ident() == self._pump.thread:
            self.loop.call_soon(callback, *args)
            return
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
        if self._pump is not None:
            self._pump.welcomed()
        # The probe: a publish the broker's ACL must deny (a presence for a server-id that no
        # board has, not retained: harmless where it is let through). Its PUBACK decides.
        # on_publish only meanwhile: paho makes a reason code and properties for each publish
        # it is told of.
        topic = "$mcp-server/presence/tinymcp-acl-probe-%s/tinymcp/acl-probe" % uuid.uuid4().hex
        client.on_publish = self._published
        self._probe = client.publish(topic, b"", qos=1, properties=self.props).mid

    def _published(self, client, userdata, mid, reason, properties):
        if mid == self._probe:
            self._probe = None
            client.on_publish = None
            self._call(self._probed, reason.is_failure, str(reason))

    def finding(self):
        # True while the first look at this broker's boards goes on (at most LOOK seconds from
        # the start or a reconnect): its retained presences are not all in, or a board they
        # announce is not yet asked to initialize, or asked once and not yet answering. A
        # host's first list waits for them as for boards starting (router.Router.finding).
        now = self.loop.time() if self.loop is not None else 0.0
        if now >= self._look_until:
            return False
        return not self._looked or any(asked.tries == 0 or (asked.tries == 1 and now < asked.at)
                                       for asked in self.asking.values())

    def _subscribe(self):
        # Presences first, then the rest in a second SUBSCRIBE: the broker sends the retained
        # presences before it answers that one, so its SUBACK says they are all in.
        from paho.mqtt.subscribeoptions import SubscribeOptions
        plain = SubscribeOptions(qos=0)
        presences, topics = [], []
        for name_filter in self.filters:   # as the specification says, so ACLs can say it too
            presences.append(("$mcp-server/presence/+/" + name_filter, plain))
            topics += [("$mcp-server/capability/+/" + name_filter, plain),
                       ("$mcp-rpc/%s/+/%s" % (self.client_id, name_filter),
                        SubscribeOptions(qos=0, noLocal=True))]
        self._looked = False
        self._look_until = self.loop.time() + LOOK
        self.client.subscribe(presences)
        self._marker = self.client.subscribe(topics)[1]

    def _subscribed(self, client, userdata, mid, reasons, properties):
        # A SUBACK: after the messages that came before it.
        if self._pump is not None:
            self._looked = self._looked or mid == self._marker
            return
        with self._lock:   # paho's thread: queued behind those messages
            self._queue.append((None, None, mid, None))
            wake = not self._draining
            self._draining = True
        if wake:
            self._call(self._drain)

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
        # On the loop (paho driven by it): handled now, the loop reading one message at a time.
        # In paho's thread: queued for the loop, at most MAX_QUEUED per board (a flood waits for
        # nobody but its own board).
        props = getattr(m, "properties", None)
        self._publication(m.topic, getattr(props, "UserProperty", None), m.payload)

    def _publication(self, topic, users, payload):
        # One message (mqttpackets.fast_client reads most without paho's MQTTMessage).
        if self._pump is not None:
            try:
                self._handle(topic, payload, dict(users).get(SENDER) if users else None)
            except Exception:
                log.exception("handling a message on %s", topic[:200])
            return
        who = self._server_id(topic)
        with self._lock:
            if self._queued[who] >= MAX_QUEUED:
                self._dropped[who] += 1
                return
            self._queued[who] += 1
            self._queue.append((who, topic, payload, dict(users or ()).get(SENDER)))
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
        self._look_until = 0.0   # nothing to wait for until it is back
        if line != self._said:
            self._said = line
            log.error("%s; trying again (every %d s at most)", line, RETRY[1])
        else:
            log.debug("%s", line)

    def _probed(self, denied, reason):
        task = self.loop.create_task(self._verdict(denied, reason))
        task.add_done_callback(log_failure)

    async def _verdict(self, denied, reason):
        # The probe's PUBACK is in: denied, the ACL holds; then no client may get in without a
        # login (an anonymous one could take any board's client id, and the ACL with it).
        why = None
        if not denied:
            why = ("it let the bridge publish a board's presence under a server-id not its own "
                   "(%s): it enforces no ACL" % reason)
        elif not self.insecure and await self.loop.run_in_executor(None, self._takes_anonymous):
            why = ("it takes clients without a login or certificate, and one of them may take "
                   "any board's client id")
        if why is not None and not self.insecure:
            line = ("--mqtt: not serving the boards on %s: %s; anyone on it can speak for "
                    "any board; give it %s, or pass --mqtt-insecure" % (self.shown, why, ACL_DOC))
            if line != self._said:
                self._said = line
                log.error("%s", line)
            self._look_until = 0.0
            return
        if why is not None and not self.unverified:
            log.warning("--mqtt-insecure: the broker %s enforces no ACL: any client there can "
                        "speak for any of its boards; their tools say so", self.shown)
        self.unverified = why is not None
        if self.client.is_connected():
            self._subscribe()
            self._up()

    def _takes_anonymous(self):
        # (a thread) -> True when the broker lets a client in without a login or certificate.
        mqtt = self.mqtt
        probe = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                            client_id="tinymcp-anonymous-probe-" + uuid.uuid4().hex[:12])
        if self.tls:
            probe.tls_set(ca_certs=os.environ.get(CA_ENV) or None, cert_reqs=ssl.CERT_REQUIRED)
        answered = threading.Event()
        taken = []

        def connected(client, userdata, flags, reason, properties):
            taken.append(not reason.is_failure)
            answered.set()
        probe.on_connect = connected
        try:
            probe.connect(self.host, self.port, keepalive=KEEPALIVE)
        except (OSError, ValueError):   # refused at the TLS handshake, or gone
            return False
        probe.loop_start()
        try:
            answered.wait(ANONYMOUS_WAIT)
        finally:
            probe.disconnect()
            probe.loop_stop()
        return taken == [True]

    def _up(self):
        self.connected = True
        self._wake.set()
        if self._said is not None:
            log.warning("back on the broker %s", self.shown)
        else:
            log.info("on the broker %s; looking for boards under %s", self.shown,
                     ", ".join(self.filters))
        self._said = None

    def _down(self, reason):
        self.asking.clear()
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
                if topic is not None:
                    self._queued[who] -= 1
                    if not self._queued[who]:
                        del self._queued[who]
            if topic is None:   # a SUBACK (its message id): the marker, the presences are in
                self._looked = self._looked or payload == self._marker
                continue
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
        if sender != server_id:   # someone else on the board's topics: never the board
            log.debug("dropped a message on %s from %r, not the board", topic[:200], sender)
            return
        key = (server_id, server_name)
        if kind == "presence":
            self._presence(key, payload)
            return
        served = self.boards.get(key)
        if served is None:
            if kind == "rpc" and key in self.asking:
                self._answered(key, _decode(payload))
            return
        # The usual answer read the short way (wire.BoardAnswer.read), else parsed.
        msg = BoardAnswer.read(payload) if type(payload) is bytes else None
        if msg is None:
            msg = _decode(payload)
            if msg is None:
                log.debug("%s: dropped a payload that is not a JSON-RPC message: %r",
                          served[0].device, bytes(payload[:200]))
                return
        served[0].deliver(msg, payload)

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
            self.asking.pop(key, None)
            if key in self.boards:
                log.info("board %s/%s went offline", *key)
                self._withdraw(key)
            return
        msg = _decode(payload)
        if msg is None or msg.get("method") != "notifications/server/online":
            log.debug("ignored a presence on %s/%s that is not server/online", *key)
            return
        if key in self.boards or key in self.asking:
            return
        if len(self.boards) + len(self.asking) >= MAX_BOARDS:
            self._limit("boards", "more than %d boards announce themselves on %s: the ones "
                        "after are not served (the first was %s/%s)", MAX_BOARDS, self.shown,
                        *key)
            return
        names = sum(1 for k in itertools.chain(self.boards, self.asking) if k[0] == key[0])
        if names >= MAX_NAMES:
            self._limit(key[0], "server-id %s announces more than %d server-names on %s: the "
                        "ones after are not served", key[0], MAX_NAMES, self.shown)
            return
        log.info("board %s/%s is online on %s", key[0], key[1], self.shown)
        self.asking[key] = Asked()
        self._wake.set()

    def _limit(self, what, *line):
        # A limit reached: said once per broker and kind, however often it is reached.
        if what not in self._warned:
            self._warned.add(what)
            log.warning(*line)

    async def _ask_boards(self):
        # initialize to the boards announced and not yet answering: at most NEW_PER_S a second,
        # each asked again after a pause that doubles up to ASK_AGAIN[1]. A slow board's answer
        # to an earlier ask still finds it (Asked.rids).
        params = {"protocolVersion": PROTOCOL, "capabilities": CLIENT_CAPABILITIES,
                  "clientInfo": CLIENT_INFO}
        ids = itertools.count(1)
        while True:
            now = self.loop.time()
            due = [(asked.at, key) for key, asked in self.asking.items() if asked.at <= now]
            if not due or not self.connected:
                later = [asked.at for asked in self.asking.values()]
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), max(0.05, min(later) - now)
                                           if later and self.connected else None)
                except asyncio.TimeoutError:
                    pass
                continue
            _, key = min(due)
            asked = self.asking[key]
            rid = "tinymcp-bridge-%d" % next(ids)
            asked.rids.append(rid)
            del asked.rids[:-MAX_INIT_WAITING]
            asked.tries += 1
            asked.at = now + asked.pause
            asked.pause = min(asked.pause * 2, ASK_AGAIN[1])
            self.publish("$mcp-server/%s/%s" % key, json.dumps(
                {"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params},
                separators=(",", ":")).encode())
            await asyncio.sleep(1 / NEW_PER_S)

    def _answered(self, key, msg):
        # A board asked to initialize answers: served from now on, if it said yes.
        asked = self.asking[key]
        mine = msg is not None and msg.get("id") in asked.rids
        if not mine or type(msg.get("result")) is not dict:
            refused = mine and "error" in msg
            log.log(logging.WARNING if refused and not asked.said else logging.DEBUG,
                    "board %s/%s: %s: %s; asking again later", key[0], key[1],
                    "refused initialize" if refused else "not an answer to initialize",
                    str(msg.get("error") if refused else msg)[:200])
            asked.said = asked.said or refused
            return
        del self.asking[key]
        made = []

        def make_link(events):
            made.append(BrokerLink(self, key[0], key[1], events=events, welcome=msg["result"]))
            return made[0]
        handle = self.present.found(key, make_link)
        self.boards[key] = (made[0], handle)

    def _withdraw(self, key):
        # The board is served no more from now on (a presence that comes next is a new one);
        # -> the task letting it go.
        link, handle = self.boards.pop(key)
        task = asyncio.get_running_loop().create_task(self.present.gone(handle))
        task.add_done_callback(log_failure)
        return task

    def publish(self, topic, payload):
        # Any thread -> True when paho took the message for the broker.
        if not self.connected:
            return False
        # On the loop (mqttpump.Pump): written at the end of this turn, with what else is
        # published in it; paho's thread: written at once by paho.
        if self._pump is not None and self.client.publish_now(topic, payload, self.packed_props):
            return True
        info = self.client.publish(topic, payload, qos=0, properties=self.props)
        return info.rc == self.mqtt.MQTT_ERR_SUCCESS


class Asked:
    # A board announced and not yet answering initialize: when to ask it (again), and how.
    __slots__ = ("at", "pause", "rids", "said", "tries")

    def __init__(self):
        self.at = 0.0
        self.tries = 0      # initialize sent so often
        self.pause = ASK_AGAIN[0]
        self.rids = []      # the ids of the last MAX_INIT_WAITING asks: an answer to any serves
        self.said = False   # its refusal is in the log


class BrokerBoards:
    # The brokers' listener (a seams.PresentBoards, told by each Broker): each board found is
    # added to router under its label, the same label each time it comes back. A label another
    # board holds is never taken: the newcomer gets a label of its own, said in the log.
    # make_session(connect) -> make_session(events) for the router.

    def __init__(self, router, make_session):
        self.router = router
        self.make_session = make_session
        self.labels = {}       # (server-id, server-name) -> label, across the URLs
        self.leaving = set()   # boards being let go: their labels are free again

    def found(self, key, make_link):
        here = {b.label for b in self.router.boards if b not in self.leaving}
        labels = self.labels
        if len(labels) >= 4 * MAX_BOARDS:   # presences of ever new ids: forget those gone
            for gone in [k for k, label in labels.items() if label not in here]:
                del labels[gone]
        label = labels.get(key)
        if label is None or label in here:
            label = label_for(key[0], key[1], here | set(labels.values()))
            natural = label_for(key[0], key[1], set())
            if label != natural:
                log.warning("board %s/%s: the label %s is another board's; served as %s",
                            key[0], key[1], natural, label)
            labels[key] = label
        return self.router.add(label, self.make_session(make_link))

    async def gone(self, board):
        self.leaving.add(board)
        try:
            await self.router.remove(board)
        finally:
            self.leaving.discard(board)


def serve_brokers(urls, filters, router, make_session, insecure=False):
    # -> a Broker for each --mqtt URL, their boards served by router (BrokerBoards).
    present = BrokerBoards(router, make_session)
    brokers = [Broker(url, filters or ["#"], present, insecure) for url in urls]
    for broker in brokers:   # hosts' first lists wait for the boards each finds at first
        router.finding(broker)
    return brokers
