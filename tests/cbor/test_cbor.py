# The CBOR codec on vectors from cbor2 and RFC 8949, malformed input, limits: on CPython and MicroPython.
import sys
from struct import pack, unpack

from tests.cbor.vectors import DECODE, ENCODE
from tests.float32 import SINGLE, Float32Cbor, f32
from tinymcp import cbor

# RFC 8949 Appendix A, the examples cbor2's default encoding also writes (no shortest floats).
RFC_ENCODE = [
    ("00", 0), ("01", 1), ("0a", 10), ("17", 23), ("1818", 24), ("1819", 25), ("1864", 100),
    ("1903e8", 1000), ("1a000f4240", 1000000), ("1b000000e8d4a51000", 1000000000000),
    ("1bffffffffffffffff", 18446744073709551615), ("c249010000000000000000", 18446744073709551616),
    ("3bffffffffffffffff", -18446744073709551616), ("c349010000000000000000", -18446744073709551617),
    ("20", -1), ("29", -10), ("3863", -100), ("3903e7", -1000),
    ("fb3ff199999999999a", 1.1), ("fb7e37e43c8800759c", 1.0e+300), ("fbc010666666666666", -4.1),
    ("f97c00", float("inf")), ("f97e00", float("nan")), ("f9fc00", float("-inf")),
    ("f4", False), ("f5", True), ("f6", None),
    ("40", b""), ("4401020304", b"\x01\x02\x03\x04"), ("60", ""), ("6161", "a"), ("6449455446", "IETF"),
    ("62225c", "\"\\"), ("62c3bc", "\u00fc"), ("63e6b0b4", "\u6c34"), ("64f0908591", "\U00010151"),
    ("80", []), ("83010203", [1, 2, 3]), ("8301820203820405", [1, [2, 3], [4, 5]]),
    ("98190102030405060708090a0b0c0d0e0f101112131415161718181819", list(range(1, 26))),
    ("a0", {}), ("a26161016162820203", {"a": 1, "b": [2, 3]}), ("826161a161626163", ["a", {"b": "c"}]),
    ("a56161614161626142616361436164614461656145",
     {"a": "A", "b": "B", "c": "C", "d": "D", "e": "E"}),
]

# Not well-formed (RFC 8949 Appendix F) or outside what this codec accepts: all raise DecodeError.
MALFORMED = [
    "", "18", "19 01", "1a 0102 03", "1b 01020304050607", "38", "58", "5801", "6203", "8201", "a101",
    "a1 6161", "c2", "f9 00", "fa 000000", "fb 00000000000000", "9f", "9f 01", "bf 6161", "5f", "5f 4101",
    "1c", "1d", "1e", "3c", "5c", "7c", "9c", "bc", "dc", "fc",           # reserved additional info
    "1f", "3f", "df",                                                     # indefinite int / tag
    "ff", "81 ff", "a1 ff", "82 01 ff",                                   # break outside indefinite
    "5f 6161 ff", "7f 4161 ff", "5f 5f ff ff", "7f 7f ff ff", "5f 01 ff", # bad string chunks
    "f7", "f0", "f8 20", "f8 18", "e0",                                   # undefined, other simple values
    "c0 6161", "c1 00", "d8 20 6161", "c6 00",                            # tags other than 2, 3, 55799
    "c2 01", "c3 6161", "c2 80",                                          # bignum on a non-byte-string
    "a1 01 02", "a1 40 02", "a1 80 02", "bf 01 02 ff", "a1 f6 01",        # map keys that are not text
    "a2 6161 01 6161 02", "bf 6161 01 6161 02 ff",                        # duplicate map keys
    "61 ff", "62 c3 28", "7f 61 c3 61 bc ff",                             # invalid UTF-8 (chunk-wise)
    "00 00", "80 01", "f6 f6",                                            # bytes after the item
    "5b 8000000000000000", "7b ffffffffffffffff", "9b 8000000000000000",  # hostile lengths
    "bb 4000000000000000", "9a ffffffff 00", "ba 0000ffff 6161 01", "5a 7fffffff 00",
]


MICROPYTHON = sys.implementation.name == "micropython"
# Floats are float32 on most boards' MicroPython (rp2, esp32): the codec then writes float32
# where cbor2 (on float64) writes float64, and the vectors say so (SINGLE: this build is such).
INF = float("inf")


def unhex(text):
    return bytes.fromhex(text.replace(" ", ""))


def same(a, b):
    # Equal, of the same type, floats bit for bit (so -0.0 != 0.0 and nan == nan). A loop, not
    # recursion: a board's C stack holds only a few dozen nested calls.
    todo = [(a, b)]
    while todo:
        a, b = todo.pop()
        if type(a) is not type(b):
            return False
        if type(a) is float:
            if not (pack(">d", a) == pack(">d", b) or (a != a and b != b)):
                return False
        elif type(a) is list:
            if len(a) != len(b):
                return False
            todo.extend(zip(a, b))
        elif type(a) is dict:  # key order aside: MicroPython's dicts have their own
            if sorted(a) != sorted(b):
                return False
            todo.extend((a[k], b[k]) for k in a)
        elif a != b:
            return False
    return True


def as_single(data):
    # cbor2's bytes as a single-precision build writes the same value: each float64 item becomes
    # float32 (half-precision infinity beyond float32's range; cbor2 already writes inf and NaN
    # as half floats). Walks the items of a definite-length encoding, as cbor2 writes them.
    out = bytearray()
    at, left = 0, 1
    while left:
        left -= 1
        major, info = data[at] >> 5, data[at] & 31
        size = {24: 1, 25: 2, 26: 4, 27: 8}.get(info, 0)
        arg = int.from_bytes(data[at + 1:at + 1 + size], "big") if size else info
        end = at + 1 + size
        if major == 7 and info == 27:
            value = f32(unpack(">d", data[at + 1:end])[0])   # what a float32 board holds
            if value in (INF, -INF):
                out += b"\xf9\x7c\x00" if value > 0 else b"\xf9\xfc\x00"
            else:
                out += b"\xfa" + pack(">f", value)
            at = end
            continue
        if major in (2, 3):
            end += arg
        elif major == 4:
            left += arg
        elif major == 5:
            left += 2 * arg
        elif major == 6:
            left += 1
        out += data[at:end]
        at = end
    return bytes(out)


def refused(data):
    try:
        cbor.loads(data)
    except cbor.DecodeError:
        return True
    return False


def encodes_as(value, hexed, single=SINGLE):
    # Byte for byte (cbor2's floats made float32 by a single-precision codec); on MicroPython a
    # dict's keys come in its own order, so there: a permutation.
    expected = as_single(unhex(hexed)) if single else unhex(hexed)
    data = cbor.dumps(value)
    if data == expected:
        return True
    return MICROPYTHON and len(data) == len(expected) and same(cbor.loads(data), value)


def test_encodings_match_cbor2_byte_for_byte():
    for hexed, value in ENCODE:
        assert encodes_as(value, hexed), hexed


def test_an_ordered_dict_keeps_its_key_order_on_both_runtimes():
    from collections import OrderedDict
    assert cbor.dumps(OrderedDict([("b", 1), ("a", 2), ("c", 3)])) == unhex("a3 6162 01 6161 02 6163 03")


def test_cbor2_encodings_decode_to_the_value():
    for hexed, value in ENCODE + DECODE:
        assert same(cbor.loads(unhex(hexed)), value), hexed


def test_rfc8949_examples_encode_and_decode():
    for hexed, value in RFC_ENCODE:
        assert encodes_as(value, hexed), hexed
        assert same(cbor.loads(unhex(hexed)), value), hexed


def test_a_single_precision_build_writes_floats_as_float32():
    with Float32Cbor():  # what such a build picks at import
        assert cbor.dumps([1.5, -0.0, 100000.0]) == unhex("83 fa3fc00000 fa80000000 fa47c35000")
        assert cbor.dumps(float("nan")) == unhex("f97e00")
    # and what this runtime's own build picked
    assert cbor.dumps(1.5) == unhex("fa 3fc00000" if SINGLE else "fb 3ff8000000000000")


def board_value(value):
    # The value as a float32 board holds it: every float rounded to float32.
    if type(value) is float:
        return f32(value)
    if type(value) is list:
        return [board_value(v) for v in value]
    if type(value) is dict:
        return {k: board_value(v) for k, v in value.items()}
    return value


def test_cbor2_vectors_as_a_single_precision_board_writes_them():
    # On every build, the codec as a float32 board sets it up: each of cbor2's floats written
    # as float32 (exact: the shortest width that holds a board's value; beyond float32's range
    # the infinity cbor2 writes as a half float), all else byte for byte as cbor2.
    with Float32Cbor():
        for hexed, value in ENCODE:
            assert encodes_as(board_value(value), hexed, single=True), hexed
        assert cbor.dumps(f32(1.1)) == unhex("fa 3f8ccccd")
        assert cbor.dumps([f32(1e300), f32(5e-324)]) == unhex("82 f97c00 fa00000000")


def test_bytes_like_values_are_byte_strings_and_tuples_are_arrays():
    assert cbor.dumps(bytearray(b"ab")) == unhex("42 6162")
    assert cbor.dumps(memoryview(b"xabcx")[1:4]) == unhex("43 616263")
    assert cbor.dumps((1, (2, "a"))) == unhex("82 01 82 02 6161")
    assert type(cbor.loads(unhex("42 6162"))) is bytes
    assert cbor.loads(memoryview(bytearray(unhex("83 01 02 03")))) == [1, 2, 3]


def test_a_decode_error_is_a_value_error():
    assert issubclass(cbor.DecodeError, ValueError)


def test_malformed_input_raises_decode_error():
    for hexed in MALFORMED:
        assert refused(unhex(hexed)), hexed


def test_every_truncation_of_a_valid_item_is_refused():
    for hexed, _ in ENCODE[::3] + DECODE:
        data = unhex(hexed)
        for end in range(len(data)):
            assert refused(data[:end]), hexed + " cut at " + str(end)


def test_bit_flips_decode_or_raise_decode_error_only():
    seed = 12345
    for hexed, _ in ENCODE[::5] + DECODE[::3]:
        data = bytearray(unhex(hexed))
        for _ in range(8):
            seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
            bit = seed % (8 * len(data))
            data[bit >> 3] ^= 1 << (bit & 7)
            try:
                cbor.loads(data)
            except cbor.DecodeError:
                pass


def test_nesting_up_to_max_depth_and_no_further():
    deep = []
    for _ in range(cbor.max_depth - 1):
        deep = [deep]
    data = cbor.dumps(deep)
    assert data == b"\x81" * (cbor.max_depth - 1) + b"\x80"
    assert cbor.loads(data) == deep
    for too_deep in (b"\x81" + data, b"\x9f" * 5000, b"\xa1\x61a" * 2000 + b"\x00", b"\xd9\xd9\xf7" * 2000):
        assert refused(too_deep)
    try:
        cbor.dumps([deep])
        assert False, "encoded past max_depth"
    except ValueError:
        pass


def test_a_stack_too_small_for_max_depth_is_a_decode_error_not_a_recursion_error():
    # Nesting deeper than any stack goes: 200,000 levels where memory is plenty, a quarter of
    # the free heap on a board (still thousands of levels against a C stack of a few KiB).
    try:
        import gc
        levels = min(200000, gc.mem_free() // 4)
    except (ImportError, AttributeError):  # CPython: no gc.mem_free
        levels = 200000
    depth, size = cbor.max_depth, cbor.max_size
    try:
        cbor.max_depth, cbor.max_size = 10 ** 6, 10 ** 6
        assert refused(b"\x81" * levels + b"\x00")
    finally:
        cbor.max_depth, cbor.max_size = depth, size


def test_a_self_containing_list_is_refused_not_a_recursion_error():
    loop = [1]
    loop.append(loop)
    try:
        cbor.dumps(loop)
        assert False, "encoded a cycle"
    except ValueError:
        pass


def test_limits_are_module_attributes_a_user_can_change():
    depth, size = cbor.max_depth, cbor.max_size
    try:
        cbor.max_depth = 2
        assert cbor.loads(unhex("81 81 00")) == [[0]]
        assert refused(unhex("81 81 81 00"))
        cbor.max_size = 4
        assert refused(unhex("64 61626364"))
        assert cbor.loads(unhex("63 616263")) == "abc"
    finally:
        cbor.max_depth, cbor.max_size = depth, size
    assert refused(bytes(cbor.max_size + 1))


def test_unsupported_values_raise_type_error():
    for value in (set(), object(), {1: 2}, {b"k": 1}, {None: 1}, [1, {2.5: 0}]):
        try:
            cbor.dumps(value)
            assert False, "encoded " + repr(value)
        except TypeError:
            pass


def test_dump_streams_pieces_and_passes_long_strings_through_uncopied():
    blob = bytes(range(256)) * 4
    message = {"id": 1, "result": {"contents": [{"uri": "cam://0", "blob": blob, "text": "t" * 100}]}}
    pieces = []
    cbor.dump(message, lambda piece: pieces.append(piece if piece is blob else bytes(piece)))
    assert b"".join(pieces) == cbor.dumps(message)
    assert any(piece is blob for piece in pieces)
    short = []
    cbor.dump([1, "a"], lambda piece: short.append(bytes(piece)))
    assert short == [unhex("82 01 6161")]
