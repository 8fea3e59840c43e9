# The bridge's behaviours that ride on the board link, with the link in CBOR mode: REPL noise
# around frames, progress, logging, cancellation after a timeout, sampling from the board.
from tests.bridge.conftest import TESTBOARD, line_client  # noqa: F401  (the fixture)

CBOR = ("--sim", TESTBOARD, "--link", "cbor", "--log-level", "info")


def test_noise_around_frames_and_a_frame_behind_a_half_line(line_client):  # noqa: F811
    client = line_client(*CBOR)
    client.initialize()
    reply = client.call("chatty")
    assert reply["result"]["structuredContent"] == {"ok": True}, reply
    assert "result" in client.call("read_temperature")
    assert not client.noise
    assert "board link: CBOR frames" in client.stderr()


def test_progress_and_logging_reach_the_host(line_client):  # noqa: F811
    client = line_client(*CBOR)
    client.initialize()
    reply = client.request("tools/call", {"name": "slow", "arguments": {"seconds": 0.5},
                                          "_meta": {"progressToken": "tok"}})
    assert reply["result"]["structuredContent"] == {"slept": 0.5}
    progress = [n["params"] for n in client.notes if n["method"] == "notifications/progress"]
    assert progress and all(p["progressToken"] == "tok" for p in progress), progress
    client.call("shout")
    logs = [n["params"] for n in client.notes if n["method"] == "notifications/message"]
    assert logs and logs[-1]["data"] == "the board is shouting"


def test_timeout_cancels_on_the_board_over_cbor(line_client):  # noqa: F811
    client = line_client(*CBOR + ("--timeout", "1"))
    client.initialize()
    reply = client.call("slow", seconds=30)
    assert reply["error"]["code"] == -32001 and reply["error"]["data"]["bridge"] == "timeout"
    assert "result" in client.call("read_temperature")


def test_sampling_request_from_the_board_over_cbor(line_client):  # noqa: F811
    client = line_client(*CBOR)
    reply = client.request("initialize", {"protocolVersion": "2025-11-25",
                                          "capabilities": {"sampling": {}},
                                          "clientInfo": {"name": "pytest", "version": "0"}})
    assert "result" in reply
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    rid = client.start("tools/call", {"name": "ask", "arguments": {}})
    asked = None
    for _ in range(200):
        asked = next((n for n in client.notes if n.get("method") == "sampling/createMessage"), None)
        if asked is not None:
            break
        try:
            client.wait(-1, timeout=0.1)  # collects notes and requests while we wait
        except TimeoutError:
            pass
    assert asked is not None, client.notes
    client.send({"jsonrpc": "2.0", "id": asked["id"],
                 "result": {"role": "assistant", "model": "m",
                            "content": {"type": "text", "text": "four"}}})
    reply = client.wait(rid)
    assert reply["result"]["structuredContent"] == {"answer": "four"}, reply


def test_a_board_deployed_without_cborlink_offers_no_cbor_and_speaks_json(line_client):  # noqa: F811
    import os
    board = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nocborboard.py")
    client = line_client("--sim", board, "--link", "auto", "--log-level", "info")
    client.initialize()
    reply = client.call("read_adc", channel=1, timeout=30)
    assert set(reply["result"]["structuredContent"]) == {"raw", "volts", "units", "age_ms"}, reply
    said = client.stderr()
    assert "board link: CBOR" not in said and "cannot read CBOR frames" not in said, said


def test_an_old_board_offering_cbor_without_cborlink_falls_back_to_json(line_client, monkeypatch):  # noqa: F811
    import os
    monkeypatch.setenv("OLD", "1")
    board = os.path.join(os.path.dirname(os.path.abspath(__file__)), "nocborboard.py")
    client = line_client("--sim", board, "--link", "auto", "--log-level", "info")
    client.initialize()
    for _ in range(3):
        reply = client.call("read_adc", channel=1, timeout=30)
        if "result" in reply:
            break
    assert set(reply["result"]["structuredContent"]) == {"raw", "volts", "units", "age_ms"}, reply
    assert "cannot read CBOR frames" in client.stderr()
    assert "result" in client.call("read_temperature")
