# tinymcp.cbor against cbor2 on random data (hypothesis), both ways, and random or damaged input.
import struct

import cbor2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tinymcp import cbor

scalars = (st.none() | st.booleans() | st.integers() | st.integers(-2**70, 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text() | st.binary())
json_model = st.recursive(scalars, lambda inner: st.lists(inner, max_size=6)
                          | st.dictionaries(st.text(max_size=8), inner, max_size=6), max_leaves=40)
SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def same(a, b):
    # Equal, of the same type, floats bit for bit except that any NaN equals any NaN.
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return struct.pack(">d", a) == struct.pack(">d", b) or (a != a and b != b)
    if type(a) is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is dict:
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@SETTINGS
@given(json_model)
def test_encoding_is_byte_identical_to_cbor2(obj):
    assert cbor.dumps(obj) == cbor2.dumps(obj)


@SETTINGS
@given(json_model)
def test_cbor2_reads_what_tinymcp_writes(obj):
    assert same(cbor2.loads(cbor.dumps(obj)), obj)


@SETTINGS
@given(json_model)
def test_tinymcp_reads_what_cbor2_writes_default_and_canonical(obj):
    assert same(cbor.loads(cbor2.dumps(obj)), obj)
    canonical = cbor.loads(cbor2.dumps(obj, canonical=True))  # shortest floats, sorted keys
    assert cbor2.dumps(canonical, canonical=True) == cbor2.dumps(obj, canonical=True)


@SETTINGS
@given(st.floats(allow_nan=False) | st.floats(width=32) | st.floats(width=16))
def test_floats_in_every_width_cbor2_writes_decode_exactly(x):
    assert same(cbor.loads(cbor2.dumps(x, canonical=True)), x)
    assert same(cbor.loads(b"\xfb" + struct.pack(">d", x)), x)


@SETTINGS
@given(st.binary(max_size=64))
def test_random_bytes_decode_like_cbor2_or_raise_decode_error(data):
    try:
        ours = cbor.loads(data)
    except cbor.DecodeError:
        return
    assert same(cbor2.loads(data), ours)


@SETTINGS
@given(json_model, st.data())
def test_damaged_encodings_decode_or_raise_decode_error_only(obj, draw):
    data = bytearray(cbor.dumps(obj))
    for _ in range(draw.draw(st.integers(1, 4))):
        i = draw.draw(st.integers(0, len(data) - 1))
        action = draw.draw(st.sampled_from(["flip", "drop", "byte"]))
        if action == "flip":
            data[i] ^= 1 << draw.draw(st.integers(0, 7))
        elif action == "drop" and len(data) > 1:
            del data[i]
        else:
            data[i] = draw.draw(st.sampled_from([0x1B, 0x3B, 0x5B, 0x7B, 0x9B, 0xBB, 0x5F, 0x9F, 0xFF]))
    try:
        cbor.loads(bytes(data))
    except cbor.DecodeError:
        pass


@pytest.mark.parametrize("hexed", ["63eda080", "62c328", "7f61c361bcff"])
def test_invalid_utf8_is_refused_on_cpython(hexed):
    with pytest.raises(cbor.DecodeError):
        cbor.loads(bytes.fromhex(hexed))


def test_hostile_lengths_fail_fast_without_allocating():
    for head in (b"\x5b", b"\x7b", b"\x9b", b"\xbb"):
        for claim in (2**63, 2**64 - 1, 2**32):
            with pytest.raises(cbor.DecodeError):
                cbor.loads(head + claim.to_bytes(8, "big") + b"\x00" * 100)
