# MCP over an MQTT 5 broker, as EMQX's "MCP over MQTT" specification says for a server, on both
# runtimes. The board announces itself retained on its presence topic (cleared by its will if it
# dies), answers initialize from its control topic and everything after on each client's RPC
# topic, and tells list changes and resource updates on its capability topic. What one PUBLISH
# can carry (its buffer, the broker's Maximum Packet Size) bounds every message: lists are paged
# to fit, and an answer that does not fit is an error the client reads. Each MQTT client
# has its own MCP session (at most max_sessions; the oldest is let go); a lost broker is
# reconnected with backoff and the presence restored.
#
#   from ports.mqtt import serve
#   serve(server, "mqtt://broker.lan:1883", name="tinymcp/sim", server_id="sim-1")
#
# docs/network.md ("Through an MQTT broker") says what the topics carry.
from ports.mqtt5 import NO_LOCAL, Client, Refused, properties
from tinymcp.channel import Channel
from tinymcp.clock import sleep_ms
from tinymcp.framing import Out
from tinymcp.jsonrpc import JsonLink, dumps, loads
from tinymcp.protocol import INTERNAL_ERROR, PARSE_ERROR, REASON

SERVER = "mcp-server"
COMPONENT = "MCP-COMPONENT-TYPE"
SENDER = "MCP-MQTT-CLIENT-ID"
DISCONNECTED = b'{"jsonrpc":"2.0","method":"notifications/disconnected"}'
_ROOM = 448  # bytes before an answer's payload in the output buffer, for its PUBLISH header
_ENVELOPE = 64  # of a message's room, what a list page leaves for the answer's envelope and id


def parse_url(url):
    # "mqtt://[user:password@]host[:port]" -> (host, port, tls, user, password); ValueError.
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("mqtt", "mqtts"):
        raise ValueError("the broker URL must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    tls = scheme == "mqtts"
    rest = rest.rstrip("/")
    user = password = None
    if "@" in rest:
        cred, _, rest = rest.rpartition("@")
        user, _, password = cred.partition(":")
    host, sep, port = rest.rpartition(":")
    if not sep or "]" in port:
        host, port = rest, "8883" if tls else "1883"
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError("the broker URL must be mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    return host.strip("[]"), int(port), tls, user, password


def _valid_id(text):
    return 0 < len(text) <= 64 and "/" not in text and "+" not in text and "#" not in text


class MqttLink(JsonLink):
    # One MQTT client's link: its answers and our requests go to its RPC topic, list changes and
    # resource updates to the board's capability topic, every one in one PUBLISH (Topics._write).
    def __init__(self, topics, cid):
        JsonLink.__init__(self, topics.out)
        self.topics = topics
        self.cid = cid
        self.rpc = ("$mcp-rpc/" + cid + topics.rpc_tail).encode()

    @property
    def room(self):
        # The bytes a result may take in one answer to this client (tinymcp/listing.py pages
        # lists to fit): what the board's buffer and the broker's packet limit leave.
        return self.topics.room(self.rpc) - _ENVELOPE

    def result(self, rid, result):
        self.topics.aim(self.rpc, rid)
        JsonLink.result(self, rid, result)

    def error(self, rid, code, message, data=None):
        self.topics.aim(self.rpc, rid)
        JsonLink.error(self, rid, code, message, data)

    def send(self, msg):
        method = msg.get("method") or ""
        shared = method.endswith("/list_changed") or method == "notifications/resources/updated"
        topics = self.topics
        topics.aim(topics.capability if shared else self.rpc, None)
        JsonLink.send(self, msg)


class Topics:
    # The board on an MQTT broker, the adapter in front of its message loop (tinymcp/channel.py):
    # each client id is one client of the loop, its messages whole PUBLISH payloads. Keeps the
    # broker connection, the presence, and each client's topics subscribed.
    max_sessions = 4      # MQTT clients served at once, each its own session
    first_retry_ms = 1000
    last_retry_ms = 30000  # the longest wait between two attempts to reach the broker

    def __init__(self, server, host, port, name, server_id, keepalive=60, user=None,
                 password=None, tls=None, log=print):
        # tls: None/False, True, or (cert, key, ca) file paths (ports/mqtt5.py _wrap)
        self.server = server
        self.host = host
        self.port = port
        self.tls = tls
        self.server_id = server_id
        self.log = log
        self.users = [(COMPONENT, SERVER), (SENDER, server_id)]
        self.props = properties(self.users)  # encoded once: on every publish
        self.client = Client(server_id, keepalive, None, user, password)
        self._name(name)
        self.target = None    # the topic of the message being written
        self.replying = None  # the id it answers: for one too long
        self.tx = bytearray(self.client.max_packet)
        self.fill = _ROOM
        self.out = Out(self._write)
        self.said = None      # the last connection trouble logged, said once
        self.skipped = 0
        self.forged = False   # a message not from the client its topic names: said once

    def _name(self, name):
        self.name = name
        self.presence = "$mcp-server/presence/%s/%s" % (self.server_id, name)
        self.control = "$mcp-server/%s/%s" % (self.server_id, name)
        self.capability = ("$mcp-server/capability/%s/%s" % (self.server_id, name)).encode()
        self.rpc_tail = "/%s/%s" % (self.server_id, name)
        self.client.will = (self.presence, b"", True, self.users)

    # -- the broker connection --------------------------------------------------------------

    def run(self):
        # Serve for ever: connect, serve until the connection is lost, wait, connect again.
        # The clients' sessions outlive a lost broker.
        channel = Channel(self.server, self)
        delay = self.first_retry_ms
        try:
            while True:
                try:
                    self._connect(channel)
                    delay = self.first_retry_ms
                    channel.run()
                except Refused as e:
                    self._say("tinymcp: %s; trying again (every %d s at most)"
                              % (e.args[0], self.last_retry_ms // 1000))
                except OSError as e:
                    self._say("tinymcp: the MQTT broker %s:%d is out of reach (%s); trying "
                              "again (every %d s at most)"
                              % (self.host, self.port, _why(e), self.last_retry_ms // 1000))
                except Exception as e:  # a bug of ours must not leave the board dead
                    self._say("tinymcp: the MQTT serve loop failed (%s); connecting again"
                              % _why(e))
                self.client.close(False)
                sleep_ms(delay)
                delay = min(delay * 2, self.last_retry_ms)
        finally:
            self.stop()

    def stop(self):
        # Leaving on purpose: the presence cleared first, then a clean DISCONNECT.
        try:
            if self.client.stream is not None:
                self.client.publish(self.presence, b"", 0, self.users, retain=True)
        except OSError:
            pass
        self.client.close(True)

    def _say(self, line):
        if line != self.said:
            self.said = line
            self.log(line)

    def _connect(self, channel):
        client = self.client
        server = self.server
        meta = dumps({"implementation": "tinymcp", "serverInfo": server.info})
        props = [(COMPONENT, SERVER), ("MCP-META", meta)]
        told = client.connect(self.host, self.port, props, self.tls).get("MCP-SERVER-NAME")
        if told and told != self.name:  # the broker names the board: its will names it too
            client.close(True)
            self._name(told)
            client.connect(self.host, self.port, props, self.tls)
        filters = [(self.control, 0), ("$mcp-rpc/+" + self.rpc_tail, NO_LOCAL)]
        for cid in channel.order:
            filters += self._client_topics(cid)
        client.subscribe(filters)
        online = {"jsonrpc": "2.0", "method": "notifications/server/online",
                  "params": {"server_name": self.name,
                             "description": server.instructions or server.info["name"],
                             "meta": {}}}
        client.publish(self.presence, dumps(online), None, self.users, retain=True)
        again = self.said is not None
        self.said = None
        self.log("tinymcp: %s MQTT broker %s:%d as %s, server-name %s"
                 % ("back on the" if again else "on the", self.host, self.port,
                    self.server_id, self.name))

    def _client_topics(self, cid):
        return [("$mcp-client/presence/" + cid, 0), ("$mcp-client/capability/" + cid, 0)]

    # -- the loop's adapter -----------------------------------------------------------------

    def read(self, channel, timeout_ms):
        # Each PUBLISH the broker sends: a client's message handed to the loop, or a client's
        # presence. A message on a client's topics counts only when its sender is that client
        # (with the broker's ACL, docs/fleet.md, that is proven).
        client = self.client
        packet = client.poll(timeout_ms)
        while packet is not None:
            self._on(channel, packet[0], packet[1], packet[2].get(SENDER))
            packet = client.poll(0)
        if client.skipped != self.skipped:
            self.skipped = client.skipped
            self.log("tinymcp: a message longer than %d bytes was dropped" % client.max_packet)
        return None

    def _on(self, channel, topic, payload, sender):
        if sender == self.server_id:  # our own, where No Local was not granted
            return
        cid = self._rpc_client(topic)
        if cid is not None:
            if sender == cid:
                self._deliver(channel, cid, payload)
            else:
                self._forged(cid, sender)
            return
        topic = topic.decode()
        if topic == self.control:  # initialize: the answer goes to the sender's RPC topic
            if sender is None or not _valid_id(sender):
                self.log("tinymcp: a message on the control topic without a valid %s: dropped"
                         % SENDER)
                return
            self._deliver(channel, sender, payload)
            return
        told = topic.startswith("$mcp-client/capability/")
        if told:
            cid = topic[23:]
        elif topic.startswith("$mcp-client/presence/"):
            cid = topic[21:]
        else:
            return
        if cid not in channel.sessions:
            return
        if sender != cid:
            self._forged(cid, sender)
        elif told:
            channel.deliver(cid, payload)
        elif not len(payload) or b"disconnected" in bytes(payload):
            self._end(channel, cid, False)  # its presence cleared, or "disconnected"

    def _rpc_client(self, topic):
        # The client id in "$mcp-rpc/{client-id}/{server-id}/{server-name}", or None.
        if not topic.startswith(b"$mcp-rpc/"):
            return None
        tail = self.rpc_tail.encode()
        if not topic.endswith(tail):
            return None
        cid = topic[9:len(topic) - len(tail)].decode()
        return cid if _valid_id(cid) else None

    def _forged(self, cid, sender):
        if not self.forged:
            self.forged = True
            self.log("tinymcp: a message on the topics of client %s from %s: dropped (and "
                     "any more such, unsaid)" % (cid, sender))

    def _deliver(self, channel, cid, payload):
        # A client's message to the loop; a new client when max_sessions are served lets the
        # oldest go (not one whose handler runs: this may be read from inside it).
        order = channel.order
        if cid not in channel.sessions and len(order) >= self.max_sessions:
            current = channel.server.session
            busy = current.call.busy and channel.sessions[order[0]] is current
            self._end(channel, order[1] if busy else order[0], True)
        channel.deliver(cid, payload)

    def _end(self, channel, cid, tell):
        # The session of client cid ends: told so when the board lets it go, its topics dropped.
        if tell:
            rpc = ("$mcp-rpc/" + cid + self.rpc_tail).encode()
            self._publish(rpc, DISCONNECTED, len(DISCONNECTED))
        channel.end(cid)
        self.client.unsubscribe([topic for topic, _ in self._client_topics(cid)])

    def decode(self, channel, frame):
        link = channel.server.session.link
        try:
            msg = loads(frame)
        except Exception:  # ValueError or UnicodeError, by runtime
            link.error(None, PARSE_ERROR, "Parse error: not valid UTF-8 JSON")
            raise ValueError
        if type(msg) is dict and msg.get("method") == "notifications/disconnected":
            self._end(channel, link.cid, False)  # the client says it is gone
            raise ValueError
        return msg

    def opened(self, channel, cid, session):
        self.client.subscribe(self._client_topics(cid))
        session.link = MqttLink(self, cid)  # no line framing to offer: MQTT carries whole messages

    # -- output: one PUBLISH per message ----------------------------------------------------

    def aim(self, topic, rid):
        # Where the message a link starts writing goes, and the request it answers (if any).
        self.target = topic
        self.replying = rid

    def room(self, topic):
        # The payload bytes one message to topic may have: what the output buffer holds after
        # the head's room, and what the broker's Maximum Packet Size leaves after the head.
        room = len(self.tx) - _ROOM
        most = self.client.broker_max
        if most:
            # the head: type (1), remaining length (up to 4), topic length (2), topic, properties
            room = min(room, most - 7 - len(topic) - len(self.props))
        return room

    def _write(self, data, n):
        # The link's output, in one or more pieces; its last byte is the newline.
        fill = self.fill
        tx = self.tx
        if fill >= 0:
            if fill + n > len(tx):
                fill = -1  # too long: answered with an error below
            else:
                tx[fill:fill + n] = memoryview(data)[:n]
                fill += n
        self.fill = fill
        if not n or data[n - 1] != 10:
            return
        self.fill = _ROOM
        topic = self.target
        if fill < 0 or fill - 1 - _ROOM > self.room(topic):
            self._too_long(topic)
            return
        self._publish(topic, tx, fill - 1, _ROOM)

    def _too_long(self, topic):
        # An answer the board cannot send (longer than its buffer or the broker takes) becomes
        # an error the client can read; a notification, a line in the board's log. Written
        # here, not through the link: its Out may still be sending the long one (MicroPython).
        limit = self.room(topic)
        rid = self.replying
        if rid is None:
            self.log("tinymcp: a message longer than %d bytes was not sent" % limit)
            return
        error = dumps({"jsonrpc": "2.0", "id": rid, "error": {
            "code": INTERNAL_ERROR, "message": "Internal error: the answer is longer than the "
            "board's MQTT messages can be (%d bytes)" % limit,
            "data": {REASON: "answer-too-long", "limit": limit}}})   # protocol.py: why not a name
        self._publish(topic, error, len(error))

    def _publish(self, topic, data, end, start=0):
        # data[start:end] to topic (bytes), in one write: the head goes just before it in self.tx.
        tx = self.tx
        if data is not tx:
            tx[_ROOM:_ROOM + end - start] = memoryview(data)[start:end]
            end = _ROOM + end - start
        at = self.client.put_head(tx, _ROOM, topic, self.props, end - _ROOM)
        self.client.send_packet(tx, at, end)


def _why(e):
    text = str(e)
    return text if text else e.__class__.__name__


def check(name, server_id):
    # ValueError unless both can be topic levels as the specification wants them.
    if not _valid_id(server_id) or not 0 < len(name) <= 128 or "+" in name or "#" in name:
        raise ValueError("the server id must be 1..64 characters without / + #, and the "
                         "server-name 1..128 characters without + #")


def serve(server, url, name=None, server_id=None, keepalive=60, log=print, user=None,
          password=None, cert=None, key=None, ca=None):
    # Serve over the broker at url for as long as the board runs. name: the server-name
    # (default tinymcp/<board name>); server_id: its MQTT client id (default the board's id);
    # user and password, when given, over those in the URL. With mqtts://: cert and key, the
    # board's client certificate and its key (files, PEM or DER; the broker may know the board
    # by it, docs/fleet.md), ca the CA file its broker's certificate is checked against.
    host, port, tls, url_user, url_password = parse_url(url)
    if (cert or key or ca) and not tls:
        raise ValueError("a client certificate, key or CA goes with mqtts:// only")
    if key and not cert:
        raise ValueError("a key without its certificate")
    if tls and (cert or ca):
        tls = (cert, key, ca)
    if name is None:
        board = server.info["name"]
        name = "tinymcp/" + (board[8:] if board.startswith("tinymcp-") else board)
    server_id = server_id or server.identity or "tinymcp"
    check(name, server_id)
    Topics(server, host, port, name, server_id, keepalive, user or url_user,
           password if user else url_password, tls, log).run()
