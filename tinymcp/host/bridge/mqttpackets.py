# The MQTT 5 PUBLISH packets on the bridge's hot path (a call to a board out, its answer in),
# read and made without paho's general property machinery, which cost the bridge more CPU per
# call than the rest of the relay: paho builds a Properties object property by property for
# each message in, and packs the same two user properties again for each message out. Anything
# the short read below does not know (QoS above 0, a property it has no rule for, a malformed
# packet) goes to paho's own code, which judges it as before.

# A PUBLISH property id -> how long its value is: a fixed size, or "s" (a two-byte length
# and that many bytes: strings, binary data), "v" (a variable byte integer). User properties
# (0x26, a pair of strings) are kept; the others skipped.
_SIZES = {0x01: 1, 0x02: 4, 0x03: "s", 0x08: "s", 0x09: "s", 0x0B: "v", 0x23: 2}
USER_PROPERTY = 0x26


def _varint(data, i):
    # -> (the value, the index after it), or (None, i) when it is not one.
    value = shift = 0
    for k in range(4):
        if i + k >= len(data):
            return None, i
        byte = data[i + k]
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, i + k + 1
        shift += 7
    return None, i


def _string(data, i):
    # -> (the UTF-8 string at i, the index after it); ValueError when there is none.
    end = i + 2 + ((data[i] << 8) | data[i + 1])
    if end > len(data):
        raise ValueError("a string past the end of the packet")
    return bytes(data[i + 2:end]).decode("utf-8"), end


def read_publish(data):
    # The variable header and payload of a QoS 0 MQTT 5 PUBLISH -> (topic, user properties as
    # [(name, value)], payload), or None for paho to read it.
    try:
        topic, i = _string(data, 0)
        length, i = _varint(data, i)
        if length is None or not topic:   # no topic: an alias, which the bridge never allows
            return None
        end = i + length
        if end > len(data):
            return None
        users = []
        while i < end:
            kind = data[i]
            i += 1
            if kind == USER_PROPERTY:
                name, i = _string(data, i)
                value, i = _string(data, i)
                users.append((name, value))
                continue
            size = _SIZES.get(kind)
            if size is None:
                return None
            if size == "s":
                i += 2 + ((data[i] << 8) | data[i + 1])
            elif size == "v":
                _value, after = _varint(data, i)
                if after == i:
                    return None
                i = after
            else:
                i += size
        if i != end:
            return None
    except (IndexError, ValueError):   # UnicodeDecodeError is one
        return None
    return topic, users, bytes(data[end:])


READ_AHEAD = 65536   # bytes asked of the socket at once when the loop drives paho


class _Unheard:
    # What paho tells of a QoS 0 PUBLISH once written (its message info), for publish_now's:
    # nobody waits on them (paho's info holds a threading.Condition each).
    __slots__ = ()

    def _set_as_published(self):
        pass


UNHEARD = _Unheard()


def fast_client(mqtt):
    # -> paho's Client with its QoS 0 PUBLISH read by read_publish: given to its .on_publication
    # (topic, users, payload) when that is set, in the same place paho calls on_message.
    # .pumped (set by mqttpump.Pump, on the loop only: paho's own thread takes paho's ways):
    # the socket read READ_AHEAD at a time (paho asks it for a byte, a byte, then the rest of
    # each packet: three system calls and a turn of the loop per message; buffered() says what
    # is read and not yet taken), and the packets queued in one turn written in one send.
    publish_command = mqtt.PUBLISH
    disconnect_command = mqtt.DISCONNECT

    class ShortReadClient(mqtt.Client):
        on_publication = None
        pumped = False
        _ahead = b""
        _taken = 0
        _ended = False   # the broker closed the connection after what is read ahead

        def _handle_publish(self):
            packet = self._in_packet
            hook = self.on_publication
            if hook is not None and not packet["command"] & 0x06:   # QoS 0
                read = read_publish(packet["packet"])
                if read is not None:
                    with self._in_callback_mutex:   # as paho calls on_message
                        hook(*read)
                    return mqtt.MQTT_ERR_SUCCESS
            return mqtt.Client._handle_publish(self)

        def publish_now(self, topic, payload, props):
            # A QoS 0 PUBLISH (props: its properties as packed, their length first) queued for
            # the end of the turn, made here as paho makes it (its publish() also makes a
            # message id and a message info for each, which nothing reads at QoS 0) -> False
            # when it is not connected, or for paho's publish to judge (a topic paho refuses).
            if not self.pumped or self._sock is None:
                return False
            name = topic.encode("utf-8")
            if not name or len(name) > 65535 or b"+" in name or b"#" in name or b"\0" in name:
                return False
            packet = bytearray(b"\x30")
            self._pack_remaining_length(packet, 2 + len(name) + len(props) + len(payload))
            packet += len(name).to_bytes(2, "big")
            packet += name
            packet += props
            packet += payload
            self._out_packet.append({"command": publish_command, "mid": 0, "qos": 0, "pos": 0,
                                     "to_process": len(packet), "packet": packet,
                                     "info": UNHEARD})
            self._call_socket_register_write()
            return True

        def buffered(self):
            return self._taken < len(self._ahead)

        def prefetch(self):
            # The socket read ahead now, if all read before is taken (an error or nothing to
            # read: paho's own read meets it next and says what it is; the end: kept for it).
            if self._taken < len(self._ahead) or self._ended:
                return
            try:
                ahead = mqtt.Client._sock_recv(self, READ_AHEAD)
            except Exception:
                return
            if ahead:
                self._ahead, self._taken = ahead, 0
            else:
                self._ended = True

        def take_publish(self):
            # The message next in what is read ahead, when it is a whole QoS 0 PUBLISH that
            # read_publish reads and paho is between packets: handled here as paho's reader
            # would (which takes it a piece a call, into a dict) -> False: paho's to read.
            hook = self.on_publication
            ahead, i = self._ahead, self._taken
            if (hook is None or i >= len(ahead) or ahead[i] & 0xF6 != 0x30
                    or self._in_packet["command"]):
                return False
            length, start = _varint(ahead, i + 1)
            if length is None or start + length > len(ahead):
                return False
            read = read_publish(ahead[start:start + length])
            if read is None:
                return False
            self._taken = start + length
            with self._msgtime_mutex:
                self._last_bytes_received = mqtt.time_func()
            with self._in_callback_mutex:   # as paho calls on_message
                hook(*read)
            return True

        def _sock_recv(self, bufsize):
            if not self.pumped:
                return mqtt.Client._sock_recv(self, bufsize)
            ahead, start = self._ahead, self._taken
            if start >= len(ahead):
                if self._ended:
                    return b""
                ahead = mqtt.Client._sock_recv(self, READ_AHEAD)   # raises as paho's does
                if not ahead:
                    return ahead   # the broker closed the connection
                self._ahead, start = ahead, 0
            self._taken = end = min(start + bufsize, len(ahead))
            return ahead[start:end]

        def _sock_close(self):
            self._ahead, self._taken = b"", 0   # nothing of a lost connection is read after it
            self._ended = False
            mqtt.Client._sock_close(self)

        def _packet_write(self):
            # Every packet queued in one send, when nothing waits to hear of a write (paho's
            # on_publish) and no DISCONNECT is among them: anything else the way paho writes.
            out = self._out_packet
            if (not self.pumped or not out or self.on_publish is not None
                    or any(p["command"] & 0xF0 == disconnect_command for p in out)):
                return mqtt.Client._packet_write(self)
            packets = list(out)
            out.clear()
            data = b"".join(p["packet"][p["pos"]:] for p in packets)
            try:
                sent = self._sock_send(data)
            except BlockingIOError:
                out.extendleft(reversed(packets))
                return mqtt.MQTT_ERR_AGAIN
            except (AttributeError, ValueError):
                out.extendleft(reversed(packets))
                return mqtt.MQTT_ERR_SUCCESS
            except OSError:
                out.extendleft(reversed(packets))
                return mqtt.MQTT_ERR_CONN_LOST
            for i, p in enumerate(packets):
                if sent < p["to_process"]:   # the socket took part: the rest when it can
                    p["pos"] += sent
                    p["to_process"] -= sent
                    out.extendleft(reversed(packets[i:]))
                    break
                sent -= p["to_process"]
                p["pos"] += p["to_process"]
                p["to_process"] = 0
                if (p["command"] & 0xF0 == publish_command and p["qos"] == 0
                        and p["info"] is not None):
                    p["info"]._set_as_published()
            with self._msgtime_mutex:
                self._last_msg_out = mqtt.time_func()
            return mqtt.MQTT_ERR_SUCCESS
    return ShortReadClient


def packed(properties_class, packet_type, users):
    # -> paho Properties of packet_type holding the user properties users, packed once: the
    # same bytes for every publish that carries them (paho packs them again for each).
    class PackedProperties(properties_class):
        def pack(self):   # the bytes in a closure: paho's Properties takes no attribute of ours
            return done
    props = PackedProperties(packet_type)
    props.UserProperty = users
    done = properties_class.pack(props)
    return props
