# Ids on the relay's hot path: a board's answer to a routed tools/call goes to its host as the
# board wrote it, the host's id spliced in where the board's was (wire.BoardAnswer). Hostile host
# ids (quotes, escapes, huge integers, ids that look like others) come back exactly; a board line
# whose id cannot be swapped safely (a second "id" beside it, a duplicate member, a lone
# surrogate) is read once and encoded again, as the bridge read it; one whose result holds an
# "id" of its own (plainly or escaped) goes as it came, its shape saying which id is the answer's.
import json

import pytest

from tests.hostile.conftest import SLOW
from tinymcp.host.bridge.wire import BoardAnswer, Encoded
from tinymcp.host.bridge.link import parse_line
from tests.windows_shim import as_on_windows, same_on_every_os  # noqa: F401  (POSIX, Windows)

# The board's own bytes: numbers no encoder writes this way (1.50, 1E2, -0.0e0) show that
# the answer was not decoded and encoded again on its way to the host.
VERBATIM = b'{"content":[{"type":"text","text":"1.50"}],"structuredContent":{"v":1.50,"w":1E2}}'

HOSTILE_IDS = ['a"b\\c', "\u00e9\U0001f600", "", "1", "2", "id", '"id":1', "\\u0069d", 0, 1, 2, -5,
               2 ** 70, -(2 ** 64) - 1, "x" * 300]


def board_answering(answer):
    # on_request for a FakeBoard: tools/call answered with the bytes answer(board id) gives.
    def on_request(board, msg):
        if msg["method"] != "tools/call":
            return False
        board.write(answer(msg) + b"\n")
        return True
    return on_request


def test_hostile_host_ids_come_back_exactly_with_the_boards_bytes(fake_board, stdio_bridge):
    board = fake_board(on_request=board_answering(
        lambda msg: b'{"jsonrpc":"2.0","id":%d,"result":%s}' % (msg["id"], VERBATIM)))
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    # All in flight at once: each answer must find its own host id, none another's.
    for rid in HOSTILE_IDS:
        host.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                               "params": {"name": "echo", "arguments": {}}}).encode() + b"\n")
    got = {}
    while len(got) < len(HOSTILE_IDS):
        line = host.line(timeout=20)
        msg = json.loads(line)
        assert "method" not in msg, msg
        rid = msg["id"]
        assert rid in HOSTILE_IDS and type(rid) is type(HOSTILE_IDS[HOSTILE_IDS.index(rid)])
        assert json.dumps(rid) not in got, "two answers for %r" % (rid,)
        got[json.dumps(rid)] = line
    for rid in HOSTILE_IDS:
        line = got[json.dumps(rid)]
        # the host's id as JSON, then the board's bytes untouched
        assert line == b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":' \
            + VERBATIM + b"}", line
    assert host.noise == []


# Board lines whose id must not be swapped in their bytes, and what the host gets from each:
# the answer as the bridge read it (json.loads: the last of duplicate members), its own id.
UNSAFE = {
    "a duplicate id": b'{"jsonrpc":"2.0","id":%d,"result":{"v":1.50},"id":%d}',
    "id after result": b'{"jsonrpc":"2.0","result":{"v":1.50},"id":%d}',
    "spaces": b'{ "jsonrpc": "2.0", "id": %d, "result": {"v": 1.50} }',
    "a duplicate result": b'{"jsonrpc":"2.0","id":%d,"result":{"v":2},"result":{"v":1.50}}',
    "a lone surrogate": b'{"jsonrpc":"2.0","id":%d,"result":{"v":1.50,"t":"\xed\xa0\x80"}}',
}


@pytest.mark.parametrize("kind", sorted(UNSAFE))
def test_a_board_line_whose_id_cannot_be_swapped_is_encoded_again(fake_board, stdio_bridge,
                                                                    kind):
    template = UNSAFE[kind]

    def answer(msg):
        n = template.count(b"%d")
        return template % ((msg["id"],) * n)
    board = fake_board(on_request=board_answering(answer))
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    host.write(b'{"jsonrpc":"2.0","id":"h\\"1","method":"tools/call","params":{"name":"echo",'
               b'"arguments":{}}}\n')
    line = host.line(timeout=20)
    msg = json.loads(line.decode("utf-8"))   # strict, as the SDK's stdio client reads
    assert msg["id"] == 'h"1', line
    assert line.count(b'"id"') == 1, line
    assert msg["result"]["v"] == 1.5
    assert b"1.50" not in line, line   # encoded again, as the bridge read it
    assert host.noise == []


# Board lines whose result holds an "id" key of its own, plainly or spelled with an escape: the
# line is the head, one value, "}" (wire.BoardAnswer.read), so the id at the top is the only one
# a host's parser finds there, and the line goes as it came, the host's id in it.
NESTED = {
    "a nested id": b'{"jsonrpc":"2.0","id":%d,"result":{"v":1.50,"id":%d}}',
    "an escaped key": b'{"jsonrpc":"2.0","id":%d,"result":{"v":1.50,"\\u0069d":%d}}',
    "a nested answer": b'{"jsonrpc":"2.0","id":%d,"result":{"v":1.50,"x":{"jsonrpc":"2.0",'
                       b'"id":%d,"error":{"code":1,"message":"m"}}}}',
}


@pytest.mark.parametrize("kind", sorted(NESTED))
def test_a_board_line_with_an_id_inside_its_result_keeps_its_bytes(fake_board, stdio_bridge,
                                                                    kind):
    template = NESTED[kind]
    board = fake_board(on_request=board_answering(lambda msg: template % (msg["id"], 99)))
    host = stdio_bridge(board.device, "--timeout", str(SLOW))
    host.initialize()
    host.write(b'{"jsonrpc":"2.0","id":"h\\"1","method":"tools/call","params":{"name":"echo",'
               b'"arguments":{}}}\n')
    line = host.line(timeout=20)
    msg = json.loads(line.decode("utf-8"))
    assert msg["id"] == 'h"1' and msg["result"]["v"] == 1.5, line
    board_rest = (template % (0, 99))[len(b'{"jsonrpc":"2.0","id":0'):]
    assert line == b'{"jsonrpc":"2.0","id":"h\\"1"' + board_rest, line
    assert host.noise == []


@same_on_every_os
def test_frames_splice_only_where_the_id_is_the_only_one():
    def frame(line):
        msg, noise = parse_line(line)
        assert noise is None and type(msg) is BoardAnswer
        return msg
    good = frame(b'{"jsonrpc":"2.0","id":7,"result":{"t":"\\"id\\":7"}}')
    out = good.answer({"jsonrpc": "2.0", "id": 'q"', "result": good["result"]})
    assert type(out) is Encoded and json.loads(out.data) == dict(out)
    assert out.data == b'{"jsonrpc":"2.0","id":"q\\"","result":{"t":"\\"id\\":7"}}'
    big = frame(b'{"jsonrpc":"2.0","id":123456789012345678901,"result":{}}')
    assert big.rest is None   # not an id the bridge gives
    for line in UNSAFE.values():
        assert frame(line.replace(b"%d", b"3")).rest is None, line
    for line in NESTED.values():
        line = line.replace(b"%d", b"3")
        assert frame(line).rest == line[len(b'{"jsonrpc":"2.0","id":3'):], line
        assert frame(line) == json.loads(line)
    # a request or notification from the board is no answer: never a BoardAnswer
    assert type(parse_line(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')[0]) is dict
