# The records a board announces over mDNS (ports/mdns.py): built once when it starts listening,
# this module loaded for that and released after (tinymcp/later.py), so only the answer they make
# stays in RAM. Names carry the board's unique id: no probing for conflicts.
import socket

from tinymcp.protocol import VERSIONS, const

GROUP = "224.0.0.251"
SERVICE = "_mcp._tcp.local"
WIRE = "jsonl"        # the TXT record's wire: JSON-RPC lines over TCP (ports/tcp.py)
TTL = const(120)      # seconds a browser keeps the records: a board gone silently is forgotten then
_PTR = const(12)
_SRV = const(33)
_TXT = const(16)
_A = const(1)


def _name(dotted, first=None):
    # A dotted name -> the name on the wire, uncompressed; first: a label in front of it, taken
    # whole (an instance's name may hold dots).
    out = bytearray()
    for label in ((first,) if first else ()) + tuple(dotted.split(".")):
        raw = label.encode()
        out.append(len(raw))
        out.extend(raw)
    out.append(0)
    return bytes(out)


def _record(out, name, rtype, flush, rdata):
    # One resource record appended to out; -> where its TTL sits (patched for the goodbye).
    out.extend(name)
    out.extend(bytes((0, rtype, 0x80 if flush else 0, 1)))   # class IN, cache-flush if unique
    at = len(out)
    out.extend(bytes((0, 0, TTL >> 8, TTL & 255, len(rdata) >> 8, len(rdata) & 255)))
    out.extend(rdata)
    return at


def _txt(pairs):
    out = bytearray()
    for pair in pairs:
        raw = pair.encode()
        out.append(len(raw))
        out.extend(raw)
    return bytes(out)


def quad(address):
    return bytes(int(part) for part in address.split("."))


def _unique(port):
    # The board's own id (machine.unique_id()), else this machine's name and the port (the
    # simulated board): what keeps two boards' names apart on one network.
    try:
        import machine
        return "".join("%02x" % b for b in machine.unique_id())[-8:]
    except (ImportError, AttributeError):
        pass
    try:
        host = getattr(socket, "gethostname")().split(".")[0]   # CPython's only
    except (AttributeError, OSError):   # the unix port has no gethostname
        host = ""
    return ("%s-%d" % (host, port)).strip("-")[-40:]


def records(server, address, port, token_needed):
    # -> (the answer: a header and the four records, where each TTL sits in it, the names it
    # answers for on the wire (service, instance, host; lowercase), the instance's name).
    unique = _unique(port)
    name = server.info["name"]
    instance = ("%s-%s" % (name, unique))[:63]
    host = ("tinymcp-%s" % unique)[:63]
    txt = _txt(("name=" + name, "version=" + server.info["version"],
                "revisions=" + ",".join(VERSIONS), "token=%d" % bool(token_needed),
                "wire=" + WIRE))
    service = _name(SERVICE)
    full_instance = _name(SERVICE, instance)
    full_host = _name("local", host)
    packet = bytearray(b"\x00\x00\x84\x00\x00\x00\x00\x04\x00\x00\x00\x00")   # id 0, AA, 4 answers
    ttls = (_record(packet, service, _PTR, False, full_instance),
            _record(packet, full_instance, _SRV, True,
                    bytes((0, 0, 0, 0, port >> 8, port & 255)) + full_host),
            _record(packet, full_instance, _TXT, True, txt),
            _record(packet, full_host, _A, True, quad(address)))
    names = (service.lower(), full_instance.lower(), full_host.lower())
    return packet, ttls, names, instance + "." + SERVICE


def own_address(host):
    # The address a board listening on host is reached at: host itself, or for 0.0.0.0 the one
    # multicast leaves from (None when that cannot be told: no mDNS then).
    if host not in ("0.0.0.0", ""):
        return host
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(socket.getaddrinfo(GROUP, 5353)[0][-1])
        return getattr(probe, "getsockname")()[0]   # CPython's only
    except (AttributeError, OSError, IndexError):
        return None
    finally:
        probe.close()
