# Streamable HTTP: the checks on every request, sessions, and several hosts sharing one board.
import asyncio
import json
import subprocess

import httpx2 as httpx
import pytest
from mcp import Client

from tests.bridge.conftest import BRIDGE, Bridge, clean_env
from tests.free_port import free_port

ACCEPT = "application/json, text/event-stream"
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "pytest", "version": "0"}}}


def post(url, body, **headers):
    headers.setdefault("accept", ACCEPT)
    headers.setdefault("content-type", "application/json")
    return httpx.post(url, content=json.dumps(body), headers=headers, timeout=20)


def sse_messages(response):
    if response.headers.get("content-type", "").startswith("application/json"):
        return [response.json()]
    return [json.loads(line[5:]) for line in response.text.splitlines()
            if line.startswith("data:") and line[5:].strip()]


def open_session(url, **headers):
    response = post(url, INIT, **headers)
    assert response.status_code == 200, response.text
    sid = response.headers["mcp-session-id"]
    assert sse_messages(response)[-1]["result"]["protocolVersion"] == "2025-11-25"
    done = post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                **{"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}, **headers)
    assert done.status_code == 202
    return sid


def test_foreign_origin_and_host_are_refused(http_bridge):
    url, bridge = http_bridge()
    assert post(url, INIT, origin="http://evil.example").status_code == 403
    assert post(url, INIT, origin="http://localhost.evil.example:80").status_code == 403
    assert 400 <= post(url, INIT, host="evil.example").status_code < 500
    port = url.split(":")[2].split("/")[0]
    assert post(url, INIT, origin="http://localhost:" + port).status_code == 200


def test_wrong_accept_wrong_version_unknown_session_are_refused(http_bridge):
    url, bridge = http_bridge()
    assert post(url, INIT, accept="text/html").status_code == 406
    assert post(url, INIT, **{"content-type": "text/plain"}).status_code in (400, 415)
    sid = open_session(url)
    headers = {"mcp-session-id": sid}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert post(url, ping, **headers, **{"mcp-protocol-version": "1999-01-01"}).status_code == 400
    assert post(url, ping, **{"mcp-session-id": "nope"}).status_code == 404
    assert post(url, ping).status_code == 400   # no session id, not an initialize
    get = httpx.get(url, headers={"accept": "application/json", **headers}, timeout=10)
    assert get.status_code == 406
    assert post(url, ping, **headers).status_code == 200
    assert httpx.delete(url, headers=headers, timeout=10).status_code == 200
    assert post(url, ping, **headers).status_code == 404


def test_token_is_required_when_configured(http_bridge):
    url, bridge = http_bridge("--token", "s3cret")
    assert post(url, INIT).status_code == 401
    assert post(url, INIT, authorization="Bearer wrong").status_code == 401
    sid = open_session(url, authorization="Bearer s3cret")
    assert sid


def test_non_loopback_bind_without_token_is_refused():
    done = subprocess.run(BRIDGE + ["--sim", "--http", "0.0.0.0:%d" % free_port()],
                          env=clean_env(), capture_output=True, timeout=30,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and "token" in lines[0], lines
    assert done.stdout == b""


def test_non_loopback_bind_with_token_from_the_environment():
    port = free_port()
    bridge = Bridge(["--sim", "--http", "0.0.0.0:%d" % port], stdin=subprocess.DEVNULL,
                    env=clean_env(TINYMCP_BRIDGE_TOKEN="t0ken"))
    try:
        bridge.wait_stderr("serving http://0.0.0.0")
        url = "http://127.0.0.1:%d/mcp" % port
        assert post(url, INIT).status_code == 401
        assert post(url, INIT, origin="http://evil.example",
                    authorization="Bearer t0ken").status_code == 403
        assert open_session(url, authorization="Bearer t0ken")
    finally:
        assert bridge.stop() == 0


def test_sessions_interleave_and_ids_never_cross(http_bridge):
    # Three SDK clients, each numbering its requests from 0, call different ADC channels at
    # the same time through the one board; every answer must belong to its own request.
    url, bridge = http_bridge()
    expected = {1: 0.825, 3: 1.6}

    async def worker(channel, rounds):
        async with Client(url, mode="auto") as client:
            for _ in range(rounds):
                result = await client.call_tool("read_adc", {"channel": channel})
                assert abs(result.structured_content["volts"] - expected[channel]) < 0.01, \
                    (channel, result)
        return rounds

    async def main():
        return await asyncio.gather(worker(1, 25), worker(3, 25), worker(1, 25))
    assert asyncio.run(main()) == [25, 25, 25]


def test_each_session_has_its_own_subscriptions(http_bridge):
    url, bridge = http_bridge()

    class Seen:
        def __init__(self):
            self.updates = 0

        async def __call__(self, message):
            root = getattr(message, "root", message)
            if getattr(root, "method", None) == "notifications/resources/updated":
                self.updates += 1

    subscriber, bystander = Seen(), Seen()

    async def main():
        async with Client(url, mode="legacy", message_handler=subscriber) as a, \
                Client(url, mode="legacy", message_handler=bystander) as b:
            with pytest.warns(Warning):
                await a.subscribe_resource("sensor://temperature")
            for _ in range(300):
                if subscriber.updates >= 2:
                    break
                await b.call_tool("read_temperature", {})
                await asyncio.sleep(0.05)
            # b unsubscribing from what it never subscribed must not stop a's updates.
            with pytest.warns(Warning):
                await b.unsubscribe_resource("sensor://temperature")
            before = subscriber.updates
            for _ in range(300):
                if subscriber.updates > before:
                    break
                await asyncio.sleep(0.05)
            return subscriber.updates > before
    assert asyncio.run(main())
    assert subscriber.updates >= 3
    assert bystander.updates == 0
