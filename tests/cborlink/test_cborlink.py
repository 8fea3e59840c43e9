# CBOR link frames and the board's side of them: on CPython (pytest) and MicroPython (tests/mprun.py).
import json
from struct import pack

from tinymcp import Server, cbor, cborlink
from tinymcp.channel import Channel, Lines
from tinymcp.schema import integer, number
from tests.core.support import FakeStream, frame
from tests.float32 import Float32Cbor, f32

SPECIAL = (3, 4, 10)


def board():
    server = Server("cb", "0")

    @server.tool("read_adc", "An ADC channel.", inputs={"channel": integer("0..3", 0, 3)},
                 outputs={"raw": integer(), "volts": number()}, read_only=True)
    def read_adc(channel):
        return {"raw": 1021 + channel, "volts": 0.8226}

    picture_blocks = [{"type": "image", "data": bytes(range(256)), "mimeType": "image/png"}]

    @server.tool("picture", "A tiny image (the same list every time).")
    def picture():
        return picture_blocks

    @server.tool("chatty", "Logs, then answers.")
    def chatty():
        server.log("warning", "careful")
        return "done"

    server.resource("blob://all", "all bytes", mime="application/octet-stream")(
        lambda: bytes(range(256)) * 4)
    server.resource("text://hi", "text")(lambda: "hi")

    @server.resource("sensor://broken", "broken")
    def broken():
        raise OSError("no answer on the I2C bus: check the wiring")
    return server


def jframe(method, params=None, id=1):
    return frame(method, params, id) + b"\n"


def cframe(method, params=None, id=1):
    # As the bridge sends them: no "jsonrpc" member.
    msg = {"method": method}
    if id is not None:
        msg["id"] = id
    if params is not None:
        msg["params"] = params
    return cborlink.encode(msg) + b"\n"


INIT = jframe("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0)


def serve(chunks, size=64):
    server = board()
    stream = FakeStream(chunks, size)
    lines = Lines(stream)
    reason = Channel(server, lines).run()
    return reason, [parse(line) for line in stream.lines], lines


def parse(line):
    if line[:1] == b"{":
        return ("json", json.loads(line))
    return ("cbor", cborlink.decode(line))


def test_a_frame_round_trips_and_carries_no_raw_control_bytes():
    msg = {"id": 7, "result": {"blob": bytes(range(256)) * 3, "text": "a\nb\x03c\x04\x10"}}
    line = cborlink.encode(msg)
    for b in SPECIAL:
        assert b not in line
    assert line[-1] not in b"\t\r "
    assert line[0] == 0xA2
    assert cborlink.decode(line) == msg
    assert cborlink.decode(bytearray(line)) == msg


def test_the_crc_never_ends_a_frame_in_whitespace():
    # Messages whose CRC ends in each byte value: the last wire byte is never stripped.
    seen = {}
    n = 0
    while len(seen) < 256 and n < 20000:
        msg = {"id": n}
        crc = cborlink.crc32(cbor.dumps(msg)) & 0xFF
        if crc not in seen:
            seen[crc] = msg
        n += 1
    for last in (9, 13, 32, 3, 4, 10, 16):
        line = cborlink.encode(seen[last])
        assert line[-1] not in b"\t\r \x03\x04\n", (last, line)
        assert cborlink.decode(line) == seen[last]


def test_every_single_bit_flip_and_every_dropped_byte_is_caught():
    line = cborlink.encode({"id": 3, "result": {"structuredContent": {"raw": 1021, "volts": 0.82}}})
    for i in range(len(line)):
        for bit in range(8):
            bad = bytearray(line)
            bad[i] ^= 1 << bit
            try:
                cborlink.decode(bad)
            except cborlink.FrameError:
                continue
            raise AssertionError("flip at %d bit %d passed" % (i, bit))
        dropped = line[:i] + line[i + 1:]
        try:
            cborlink.decode(dropped)
        except cborlink.FrameError:
            continue
        raise AssertionError("drop at %d passed" % i)


def test_the_nibble_table_crc_matches_the_library_one():
    data = bytes(range(256)) + b"tinymcp"
    assert cborlink.crc32_nibbles(data) == cborlink.crc32(data) & 0xFFFFFFFF
    assert cborlink.crc32_nibbles(b"123456789") == 0xCBF43926
    part = cborlink.crc32_nibbles(data[:100])
    assert cborlink.crc32_nibbles(data[100:], part) == cborlink.crc32_nibbles(data)


def test_initialize_on_a_channel_advertises_the_cbor_link():
    reason, out, _ = serve([INIT])
    kind, msg = out[0]
    assert kind == "json"
    offer = msg["result"]["capabilities"]["experimental"]
    assert offer == {"tinymcp/link": {"maxFrame": 4096, "cbor": True}}


def test_server_handle_alone_advertises_nothing():
    server = board()
    msg = json.loads(server.handle(INIT[:-1]))
    assert "experimental" not in msg["result"]["capabilities"]


def test_a_cbor_request_gets_a_cbor_answer_without_the_jsonrpc_member():
    reason, out, lines = serve([INIT, cframe("tools/list", id=1), jframe("tools/list", id=2)])
    assert [k for k, _ in out] == ["json", "cbor", "json"]
    c, j = out[1][1], out[2][1]
    assert "jsonrpc" not in c and c["id"] == 1
    assert c["result"] == j["result"]
    assert lines.cbor.frames == 1 and lines.cbor.dropped == 0


def test_a_structured_tool_result_omits_its_text_mirror():
    call = {"name": "read_adc", "arguments": {"channel": 2}}
    reason, out, _ = serve([INIT, cframe("tools/call", call, id=1), jframe("tools/call", call, id=2)])
    c, j = out[1][1]["result"], out[2][1]["result"]
    assert c == {"structuredContent": {"raw": 1023, "volts": 0.8226}}
    assert j["structuredContent"] == c["structuredContent"]
    assert json.loads(j["content"][0]["text"]) == c["structuredContent"]


def test_a_single_precision_board_sends_its_readings_as_float32():
    # On every build, the codec as a float32 board (rp2, esp32) sets it up: the reading it holds
    # crosses in 4 bytes, exactly, so the host gets the board's own value.
    call = {"name": "read_adc", "arguments": {"channel": 0}}
    with Float32Cbor():
        line = cborlink.encode({"id": 1, "result": {"structuredContent": {"volts": f32(0.8226)}}})
        reason, out, _ = serve([INIT, cframe("tools/call", call, id=1)])
    assert b"\xfa" + pack(">f", 0.8226) in line and b"\xfb" not in line
    assert cborlink.decode(line)["result"]["structuredContent"]["volts"] == f32(0.8226)
    volts = out[1][1]["result"]["structuredContent"]["volts"]
    assert volts == f32(0.8226) and abs(volts - 0.8226) < 1e-7


def test_binary_resource_and_image_content_travel_as_byte_strings():
    reason, out, _ = serve([INIT, cframe("resources/read", {"uri": "blob://all"}, id=1),
                            cframe("tools/call", {"name": "picture"}, id=2),
                            cframe("resources/read", {"uri": "text://hi"}, id=3)])
    blob = out[1][1]["result"]["contents"][0]
    assert blob == {"blob": bytes(range(256)) * 4}  # uri and the default mimeType: restored
    image = out[2][1]["result"]["content"][0]
    assert image["data"] == bytes(range(256)) and image["type"] == "image"
    assert out[3][1]["result"]["contents"][0]["text"] == "hi"


def test_the_json_path_still_base64s_a_blob():
    reason, out, _ = serve([INIT, jframe("resources/read", {"uri": "blob://all"}, id=1)])
    blob = out[1][1]["result"]["contents"][0]["blob"]
    assert type(blob) is str and len(blob) == 1368


def test_errors_and_unknown_resources_are_cbor_errors():
    reason, out, _ = serve([INIT, cframe("nope", id=1),
                            cframe("resources/read", {"uri": "x://none"}, id=2)])
    assert out[1] == ("cbor", {"id": 1, "error": out[1][1]["error"]})
    assert out[1][1]["error"]["code"] == -32601
    assert out[2][1]["error"]["code"] == -32002


def test_a_failing_read_is_the_same_cbor_error_as_on_the_json_path():
    reason, out, _ = serve([INIT, cframe("resources/read", {"uri": "sensor://broken"}, id=1),
                            jframe("resources/read", {"uri": "sensor://broken"}, id=2)])
    assert out[1][0] == "cbor" and out[2][0] == "json"
    assert out[1][1]["error"] == out[2][1]["error"]
    assert out[1][1]["error"]["message"] == ("Reading sensor://broken failed: no answer on the "
                                             "I2C bus: check the wiring")


def test_notifications_follow_the_kind_of_the_last_frame():
    call = {"name": "chatty"}
    reason, out, _ = serve([INIT, cframe("tools/call", call, id=1), jframe("tools/call", call, id=2)])
    kinds = [(k, m.get("method") or m.get("id")) for k, m in out[1:]]
    assert kinds == [("cbor", "notifications/message"), ("cbor", 1),
                     ("json", "notifications/message"), ("json", 2)]
    assert "jsonrpc" not in out[1][1] and out[1][1]["params"]["data"] == "careful"


def test_a_corrupted_frame_is_dropped_and_counted_and_the_next_one_served():
    good = cframe("ping", id=1)
    bad = bytearray(cframe("ping", id=2))
    bad[3] ^= 0x40
    reason, out, lines = serve([INIT, good, bytes(bad), b"\xa5garbage\n", cframe("ping", id=3)])
    assert [m.get("id") for _, m in out[1:]] == [1, 3]
    assert lines.cbor.dropped == 2 and lines.cbor.frames == 2


def test_garbage_before_any_cbor_frame_is_answered_as_json_garbage():
    reason, out, _ = serve([INIT, b"\xa1\xff\xfe\n", jframe("ping", id=3)])
    assert out[1] == ("json", out[1][1]) and out[1][1]["error"]["code"] == -32700
    assert out[2][1]["id"] == 3


def test_interrupt_byte_still_ends_serving_in_cbor_mode():
    reason, out, _ = serve([INIT, cframe("ping", id=1), b"\x03", cframe("ping", id=2)])
    assert reason == "interrupt"
    assert [m.get("id") for _, m in out] == [0, 1]


def test_a_cbor_frame_split_across_reads_is_served():
    line = cframe("resources/read", {"uri": "blob://all"}, id=5)
    reason, out, _ = serve([INIT] + [line[i:i + 7] for i in range(0, len(line), 7)], size=16)
    assert out[1][1]["result"]["contents"][0]["blob"] == bytes(range(256)) * 4


class JsonOnly(Lines):
    offer_cbor = False


def test_a_json_only_channel_offers_no_cbor_and_treats_cbor_as_garbage():
    server = board()
    stream = FakeStream([INIT, cframe("ping", id=1)])
    lines = JsonOnly(stream)
    Channel(server, lines).run()
    msgs = [json.loads(line) for line in stream.lines]
    assert msgs[0]["result"]["capabilities"]["experimental"]["tinymcp/link"] == {"maxFrame": 4096}
    assert msgs[1]["error"]["code"] == -32700 and lines.cbor is False


def test_the_json_path_base64s_raw_image_bytes_and_leaves_the_tool_list_alone():
    reason, out, _ = serve([INIT, jframe("tools/call", {"name": "picture"}, id=1),
                            cframe("tools/call", {"name": "picture"}, id=2)])
    block = out[1][1]["result"]["content"][0]
    assert out[1][0] == "json" and type(block["data"]) is str
    import binascii
    assert binascii.a2b_base64(block["data"].encode()) == bytes(range(256))
    assert out[2][1]["result"]["content"][0]["data"] == bytes(range(256))


def test_a_board_without_cborlink_says_so_once_then_treats_cbor_as_garbage():
    import sys
    saved = sys.modules.get("tinymcp.cborlink")
    sys.modules["tinymcp.cborlink"] = None  # the import fails, as on a board without the file
    try:
        reason, out, lines = serve([INIT, cframe("ping", id=1), cframe("ping", id=2),
                                      jframe("ping", id=3)])
    finally:
        sys.modules["tinymcp.cborlink"] = saved
    assert [k for k, _ in out] == ["json"] * 4
    assert "cbor" not in out[0][1]["result"]["capabilities"]["experimental"]["tinymcp/link"]
    assert "cborlink.py" in out[1][1]["error"]["message"]
    assert out[1][1]["error"]["data"] == {"reason": "link-unavailable", "link": "cbor"}
    assert out[2][1]["error"]["code"] == -32700 and "cborlink" not in out[2][1]["error"]["message"]
    assert out[3][1]["id"] == 3 and lines.cbor is False


# -- no byte a REPL or a terminal acts on (issue 26) -------------------------------------------

CONTROL = bytes(range(32)) + b"\x7f"


def raw_controls(line):
    # The bytes 0x00-0x1F and 0x7F in a frame that are not the escape 0x10 followed by the
    # printable byte it stands for. A board's frame may end in 0x10 0x00 (an escaped space).
    found = []
    i = 0
    while i < len(line):
        b = line[i]
        if b == 0x10 and i + 1 < len(line) and (0x20 <= line[i + 1] <= 0x3F or line[i + 1] == 0x5F):
            i += 2
            continue
        if b < 0x20 or b == 0x7F:
            found.append((i, b))
        i += 1
    return found


def test_a_frame_from_the_host_carries_no_byte_a_repl_acts_on():
    for c in CONTROL:
        attack = "\r" + chr(c) * 3 + "import os\rf=open('x','w')\r\x1b[A\x01\x02\x05" + chr(c)
        for arg in (attack, attack * 9):  # short strings are gathered, long ones go on as they are
            msg = {"id": c, "method": "tools/call",
                   "params": {"name": "set_led", "arguments": {"color": arg, "n": c, "big": c * 300}}}
            line = cborlink.encode(msg)
            assert raw_controls(line) == [], (c, line)
            assert b"\x00" not in line and line[-1:] not in (b"\t", b"\r", b" ")
            assert 0xA0 <= line[0] <= 0xBF
            assert cborlink.decode(line) == msg


def test_the_host_encoder_never_ends_a_frame_in_a_nul_or_an_escaped_one():
    found = 0
    n = 0
    while found < 6 and n < 100000:
        msg = {"id": n, "method": "ping"}
        if cborlink.crc32(cbor.dumps(msg)) & 0xDF == 0:  # a last CRC byte of 0x00 or 0x20
            found += 1
            line = cborlink.encode(msg)
            assert raw_controls(line) == [] and b"\x00" not in line, line
            assert line[-1:] != b" " and 0xA0 <= line[0] <= 0xBF
            assert cborlink.decode(line) == msg
        n += 1
    assert found == 6


def test_every_frame_a_board_writes_escapes_every_control_byte():
    text = "".join(chr(c) for c in CONTROL)
    reason, out, _ = serve([INIT, cframe("tools/call", {"name": "picture"}, id=1),
                            cframe("resources/read", {"uri": "blob://all"}, id=2),
                            cframe("tools/call", {"name": "read_adc", "arguments": {"channel": 3}}, id=3),
                            cframe("tools/call", {"name": "nosuch" + text}, id=4)])
    assert out[1][1]["result"]["content"][0]["data"] == bytes(range(256))
    assert out[2][1]["result"]["contents"][0]["blob"] == bytes(range(256)) * 4
    server = board()
    stream = FakeStream([INIT, cframe("tools/call", {"name": "picture"}, id=1),
                         cframe("resources/read", {"uri": "blob://all"}, id=2),
                         cframe("tools/call", {"name": "read_adc", "arguments": {"channel": 3}}, id=3),
                         cframe("tools/call", {"name": "nosuch" + text}, id=4)])
    Channel(server, Lines(stream)).run()
    lines = [line for line in stream.lines if line[:1] != b"{"]
    assert len(lines) == 4
    for line in lines:
        if line[-2:] == b"\x10\x00" or (line[-1:] == b"\x00" and line[-2:-1] != b"\x10"):
            line = line[:-2] if line[-2:] == b"\x10\x00" else line[:-1]
        assert raw_controls(line) == [], line


def test_escaping_a_piece_copies_nothing_per_byte():
    import gc
    if not hasattr(gc, "mem_alloc"):  # CPython: the allocation is MicroPython's concern
        return
    got = [0]

    def out(piece):
        got[0] += len(piece)
    esc = cborlink.Escaper(out)
    piece = bytes(range(256)) * 4  # every byte value: 132 escapes
    esc.write(piece)
    gc.collect()
    before = gc.mem_alloc()
    esc.write(piece)
    used = gc.mem_alloc() - before
    assert got[0] == 2 * (1024 + 4 * 33)
    assert used < 128, used  # at most the view of the last chunk; the old escaper copied ~2 KiB
