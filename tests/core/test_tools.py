# Tools: declared schemas, validation as isError results, structured output, pagination.
import json

from tests.core.support import demo_server, error, frame, initialize, notifications, result
from tinymcp import Server
from tinymcp.schema import array, boolean, integer, number, obj


def ready(version="2025-11-25"):
    server = demo_server()
    initialize(server, version)
    return server


def call(server, name, arguments=None):
    params = {"name": name}
    if arguments is not None:
        params["arguments"] = arguments
    return result(server, "tools/call", params)


def test_compact_declaration_produces_a_real_json_schema():
    # (MicroPython dicts keep no insertion order, so "required" is compared as a set.)
    tool = result(ready(), "tools/list")["tools"][0]
    tool["inputSchema"]["required"].sort()
    assert tool["name"] == "add" and tool["description"] == "Add two integers."
    assert tool["inputSchema"] == {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "description": "first", "minimum": 0, "maximum": 100},
            "b": {"type": "integer", "description": "second"},
            "unit": {"type": "string", "description": "label", "enum": ["V", "A"], "default": "V"},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert tool["outputSchema"]["properties"] == {"sum": {"type": "integer"}}
    assert tool["title"] == "Add"
    assert tool["annotations"] == {"title": "Add", "readOnlyHint": True}


def test_schema_constructors():
    assert number("v", 0, 5) == {"type": "number", "description": "v", "minimum": 0, "maximum": 5}
    assert boolean() == {"type": "boolean"}
    assert array(integer(), min_items=1) == {"type": "array", "items": {"type": "integer"},
                                             "minItems": 1}
    assert obj({"x?": boolean()}) == {"type": "object", "properties": {"x": {"type": "boolean"}},
                                      "additionalProperties": False}


def test_a_whole_json_schema_is_published_as_written_and_still_validates():
    server = Server("s", "0")
    declared = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                "properties": {"pin": {"$ref": "#/$defs/pin"}, "level": boolean()},
                "required": ["level"], "$defs": {"pin": {"type": "integer", "minimum": 0}}}
    server.tool("write", "Drive a pin", inputs=declared)(lambda level, pin=0: "ok")
    initialize(server)
    assert result(server, "tools/list")["tools"][0]["inputSchema"] == declared
    assert call(server, "write", {"level": True, "pin": 3})["content"][0]["text"] == "ok"
    res = call(server, "write", {"pin": 3})
    assert res["isError"] is True and "'level'" in res["content"][0]["text"]


def test_a_valid_call_returns_structured_content_and_its_text_mirror():
    res = call(ready(), "add", {"a": 2, "b": 3})
    assert res["structuredContent"] == {"sum": 5}
    assert res["content"] == [{"type": "text", "text": '{"sum":5}'}]
    assert "isError" not in res


def test_integral_floats_count_as_integers():
    assert call(ready(), "add", {"a": 2.0, "b": 3})["structuredContent"] == {"sum": 5}


def test_invalid_arguments_are_tool_errors_that_say_what_was_wrong():
    server = ready()
    cases = (
        ({"a": 1}, "missing required argument 'b'"),
        ({"a": "1", "b": 2}, "'a' must be integer, got string"),
        ({"a": 101, "b": 2}, "'a' must be <= 100"),
        ({"a": -1, "b": 2}, "'a' must be >= 0"),
        ({"a": 1.5, "b": 2}, "'a' must be integer, got number"),
        ({"a": True, "b": 2}, "'a' must be integer, got boolean"),
        ({"a": 1, "b": 2, "unit": "W"}, "'unit' must be one of \"V\", \"A\""),
        ({"a": 1, "b": 2, "c": 3}, "unknown argument 'c' (accepted: "),
    )
    for args, text in cases:
        res = call(server, "add", args)
        assert res["isError"] is True, args
        message = res["content"][0]["text"]
        assert text in message, message
        assert message.startswith("Invalid arguments for add: ")


def test_arguments_that_are_not_an_object_are_a_tool_error():
    res = call(ready(), "add", [1, 2])
    assert res["isError"] is True


def test_missing_arguments_member_means_no_arguments():
    res = call(ready(), "add")
    text = res["content"][0]["text"]
    assert res["isError"] is True
    assert "missing required argument 'a'" in text or "missing required argument 'b'" in text


def test_unknown_tool_is_a_protocol_error():
    err = error(ready(), "tools/call", {"name": "nope", "arguments": {}})
    assert err["code"] == -32602 and "nope" in err["message"]


def test_a_raising_tool_becomes_an_error_result_and_the_server_goes_on():
    server = ready()
    res = call(server, "fail")
    assert res["isError"] is True
    assert res["content"][0]["text"] == "fail failed: sensor not responding"
    assert call(server, "echo", {"text": "still here"})["content"][0]["text"] == "still here"


def test_older_clients_get_no_structured_output_fields():
    server = ready("2025-03-26")
    tool = result(server, "tools/list")["tools"][0]
    assert "outputSchema" not in tool and "title" not in tool
    assert tool["annotations"]["readOnlyHint"] is True
    res = call(server, "add", {"a": 1, "b": 1})
    assert "structuredContent" not in res and res["content"][0]["text"] == '{"sum":2}'
    old = ready("2024-11-05")
    assert "annotations" not in result(old, "tools/list")["tools"][0]


def many(count, page_size):
    server = Server("many", "0")
    server.page_size = page_size
    for i in range(count):
        server.tool("t" + str(i), "tool " + str(i))(lambda: "ok")
    initialize(server)
    return server


def test_tools_list_is_paginated_with_next_cursor():
    server = many(7, 3)
    names = []
    params = {}
    pages = 0
    while True:
        page = result(server, "tools/list", params)
        pages += 1
        names.extend([t["name"] for t in page["tools"]])
        if "nextCursor" not in page:
            break
        params = {"cursor": page["nextCursor"]}
    assert pages == 3
    assert names == ["t" + str(i) for i in range(7)]


def test_a_bad_cursor_is_invalid_params():
    server = many(4, 2)
    for cursor in ("zzz", "99", "-1", 3, ""):
        assert error(server, "tools/list", {"cursor": cursor})["code"] == -32602, cursor


def test_tools_list_answer_is_built_once_and_reused():
    server = ready()
    first = server.handle(frame("tools/list"))
    cached = server.session.cache["tools"]
    assert server.handle(frame("tools/list", id=2)).endswith(cached + b"}")
    assert server.session.cache["tools"] is cached
    assert first.replace(b'"id":1', b'"id":2') == server.handle(frame("tools/list", id=2))


def test_a_short_page_is_kept_as_one_bytes_object_a_long_one_in_pieces():
    # One object for a page of up to 2 KiB (each piece would cost its own header); a longer
    # page stays in pieces, so no block of its whole size is needed (tinymcp/listing.py).
    server = ready()
    result(server, "tools/list")
    short = server.session.cache["tools"]
    assert type(short) is bytes and len(short) <= 2048
    for i in range(12):
        server.tool("tool_%d" % i, "A tool with a description long enough to fill a page " * 3,
                    inputs={"n": integer("a number of things to count", 0, 9)})(lambda n: n)
    tools = result(server, "tools/list")["tools"]
    pieces = server.session.cache["tools"]
    assert len(tools) == 15 and type(pieces) is tuple and len(pieces) == 2 * 15 + 1
    assert sum(len(p) for p in pieces) > 2048
    assert json.loads(b"".join(pieces))["tools"] == tools


def test_the_refusal_wording_is_loaded_only_for_a_refused_call_and_released_after_it():
    import sys
    from tinymcp import release
    # Loaded already when this process imported tinymcp.jsonschema (a rich schema's check
    # words its refusals with it: collecting tests/core/test_jsonschema.py does), and kept there
    # until some refusal let it go: the test failed or passed by the order tests ran in.
    release("tinymcp.refusal")
    server = ready()
    assert call(server, "add", {"a": 1, "b": 2})["structuredContent"] == {"sum": 3}
    assert "tinymcp.refusal" not in sys.modules  # a valid call never loads it
    refused = call(server, "add", {"a": 101, "b": 2})
    assert refused["isError"] is True
    assert "'a' must be <= 100" in refused["content"][0]["text"]
    assert "tinymcp.refusal" not in sys.modules  # let go once the sentence is made
    refused = call(server, "add", {"a": 1, "b": 2, "c": 3})
    assert "unknown argument 'c' (accepted: " in refused["content"][0]["text"]
    assert "tinymcp.refusal" not in sys.modules


def test_the_listing_code_is_loaded_for_a_page_and_released_once_it_is_encoded():
    import sys
    server = ready()
    assert "tinymcp.listing" not in sys.modules
    first = result(server, "tools/list")["tools"]
    assert "tinymcp.listing" not in sys.modules  # the page is cached encoded: not needed
    server.tool("late", "arrives late")(lambda: "hi")  # a list change: the page is made again
    assert [t["name"] for t in result(server, "tools/list")["tools"]] == ["add", "fail", "echo",
                                                                           "late"]
    assert "tinymcp.listing" not in sys.modules
    server.remove("tools", "late")
    server.open_session()  # a new session, in an older version: encoded again, its own way
    initialize(server, "2025-03-26")
    again = result(server, "tools/list")["tools"]
    assert [t["name"] for t in again] == [t["name"] for t in first]
    assert "outputSchema" in first[0] and "outputSchema" not in again[0]
    assert "tinymcp.listing" not in sys.modules


def test_tools_added_or_removed_after_initialize_announce_list_changed():
    server = ready()
    notifications(server)
    server.tool("late", "arrives late")(lambda: "hi")
    assert len(notifications(server, "notifications/tools/list_changed")) == 1
    assert [t["name"] for t in result(server, "tools/list")["tools"]][-1] == "late"
    server.remove("tools", "late")
    assert len(notifications(server, "notifications/tools/list_changed")) == 1
    assert "late" not in [t["name"] for t in result(server, "tools/list")["tools"]]


def test_registering_before_initialize_sends_nothing():
    server = demo_server()
    assert server.outbox == []


def test_tool_returning_content_blocks_and_nothing():
    server = Server("c", "0")
    server.tool("img", "image")(lambda: [{"type": "image", "data": "AAAA", "mimeType": "image/png"}])
    server.tool("quiet", "nothing")(lambda: None)
    initialize(server)
    assert call(server, "img")["content"][0]["type"] == "image"
    assert call(server, "quiet") == {"content": []}
