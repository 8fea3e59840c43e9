# A sim board through a real Mosquitto, on both runtimes, checked by a client written from EMQX's
# "MCP over MQTT" specification: discovery, initialize, tools, sessions, the will, reconnecting.
import json
import time

import pytest

from tests.mqtt.conftest import RUNTIMES, Broker, SpecClient, bench_tools

SERVER_PROPS = {"MCP-COMPONENT-TYPE", "MCP-MQTT-CLIENT-ID"}


@pytest.fixture(params=RUNTIMES)
def runtime(request):
    return request.param


def _tool_text(result):
    return json.loads(result["result"]["content"][0]["text"])


def test_a_client_discovers_the_board_initializes_and_calls_a_tool(broker, boards, spec_clients,
                                                                   runtime):
    board = boards(runtime, broker.url, "sim-" + runtime)
    client = spec_clients("spec-a-" + runtime)
    presence, name = client.discover(board.id)
    assert name == "tinymcp/sim"  # tinymcp/<board name> by default
    online = presence.json()
    assert online["method"] == "notifications/server/online"
    assert online["params"]["server_name"] == name
    assert "temperature" in online["params"]["description"]

    init = client.initialize(board.id, name)
    assert init["result"]["protocolVersion"] == "2025-06-18"
    assert init["result"]["serverInfo"]["name"] == "tinymcp-sim"
    assert "tools" in init["result"]["capabilities"]

    tools = client.request("tools/list")["result"]["tools"]
    assert "read_temperature" in [t["name"] for t in tools]
    reading = client.request("tools/call", {"name": "read_temperature", "arguments": {}})
    assert 15 < reading["result"]["structuredContent"]["celsius"] < 30

    # Every publish of the board carries both user properties naming it.
    mine = [m for m in client.messages if m.users.get("MCP-MQTT-CLIENT-ID") == board.id]
    assert len(mine) >= 4
    for m in mine:
        assert SERVER_PROPS <= set(m.users), m.topic
        assert m.users["MCP-COMPONENT-TYPE"] == "mcp-server"


def test_its_presence_is_retained_for_a_client_that_comes_later(broker, boards, spec_clients,
                                                                runtime):
    board = boards(runtime, broker.url, "late-" + runtime)
    spec_clients("early-" + runtime).discover(board.id)  # it is online now
    later = spec_clients("later-" + runtime)
    presence, _ = later.discover(board.id)
    assert presence.retain


def test_a_malformed_payload_gets_a_json_rpc_error_and_the_board_serves_on(
        broker, boards, spec_clients, runtime):
    board = boards(runtime, broker.url, "hostile-" + runtime)
    client = spec_clients("hostile-client-" + runtime)
    _, name = client.discover(board.id)
    client.initialize(board.id, name)
    for junk in (b"{not json", b"\xff\xfe", b"[1, 2]", b""):
        client.publish(client.rpc, junk)
    errors = []
    for code in (-32700, -32600):
        errors.append(client.wait(lambda m: m.topic == client.rpc and m.payload
                                  and m.json().get("error", {}).get("code") == code).json())
    assert errors[0]["id"] is None
    # Nobody to answer (no MCP-MQTT-CLIENT-ID on the control topic), and a message longer than
    # the board's packet buffer: both dropped, and said on its console.
    client.client.publish("$mcp-server/%s/%s" % (board.id, name), b'{"jsonrpc":"2.0","id":7,'
                          b'"method":"ping"}').wait_for_publish(10)
    client.publish(client.rpc, {"jsonrpc": "2.0", "id": 8, "method": "ping",
                                "params": {"pad": "x" * 20000}})
    assert client.request("ping")["result"] == {}
    reading = client.request("tools/call", {"name": "read_temperature", "arguments": {}})
    assert "celsius" in _tool_text(reading)
    said = board.stderr()
    assert "a message on the control topic without a valid MCP-MQTT-CLIENT-ID" in said
    assert "a message longer than 8192 bytes was dropped" in said


def test_two_clients_at_once_each_have_their_own_session(broker, boards, spec_clients, runtime):
    board = boards(runtime, broker.url, "pair-" + runtime)
    a = spec_clients("pair-a-" + runtime)
    b = spec_clients("pair-b-" + runtime)
    _, name = a.discover(board.id)
    assert a.initialize(board.id, name, "2024-11-05")["result"]["protocolVersion"] == "2024-11-05"
    # b has not initialized: its session is its own, so it is refused where a is served.
    b.rpc = "$mcp-rpc/%s/%s/%s" % (b.id, board.id, name)
    b.subscribe(b.rpc, no_local=True)
    refused = b.request("tools/list")
    assert refused["error"]["code"] == -32600
    assert "initialize" in refused["error"]["message"]
    assert "tools" in a.request("tools/list")["result"]
    assert b.initialize(board.id, name, "2025-06-18")["result"]["protocolVersion"] == "2025-06-18"
    # Each keeps the version it chose: 2024-11-05 has no tool titles, 2025-06-18 has them.
    assert "title" not in a.request("tools/list")["result"]["tools"][0]
    assert "title" in b.request("tools/list")["result"]["tools"][0]


def test_a_client_that_says_disconnected_loses_its_session(broker, boards, spec_clients, runtime):
    board = boards(runtime, broker.url, "bye-" + runtime)
    client = spec_clients("bye-client-" + runtime)
    _, name = client.discover(board.id)
    client.initialize(board.id, name)
    client.publish("$mcp-client/presence/" + client.id,
                   {"jsonrpc": "2.0", "method": "notifications/disconnected"})
    # The board ends the session: the same client id is a stranger again.
    deadline = time.monotonic() + 10
    while True:
        answer = client.request("tools/list")
        if "error" in answer or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert answer["error"]["code"] == -32600


def test_the_oldest_of_too_many_sessions_is_told_it_is_disconnected(broker, boards, spec_clients):
    board = boards("python", broker.url, "crowd")
    clients = [spec_clients("crowd-%d" % i) for i in range(5)]
    _, name = clients[0].discover(board.id)
    for c in clients:
        c.initialize(board.id, name)
    gone = clients[0].wait(lambda m: m.topic == clients[0].rpc and m.payload
                           and m.json().get("method") == "notifications/disconnected")
    assert gone.users["MCP-MQTT-CLIENT-ID"] == board.id
    for c in clients[1:]:
        assert "tools" in c.request("tools/list")["result"]


def test_a_long_tool_runs_in_the_boards_idle_time_as_on_a_serial_line(broker, boards,
                                                                      spec_clients, runtime):
    # One message loop serves the byte stream and MQTT: a generator tool is stepped between
    # messages here too, and the board answers other requests meanwhile.
    board = boards(runtime, broker.url, "long-" + runtime)
    client = spec_clients("long-client-" + runtime)
    _, name = client.discover(board.id)
    client.initialize(board.id, name)
    client.publish(client.rpc, {"jsonrpc": "2.0", "id": 900, "method": "tools/call",
                                "params": {"name": "sample", "arguments": {
                                    "quantity": "temperature", "seconds": 1, "every_ms": 100}}})
    assert client.request("ping")["result"] == {}
    sampled = client.response(900)["result"]["structuredContent"]
    assert sampled["count"] >= 2 and sampled["min"] <= sampled["mean"] <= sampled["max"]


def test_resource_updates_go_to_the_capability_topic(broker, boards, spec_clients, runtime):
    board = boards(runtime, broker.url, "cap-" + runtime)
    client = spec_clients("cap-client-" + runtime)
    _, name = client.discover(board.id)
    client.initialize(board.id, name)
    assert client.request("resources/subscribe", {"uri": "sensor://alerts"})["result"] == {}
    client.request("tools/call", {"name": "set_alert",
                                  "arguments": {"quantity": "temperature", "above": 100}})
    update = client.wait(lambda m: m.topic == "$mcp-server/capability/%s/%s" % (board.id, name))
    assert update.json() == {"jsonrpc": "2.0", "method": "notifications/resources/updated",
                             "params": {"uri": "sensor://alerts"}}
    assert update.users["MCP-MQTT-CLIENT-ID"] == board.id


def test_a_killed_board_is_withdrawn_by_its_will(broker, boards, spec_clients, runtime):
    keepalive = 2
    board = boards(runtime, broker.url, "doomed-" + runtime, "--keepalive", str(keepalive))
    client = spec_clients("watcher-" + runtime)
    presence, name = client.discover(board.id)
    killed = time.monotonic()
    board.kill()
    cleared = client.wait(lambda m: m.topic == presence.topic and not m.payload,
                          1.5 * keepalive)
    print("\npresence cleared %.2f s after SIGKILL (%s, keep-alive %d s)"
          % (cleared.at - killed, runtime, keepalive))
    assert cleared.users.get("MCP-MQTT-CLIENT-ID") == board.id


def test_a_board_that_stops_clears_its_presence_itself(broker, boards, spec_clients):
    board = boards("python", broker.url, "polite")
    client = spec_clients("polite-watcher")
    presence, _ = client.discover(board.id)
    board.proc.send_signal(2)  # SIGINT: KeyboardInterrupt, the board leaves on purpose
    client.wait(lambda m: m.topic == presence.topic and not m.payload)
    assert board.proc.wait(10) == 0


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_board_comes_back_after_a_broker_restart(boards, runtime):
    broker = Broker()
    try:
        board = boards(runtime, broker.url, "phoenix-" + runtime, "--keepalive", "2")
        first = SpecClient(broker.port, "before-" + runtime)
        first.discover(board.id)
        first.client.loop_stop()
        broker.restart()  # no persistence: the retained presence is gone with it
        deadline = time.monotonic() + 20
        while "back on the MQTT broker" not in board.stderr() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "is out of reach" in board.stderr()
        client = SpecClient(broker.port, "after-" + runtime)  # after it: the retained presence
        presence, name = client.discover(board.id)
        assert presence.retain
        client.initialize(board.id, name)
        assert "celsius" in _tool_text(client.request("tools/call", {"name": "read_temperature",
                                                                      "arguments": {}}))
        client.close()
    finally:
        broker.stop()


def test_a_wrong_password_is_said_in_one_line_and_retried(boards):
    broker = Broker(users={"board": "right-password"})
    try:
        wrong = boards("python", "mqtt://board:wrong@127.0.0.1:%d" % broker.port, "locked")
        right = boards("python", "mqtt://board:right-password@127.0.0.1:%d" % broker.port,
                       "unlocked")
        deadline = time.monotonic() + 10
        while "unlocked" not in right.stderr() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(3.5)  # long enough for the first retries (after 1 s, then 2 s)
        lines = [line for line in wrong.stderr().splitlines() if line]
        # Mosquitto says "not authorized" (0x87); other brokers say "bad user name or password".
        assert len(lines) == 1, lines
        assert lines[0].startswith("tinymcp: the broker refused the connection: ")
        assert "(CONNACK 0x86)" in lines[0] or "(CONNACK 0x87)" in lines[0]
        assert lines[0].endswith("; trying again (every 30 s at most)")
        assert wrong.proc.poll() is None  # still trying, with backoff
        assert "on the MQTT broker 127.0.0.1:%d as unlocked" % broker.port in right.stderr()
    finally:
        broker.stop()


def test_a_client_whose_session_ends_leaves_its_leased_led_off_and_others_served(
        broker, boards, spec_clients, runtime):
    board = boards(runtime, broker.url, "lease-" + runtime)
    owner = spec_clients("lease-owner-" + runtime)
    other = spec_clients("lease-other-" + runtime)
    _, name = owner.discover(board.id)
    owner.initialize(board.id, name)
    other.initialize(board.id, name)

    def photodiode():   # ADC channel 2 sees the LED: 2.4 V lit, 0.35 V dark
        return _tool_text(other.request("tools/call", {"name": "read_adc",
                                                       "arguments": {"channel": 2}}))["volts"]

    lit = owner.request("tools/call", {"name": "set_led", "arguments": {"on": True,
                                                                        "lease_s": 30}})
    assert _tool_text(lit) == {"on": True, "lease_s": 30}
    assert photodiode() > 2
    owner.publish("$mcp-client/presence/" + owner.id,
                  {"jsonrpc": "2.0", "method": "notifications/disconnected"})
    deadline = time.monotonic() + 5
    while photodiode() > 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert photodiode() < 1


def test_a_message_not_from_the_client_its_topic_names_is_dropped(broker, boards, spec_clients,
                                                                  runtime):
    # Issue 26: a rogue on the broker says "disconnected" on the owner's presence topic (with
    # no sender property, and as itself) and on the owner's RPC topic, and switches the LED off
    # there: the board takes none of it, the owner's session and its leased LED stay.
    board = boards(runtime, broker.url, "guarded-" + runtime)
    owner = spec_clients("owner-" + runtime)
    rogue = spec_clients("rogue-" + runtime)
    _, name = owner.discover(board.id)
    owner.initialize(board.id, name)
    rogue.initialize(board.id, name)

    def photodiode():   # ADC channel 2 sees the LED: 2.4 V lit, 0.35 V dark
        return _tool_text(rogue.request("tools/call", {"name": "read_adc",
                                                       "arguments": {"channel": 2}}))["volts"]

    owner.request("tools/call", {"name": "set_led", "arguments": {"on": True, "lease_s": 30}})
    assert photodiode() > 2
    bye = {"jsonrpc": "2.0", "method": "notifications/disconnected"}
    rogue.client.publish("$mcp-client/presence/" + owner.id,
                         json.dumps(bye)).wait_for_publish(10)   # no sender property
    rogue.publish("$mcp-client/presence/" + owner.id, bye)
    rogue.publish(owner.rpc, bye)
    rogue.publish(owner.rpc, {"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                              "params": {"name": "set_led", "arguments": {"on": False}}})
    assert "result" in rogue.request("ping")   # the board has read all of it by now
    assert photodiode() > 2
    assert "tools" in owner.request("tools/list")["result"]
    said = [line for line in board.stderr().splitlines() if "on the topics of client" in line]
    assert said == ["tinymcp: a message on the topics of client %s from %s: dropped (and any "
                    "more such, unsaid)" % (owner.id, None)], said


def _fitted(payloads, most):
    # Each page's answer fits the packet limit (with the head the board puts before it); their
    # tools, all of them, once each.
    names = []
    for payload in payloads:
        assert len(payload) <= most, len(payload)
        names += [tool["name"] for tool in json.loads(payload)["result"]["tools"]]
    assert len(names) == len(set(names))
    return set(names)


def test_a_board_with_many_tools_pages_its_list_to_fit_its_mqtt_messages(broker, boards,
                                                                          spec_clients, runtime):
    # Issue 30: the sim board with its bench on has a tools/list of 14 KB, longer than the
    # board's MQTT output buffer (8 KiB): it pages the list (nextCursor) to fit.
    board = boards(runtime, broker.url, "many-" + runtime, "--bench")
    client = spec_clients("many-client-" + runtime)
    _, name = client.discover(board.id)
    client.initialize(board.id, name)
    payloads = client.pages()
    assert len(payloads) >= 2
    assert _fitted(payloads, 8192) == bench_tools()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_board_keeps_to_the_brokers_maximum_packet_size(boards, runtime):
    # The broker's CONNACK says the largest packet it takes (Mosquitto's max_packet_size): the
    # board's pages fit it (a longer packet and the broker would cut the board off).
    broker = Broker(config=["max_packet_size 2048"])
    try:
        board = boards(runtime, broker.url, "small-" + runtime)
        client = SpecClient(broker.port, "small-client-" + runtime)
        _, name = client.discover(board.id)
        client.initialize(board.id, name)
        payloads = client.pages()
        assert len(payloads) >= 3   # 4.6 KB of tools
        assert "read_temperature" in _fitted(payloads, 2048 - 100)
        assert client.request("ping")["result"] == {}
        assert "is out of reach" not in board.stderr()   # never cut off
        client.close()
    finally:
        broker.stop()


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_an_answer_longer_than_the_broker_takes_is_an_error_the_client_reads(boards, runtime):
    # A bench tool's entry alone (up to 1.4 KB) does not fit a 1 KiB packet: that page's answer
    # is a JSON-RPC error saying so, in JSON the client can read, and the board serves on.
    broker = Broker(config=["max_packet_size 1024"])
    try:
        board = boards(runtime, broker.url, "tight-" + runtime, "--bench")
        client = SpecClient(broker.port, "tight-client-" + runtime)
        _, name = client.discover(board.id)
        client.initialize(board.id, name)
        failed = None
        cursor = None
        for _ in range(len(bench_tools())):
            answer = client.request("tools/list", {"cursor": cursor} if cursor else {})
            if "error" in answer:
                failed = answer
                break
            cursor = answer["result"]["nextCursor"]
        assert failed is not None
        error = failed["error"]
        assert error["code"] == -32603
        assert error["data"]["reason"] == "answer-too-long"
        assert 800 < error["data"]["limit"] < 1024
        assert client.request("ping")["result"] == {}
        assert "is out of reach" not in board.stderr()
        client.close()
    finally:
        broker.stop()


def test_an_answer_longer_than_the_boards_buffer_is_an_error_never_silence(broker, boards,
                                                                          spec_clients, runtime):
    # An answer that carries a 7.6 KB id (every answer carries its request's) and a reading
    # outgrows the board's 8 KiB MQTT buffer, where the request fitted: the client gets an error
    # it can read, not nothing. (A long tool name did it once: an error no longer quotes one.)
    board = boards(runtime, broker.url, "echo-" + runtime)
    client = spec_clients("echo-client-" + runtime)
    _, name = client.discover(board.id)
    client.initialize(board.id, name)
    rid = "i" * 7600
    client.publish(client.rpc, {"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                                "params": {"name": "read_temperature", "arguments": {}}})
    answer = client.response(rid)
    assert answer["error"]["code"] == -32603
    assert answer["error"]["data"] == {"reason": "answer-too-long", "limit": 7744}
    assert client.request("ping")["result"] == {}
