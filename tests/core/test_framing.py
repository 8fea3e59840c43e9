# Newline framing: bounded buffer, oversize frames dropped as they stream, 0x03 interrupts.
from tinymcp import channel as framing
from tinymcp.channel import LineFramer


def collect(framer, chunks):
    # -> list of frames (bytes), "OVERSIZE" or "INTERRUPT" in arrival order
    events = []
    for chunk in chunks:
        pos = 0
        while pos < len(chunk):
            pos = framer.feed(chunk, pos, len(chunk))
            if framer.event == framing.FRAME:
                events.append(bytes(framer.frame()))
            elif framer.event == framing.OVERSIZE:
                events.append("OVERSIZE")
            elif framer.event == framing.INTERRUPT:
                events.append("INTERRUPT")
    return events


def test_whole_frames_and_frames_split_across_reads():
    framer = LineFramer(64)
    assert collect(framer, [b'{"a":1}\n{"b"', b':2}\n']) == [b'{"a":1}', b'{"b":2}']


def test_crlf_tolerated_and_blank_lines_ignored():
    framer = LineFramer(64)
    assert collect(framer, [b'{"a":1}\r\n\n\r\n  \n{"b":2}\n']) == [b'{"a":1}', b'{"b":2}']


def test_frame_exactly_at_the_limit_is_kept():
    framer = LineFramer(8)
    assert collect(framer, [b"12345678\n"]) == [b"12345678"]


def test_oversize_frame_is_dropped_and_the_next_frame_is_served():
    framer = LineFramer(8)
    assert collect(framer, [b"123456789\n", b"ok\n"]) == ["OVERSIZE", b"ok"]


def test_oversize_frame_streaming_in_many_chunks_never_grows_the_buffer():
    framer = LineFramer(16)
    buffer = framer.buf
    chunks = [b"x" * 1000] * 100 + [b"\n{}\n"]
    assert collect(framer, chunks) == ["OVERSIZE", b"{}"]
    assert framer.buf is buffer and len(buffer) == 16


def test_interrupt_byte_stops_framing():
    framer = LineFramer(64)
    assert collect(framer, [b'{"a":1}\n{"b', b"\x03"]) == [b'{"a":1}', "INTERRUPT"]


def test_interrupt_byte_is_seen_inside_an_oversize_frame():
    framer = LineFramer(4)
    assert collect(framer, [b"xxxxxxxx\x03"]) == ["INTERRUPT"]


def test_default_limit_is_4096_and_configurable_as_class_attribute():
    assert LineFramer().max_frame == 4096
    assert len(LineFramer(100).buf) == 100
