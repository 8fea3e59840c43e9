# The bridge's lines and messages: lines out of a byte stream (a host's stdin, a board's port),
# each bounded; and what the bridge accepts from a host, on stdio and HTTP alike: one JSON-RPC
# message in strict JSON (finite numbers, bounded nesting, bounded size), or the error that
# answers it.
import json
import json.scanner
import re

from tinymcp.protocol import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, REASON

MAX_MESSAGE = 1 << 20   # bytes in one host message (a stdio line, an HTTP body)
MAX_DEPTH = 64          # objects and arrays inside one another

_NONFINITE = object()   # what NaN, Infinity and 1e999 parse to here
_nonfinite = []         # one entry per such number the message being decoded held
# JSON lets a string hold "\ud800", which is no Unicode text: no UTF-8 (a CBOR frame, a board's
# JSON) can carry it, so it is refused here, before it reaches a board.
_SURROGATE = re.compile("[\ud800-\udfff]")
SURROGATE = "strings must be Unicode text: a lone UTF-16 surrogate (\\ud800-\\udfff) is not"


# In the hot paths below, bytes are searched with find(), never `in`: `sub in data` first tries
# sub as an integer (a byte value), and the TypeError it makes and drops costs more than the
# search (CPython 3.11).

# One compact encoder and one strict decoder, made once: json.dumps and json.loads with
# arguments of their own build a new one per message.
_dump = json.JSONEncoder(separators=(",", ":"), allow_nan=False).encode


def dump(msg):
    # msg as compact JSON. No JSON holds NaN or an infinity, which a board's sensor may read (a
    # CBOR float carries it) or a board's line may spell: null stands in, as JSON.stringify
    # writes, rather than a line no strict parser reads.
    try:
        return _dump(msg)
    except ValueError as e:
        if "Out of range float" not in str(e):
            raise
        return _dump(_finite(msg))


def _finite(value):
    if type(value) is float:
        return value if value - value == 0 else None   # inf - inf and nan - nan are nan
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def dump_line(msg):
    # One message as a line of bytes: its own bytes when it has them (Encoded), else encoded.
    if type(msg) is Encoded:
        return msg.data + b"\n"
    return dump(msg).encode() + b"\n"


def _float(text):
    value = float(text)
    if value - value != 0:   # inf - inf and nan - nan are nan
        _nonfinite.append(text)
        return _NONFINITE
    return value


def _constant(name):
    _nonfinite.append(name)
    return _NONFINITE


# -- a board's answer relayed as it came: parsed once (the bridge reads it), never encoded again
#    when it reaches the host unchanged but for its id ----------------------------------------

# The head of an answer whose id can be swapped in its bytes: the line starts with it, the id
# the board was given (an integer: the bridge's own, in JSON's spelling) in group 1.
_ANSWER_HEAD = re.compile(rb'\{"jsonrpc":"2\.0","id":(0|[1-9]\d{0,17}),"(?:result|error)":')


class BoardAnswer(dict):
    # A board's answer parsed from its JSON line. rest: the line's bytes after its id, when the
    # id can be swapped there (else None): the line starts {"jsonrpc":"2.0","id":N, and holds
    # no other "id", "jsonrpc", "result" or "error" key nor any \u escape (which could spell
    # one), so the id the bridge read is the only one a host's parser can find, and the rest
    # says what the bridge read (a duplicate key reads differently in different parsers); nor
    # a 0xED byte, which leads the UTF-8 of a lone surrogate: json.loads reads one, but passed
    # on as it came it is no UTF-8 a host can decode (re-encoded, it is an ASCII escape).
    __slots__ = ("rest",)

    @classmethod
    def of(cls, msg, line):
        # msg (a dict) parsed from line (bytes) -> it as a BoardAnswer.
        # The head holds one "jsonrpc", "id" and "result" or "error": none may follow it.
        frame = cls(msg)
        frame.rest = None
        if board_nonfinite:   # as read() says
            board_nonfinite.clear()
            return frame
        head = _ANSWER_HEAD.match(line)
        if head is not None:
            end = head.end()
            if (msg.get("id") == int(head.group(1)) and line.find(b"\\u") < 0
                    and line.find(b"\xed", end) < 0 and line.find(b'"id"', end) < 0
                    and line.find(b'"jsonrpc"', end) < 0 and line.find(b'"result"', end) < 0
                    and line.find(b'"error"', end) < 0):
                frame.rest = line[head.end(1):]
        return frame

    @classmethod
    def read(cls, line):
        # A board's line (bytes, stripped) -> the answer it is when it is the usual one: the
        # head above, then one JSON value (the result or error, read by the same scanner
        # json.loads runs), then "}" and nothing else: a line json.loads reads as that answer,
        # whose keys are the head's three, each once. Else None (parse it the general way).
        # Cheaper than a parse of the whole line and the searches of() makes: the head is
        # matched, not parsed, and no key can follow the value. rest, as of() says, unless a
        # 0xED byte is in it (an ASCII line holds none).
        head = _ANSWER_HEAD.match(line)
        if head is None:
            return None
        start = head.end()
        if board_nonfinite:   # left by a line that was no JSON
            board_nonfinite.clear()
        try:
            text = line.decode("utf-8", "surrogatepass")
            value, end = board_scan(text, start)
        except (StopIteration, ValueError, RecursionError):   # UnicodeDecodeError is one too
            return None
        if text[end:] != "}":
            return None
        frame = cls(jsonrpc="2.0", id=int(head.group(1)))
        if board_nonfinite:   # a NaN or an infinity: encoded again (dump), never passed on
            board_nonfinite.clear()
            frame["result" if line[start - 3] == 116 else "error"] = value
            frame.rest = None
            return frame
        frame["result" if line[start - 3] == 116 else "error"] = value   # "result": its t
        frame.rest = line[head.end(1):] if text.isascii() or line.find(b"\xed") < 0 else None
        return frame

    def answer(self, out):
        # out: the response a host gets, this answer's result or error under the host's id ->
        # out with its bytes (Encoded): the board's line with the host's id in place of its own.
        if self.rest is None:
            return out
        encoded = Encoded(out)
        rid = out["id"]   # an int or a str (host.py takes no other); an int needs no encoder
        encoded.data = (b'{"jsonrpc":"2.0","id":' + (b"%d" % rid if type(rid) is int else
                                                     dump(rid).encode()) + self.rest)
        return encoded


class Encoded(dict):
    # A message with its bytes already made (data: its JSON, no newline); a dict as any other
    # for whoever reads it.
    __slots__ = ("data",)


# -- a host's tools/call relayed as it came: parsed once (the bridge routes it), its id the only
#    thing rewritten in its bytes on the way to the board -------------------------------------

# The host's id in its line: "id", then its value (an integer or a string) in group 1.
_HOST_ID = re.compile(rb'"id"[ \t]*:[ \t]*(-?\d+|"(?:[^"\\]|\\.)*")')
# The tool's name in it: "name", then its value (a string) in group 1.
_NAME = re.compile(rb'"name"[ \t]*:[ \t]*("(?:[^"\\]|\\.)*")')


class HostParams(dict):
    # The params of a host's tools/call whose line can reach a board as it came but for its id:
    # frame(id) -> that line with the bridge's id for the board (bytes, no newline). Whatever
    # changes the params on the way (another tool name, a _meta key of the bridge's, a field an
    # older revision lacks) makes a plain dict of them, which is encoded again.
    __slots__ = ("head", "tail")

    def frame(self, rid):
        return self.head + b"%d" % rid + self.tail

    def renamed(self, name, own):
        # -> these params with the tool's name `own` in place of the host's `name` (LABEL_TOOL
        # with several boards), in their bytes too; None when the line does not spell `name`
        # as the encoder does (an escape in it): then they are encoded again.
        head, tail = self.head, self.tail
        at = head.find(b'"name"')   # once in the line (routable): the tool's name
        in_head = at >= 0
        part = head if in_head else tail
        if not in_head:
            at = tail.find(b'"name"')
        found = _NAME.match(part, at) if at >= 0 else None
        if found is None or found.group(1) != dump(name).encode():
            return None
        part = part[:found.start(1)] + dump(own).encode() + part[found.end(1):]
        routed = HostParams(self, name=own)
        routed.head, routed.tail = (part, tail) if in_head else (head, part)
        return routed


def routable(msg, line):
    # A host's message decoded from line (bytes) -> its params as a HostParams when the line may
    # go to a board as it came, its id rewritten: a tools/call with no key but jsonrpc, id,
    # method and params, in UTF-8 with no BOM, and in the line:
    # - each key the bridge reads (routes by, checks) once, "task" at most once: a duplicate key
    #   reads differently in different parsers, and the board must read what the bridge did;
    # - no \u escape (which could spell a key), no 0xED byte (which leads the UTF-8 of a lone
    #   surrogate), no CR (a board's tty may read it as the end of the line), no tab between
    #   tokens nor DEL in a string (a REPL acts on them; encoded again, neither is raw).
    # Else its params as they are. The board reads the host's own bytes (a number as the host
    # wrote it); a few scans of the line in C cost about what encoding a small request does.
    params = msg.get("params")
    if (msg.get("method") != "tools/call" or len(msg) != 4 or type(params) is not dict
            or line[:1] != b"{" or line.find(b"\\u") >= 0 or line.find(b"\xed") >= 0
            or line.find(b"\r") >= 0 or line.find(b"\t") >= 0 or line.find(b"\x7f") >= 0
            or line.count(b'"id"') != 1 or line.count(b'"name"') != 1
            or line.count(b'"method"') != 1 or line.count(b'"params"') != 1
            or line.count(b'"jsonrpc"') != 1 or line.count(b'"task"') > 1):
        return params
    found = _HOST_ID.match(line, line.find(b'"id"'))
    if found is None:
        return params
    rid, value = msg["id"], found.group(1)
    if type(rid) is int:
        if value[:1] == b'"' or int(value) != rid:
            return params
    elif type(rid) is not str or value[:1] != b'"' or _decoder.decode(value.decode()) != rid:
        return params
    routed = HostParams(params)
    routed.head = line[:found.start(1)]
    routed.tail = line[found.end(1):]
    return routed


# The usual shape of a host's tools/call, in the order and spelling the SDKs write it, all
# ASCII: its id (an integer, or a string of printable ASCII with no escape) in group 1, the
# tool's name (as a bridge names tools) in group 2; its arguments follow.
_CALL_HEAD = re.compile(rb'\{"jsonrpc":"2\.0","id":(-?(?:0|[1-9]\d{0,17})|"[ !#-\[\]-~]*"),'
                        rb'"method":"tools/call","params":\{"name":"([a-zA-Z0-9_-]{1,64})",'
                        rb'"arguments":')


def tools_call(line):
    # A host's line (bytes, stripped) -> (the message decode() makes of it, its params as a
    # HostParams: what routable() makes of them), when it is a tools/call in the usual shape: the
    # head above, the arguments one JSON value (read by decode's own scanner), then "}}" and
    # nothing else. Such a line holds the keys jsonrpc, id, method and params, and in params
    # name and arguments, each once and nowhere but where the bridge read them, so the board
    # reads what the bridge did (however its parser takes a duplicate key inside the
    # arguments, which the bridge does not read). The checks decode() and routable() make
    # that the shape leaves open are made here: a non-finite number, a \u escape or an 0xED
    # byte (a lone surrogate), nesting, a raw byte a terminal acts on (a tab or CR between
    # tokens, a DEL in a string). Else (None, None): decode() and routable() say, the long way.
    # One match and one scan instead of a parse of the whole line and the searches decode()
    # and routable() make of it.
    head = _CALL_HEAD.match(line)
    if head is None:
        return None, None
    start = head.end()   # the head is ASCII: an index into the text as into the bytes
    _nonfinite.clear()
    try:
        text = line.decode("utf-8", "surrogatepass")
        arguments, end = _scan(text, start)
    except (StopIteration, ValueError, RecursionError):   # UnicodeDecodeError is one too
        return None, None
    if text[end:] != "}}" or _nonfinite:
        return None, None
    # All but the arguments is the head and "}}": two "{", the id (no escape, no control
    # byte), the name. The rest is looked for in the arguments, which are most often short.
    given = text[start:end]
    if ("\\u" in given or "\t" in given or "\r" in given or "\x7f" in given
            or (not text.isascii() and line.find(b"\xed") >= 0)
            or (len(given) + head.end(1) - head.start(1) > MAX_DEPTH - 2
                and text.count("[") + text.count("{") > MAX_DEPTH)):
        return None, None
    rid = head.group(1)
    rid = int(rid) if rid[:1] != b'"' else text[head.start(1) + 1:head.end(1) - 1]
    params = {"name": text[head.start(2):head.end(2)], "arguments": arguments}
    routed = HostParams(params)
    routed.head = line[:head.start(1)]
    routed.tail = line[head.end(1):]
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}, routed


def reason(error):
    # The reason of a JSON-RPC error object (or of a message holding one), or None.
    if isinstance(error, dict) and "error" in error:   # a message (a BoardAnswer is one)
        error = error["error"]
    data = error.get("data") if type(error) is dict else None
    return data.get(REASON) if type(data) is dict else None


def error(rid, code, message):
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}}


def too_long(limit=MAX_MESSAGE):
    return error(None, INVALID_REQUEST, "Invalid Request: a message longer than %d bytes was "
                 "discarded" % limit)


_decoder = json.JSONDecoder(parse_float=_float, parse_constant=_constant)
_scan = json.scanner.make_scanner(_decoder)   # what _decoder.decode runs, without its wrapping
board_nonfinite = []   # NaN, Infinity or -Infinity in a board's line just read (not JSON)


def _board_constant(name):
    board_nonfinite.append(name)
    return float(name)   # what json.loads makes of it; encoded again as null (dump)


board_json = json.JSONDecoder(parse_constant=_board_constant)   # json.loads' but for that
board_scan = json.scanner.make_scanner(board_json)


def whole_object(text, scan, decoder):
    # -> the object that is all of text (a line, stripped) by the decoder's own scanner
    # (JSONDecoder.decode without its three Python calls); anything else (no value, one with
    # more after it, not an object) decoded the usual way, for its value or its error.
    end = -1
    if text[:1] == "{":
        try:
            msg, end = scan(text, 0)
        except StopIteration:   # no value there at all
            pass
    if end != len(text) or type(msg) is not dict:
        msg = decoder.decode(text)
    return msg


def decode(data):
    # bytes -> (message, None) or (None, the error message that answers it). A host's response
    # (to a board's sampling request) with numbers that are not JSON becomes an error response.
    _nonfinite.clear()
    utf8 = None
    try:
        if type(data) is not str:
            if data[:1] == b"{" and data[1:2] != b"\x00":   # UTF-8, as detect_encoding says
                utf8, data = data, data.decode("utf-8", "surrogatepass")
            else:
                data = data.decode(json.detect_encoding(data), "surrogatepass")
        msg = whole_object(data, _scan, _decoder)
    except RecursionError:
        return None, error(None, INVALID_REQUEST, "Invalid Request: nested deeper than %d "
                           "levels" % MAX_DEPTH)
    except ValueError:   # UnicodeDecodeError is one too
        return None, error(None, PARSE_ERROR, "Parse error")
    # What _problem refuses needs a non-finite number (the parse met one), a lone surrogate
    # (only an escape, or the UTF-8 of one: 0xED then 0xA0..0xBF, can spell it; utf8: the bytes
    # data was decoded from as UTF-8, looked at for an 0xED first) or nesting deeper than
    # MAX_DEPTH (not without that many brackets). Most messages hold none, and are not walked.
    problem = (_problem(msg) if _nonfinite or data.find("\\u") >= 0
               or ((utf8 is None or utf8.find(b"\xed") >= 0)
                   and _SURROGATE.search(data) is not None)
               or data.count("[") + data.count("{") > MAX_DEPTH else None)
    if problem is None:
        return msg, None
    rid = msg.get("id") if type(msg) is dict else None
    rid = rid if type(rid) in (int, str) else None
    code, where = problem
    if type(msg) is dict and "method" not in msg and rid is not None:
        return error(rid, code, "the host's answer is not valid: " + where), None
    return None, error(rid, code, ("Invalid params: " if code == INVALID_PARAMS
                                   else "Invalid Request: ") + where)


def _problem(msg):
    # -> (code, what is wrong) for a message nested too deep or holding a non-finite number
    # or a lone surrogate.
    stack = [(msg, 0, False)]
    while stack:
        value, depth, in_params = stack.pop()
        if value is _NONFINITE:
            return (INVALID_PARAMS if in_params else INVALID_REQUEST,
                    "numbers must be finite (NaN, Infinity and 1e999 are not JSON numbers)")
        if type(value) is str:
            if _SURROGATE.search(value):
                return INVALID_PARAMS if in_params else INVALID_REQUEST, SURROGATE
            continue
        if type(value) is dict:
            if any(_SURROGATE.search(key) for key in value):
                return INVALID_PARAMS if in_params else INVALID_REQUEST, SURROGATE
            items = value.items()
        elif type(value) is list:
            items = ((None, v) for v in value)
        else:
            continue
        if depth >= MAX_DEPTH:
            return INVALID_REQUEST, "nested deeper than %d levels" % MAX_DEPTH
        for key, item in items:
            stack.append((item, depth + 1, in_params or (depth == 0 and key == "params")))
    return None


# -- lines: newline-delimited lines out of chunks of bytes, each at most max_line long; a longer
#    line is dropped as it streams (never held whole) and reported once, as TOO_LONG, where it
#    ends -------------------------------------------------------------------------------------

TOO_LONG = object()


class LineSplitter:
    def __init__(self, max_line):
        self.max_line = max_line
        self._partial = bytearray()
        self._dropping = False

    def feed(self, data):
        # -> the lines (bytes, without their newline) and TOO_LONG marks that data completes.
        if not self._partial and not self._dropping and len(data) <= self.max_line:
            # The usual chunk: whole lines, none too long (a relay's hot path), split at once.
            lines = data.split(b"\n")
            rest = lines.pop()
            if rest:
                self._partial += rest
            return lines
        lines = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._keep(data, start)
                return lines
            if self._dropping or len(self._partial) + nl - start > self.max_line:
                lines.append(TOO_LONG)
            else:
                self._partial += data[start:nl]
                lines.append(bytes(self._partial))
            self._partial.clear()
            self._dropping = False
            start = nl + 1

    def end(self):
        # The input ended: a last line without its newline, if any.
        lines = self.feed(b"\n") if self._partial or self._dropping else []
        return lines

    @property
    def partial(self):
        # The line begun and not yet ended (a REPL's prompt waits there for input).
        return self._partial

    def clear(self):
        self._partial.clear()
        self._dropping = False

    def _keep(self, data, start):
        if self._dropping:
            return
        if len(self._partial) + len(data) - start > self.max_line:
            self._partial.clear()
            self._dropping = True
        else:
            self._partial += data[start:]
