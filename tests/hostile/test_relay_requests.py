# Requests on the relay's hot path: a host's tools/call that is only routed reaches its board as
# the host wrote it, the bridge's id in place of the host's (wire.HostParams). Hostile host ids
# and lines come through exactly; a line whose bytes could read differently from what the
# bridge read (a duplicate key, an escape that could spell one, a CR, a BOM, a key the bridge
# does not send) is read once and encoded again; a method name split across chunks, a last line
# without its newline and params that are not an object are answered as on any other path.
import json
import time

import pytest

from tests.hostile.conftest import SLOW
from tinymcp.host.bridge import turn
from tinymcp.host.bridge.wire import HostParams, decode, routable, tools_call
from tests.windows_shim import as_on_windows, same_on_every_os  # noqa: F401  (POSIX, Windows)

# Numbers no encoder writes this way: a board line holding them was not encoded again.
VERBATIM = b'{"name":"echo","arguments":{"v":1.50,"w":1E2,"t":"a\\"b\\\\c \xc3\xa9\xf0\x9f\x98\x80"}}'

HOSTILE_IDS = ['a"b\\c', "\u00e9\U0001f600", "", "1", "id", '"id":1', "\\u0069d", 0, -5,
               2 ** 70, -(2 ** 64) - 1, "x" * 300]


def echo(board, msg):
    # A FakeBoard's tools/call: answered with the id and arguments the board read.
    if msg["method"] != "tools/call":
        return False
    board.answer(msg, {"content": [{"type": "text", "text": "ok"}],
                       "structuredContent": msg["params"].get("arguments")})
    return True


def call_line(rid, params=VERBATIM):
    return (b'{"jsonrpc":"2.0","id":' + json.dumps(rid, ensure_ascii=False).encode()
            + b',"method":"tools/call","params":' + params + b'}')


def board_line_for(board, marker):
    # The one line the board was sent holding marker (bytes).
    found = [line for line in board.lines if marker in line]
    assert len(found) == 1, (marker, board.lines[-5:])
    return found[0]


def test_hostile_host_ids_reach_the_board_as_the_host_wrote_the_line(fake_board, stdio_bridge):
    board = fake_board(on_request=echo)
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    # All in flight at once, in one write: each answer must find its own host id.
    sent = {json.dumps(rid): call_line(rid, VERBATIM.replace(b'"v":', b'"n":%d,"v":' % n))
            for n, rid in enumerate(HOSTILE_IDS)}
    host.write(b"\n".join(sent.values()) + b"\n")
    got = {}
    while len(got) < len(HOSTILE_IDS):
        msg = json.loads(host.line(timeout=20))
        rid = msg["id"]
        assert rid in HOSTILE_IDS and type(rid) is type(HOSTILE_IDS[HOSTILE_IDS.index(rid)])
        assert json.dumps(rid) not in got, "two answers for %r" % (rid,)
        got[json.dumps(rid)] = msg
    for n, rid in enumerate(HOSTILE_IDS):
        msg = got[json.dumps(rid)]
        assert msg["result"]["structuredContent"]["t"] == 'a"b\\c \u00e9\U0001f600', msg
        # The board's line: the host's, byte for byte, but for the id (the bridge's own); a
        # line holding "\\u" (which could spell a key) or a second "id" (the id "id") as the
        # bridge read it, encoded again, unless the line has the usual shape, which says where
        # each key is (wire.tools_call).
        mine = sent[json.dumps(rid)]
        line = board_line_for(board, b'"n":%d,' % n)
        board_id = json.loads(line)["id"]
        assert type(board_id) is int
        if b"\\u" in mine or (mine.count(b'"id"') != 1 and tools_call(mine)[0] is None):
            assert b"1E2" not in line and json.loads(line) == dict(json.loads(mine), id=board_id)
        else:
            assert line == mine.replace(b'"id":' + json.dumps(rid, ensure_ascii=False).encode(),
                                        b'"id":%d' % board_id, 1), line
    assert host.noise == []


# Host lines whose bytes must not reach the board as they came, and a check of the line the
# board got (besides: it parses to what the bridge read, with the bridge's id).
ENCODED_AGAIN = {
    "a duplicate name": (b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":'
                         b'"nope","name":"echo","arguments":{"m":1}}}',
                         lambda line: line.count(b'"name"') == 1),
    "an escaped key": (b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":'
                       b'"echo","arguments":{"m":1,"\\u0069d":2}}}',
                       lambda line: b"\\u" not in line),
    "an id among the arguments": (b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":'
                                  b'{"name":"echo","arguments":{"m":1,"id":"q"}}}',
                                  lambda line: line.count(b'"id"') == 2),
    "a CR between members": (b'{"jsonrpc":"2.0",\r"id":"q","method":"tools/call","params":'
                             b'{"name":"echo","arguments":{"m":1}}}',
                             lambda line: b"\r" not in line),
    "a key the bridge does not send": (b'{"jsonrpc":"2.0","id":"q","x":1,"method":"tools/call",'
                                       b'"params":{"name":"echo","arguments":{"m":1}}}',
                                       lambda line: b'"x"' not in line),
    "a BOM": (b'\xef\xbb\xbf{"jsonrpc":"2.0","id":"q","method":"tools/call","params":'
              b'{"name":"echo","arguments":{"m":1}}}', lambda line: line[:1] == b"{"),
    "Hangul (0xED bytes)": (b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":'
                            b'{"name":"echo","arguments":{"m":1,"t":"\xed\x95\x9c"}}}',
                            lambda line: b"\xed" not in line),
    "a tab between members": (b'{"jsonrpc":"2.0",\t"id":"q","method":"tools/call","params":'
                              b'{"name":"echo","arguments":{"m":1}}}',
                              lambda line: b"\t" not in line),
    "a DEL in a string": (b'{"method":"tools/call","params":{"name":"echo","arguments":{"m":1,'
                          b'"t":"\x7f"}},"id":"q","jsonrpc":"2.0"}',
                          lambda line: b"\x7f" not in line),
    "two tasks": (b'{"jsonrpc":"2.0","id":"q","method":"tools/call","params":{"name":"echo",'
                  b'"task":{},"task":{"ttl":5},"arguments":{"m":1}}}',
                  lambda line: line.count(b'"task"') == 1),
}


@pytest.mark.parametrize("kind", sorted(ENCODED_AGAIN))
def test_a_host_line_that_could_read_otherwise_is_encoded_again(fake_board, stdio_bridge, kind):
    line, check = ENCODED_AGAIN[kind]
    board = fake_board(on_request=echo)
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    host.write(line + b"\n")
    msg = json.loads(host.line(timeout=20))
    assert msg["id"] == "q" and msg["result"]["structuredContent"]["m"] == 1, msg
    got = board_line_for(board, b'"m":1')
    assert check(got), got
    read = json.loads(line.decode("utf-8-sig"))   # as the bridge read it (the last of duplicates)
    sent = json.loads(got)
    assert type(sent["id"]) is int
    assert sent["params"] == read["params"] or kind == "two tasks", (sent, read)
    assert set(sent) == {"jsonrpc", "id", "method", "params"}
    assert host.noise == []


def test_a_method_name_split_across_chunks(fake_board, stdio_bridge):
    board = fake_board(on_request=echo)
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    line = call_line(7)
    cut = line.index(b"tools/") + len(b"tools/c")
    for piece in (line[:cut], line[cut:-3], line[-3:] + b"\n"):
        host.write(piece)
        time.sleep(0.05)   # each its own read of the bridge's stdin
    msg = json.loads(host.line(timeout=20))
    assert msg["id"] == 7 and msg["result"]["structuredContent"]["v"] == 1.5, msg
    assert b'"v":1.50,' in board_line_for(board, b'"w":1E2')   # as the host wrote it


def test_a_last_request_without_its_newline_is_answered_before_the_bridge_ends(
        fake_board, stdio_bridge):
    board = fake_board(on_request=echo)
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    host.write(call_line(1) + b"\n" + call_line("last"))
    host.proc.stdin.close()   # the end of input, "last" without its newline
    answers = {json.loads(host.line(timeout=20))["id"] for _ in range(2)}
    assert answers == {1, "last"}
    assert host.proc.wait(20) == 0


@pytest.mark.parametrize("params", [b'[1,2]', b'"echo"', b'7', b'true'])
def test_params_that_are_not_an_object(fake_board, stdio_bridge, params):
    board = fake_board(on_request=echo)
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    before = len(board.lines)
    host.write(b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":' + params + b'}\n')
    msg = json.loads(host.line(timeout=20))
    assert msg["id"] == 3 and msg["error"]["code"] == -32602, msg
    assert "must be an object" in msg["error"]["message"], msg
    host.request("ping")   # the session goes on
    assert not any(b'"tools/call"' in line for line in board.lines[before:]), board.lines


@same_on_every_os
def test_routable_passes_only_lines_that_read_one_way():
    def routed(line):
        msg, problem = decode(line)
        assert problem is None, problem
        return routable(msg, line)
    # spliced: the host's bytes with the bridge's id, whatever the order and spacing of members
    for line in (call_line(5), call_line("a\"b\\c"), call_line(2 ** 70),
                 b'{"method":"tools/call","params":{"name":"echo"},"id":-3,"jsonrpc":"2.0"}',
                 b'{ "jsonrpc" : "2.0" , "id" : "x" , "method" : "tools/call" , "params" : '
                 b'{ "name" : "echo" , "arguments" : { "v" : 1E2 } } }',
                 b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
                 b'"task":{"ttl":9}}}'):
        params = routed(line)
        assert type(params) is HostParams, line
        frame = params.frame(42)
        assert json.loads(frame) == dict(json.loads(line), id=42), frame
        at = frame.index(b"42")
        host_id = json.dumps(json.loads(line)["id"]).encode()
        assert frame[:at] == line[:at] and frame[at + 2:] == line[at + len(host_id):], frame
    # not spliced: a plain dict, encoded again on its way
    for line in [line for line, _check in ENCODED_AGAIN.values()] + [
            b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}',
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","_meta":'
            b'{"name":1}}}',
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"},"method":'
            b'"tools/call"}',
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","params":{}}}']:
        msg, problem = decode(line)
        if problem is None and type(msg) is dict:
            assert type(routable(msg, line)) is not HostParams, line


@same_on_every_os
def test_writes_held_while_a_chunk_is_handled_are_made_once_after_it():
    made = []

    def first():
        made.append("first")

    def failing():
        made.append("failing")
        raise OSError("gone")

    def handle(data):
        assert turn.hold(first) and turn.hold(first) and turn.hold(failing)
        turn.handled(lambda more: turn.hold(first), b"inner")   # nested: the outer end writes
        assert made == []
    assert not turn.hold(first)   # no chunk handled now: the caller writes its own way
    turn.handled(handle, b"data")
    assert made == ["first", "failing"]   # each once, in order, a failure costing no other
    assert not turn.hold(first)


@same_on_every_os
def test_decode_finds_a_lone_surrogate_in_utf8_and_lets_hangul_pass():
    # decode() looks for surrogates in a UTF-8 line only where an 0xED byte is (wire.py).
    call = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":' \
           b'{"t":"%s"}}}'
    msg, problem = decode(call % b"\xed\xa0\x80")   # U+D800 in UTF-8 (surrogatepass)
    assert msg is None and problem["error"]["code"] == -32602, problem
    assert "surrogate" in problem["error"]["message"]
    msg, problem = decode(call % "\ud55c".encode())   # Hangul: 0xED 0x95 0x9C
    assert problem is None and msg["params"]["arguments"]["t"] == "\ud55c"
    msg, problem = decode((call % b"x").decode().encode("utf-16-le"))   # not UTF-8: detected
    assert problem is None and msg["params"]["arguments"]["t"] == "x"
    msg, problem = decode((call % b"\\ud800").decode().encode("utf-16-be"))
    assert msg is None and problem["error"]["code"] == -32602, problem


@same_on_every_os
def test_a_labelled_tools_name_is_the_boards_own_in_the_bytes_it_gets():
    # With several boards LABEL_TOOL reaches the board as TOOL: the host's bytes but for the
    # id and the name, wherever the name sits; a name the line spells with an escape is not
    # spliced (its params are encoded again). (A tab between tokens is never passed on raw:
    # "a tab between members" above.)
    for line in (b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a_echo",'
                 b'"arguments":{"v":1.50}}}',
                 b'{"params":{"arguments":{"v":1.50},"name" :  "a_echo"},"method":"tools/call",'
                 b'"jsonrpc":"2.0","id":"x"}'):
        msg, _ = decode(line)
        routed = routable(msg, line).renamed("a_echo", "echo")
        assert type(routed) is HostParams and routed["name"] == "echo"
        frame = routed.frame(42)
        assert json.loads(frame) == dict(json.loads(line), id=42, params=dict(
            json.loads(line)["params"], name="echo"))
        assert b"1.50" in frame and b'"a_echo"' not in frame
    line = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a_ech\\/o"}}'
    msg, _ = decode(line)
    assert routable(msg, line).renamed("a_ech/o", "ech/o") is None
