# A confirmation step for destructive tools: without elicitation the first call answers with a
# summary and a one-time token that expires, the same call with the token acts; a wrong, reused,
# expired or misapplied token is an isError and does nothing. A client with form elicitation is
# asked within the call instead.
import json

from tests.core.support import FakeStream, frame, initialize, result
from tinymcp import Server
from tinymcp.channel import Channel, Lines
from tinymcp.confirm import PENDING, TOKEN, Confirmations
from tinymcp.schema import string


class Clock:
    def __init__(self, ms=1000):
        self.ms = ms

    def __call__(self):
        return self.ms


def board():
    server = Server("confirm", "0")
    server.clock = Clock()
    server.asks = Confirmations(server.clock)
    server.wiped = []

    @server.tool("wipe", "Wipes a log", inputs={"log": string(enum=("a", "b")), "confirm?": TOKEN},
                 outputs={"wiped?": string(), "confirm?": PENDING}, destructive=True, ctx=True)
    def wipe(ctx, log, confirm=None):
        pending = server.asks.check(ctx, ("wipe", log), confirm, "Wipe log " + log)
        if pending is not None:
            return pending
        server.wiped.append(log)
        return {"wiped": log}

    return server


def call(server, **args):
    return result(server, "tools/call", {"name": "wipe", "arguments": args})


def asked(server, log="a"):
    pending = call(server, log=log)["structuredContent"]["confirm"]
    assert server.wiped == []
    return pending


def refused(answer, words):
    assert answer.get("isError") is True, answer
    assert words in answer["content"][0]["text"], answer


def test_the_first_call_says_what_it_would_do_and_the_token_does_it_once():
    server = board()
    initialize(server)
    pending = asked(server)
    assert pending["summary"] == "Wipe log a" and pending["expires_s"] == 60
    assert len(pending["token"]) == 24
    assert call(server, log="a", confirm=pending["token"])["structuredContent"] == {"wiped": "a"}
    assert server.wiped == ["a"]
    refused(call(server, log="a", confirm=pending["token"]), "already used")
    assert server.wiped == ["a"]


def test_every_token_is_a_new_one():
    server = board()
    initialize(server)
    assert len(set([asked(server)["token"] for _ in range(4)])) == 4


def test_a_token_for_other_arguments_or_an_unknown_one_does_nothing():
    server = board()
    initialize(server)
    pending = asked(server, "a")
    refused(call(server, log="b", confirm=pending["token"]), "other arguments")
    refused(call(server, log="a", confirm="0123456789abcdef"), "unknown")
    refused(call(server, log="a", confirm="short"), "confirm")   # the schema's minimum length
    assert server.wiped == []
    call(server, log="a", confirm=pending["token"])  # still good for what it was given for
    assert server.wiped == ["a"]


def test_a_token_expires_after_a_minute():
    server = board()
    initialize(server)
    pending = asked(server)
    server.clock.ms += 60000
    refused(call(server, log="a", confirm=pending["token"]), "expired")
    assert server.wiped == []


def answered(server, answer):
    # A 2025-06-18 session with form elicitation: wipe(log="a"), the client answering with
    # `answer` ({"result": ...} or {"error": ...}) -> the stream.
    reply = json.dumps(dict({"jsonrpc": "2.0", "id": 1}, **answer)).encode()
    stream = FakeStream([
        frame("initialize", {"protocolVersion": "2025-06-18",
                             "capabilities": {"elicitation": {}}}, id=0) + b"\n",
        frame("tools/call", {"name": "wipe", "arguments": {"log": "a"}}, id=3) + b"\n",
        None, reply + b"\n"], size=1024)
    Channel(server, Lines(stream)).run()
    return stream


def test_a_client_with_form_elicitation_is_asked_instead():
    for answer, wiped in (({"action": "accept", "content": {"confirm": True}}, ["a"]),
                          ({"action": "accept", "content": {"confirm": False}}, []),
                          ({"action": "decline"}, [])):
        server = board()
        stream = answered(server, {"result": answer})
        ask = stream.sent[1]
        assert ask["method"] == "elicitation/create"
        assert ask["params"]["message"] == "Wipe log a. Go ahead?"
        assert ask["params"]["requestedSchema"]["required"] == ["confirm"]
        assert server.wiped == wiped
        done = stream.sent[2]["result"]
        if wiped:
            assert done["structuredContent"] == {"wiped": "a"}
        else:
            refused(done, "did not confirm")


def test_a_client_without_elicitation_gets_the_token_through_the_serve_loop_too():
    server = board()
    stream = FakeStream([
        frame("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}, id=0) + b"\n",
        frame("tools/call", {"name": "wipe", "arguments": {"log": "b"}}, id=3) + b"\n"],
        size=1024)
    Channel(server, Lines(stream)).run()
    assert [m.get("method") for m in stream.sent] == [None, None]
    assert stream.sent[1]["result"]["structuredContent"]["confirm"]["summary"] == "Wipe log b"


def test_a_client_that_cannot_be_asked_after_all_gets_the_token():
    # A bridge declares elicitation for all its hosts; one whose host lacks it says so as data.
    for error, pending in (({"code": -32601, "message": "the host does not support elicitation",
                             "data": {"requiredCapabilities": {"elicitation": {}}}}, True),
                           ({"code": -32603, "message": "something else"}, False)):
        server = board()
        done = answered(server, {"error": error}).sent[2]["result"]
        assert server.wiped == []
        if pending:
            assert done["structuredContent"]["confirm"]["summary"] == "Wipe log a"
        else:
            refused(done, "something else")
