# Server, Session, Call: what a client changes lives in its own Session, which the transport
# holds and enters; the request being handled is the session's one Call, reused.
from tests.core.support import demo_server, error, frame, initialize, notifications, result


def test_two_sessions_on_one_server_keep_their_own_state():
    server = demo_server()
    first = server.open_session()
    initialize(server, "2025-03-26")
    result(server, "logging/setLevel", {"level": "error"})
    second = server.open_session()
    assert server.session is second
    assert error(server, "tools/list")["code"] == -32600  # not initialized: a new client
    initialize(server, "2025-11-25")
    assert (first.version, second.version) == ("2025-03-26", "2025-11-25")
    assert first.log_level != second.log_level
    server.enter(first)
    assert result(server, "tools/list")["tools"][0]["name"] == "add"
    server.log("warning", "not for this client")   # below the level the first client set
    assert notifications(server) == []
    server.enter(second)
    server.log("warning", "for this one")
    assert notifications(server, "notifications/message")[0]["params"]["data"] == "for this one"


def test_handle_serves_a_session_of_its_own_opened_by_its_first_frame():
    server = demo_server()
    assert server.session is None  # built, no client yet: the board holds no session
    initialize(server)
    own = server.session
    assert own.initialized and own.version == "2025-11-25"
    assert server.opened == 1
    result(server, "ping")
    assert server.session is own  # the frames after it: the same session


def test_each_request_reuses_the_sessions_one_call():
    server = demo_server()
    initialize(server)
    call = server.session.call
    seen = []

    @server.tool("who", "The id of the request that runs it.", ctx=True)
    def who(ctx):
        seen.append((ctx.request_id, server.session.call))
        return "ok"
    result(server, "tools/call", {"name": "who", "arguments": {}}, id=7)
    result(server, "tools/call", {"name": "who", "arguments": {}}, id=8)
    assert seen == [(7, call), (8, call)]
    assert call.id is None and not call.busy   # reset when the request ended


def test_a_new_initialize_on_the_same_link_starts_afresh_in_the_same_session():
    server = demo_server()

    @server.resource("sensor://x", "x", "A reading")
    def x():
        return "1"
    initialize(server, "2025-03-26")
    session = server.session
    result(server, "resources/subscribe", {"uri": "sensor://x"})
    assert "sensor://x" in session.subscriptions
    initialize(server, "2025-06-18")
    assert session.subscriptions == {}
    assert server.session is session and session.version == "2025-06-18"
    assert server.handle(frame("ping")) is not None


def test_a_session_keeps_no_copy_of_its_initialize_answer():
    # Asked once a session: kept encoded it would be held for the session's life (docs/ram.md).
    server = demo_server()
    first = initialize(server)
    assert "initialize" not in server.session.cache
    assert initialize(server) == first  # a second one is made again, the same
