# initialize, version negotiation, capabilities, ping, and the rule "initialize first".
from tests.core.support import demo_server, error, frame, initialize, result
from tinymcp import Server, VERSIONS


def test_supported_versions_are_echoed():
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
        assert version in VERSIONS
        assert initialize(demo_server(), version)["protocolVersion"] == version


def test_unknown_version_gets_the_latest_as_counter_offer():
    assert initialize(demo_server(), "2099-01-01")["protocolVersion"] == "2025-11-25"
    assert initialize(demo_server(), "1.0")["protocolVersion"] == "2025-11-25"


def test_server_info_and_instructions():
    res = initialize(demo_server())
    assert res["serverInfo"] == {"name": "demo", "version": "1.2.3", "title": "Demo board"}
    assert res["instructions"] == "Be nice."


def test_server_title_is_left_out_for_clients_before_2025_06_18():
    res = initialize(demo_server(), "2025-03-26")
    assert res["serverInfo"] == {"name": "demo", "version": "1.2.3"}


def test_capabilities_declare_only_what_is_registered():
    caps = initialize(Server("bare", "0"))["capabilities"]
    assert caps == {"logging": {}}
    caps = initialize(demo_server())["capabilities"]
    assert caps == {"logging": {}, "tools": {"listChanged": True}}

    server = Server("r", "0")
    server.resource("x://a", "a")(lambda: "a")
    server.prompt("p", args={"who": "name"}, complete={"who": ("ann", "bob")})(lambda who: who)
    caps = initialize(server)["capabilities"]
    assert caps["resources"] == {"subscribe": True, "listChanged": True}
    assert caps["prompts"] == {"listChanged": True}
    assert caps["completions"] == {}
    assert "tools" not in caps


def test_ping_is_answered_before_initialize():
    server = demo_server()
    assert result(server, "ping") == {}


def test_requests_before_initialize_are_refused_and_then_served():
    server = demo_server()
    err = error(server, "tools/list")
    assert err["code"] == -32600 and "not initialized" in err["message"]
    initialize(server)
    assert len(result(server, "tools/list")["tools"]) == 3


def test_unknown_methods_stay_method_not_found_before_initialize():
    assert error(demo_server(), "no/such/method")["code"] == -32601


def test_a_bare_server_discover_is_refused_without_deciding_the_era():
    # server/discover belongs to 2026-07-28, whose requests must carry the per-request _meta
    # (-32602). A refused probe decides nothing: a client falling back to initialize is served.
    server = demo_server()
    assert error(server, "server/discover")["code"] == -32602
    assert initialize(server)["protocolVersion"] == "2025-11-25"


def test_initialize_again_starts_a_new_session():
    server = demo_server()
    initialize(server, "2025-03-26")
    server.handle(frame("logging/setLevel", {"level": "error"}))
    res = initialize(server, "2025-11-25")
    assert res["protocolVersion"] == "2025-11-25"
    assert server.session.log_level == 1
    assert "title" in res["serverInfo"]


def test_initialize_without_client_info_still_works():
    server = demo_server()
    res = result(server, "initialize", {"protocolVersion": "2025-06-18"})
    assert res["protocolVersion"] == "2025-06-18"
