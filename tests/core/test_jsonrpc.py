# JSON-RPC 2.0 envelope rules, as the board answers them.
import json

from tests.core.support import demo_server, error, frame, initialize, reply, result
from tinymcp.jsonrpc import dumps


def ready():
    server = demo_server()
    initialize(server)
    return server


def test_string_and_integer_ids_are_echoed_exactly():
    server = ready()
    for rid in (0, 7, -3, 12345678901234567890, "0", "abc", "é"):
        assert reply(server, "ping", id=rid) == {"jsonrpc": "2.0", "id": rid, "result": {}}


def test_null_float_bool_and_object_ids_are_invalid_requests():
    server = ready()
    for rid in (None, 1.5, True, [1], {"a": 1}):
        msg = json.loads(server.handle(json.dumps(
            {"jsonrpc": "2.0", "id": rid, "method": "ping"}).encode()))
        assert msg["id"] is None and msg["error"]["code"] == -32600, msg


def test_missing_or_wrong_jsonrpc_member_is_invalid_request():
    server = ready()
    msg = json.loads(server.handle(b'{"id": 3, "method": "ping"}'))
    assert msg["error"]["code"] == -32600 and msg["id"] == 3
    msg = json.loads(server.handle(b'{"jsonrpc": "1.0", "id": 3, "method": "ping"}'))
    assert msg["error"]["code"] == -32600


def test_non_string_method_is_invalid_request():
    server = ready()
    msg = json.loads(server.handle(b'{"jsonrpc": "2.0", "id": 4, "method": 12}'))
    assert msg == {"jsonrpc": "2.0", "id": 4,
                   "error": {"code": -32600, "message": msg["error"]["message"]}}


def test_batches_are_refused():
    server = ready()
    msg = json.loads(server.handle(b'[{"jsonrpc": "2.0", "id": 1, "method": "ping"}]'))
    assert msg["id"] is None and msg["error"]["code"] == -32600
    assert "batch" in msg["error"]["message"]


def test_parse_errors_answer_with_null_id():
    server = ready()
    for bad in (b'{"jsonrpc": "2.0", "id": 1, "meth', b"garbage", b'{"a": "\xff\xfe"}',
                b"\xc3\x28"):
        msg = json.loads(server.handle(bad))
        assert msg["id"] is None and msg["error"]["code"] == -32700, bad


def test_scalars_are_not_requests():
    server = ready()
    for bad in (b"1", b'"ping"', b"null"):
        assert json.loads(server.handle(bad))["error"]["code"] == -32600


def test_unknown_method():
    server = ready()
    err = error(server, "tools/explode")
    assert err["code"] == -32601 and "tools/explode" in err["message"]


def test_params_must_be_an_object():
    server = ready()
    msg = json.loads(server.handle(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": [1]}'))
    assert msg["error"]["code"] == -32602


def test_wrong_param_types_are_invalid_params():
    server = ready()
    assert error(server, "tools/call", {"name": 5})["code"] == -32602
    assert error(server, "resources/read", {"uri": None})["code"] == -32601  # no resources here
    assert error(server, "initialize", {"protocolVersion": 2025})["code"] == -32602
    assert error(server, "logging/setLevel", {"level": "loud"})["code"] == -32602


def test_notifications_are_never_answered():
    server = ready()
    assert server.handle(frame("notifications/initialized", id=None)) is None
    assert server.handle(frame("notifications/whatever", {"x": 1}, id=None)) is None
    assert server.handle(frame("tools/list", id=None)) is None  # a request sent as notification
    assert server.handle(frame("notifications/cancelled", [1], id=None)) is None


def test_handler_exception_is_internal_error_without_traceback():
    server = ready()

    def broken(server, params):
        raise KeyError("boom")
    server.handlers = dict(server.handlers)  # this server's own table, one more handler
    server.handlers["test/broken"] = broken
    err = error(server, "test/broken")
    assert err["code"] == -32603
    assert "Traceback" not in err["message"] and len(err["message"]) < 200


def test_stray_responses_are_ignored():
    server = ready()
    assert server.handle(b'{"jsonrpc": "2.0", "id": 99, "result": {}}') is None
    assert server.handle(b'{"jsonrpc": "2.0", "id": 98, "error": {"code": 1, "message": "x"}}') is None


def test_output_frames_never_contain_a_raw_newline():
    server = ready()
    res = result(server, "tools/call", {"name": "echo", "arguments": {"text": "two\nlines\r\n"}})
    assert res["content"][0]["text"] == "two\nlines\r\n"
    assert b"\n" not in dumps({"a": "x\ny", "b": ["\n"]})
    assert json.loads(dumps({"a": "x\ny"})) == {"a": "x\ny"}
