# Per-board identity with mutual TLS (issue 26): Mosquitto takes each client's certificate CN as
# its login and client id (require_certificate, use_identity_as_username,
# use_username_as_clientid) and docs/fleet.md's ACL ties topics to it. A board without a
# certificate is refused; a board with its own certificate cannot speak for another, whatever
# it claims: on both runtimes, with the bridge logged in by its own certificate.
import asyncio
import re
import shutil
import time

import pytest
from mcp import Client

from tests.bridge.conftest import clean_env
from tests.mqtt.conftest import RUNTIMES, Broker
from tests.mqtt.test_bridge import READ, _fleet_block, board_tools, celsius, tools_when
from tests.mqtt.test_trust import FORGED, Rogue
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)


@pytest.fixture
def site():
    broker = Broker(mtls=True, acl=_fleet_block("`/etc/mosquitto/acl`"))
    yield broker
    broker.stop()
    shutil.rmtree(broker.dir, ignore_errors=True)


def _wait_for(board, text, timeout=20):
    end = time.monotonic() + timeout
    while text not in board.stderr():
        assert time.monotonic() < end and board.proc.poll() is None, board.stderr()
        time.sleep(0.1)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_board_is_its_certificate_and_nothing_more(site, boards, bridges, runtime):
    def tls(cn):
        crt, key = site.certificate(cn)
        return ["--mqtt-cert", crt, "--mqtt-key", key, "--mqtt-ca", site.ca]
    site_a = ["--name", "site-a/sim"]
    boards(runtime, site.url, "b1", *site_a, *tls("b1"))
    # No certificate: the broker ends the TLS handshake, the board says so and retries.
    anonymous = boards(runtime, site.url, "b3", *site_a, "--mqtt-ca", site.ca)
    # Its own certificate (CN rogue), and the claim to be b1: the broker knows it as "rogue",
    # its presence for b1 is denied, it never hears b1's control topic.
    impostor = boards(runtime, site.url, "b1", *site_a, *tls("rogue"))
    crt, key = site.certificate("bridge-site-a")
    url, bridge = bridges("--mqtt", site.url, "--mqtt-filter", "site-a/#",
                          env=clean_env(TINYMCP_MQTT_CERT=crt, TINYMCP_MQTT_KEY=key,
                                        TINYMCP_MQTT_CA=site.ca))
    client_id = bridge.wait_stderr(r"as (tinymcp-bridge-[0-9a-f]+)").group(1)
    crt, key = site.certificate("paho-rogue")
    rogue = Rogue(site.port, "paho-rogue", tls=(site.ca, crt, key))
    try:
        async def main():
            async with Client(url, mode="legacy") as client:
                await tools_when(client, lambda n: "sim-b1_" + READ in n)
                _wait_for(impostor, "on the MQTT broker")
                _wait_for(anonymous, "is out of reach")
                rogue.publish("$mcp-server/presence/b1/site-a/sim", b"", sender="b1",
                              retain=True)
                rogue.publish("$mcp-rpc/%s/b1/site-a/sim" % client_id, {
                    "jsonrpc": "2.0", "method": "notifications/tools/list_changed"}, sender="b1")
                assert rogue.denied == ["Not authorized"] * 2
                for _ in range(5):
                    assert 15 < await celsius(client, "sim-b1") < FORGED["mean"]
                labels = {n.split("_")[0] for n in await board_tools(client)}
                assert labels == {"sim-b1"}, labels
        asyncio.run(main())
    finally:
        rogue.close()
    said = bridge.stderr()
    assert said.count("board b1/site-a/sim is online") == 1, said
    assert "b3/" not in said and "went offline" not in said and "not serving" not in said
    assert "on the MQTT broker 127.0.0.1:%d as b3" % site.port not in anonymous.stderr()
    assert re.search(r"is out of reach \(.+\); trying again", anonymous.stderr())
