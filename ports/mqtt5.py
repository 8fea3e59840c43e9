# A small MQTT 5 client for the serve loop, on both runtimes: CONNECT with properties and a will,
# QoS 0 PUBLISH with user properties, SUBSCRIBE with options (No Local), UNSUBSCRIBE, PINGREQ;
# the broker's Maximum Packet Size (CONNACK) is kept for the caller (broker_max).
# Input lands in one preallocated buffer; each packet leaves in one write. Never blocks longer
# than the wait it is given; a lost connection is an OSError for the caller to reconnect on.
#
#   c = Client("board-1", keepalive=60, will=(topic, b"", True))
#   c.connect("broker.lan", 1883, props=[("MCP-COMPONENT-TYPE", "mcp-server")])
#   c.subscribe([("$mcp-rpc/+/board-1/x", NO_LOCAL)])
#   c.publish(topic, payload, n, [("MCP-MQTT-CLIENT-ID", "board-1")], retain=True)
#   packet = c.poll(200)   # PUBLISH -> (topic, payload view, user properties) or None
from tinymcp.clock import ticks_diff, ticks_ms
from tinymcp.protocol import const

NO_LOCAL = const(0x04)
_CONNACK = const(0x20)
_PUBLISH = const(0x30)
_SUBACK = const(0x90)
_PINGRESP = const(0xD0)
_DISCONNECT = const(0xE0)
_USER = const(0x26)
_MAX_PACKET = const(0x27)  # a CONNACK's Maximum Packet Size: the largest packet the broker takes

# What a CONNACK's reason code means, for the one line a refused board says.
REFUSED = {0x84: "unsupported protocol version (the broker does not speak MQTT 5)",
           0x85: "client identifier not valid", 0x86: "bad user name or password",
           0x87: "not authorized (check the user name and password)",
           0x88: "server unavailable", 0x89: "server busy",
           0x8A: "banned", 0x8C: "bad authentication method"}

# Property id -> its wire type: 1 byte, 2 u16, 4 u32, 0 varint, "s" string, "b" binary,
# "p" string pair. Used to step over properties this client does not read.
_KINDS = {0x01: 1, 0x17: 1, 0x19: 1, 0x24: 1, 0x25: 1, 0x28: 1, 0x29: 1, 0x2A: 1,
          0x13: 2, 0x21: 2, 0x22: 2, 0x23: 2, 0x02: 4, 0x11: 4, 0x18: 4, 0x27: 4, 0x0B: 0,
          0x03: "s", 0x08: "s", 0x12: "s", 0x15: "s", 0x1A: "s", 0x1C: "s", 0x1F: "s",
          0x09: "b", 0x16: "b", 0x26: "p"}


class Refused(OSError):
    # The broker answered CONNECT with a failure reason code.
    def __init__(self, code):
        OSError.__init__(self, "the broker refused the connection: %s (CONNACK 0x%02x)"
                         % (REFUSED.get(code, "reason"), code))
        self.code = code


def _varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | 0x80 if n else byte)
        if not n:
            return out


def _string(text):
    data = text.encode() if type(text) is str else text
    return len(data).to_bytes(2, "big") + data


def properties(pairs, head=b""):
    # head: properties already encoded; pairs: user properties (name, value).
    body = bytearray(head)
    for name, value in pairs or ():
        body.append(_USER)
        body += _string(name)
        body += _string(value)
    return _varint(len(body)) + body


def _get_varint(buf, pos, end):
    # -> (value, position after it), or (-1, pos) when it is not complete before end.
    value = 0
    shift = 0
    while pos < end:
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 21:
            raise ValueError("malformed length")
    return -1, pos


def _get_string(buf, pos):
    n = buf[pos] << 8 | buf[pos + 1]
    return bytes(buf[pos + 2:pos + 2 + n]), pos + 2 + n


def readproperties(buf, pos, want=None):
    # -> (user properties as {name: value} (str), the wanted non-user values by id, position
    # after the properties). want: property ids whose values to keep.
    length, pos = _get_varint(buf, pos, len(buf))
    end = pos + length
    users = {}
    found = {}
    while pos < end:
        pid = buf[pos]
        pos += 1
        kind = _KINDS.get(pid)
        start = pos
        if kind is None:
            raise ValueError("unknown property 0x%02x" % pid)
        if kind == "p":
            name, pos = _get_string(buf, pos)
            value, pos = _get_string(buf, pos)
            users[name.decode()] = value.decode()
            continue
        if kind == "s" or kind == "b":
            pos = start + 2 + (buf[start] << 8 | buf[start + 1])
        elif kind == 0:
            _, pos = _get_varint(buf, pos, end)
        else:
            pos += kind
        if want and pid in want:
            found[pid] = bytes(buf[start:pos])
    return users, found, end


class Client:
    max_packet = 8192      # the largest packet either way; longer input is skipped, and said
    connect_wait_ms = 5000

    def __init__(self, client_id, keepalive=60, will=None, username=None, password=None):
        self.client_id = client_id
        self.keepalive = keepalive
        self.will = will          # (topic, payload, retain, user properties) or None
        self.username = username
        self.password = password
        self.stream = None
        self.have = 0             # bytes of input in stream.buf
        self.skip = 0             # bytes of an over-long packet still to drop
        self.skipped = 0          # over-long packets dropped so far
        self.connack = None       # the CONNACK's user properties
        self.broker_max = 0       # the largest packet the broker takes (its CONNACK says), or 0
        self.granted = []         # the last SUBACK's reason codes
        self.header = bytearray(8)
        self._id = 0
        self._sent = self._heard = ticks_ms()
        self._pinged = False

    # -- the connection -------------------------------------------------------------------

    def connect(self, host, port, props=None, tls=None):
        # Connects and waits for CONNACK; raises Refused or OSError. (Sockets are imported
        # here: the codec and the binding load where there are none, for settings and tests.)
        import socket

        from ports.tcp import SocketStream
        address = socket.getaddrinfo(host, port)[0][-1]
        sock = socket.socket()
        try:
            sock.settimeout(self.connect_wait_ms / 1000)
        except (AttributeError, OSError):
            pass
        sock.connect(address)
        if tls:
            sock = _wrap(sock, host, tls)
        if hasattr(sock, "pending"):   # CPython's TLS socket
            from ports.cpython.tls import TlsStream as SocketStream
        self.stream = SocketStream(sock, self.max_packet)
        self.have = self.skip = self._consumed = 0
        self.connack = None
        flags = 0x02  # clean start
        body = bytearray(b"\x00\x04MQTT\x05")
        payload = _string(self.client_id)
        will = self.will
        if will:
            flags |= 0x04 | (0x20 if will[2] else 0)
            payload += properties(will[3] if len(will) > 3 else None)
            payload += _string(will[0]) + _string(will[1])
        if self.username is not None:
            flags |= 0x80
            payload += _string(self.username)
        if self.password is not None:
            flags |= 0x40
            payload += _string(self.password)
        body.append(flags)
        body += self.keepalive.to_bytes(2, "big")
        body += properties(props, b"\x11\x00\x00\x00\x00")  # session expiry 0
        body += payload
        self._send(0x10, body)
        start = ticks_ms()
        while self.connack is None:
            left = self.connect_wait_ms - ticks_diff(ticks_ms(), start)
            if left <= 0:
                raise OSError("no CONNACK from the broker")
            self.poll(left)
        return self.connack

    def close(self, clean=True):
        stream, self.stream = self.stream, None
        self.connack = None
        if stream is None:
            return
        if clean:
            try:
                stream.write(b"\xe0\x00", 2)  # DISCONNECT, normal: the will is not sent
            except OSError:
                pass
        stream.close()

    # -- output -----------------------------------------------------------------------------

    def _send(self, first, body):
        # A small packet (CONNECT, SUBSCRIBE, ...) in one write.
        packet = bytes((first,)) + _varint(len(body)) + body
        self._write(packet, len(packet))

    def _write(self, data, n):
        stream = self.stream
        if stream is None or stream.closed:
            raise OSError("not connected")
        stream.write(data, n)
        if stream.closed:
            raise OSError("the broker connection is gone")
        self._sent = ticks_ms()

    def put_head(self, buf, at, topic, props, size, retain=False):
        # Writes a PUBLISH's head (fixed header, topic, encoded properties) into buf so that it
        # ends at `at`, where a payload of `size` bytes follows -> where the head starts.
        # topic: bytes. Nothing is allocated.
        start = at - len(props)
        buf[start:at] = props
        n = len(topic)
        start -= n
        buf[start:start + n] = topic
        start -= 2
        buf[start] = n >> 8
        buf[start + 1] = n & 0xFF
        rest = at - start + size
        k = 0
        header = self.header
        while True:
            byte = rest & 0x7F
            rest >>= 7
            header[k] = byte | 0x80 if rest else byte
            k += 1
            if not rest:
                break
        start -= k
        buf[start:start + k] = memoryview(header)[:k]
        start -= 1
        buf[start] = _PUBLISH | (1 if retain else 0)
        return start

    def publish(self, topic, payload, n=None, users=None, retain=False):
        # A PUBLISH made whole (presence, the will's clearing): allocates; answers use put_head.
        n = len(payload) if n is None else n
        variable = _string(topic) + properties(users)
        packet = (bytes((_PUBLISH | (1 if retain else 0),)) + _varint(len(variable) + n)
                  + variable + bytes(memoryview(payload)[:n]))
        self._write(packet, len(packet))

    def send_packet(self, buf, start, end):
        # A packet assembled in place by the caller (buf[start:end]), in one write.
        self._write(memoryview(buf)[start:end], end - start)

    def _next_id(self):
        self._id = self._id % 0xFFFF + 1
        return self._id.to_bytes(2, "big")

    def subscribe(self, filters):
        # filters: [(topic filter, options)]; options: NO_LOCAL | max QoS (0 here).
        body = bytearray(self._next_id()) + b"\x00"
        for topic, options in filters:
            body += _string(topic)
            body.append(options)
        self._send(0x82, body)

    def unsubscribe(self, topics):
        body = bytearray(self._next_id()) + b"\x00"
        for topic in topics:
            body += _string(topic)
        self._send(0xA2, body)

    # -- input and keep-alive --------------------------------------------------------------

    def poll(self, timeout_ms):
        # Reads what the broker sent (waiting at most timeout_ms) -> the next PUBLISH as
        # (topic bytes, payload memoryview into the input buffer, user properties) or None.
        # The payload is valid until the next poll. Keep-alive is kept here too.
        self._keep_alive()
        packet = self._parse()
        if packet is not None:
            return packet
        stream = self.stream
        if stream is None:
            raise OSError("not connected")
        n = stream.readinto(stream.view[self.have:], timeout_ms)
        if n < 0:
            raise OSError("the broker closed the connection")
        if n:
            self._heard = ticks_ms()
            self._pinged = False
            if self.skip:
                dropped = min(self.skip, n)
                self.skip -= dropped
                stream.buf[:n - dropped] = stream.buf[self.have + dropped:self.have + n]
                n -= dropped
            self.have += n
        return self._parse()

    def _parse(self):
        try:
            return self._next()
        except (ValueError, IndexError):  # a broker that breaks the protocol: reconnected
            raise OSError("a malformed packet from the broker")

    def _keep_alive(self):
        if self.keepalive <= 0 or self.stream is None:
            return
        period = self.keepalive * 1000
        now = ticks_ms()
        if ticks_diff(now, self._heard) > period * 3 // 2:
            raise OSError("the broker stopped answering (keep-alive)")
        if ticks_diff(now, self._sent) >= period // 2 and not self._pinged:
            self._pinged = True
            self._write(b"\xc0\x00", 2)  # PINGREQ

    def _next(self):
        # One whole packet from the input buffer, consumed; PUBLISH is returned, the rest handled.
        stream = self.stream
        if stream is None:
            return None
        buf = stream.buf
        if self._consumed:
            used, self._consumed = self._consumed, 0
            buf[:self.have - used] = buf[used:self.have]
            self.have -= used
        while self.have >= 2:
            length, pos = _get_varint(buf, 1, self.have)
            if length < 0:
                return None
            end = pos + length
            if end > len(buf):  # longer than the buffer: dropped as it arrives
                self.skipped += 1
                self.skip = end - self.have
                self.have = 0
                return None
            if end > self.have:
                return None
            kind = buf[0] & 0xF0
            self._consumed = end
            if kind == _PUBLISH:
                return self._publish(buf, pos, end)
            if kind == _CONNACK:
                code = buf[pos + 1]
                if code >= 0x80:
                    raise Refused(code)
                self.connack, found, _ = readproperties(buf, pos + 2, (_MAX_PACKET,))
                size = found.get(_MAX_PACKET)
                self.broker_max = int.from_bytes(size, "big") if size else 0
            elif kind == _SUBACK:
                _, _, at = readproperties(buf, pos + 2)
                self.granted = list(buf[at:end])
            elif kind == _DISCONNECT:
                raise OSError("the broker disconnected the board (reason 0x%02x)"
                              % (buf[pos] if length else 0))
            used, self._consumed = self._consumed, 0
            buf[:self.have - used] = buf[used:self.have]
            self.have -= used
        return None

    _consumed = 0

    def _publish(self, buf, pos, end):
        topic, pos = _get_string(buf, pos)
        if buf[0] & 0x06:  # QoS 1 or 2: a packet id (we subscribe at QoS 0; a broker may not)
            pos += 2
        users, _, pos = readproperties(buf, pos)
        return topic, memoryview(buf)[pos:end], users


def _wrap(sock, host, tls):
    # TLS where the runtime has it (mqtts://). tls: True, or (cert, key, ca) file paths, each
    # may be None: the board's client certificate and key (mutual TLS: the broker knows the
    # board by it), the CA its broker's certificate is checked against.
    cert, key, ca = tls if type(tls) is tuple else (None, None, None)
    try:
        import ssl
        default = getattr(ssl, "create_default_context", None)
    except ImportError:   # MicroPython with a path without .frozen, where ssl.py lives
        default = None
    if default is not None:  # CPython: PEM files; the system's CA store unless ca
        context = default(cafile=ca)
        if cert:
            context.load_cert_chain(cert, key)
        return context.wrap_socket(sock, server_hostname=host)
    try:
        import tls as mbedtls  # MicroPython's TLS module (its ssl.py is a wrapper of it)
    except ImportError:
        import ssl as mbedtls  # firmware before 1.23: ssl was that module
    context = mbedtls.SSLContext(mbedtls.PROTOCOL_TLS_CLIENT)
    if cert:   # mbedtls reads DER here: a PEM file is decoded first
        context.load_cert_chain(_der(cert), _der(key or cert, b"PRIVATE KEY"))
    # (the tls stub lacks verify_mode, which the module has)
    if ca:
        context.load_verify_locations(_der(ca))
        context.verify_mode = mbedtls.CERT_REQUIRED  # pyright: ignore[reportAttributeAccessIssue]
    else:  # boards carry no CA store by default
        context.verify_mode = mbedtls.CERT_NONE  # pyright: ignore[reportAttributeAccessIssue]
    return context.wrap_socket(sock, server_hostname=host)


def _der(path, kind=b"CERTIFICATE"):
    # The DER bytes of a PEM or DER file: the first block whose label ends with kind.
    with open(path, "rb") as f:
        data = f.read()
    if not data.startswith(b"-----") and b"\n-----BEGIN" not in data:
        return data
    from binascii import a2b_base64
    inside = None
    for line in data.split(b"\n"):
        line = line.strip()
        if line.startswith(b"-----BEGIN ") and line.endswith(kind + b"-----"):
            inside = []
        elif line.startswith(b"-----END ") and inside is not None:
            return a2b_base64(b"".join(inside))
        elif inside is not None:
            inside.append(line)
    raise ValueError("%s holds no %s" % (path, kind.decode()))
