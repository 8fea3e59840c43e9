# JSON Schema 2020-12 declared as a plain dict: listed exactly as declared, checked as far as the
# board can (tinymcp/jsonschema.py, loaded for such a schema alone), refused where it cannot.
import sys

from tests.core.support import initialize, result
from tinymcp import Server
from tinymcp.schema import integer, string

SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {"address": {"$anchor": "place", "type": "object",
                          "properties": {"street": {"type": "string"},
                                         "city": {"type": "string", "pattern": "^[A-Z]"}},
                          "required": ["city"]}},
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "address": {"$ref": "#/$defs/address"},
        "home": {"$ref": "#place"},
        "kind": {"enum": ["a", "b"]},
        "when": {"type": "string", "format": "date-time"},
        "n": {"type": "integer", "exclusiveMinimum": 0, "multipleOf": 5},
        "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True,
                 "contains": {"const": "x"}},
        "either": {"oneOf": [{"type": "integer"}, {"type": "string", "maxLength": 2}]},
        "any": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
    },
    "allOf": [{"required": ["name"]}],
    "if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
    "then": {"required": ["n"]},
    "else": {"not": {"required": ["n"]}},
    "additionalProperties": False,
    "x-note": "an annotation of someone else's: passed on",
}


def rich_board(initialized=True):
    server = Server("rich", "0")

    @server.tool("book", "Takes a booking", inputs=SCHEMA, outputs=SCHEMA)
    def book(**kw):
        return kw  # its structured result fits its outputSchema, the same schema

    if initialized:
        initialize(server)
    return server


def called(server, arguments):
    res = result(server, "tools/call", {"name": "book", "arguments": arguments})
    return res.get("isError", False), res["content"][0]["text"]


def test_every_keyword_is_listed_as_declared():
    listed = result(rich_board(), "tools/list")["tools"][0]
    assert listed["inputSchema"] == SCHEMA and listed["outputSchema"] == SCHEMA


def test_what_fits_is_called():
    server = rich_board()
    for fits in ({"name": "x"}, {"name": "x", "address": {"city": "Paris"}},
                 {"name": "x", "kind": "a", "n": 10}, {"name": "x", "kind": "b"},
                 {"name": "x", "when": "2026-07-28T10:00:00Z"}, {"name": "x", "tags": ["x", "y"]},
                 {"name": "x", "either": 3}, {"name": "x", "either": "ab"},
                 {"name": "x", "any": None}, {"name": "x", "home": {"city": "Oslo"}}):
        res = result(server, "tools/call", {"name": "book", "arguments": fits})
        assert not res.get("isError") and res["structuredContent"] == fits, (fits, res)


def test_what_does_not_fit_is_refused_with_a_reason():
    server = rich_board()
    for wrong, said in (({}, "missing required argument 'name'"),                    # allOf
                        ({"name": ""}, "'name' must have at least 1 characters"),
                        ({"name": "x", "address": {"city": "paris"}}, "pattern"),      # $ref
                        ({"name": "x", "home": {}}, "'home.city'"),                    # $anchor
                        ({"name": "x", "kind": "c"}, "one of"),                        # enum
                        ({"name": "x", "kind": "a"}, "missing required argument 'n'"),  # then
                        ({"name": "x", "kind": "b", "n": 5}, "'not'"),                 # else
                        ({"name": "x", "n": 7, "kind": "a"}, "multiple of 5"),
                        ({"name": "x", "n": 0, "kind": "a"}, "must be > 0"),
                        ({"name": "x", "when": "yesterday"}, "date-time"),             # format
                        ({"name": "x", "tags": ["x", "x"]}, "twice"),
                        ({"name": "x", "tags": ["y"]}, "contains"),
                        ({"name": "x", "either": "abc"}, "exactly one"),               # oneOf
                        ({"name": "x", "any": 1}, "anyOf"),
                        ({"name": "x", "any": True, "extra": 1}, "unknown argument 'extra'")):
        failed, text = called(server, wrong)
        assert failed and said in text, (wrong, text)


def test_what_the_board_cannot_check_is_refused_where_it_is_declared():
    server = Server("r", "0")
    for schema, said in (
            ({"type": "object", "properties": {"x": {"$dynamicRef": "#a"}}}, "$dynamicRef"),
            ({"type": "object", "unevaluatedProperties": False}, "unevaluatedProperties"),
            ({"type": "object", "properties": {"x": {"format": "hostname"}}}, "hostname"),
            ({"type": "object", "properties": {"x": {"$ref": "https://example.com/s"}}},
             "local $ref"),
            ({"type": "object", "properties": {"x": {"$ref": "#/$defs/none"}}}, "nothing"),
            ({"type": "object", "properties": {"x": {"$ref": "#nowhere"}}}, "no $anchor"),
            ({"x": {"type": "string", "pattern": "("}}, "pattern")):   # the compact form too
        try:
            server.tool("t", "t", inputs=schema)(lambda **kw: "called")
        except ValueError as e:
            assert said in str(e), (schema, str(e))
        else:
            raise AssertionError("accepted what it cannot check: %r" % (schema,))
    assert server.tools is None or server.tools.find("t") is None


def test_the_helpers_stay_the_cheap_path():
    sys.modules.pop("tinymcp.jsonschema", None)
    server = Server("cheap", "0")

    @server.tool("adc", "Reads a channel", inputs={"channel": integer("ADC channel", 0, 3),
                                                   "unit?": string(enum=("V", "mV"))})
    def adc(channel, unit="V"):
        return {"raw": channel}

    initialize(server)
    result(server, "tools/call", {"name": "adc", "arguments": {"channel": 1}})
    result(server, "tools/call", {"name": "adc", "arguments": {"channel": 9}})
    assert "tinymcp.jsonschema" not in sys.modules
    assert "tinymcp.schemakind" not in sys.modules  # asked at registration, let go after
