# MCP over an MQTT 5 broker, as EMQX's "MCP over MQTT" specification says for a server, on both
# runtimes. The board announces itself retained on its presence topic (cleared by its will if it
# dies), answers initialize from its control topic and everything after on each client's RPC
# topic, and tells list changes and resource updates on its capability topic. Each MQTT client
# has its own MCP session (at most max_sessions; the oldest is let go); a lost broker is
# reconnected with backoff and the presence restored.
#
#   from ports.mqtt import serve
#   serve(server, "mqtt://broker.lan:1883", name="tinymcp/sim", server_id="sim-1")
#
# docs/network.md ("Through an MQTT broker") says what the topics carry.
from ports.mqtt5 import NO_LOCAL, Client, Refused, properties
from tinymcp.clock import sleep_ms, ticks_diff, ticks_ms
from tinymcp.framing import Out
from tinymcp.jsonrpc import JsonLink, dumps, loads
from tinymcp.protocol import INTERNAL_ERROR, PARSE_ERROR

SERVER = "mcp-server"
COMPONENT = "MCP-COMPONENT-TYPE"
SENDER = "MCP-MQTT-CLIENT-ID"
DISCONNECTED = b'{"jsonrpc":"2.0","method":"notifications/disconnected"}'
_ROOM = 448  # bytes before an answer's payload in the output buffer, for its PUBLISH header


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
    # The server's notifications: list changes and resource updates go to the capability topic,
    # everything else to the RPC topic of the session being served.
    def __init__(self, out, board):
        JsonLink.__init__(self, out)
        self.board = board

    def send(self, msg):
        method = msg.get("method") or ""
        board = self.board
        board.shared = (method.endswith("/list_changed")
                        or method == "notifications/resources/updated")
        try:
            JsonLink.send(self, msg)
        finally:
            board.shared = False


class Board:
    max_sessions = 4      # MQTT clients served at once, each its own session
    poll_ms = 200         # how often the idle work runs (samplers, subscribed resources)
    first_retry_ms = 1000
    last_retry_ms = 30000  # the longest wait between two attempts to reach the broker
    max_pending = 8       # messages kept while a handler runs (other clients' requests)

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
        self.sessions = {}    # MQTT client id -> its Session (tinymcp/server.py)
        self.order = []       # those ids, oldest first
        self.current = None   # whose session the server serves now
        self.pending = []     # (topic, payload, sender) that arrived while a handler ran
        self.shared = False   # the message being written goes to the capability topic
        self.replying = None  # id of the request being answered, for an answer too long
        self.target = None    # the RPC topic of the session being served
        self.tx = bytearray(self.client.max_packet)
        self.fill = _ROOM
        self.out = Out(self._write)
        self.link = MqttLink(self.out, self)
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
        delay = self.first_retry_ms
        try:
            while True:
                try:
                    self._connect()
                    delay = self.first_retry_ms
                    self._serve()
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

    def _connect(self):
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
        for cid in self.order:
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

    # -- serving ----------------------------------------------------------------------------

    def _serve(self):
        client = self.client
        last_poll = ticks_ms()
        while True:
            packet = client.poll(self.poll_ms)
            while packet is not None:
                self._on(packet[0], packet[1], packet[2].get(SENDER))
                while self.pending:
                    self._on(*self.pending.pop(0))
                packet = client.poll(0)
            if client.skipped != self.skipped:
                self.skipped = client.skipped
                self.log("tinymcp: a message longer than %d bytes was dropped"
                         % client.max_packet)
            now = ticks_ms()
            if ticks_diff(now, last_poll) >= self.poll_ms:
                last_poll = now
                self._poll_sessions()

    def pump(self, timeout_ms):
        # Called from inside a handler: answers and notifications of the client being served
        # are routed now; other messages wait (a few) until the handler returns.
        packet = self.client.poll(timeout_ms)
        while packet is not None:
            topic, payload, users = packet
            cid = self._rpc_client(topic)
            msg = None
            if cid is not None and cid == self.current and users.get(SENDER) == cid:
                try:
                    msg = loads(payload)
                except Exception:
                    pass
            if type(msg) is dict and ("method" not in msg or "id" not in msg):
                self.server.answer(msg, self.link)
            elif len(self.pending) < self.max_pending:
                self.pending.append((topic, bytes(payload), users.get(SENDER)))
            packet = self.client.poll(0)

    def _rpc_client(self, topic):
        # The client id in "$mcp-rpc/{client-id}/{server-id}/{server-name}", or None.
        if not topic.startswith(b"$mcp-rpc/"):
            return None
        tail = self.rpc_tail.encode()
        if not topic.endswith(tail):
            return None
        cid = topic[9:len(topic) - len(tail)].decode()
        return cid if _valid_id(cid) else None

    def _on(self, topic, payload, sender):
        # One PUBLISH from the broker. A message on a client's topics counts only when its
        # sender is that client (with the broker's ACL, docs/fleet.md, that is proven).
        if sender == self.server_id:  # our own, where No Local was not granted
            return
        cid = self._rpc_client(topic)
        if cid is not None:
            if sender == cid:
                self._answer(cid, payload)
            else:
                self._forged(cid, sender)
            return
        topic = topic.decode()
        if topic == self.control:  # initialize: the answer goes to the sender's RPC topic
            if sender is None or not _valid_id(sender):
                self.log("tinymcp: a message on the control topic without a valid %s: dropped"
                         % SENDER)
                return
            if sender not in self.sessions:
                self.client.subscribe(self._client_topics(sender))
            self._answer(sender, payload)
        elif topic.startswith("$mcp-client/presence/"):
            cid = topic[21:]
            if cid in self.sessions and sender != cid:
                self._forged(cid, sender)
            elif cid in self.sessions and (not len(payload)
                                           or b"disconnected" in bytes(payload)):
                self._end(cid, False)
        elif topic.startswith("$mcp-client/capability/"):
            cid = topic[23:]
            if cid in self.sessions and sender != cid:
                self._forged(cid, sender)
            elif cid in self.sessions:
                self._answer(cid, payload)

    def _forged(self, cid, sender):
        if not self.forged:
            self.forged = True
            self.log("tinymcp: a message on the topics of client %s from %s: dropped (and "
                     "any more such, unsaid)" % (cid, sender))

    def _answer(self, cid, payload):
        self._enter(cid)
        try:
            msg = loads(payload)
        except Exception:  # ValueError or UnicodeError, by runtime
            self.link.error(None, PARSE_ERROR, "Parse error: not valid UTF-8 JSON")
            return
        if type(msg) is dict:
            if msg.get("method") == "notifications/disconnected":
                self._end(cid, False)
                return
            self.replying = msg.get("id")
        self.server.answer(msg, self.link)
        self.replying = None

    # -- sessions ---------------------------------------------------------------------------

    def _enter(self, cid):
        # cid's session (a new one if it has none) is the one the server serves next.
        if cid == self.current:
            return
        server = self.server
        session = self.sessions.get(cid)
        if session is None:
            if len(self.order) >= self.max_sessions:
                self._end(self.order[0], True)
            session = server.open_session()
            session.link = self.link  # no line framing to offer: MQTT carries whole messages
            session.pump = self.pump
            self.sessions[cid] = session
            self.order.append(cid)
        server.enter(session)
        self.current = cid
        self.target = ("$mcp-rpc/" + cid + self.rpc_tail).encode()

    def _end(self, cid, tell):
        # The session of cid ends: told so (when the board lets it go), its topics dropped.
        if tell:
            self._publish(("$mcp-rpc/" + cid + self.rpc_tail).encode(), DISCONNECTED,
                          len(DISCONNECTED))
        # the outputs its session leased go back to their safe state
        self.server.end_session(self.sessions.pop(cid))
        self.order.remove(cid)
        if self.current == cid:
            self.current = None
        self.client.unsubscribe([topic for topic, _ in self._client_topics(cid)])

    def _poll_sessions(self):
        # The idle work once, then each session's subscribed resources.
        server = self.server
        if not self.order:
            server.poll()
            return
        hooks = True
        for cid in list(self.order):
            self._enter(cid)
            server.poll(hooks)
            hooks = False

    # -- output: one PUBLISH per message ----------------------------------------------------

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
        topic = self.capability if self.shared else self.target
        if topic is None:  # nobody to tell
            return
        if fill < 0:
            rid = self.replying
            self.replying = None
            if rid is not None:
                self.link.error(rid, INTERNAL_ERROR, "Internal error: the answer is longer "
                                "than the board's MQTT packet (%d bytes)" % len(tx))
            return
        self._publish(topic, tx, fill - 1, _ROOM)

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
    Board(server, host, port, name, server_id, keepalive, user or url_user,
          password if user else url_password, tls, log).run()
