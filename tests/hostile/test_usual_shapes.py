# The relay's short reads (wire.tools_call, wire.BoardAnswer.read): a line in the usual shape is
# read by a match of its head and one scan of the value after it, not a parse of the whole line
# and searches of it. What either accepts must be what the long way reads (decode, routable,
# json.loads), a line that reads one way only; anything else is left to the long way. Random
# values, ids and names, written in the usual shape and then damaged (hypothesis), and the
# lines the short reads exist to refuse.
import json

from hypothesis import HealthCheck, assume, example, given, settings, strategies as st

from tinymcp.host.bridge.link import parse_line
from tinymcp.host.bridge.wire import BoardAnswer, HostParams, decode, routable, tools_call
from tests.windows_shim import as_on_windows, same_on_every_os  # noqa: F401  (no process)

SETTINGS = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])

values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 70, 2 ** 70)
    | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                max_size=3),
    max_leaves=12)
ids = st.integers(-2 ** 63, 2 ** 63) | st.text(max_size=6) | st.sampled_from(
    ["id", '"id":1', "\\u0069d", "", "a b", "-", "1"])
PRINTABLE = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=4)
names = st.from_regex(r"\A[a-zA-Z0-9_-]{1,70}\Z") | st.text(max_size=6)
# What a host or board may write into a line: bytes a terminal acts on, escapes, surrogates,
# whitespace, duplicate keys, brackets.
DAMAGE = [b"\t", b"\r", b"\x7f", b" ", b"\\u0069", b"\xed\xa0\x80", b"\xed\x95\x9c", b"\x00",
          b'"id":1,', b'"name":"x",', b'"task":{},', b',"id":2', b"[", b"{", b"}", b"0", b"-",
          b'"', b"\\", b"NaN", b"1e999"]


def damaged(line, data):
    # line with one piece of DAMAGE put in, or a piece cut out, somewhere (or left whole).
    how = data.draw(st.sampled_from(["whole", "insert", "cut"]))
    if how == "whole":
        return line
    at = data.draw(st.integers(0, len(line)))
    if how == "cut":
        return line[:at] + line[at + data.draw(st.integers(1, 4)):]
    return line[:at] + data.draw(st.sampled_from(DAMAGE)) + line[at:]


def call_line(rid, name, arguments, ascii_only):
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=ascii_only).encode
    return ('{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%s,"arguments":%s}}'
            % (encode(rid), encode(name), encode(arguments))).encode("utf-8", "surrogatepass")


def check_call(line):
    # What tools_call reads is what decode and routable's reading would give the board.
    msg, routed = tools_call(line)
    if msg is None:
        return False
    assert decode(line) == (msg, None), line
    assert type(routed) is HostParams and routed == msg["params"] and type(msg["params"]) is dict
    assert set(msg) == {"jsonrpc", "id", "method", "params"} and set(routed) == {
        "name", "arguments"}
    # No byte a terminal acts on; nothing a host's parser could read another way.
    assert not any(b < 0x20 or b == 0x7F for b in line), line
    assert b"\\u" not in line and b"\xed" not in line, line
    frame = routed.frame(42)
    assert json.loads(frame) == dict(json.loads(line), id=42), frame
    assert frame == routed.head + b"42" + routed.tail and routed.head == b'{"jsonrpc":"2.0","id":'
    assert line == routed.head + json.dumps(msg["id"]).encode() + routed.tail
    return True


@same_on_every_os
@SETTINGS
@given(ids, names, values, st.booleans(), st.data())
@example(7, "read_temperature", {}, True, None)
def test_a_tools_call_read_the_short_way_reads_as_the_long_way(rid, name, arguments,
                                                               ascii_only, data):
    line = call_line(rid, name, arguments, ascii_only)
    if data is None:   # the usual call: the short way takes it
        assert check_call(line)
        return
    check_call(damaged(line, data))


@same_on_every_os
@SETTINGS
@given(st.integers(-10 ** 18 + 1, 10 ** 18 - 1) | st.from_regex(r'\A[ !#-\[\]-~]{0,8}\Z'),
       st.from_regex(r"\A[a-zA-Z0-9_-]{1,64}\Z"),
       st.dictionaries(PRINTABLE, st.integers() | st.floats(allow_nan=False,
                                                            allow_infinity=False) | PRINTABLE,
                       max_size=3))
def test_the_usual_call_is_read_the_short_way(rid, name, arguments):
    # Every call in the usual shape with plain arguments (printable ASCII text: nothing for
    # json.dumps to escape as \\u) takes the short way: the lane is not left to chance. (A
    # backslash before a "u", as "\\\\u" spells it, looks like an escape to the short way's
    # search, which leaves such a line to the long way: sound, and not plain.)
    line = call_line(rid, name, arguments, True)
    assume(line.find(b"\\u") < 0)
    assert check_call(line)


@same_on_every_os
def test_lines_the_short_read_of_a_call_leaves_to_the_long_way():
    head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":'

    def call(arguments, head=head):
        return head + arguments + b"}}"
    assert check_call(call(b'{"a":[1,{"b":"\xc3\xa9"}]}'))   # the shape itself: taken
    for line in [
            call(b'{"a":1}') + b" ",                   # more after the shape
            call(b'{"a":1},"name":"x"'),               # a second name
            call(b'{"a":1}') + b',"id":2}',            # a second id
            call(b'{"a":1}}'),                         # not JSON
            call(b'{"a":NaN}'), call(b'{"a":1e999}'),  # not finite
            call(b'{"a":"\\ud800"}'),                 # a lone surrogate, escaped
            call(b'{"a":"\xed\xa0\x80"}'),            # a lone surrogate, as UTF-8 bytes
            call(b'{"a":"\xed\x95\x9c"}'),            # Hangul: left to decode's own search
            call(b'{"a":\t1}'), call(b'{"a":\r1}'),    # a tab, a CR: a terminal acts on them
            call(b'{"a":"\x7f"}'),                     # DEL
            call(b'[' * 70 + b']' * 70),               # deeper than decode lets pass unwalked
            call(b'{}', head.replace(b'"id":1', b'"id":01')),
            call(b'{}', head.replace(b'"id":1', b'"id":"\\u0069d"')),
            call(b'{}', head.replace(b'"echo"', b'"ech\\u006f"')),
            call(b'{}', head.replace(b'"echo"', b'"a/b"')),
            b'\xef\xbb\xbf' + call(b'{}'),
            call(b'{}', head.replace(b'"method"', b'"x":1,"method"'))]:
        assert tools_call(line) == (None, None), line


def answer_line(rid, key, value, ascii_only):
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=ascii_only).encode
    return ('{"jsonrpc":"2.0","id":%d,"%s":%s}' % (rid, key, encode(value))).encode(
        "utf-8", "surrogatepass")


def same(a, b):
    # a == b, but a NaN is the same as a NaN (each parse makes a NaN of its own, and a NaN
    # equals nothing, not even itself)
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def check_answer(line):
    # What BoardAnswer.read reads is what json.loads reads, three keys, each once; its rest
    # with another id in front is that answer under the other id.
    frame = BoardAnswer.read(line)
    if frame is None:
        return False
    assert same(frame, json.loads(line)) and type(frame) is BoardAnswer, line
    assert list(frame)[:2] == ["jsonrpc", "id"] and len(frame) == 3 and type(frame["id"]) is int
    again, noise = parse_line(line)
    assert same(again, frame) and noise is None, line
    spelled = []   # NaN, Infinity, -Infinity: no JSON a host reads (encoded again, null)
    json.loads(line, parse_constant=lambda name: spelled.append(name) or float(name))
    if b"\xed" in line or spelled:   # no UTF-8 a host decodes as it came: encoded again
        assert frame.rest is None
        return True
    assert frame.rest == line[len(b'{"jsonrpc":"2.0","id":%d' % frame["id"]):]
    for other in ('q"', 2 ** 70, "\u00e9"):
        out = frame.answer(dict(frame, id=other))
        assert json.loads(out.data) == dict(frame, id=other), out.data
    return True


@same_on_every_os
@SETTINGS
@given(st.integers(0, 10 ** 18 - 1), st.sampled_from(["result", "error"]), values,
       st.booleans(), st.data())
@example(3, "result", {"content": [], "id": 3}, True, None)
def test_a_board_answer_read_the_short_way_reads_as_json_loads(rid, key, value, ascii_only,
                                                              data):
    line = answer_line(rid, key, value, ascii_only)
    if data is None:
        assert check_answer(line)
        return
    line = damaged(line, data)
    try:
        loaded = json.loads(line)
    except ValueError:
        loaded = None
    if not check_answer(line) and type(loaded) is dict and loaded.get("jsonrpc") == "2.0" \
            and "method" not in loaded:
        # The long way reads it: parse_line's answer is what json.loads reads, all the same.
        msg, _noise = parse_line(line)
        assert msg is None or same(msg, loaded), line


@same_on_every_os
def test_board_lines_the_short_read_leaves_to_the_long_way():
    for line in [
            b'{"jsonrpc":"2.0","id":3,"result":{"v":1},"id":4}',       # a duplicate id
            b'{"jsonrpc":"2.0","id":3,"result":{"v":2},"result":{"v":1}}',
            b'{"jsonrpc":"2.0","id":3,"result":{"v":1} }',            # space before the end
            b'{"jsonrpc":"2.0","id":03,"result":{}}',                 # not JSON's number
            b'{"jsonrpc":"2.0","id":1234567890123456789,"result":{}}',  # not an id we give
            b'{"jsonrpc":"2.0","id":3,"result":{}}}',                 # not JSON
            b'{"jsonrpc":"2.0","id":3,"result":}',
            b'{"jsonrpc":"2.0","id":3,"result":{"t":"\xff"}}',        # not UTF-8
            b'{"jsonrpc":"2.0","id":3,"method":"ping"}']:
        assert BoardAnswer.read(line) is None, line
