# The board's mDNS responder (ports/mdns.py) reading queries: what it answers, and packets that
# must neither crash it nor hang it (a name pointing at itself, a name cut short, a response).
# Its socket is never sent on here: tests/bridge/test_discover.py runs it on a network, in a
# namespace of its own.
import socket
import struct

import pytest

from ports.mdns import Responder
from ports.mdnsrecords import records
from tinymcp import Server

PTR, TXT, SRV, A, ANY = 12, 16, 33, 1, 255


def wire(dotted):
    return b"".join(bytes((len(label),)) + label.encode() for label in dotted.split(".")) + b"\0"


def query(*questions, flags=0):
    # questions: (name on the wire, qtype)
    body = b"".join(name + struct.pack(">HH", qtype, 1) for name, qtype in questions)
    return struct.pack(">HHHHHH", 0, flags, len(questions), 0, 0, 0) + body


@pytest.fixture
def responder():
    packet, ttls, names, instance = records(Server("tinymcp-test", "1.0"), "10.0.0.7", 8765, True)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    responder = Responder(sock, packet, ttls, names)
    responder.instance = instance[:-len("._mcp._tcp.local")]
    yield responder
    sock.close()


def asks(responder, packet):
    responder.buf[:len(packet)] = packet
    return responder._asks(len(packet))


def test_it_answers_for_the_service_its_instance_and_its_host(responder):
    instance = wire(responder.instance + "._mcp._tcp.local")
    assert asks(responder, query((wire("_mcp._tcp.local"), PTR)))
    assert asks(responder, query((wire("_MCP._TCP.Local"), PTR)))   # names are case-blind
    assert asks(responder, query((instance, SRV))) and asks(responder, query((instance, TXT)))
    assert asks(responder, query((instance, ANY)))
    assert asks(responder, query((responder.names[2], A)))      # tinymcp-<id>.local


def test_it_stays_silent_for_other_names_and_types(responder):
    assert not asks(responder, query((wire("_http._tcp.local"), PTR)))
    assert not asks(responder, query((wire("_mcp._tcp.local"), A)))
    assert not asks(responder, query((wire("_mcp._tcp.local"), PTR), flags=0x8400))  # a response


def test_a_compressed_name_is_followed(responder):
    first = wire("_http._tcp.local")
    # the second question: "_mcp" then a pointer to "_tcp.local" inside the first
    second = b"\x04_mcp" + struct.pack(">H", 0xC000 | (12 + 1 + len("_http")))
    assert asks(responder, query((first, PTR), (second, PTR)))


@pytest.mark.parametrize("packet", [
    query((struct.pack(">H", 0xC000 | 12), PTR)),                 # a name pointing at itself
    query((b"\x04_mcp" + struct.pack(">H", 0xC000 | 12), PTR)),   # a loop through a label
    query((wire("_mcp._tcp.local"), PTR))[:20],                   # cut short
    query((b"\x3f" + b"a" * 10, PTR)),                            # a label longer than the packet
    b"\x00" * 11,                                                 # shorter than a header
    struct.pack(">HHHHHH", 0, 0, 40, 0, 0, 0),                    # questions promised, none there
])
def test_a_malformed_query_is_ignored(responder, packet):
    assert asks(responder, packet) is False


def test_the_goodbye_sets_every_ttl_to_zero(responder):
    packet = responder.packet
    assert all(packet[at:at + 4] == b"\0\0\0\x78" for at in responder.ttls)   # 120 s
    responder.sock.close()
    responder.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    responder._send = lambda: None   # nothing goes out in this test
    responder.close()
    assert all(packet[at:at + 4] == b"\0\0\0\0" for at in responder.ttls)


def test_the_txt_record_says_whether_a_token_is_needed_never_which(responder):
    packet = bytes(responder.packet)
    for pair in (b"name=tinymcp-test", b"version=1.0", b"token=1", b"wire=jsonl",
                 b"revisions=2025-11-25,2025-06-18,2025-03-26,2024-11-05"):
        assert bytes((len(pair),)) + pair in packet
    assert socket.inet_aton("10.0.0.7") == packet[-4:]
