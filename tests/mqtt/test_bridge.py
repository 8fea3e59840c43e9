# tinymcp-bridge --mqtt: boards behind a real Mosquitto, found by their retained presence and
# served as labelled boards to the official SDK client; withdrawn when their will fires, back
# after a broker restart; several bridges on one broker; broker auth and TLS; hostile "boards".
import asyncio
import json
import re
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import REPO, Bridge, bridge_script, clean_env
from tests.mqtt.conftest import RUNTIMES, Broker, ListChanged, bench_tools
from tests.free_port import free_port
from tests.windows_shim import SHIM_ENV
from tinymcp.host.bridge.routes import LABEL
from tinymcp.host.bridge.mqtt import label_for
from tinymcp.host.lineclient import LineClient

READ = "read_temperature"
WAIT = "wait_for_event"   # the bridge's own tool, across its boards


async def board_tools(client):
    # The boards' tools the host is shown: all but the bridge's own wait_for_event, which is
    # there with or without boards.
    names = {t.name for t in (await client.list_tools()).tools}
    assert WAIT in names
    return names - {WAIT}


async def tools_when(client, wanted, timeout=30.0):
    # The tool names once wanted(names) holds, asked again as boards come and go.
    with anyio.fail_after(timeout):
        while True:
            names = await board_tools(client)
            if wanted(names):
                return names
            await anyio.sleep(0.2)


async def celsius(client, label):
    result = await client.call_tool("%s_%s" % (label, READ), {})
    assert not result.is_error, result
    return result.structured_content["celsius"]


@pytest.mark.parametrize("as_os", ["posix", "windows"])
def test_both_runtimes_boards_are_served_as_labelled_boards(broker, boards, bridges, monkeypatch,
                                                            as_os):
    # The second run: the bridge under the Windows shim (tests/windows_shim).
    if as_os == "windows":
        monkeypatch.setenv(SHIM_ENV, "windows")
    boards("python", broker.url, "sim-python")
    boards("micropython", broker.url, "sim-micropython")
    url, bridge = bridges("--mqtt", broker.url, "--mqtt-insecure", env=clean_env())

    async def main():
        async with Client(url, mode="legacy") as client:
            names = await tools_when(client, lambda n: {"sim-python_" + READ,
                                                        "sim-micropython_" + READ} <= n)
            assert all(n.startswith(("sim-python_", "sim-micropython_")) for n in names)
            for label in ("sim-python", "sim-micropython"):
                assert 15 < await celsius(client, label) < 30
    asyncio.run(main())
    assert "is online on %s" % broker.url in bridge.stderr()
    with urllib.request.urlopen(url.replace("/mcp", "/dashboard/data"), timeout=10) as page:
        shown = page.read().decode()
    assert '"sim-python"' in shown and '"sim-micropython"' in shown   # the dashboard's boards


def test_over_stdio_too(broker, boards):
    boards("micropython", broker.url, "stdio-mp")
    params = StdioServerParameters(command=bridge_script(),
                                   args=["--mqtt", broker.url, "--mqtt-insecure"],
                                   cwd=REPO, env=clean_env())

    async def main():
        async with Client(params, mode="legacy") as client:
            await tools_when(client, lambda n: "sim-stdio-mp_" + READ in n)
            assert 15 < await celsius(client, "sim-stdio-mp") < 30
    asyncio.run(main())


def test_resource_updates_come_from_the_capability_topic(broker, boards, bridges):
    boards("micropython", broker.url, "cap")
    url, _ = bridges("--mqtt", broker.url, "--mqtt-insecure")
    updates = []

    async def on_message(message):
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            updates.append(str(root.params.uri))

    async def main():
        async with Client(url, mode="legacy", message_handler=on_message) as client:
            await tools_when(client, lambda n: "sim-cap_" + READ in n)
            with pytest.warns(Warning):   # the SDK deprecates it: gone in 2026-07-28
                await client.subscribe_resource("sim-cap+sensor://alerts")
            await client.call_tool("sim-cap_set_alert", {"quantity": "temperature", "above": 100})
            with anyio.fail_after(20):
                while not updates:
                    await anyio.sleep(0.1)
            assert updates[0] == "sim-cap+sensor://alerts"
    asyncio.run(main())


def test_mixed_with_a_sim_board_and_a_filter_that_selects_one(broker, boards, bridges):
    boards("python", broker.url, "k1", "--name", "tinymcp/kitchen")
    boards("python", broker.url, "g1", "--name", "tinymcp/garage")
    url, bridge = bridges("--sim", "--mqtt", broker.url, "--mqtt-insecure", "--mqtt-filter",
                          "tinymcp/kitchen")

    async def main():
        async with Client(url, mode="legacy") as client:
            names = await tools_when(client, lambda n: {"sim_" + READ, "kitchen-k1_" + READ} <= n)
            assert {n.split("_")[0] for n in names} == {"sim", "kitchen-k1"}
            await celsius(client, "sim")
            await celsius(client, "kitchen-k1")
            await anyio.sleep(1.0)   # the garage board is online all along: never served
            names = await board_tools(client)
            assert not [n for n in names if "garage" in n]
    asyncio.run(main())
    assert "g1/tinymcp/garage" not in bridge.stderr()


@pytest.mark.parametrize("how", ["SIGKILL", "SIGSTOP"])
def test_a_dead_board_is_withdrawn_from_the_hosts(broker, boards, bridges, how):
    # SIGKILL: the OS closes the board's socket, the broker sends its will at once. SIGSTOP: it
    # freezes with the socket open (a board without power or network); the broker sends its
    # will after 1.5 keep-alive periods of silence (Mosquitto checks them every few seconds).
    keepalive = 2
    doomed = boards("python", broker.url, "doomed-" + how.lower(), "--keepalive", str(keepalive))
    boards("python", broker.url, "stays")
    url, bridge = bridges("--mqtt", broker.url, "--mqtt-insecure")
    seen = ListChanged()
    gone = "sim-doomed-%s_%s" % (how.lower(), READ)

    async def main():
        async with Client(url, mode="legacy", message_handler=seen) as client:
            await tools_when(client, lambda n: {gone, "sim-stays_" + READ} <= n)
            before = len(seen.list_changed)
            killed = time.monotonic()
            doomed.proc.send_signal(getattr(signal, how))
            with anyio.fail_after(1.5 * keepalive + (2 if how == "SIGKILL" else 8)):   # slack
                while True:   # the list_changed after which its tools are gone
                    while len(seen.list_changed) == before:
                        await anyio.sleep(0.05)
                    if gone not in await board_tools(client):
                        break
                    before = len(seen.list_changed)
            print("\ntools/list_changed %.2f s after %s (keep-alive %d s)"
                  % (seen.list_changed[before] - killed, how, keepalive))
            assert await celsius(client, "sim-stays")   # the other board is served on
    try:
        asyncio.run(main())
    finally:
        doomed.kill()
    assert "board doomed-%s/tinymcp/sim went offline" % how.lower() in bridge.stderr()


def test_after_a_broker_restart_the_board_is_back_under_its_label(boards, bridges):
    broker = Broker()
    try:
        boards("python", broker.url, "phoenix", "--keepalive", "2")
        url, bridge = bridges("--mqtt", broker.url, "--mqtt-insecure")
        seen = ListChanged()

        async def main():
            async with Client(url, mode="legacy", message_handler=seen) as client:
                await tools_when(client, lambda n: "sim-phoenix_" + READ in n)
                before = len(seen.list_changed)
                broker.restart()
                await tools_when(client, lambda n: "sim-phoenix_" + READ not in n)
                names = await tools_when(client, lambda n: "sim-phoenix_" + READ in n, 40)
                assert not [n for n in names if not n.startswith("sim-phoenix_")]
                assert len(seen.list_changed) >= before + 2   # gone, then back
                assert await celsius(client, "sim-phoenix")
        asyncio.run(main())
        said = bridge.stderr()
        assert "lost the broker %s" % broker.url in said
        assert "back on the broker %s" % broker.url in said
    finally:
        broker.stop()


def test_two_bridges_on_one_broker_call_the_same_board_undisturbed(broker, boards, bridges):
    board = boards("python", broker.url, "shared")
    (url, first), (second, other) = [bridges("--mqtt", broker.url, "--mqtt-insecure")
                                     for _ in range(2)]
    urls = [url, second]

    async def one(url, results):
        async with Client(url, mode="legacy") as client:
            await tools_when(client, lambda n: "sim-shared_" + READ in n)
            for _ in range(20):
                results.append(await celsius(client, "sim-shared"))

    async def main():
        results = ([], [])
        async with anyio.create_task_group() as group:
            for url, got in zip(urls, results):
                group.start_soon(one, url, got)
        assert [len(r) for r in results] == [20, 20]
        # The first bridge leaves (it says notifications/disconnected for its own client id):
        # the second's session on the board goes on.
        assert first.stop() == 0
        async with Client(second, mode="legacy") as client:
            for _ in range(5):
                assert await celsius(client, "sim-shared")
    asyncio.run(main())
    assert "Traceback" not in board.stderr()
    assert "board reset detected" not in other.stderr()


def test_broker_credentials_come_from_the_environment(boards, bridges):
    broker = Broker(users={"board": "board-pw", "bridge": "bridge-pw"})
    try:
        boards("python", "mqtt://board:board-pw@127.0.0.1:%d" % broker.port, "locked")
        url, good = bridges("--mqtt", broker.url, "--mqtt-insecure",
                            env=clean_env(TINYMCP_MQTT_USERNAME="bridge",
                                          TINYMCP_MQTT_PASSWORD="bridge-pw"))
        _, bad = bridges("--sim", "--mqtt", broker.url, "--mqtt-insecure",
                         env=clean_env(TINYMCP_MQTT_USERNAME="bridge",
                                       TINYMCP_MQTT_PASSWORD="wrong"))

        async def main():
            async with Client(url, mode="legacy") as client:
                await tools_when(client, lambda n: "sim-locked_" + READ in n)
                assert await celsius(client, "sim-locked")
        asyncio.run(main())
        bad.wait_stderr(r"refused the connection")
        time.sleep(3.5)   # the first retries (after 1 s, then 2 s) are not said again
        refused = [line for line in bad.stderr().splitlines() if "refused" in line]
        assert len(refused) == 1, refused
        assert ("the broker %s refused the connection: Not authorized (check "
                "$TINYMCP_MQTT_USERNAME and $TINYMCP_MQTT_PASSWORD); trying again" % broker.url
                in refused[0])
        assert "wrong" not in bad.stderr() and "bridge-pw" not in good.stderr()
        assert bad.proc.poll() is None   # it serves its other board, and keeps trying
    finally:
        broker.stop()


def test_mqtts_with_the_ca_from_the_environment(boards, bridges):
    broker = Broker(tls=True)
    try:
        board = boards("python", broker.plain_url, "secure")
        url, bridge = bridges("--mqtt", broker.url, "--mqtt-insecure",
                              env=clean_env(TINYMCP_MQTT_CA=broker.ca))
        # the system's CAs: not this one
        _, blind = bridges("--sim", "--mqtt", broker.url, "--mqtt-insecure")

        async def main():
            async with Client(url, mode="legacy") as client:
                await tools_when(client, lambda n: "sim-secure_" + READ in n)
                assert await celsius(client, "sim-secure")
        try:
            asyncio.run(main())
        except BaseException:
            print(board.stderr())
            raise
        blind.wait_stderr(r"the broker mqtts://127.0.0.1:%d is out of reach \(\[SSL: "
                          r"CERTIFICATE_VERIFY_FAILED\] .*; \$TINYMCP_MQTT_CA names the CA "
                          r"that signed the broker's certificate\); trying again" % broker.port)
    finally:
        broker.stop()


def test_a_bridge_without_mqtt_never_imports_paho():
    code = ("import sys; import tinymcp.host.bridge.cli, tinymcp.host.bridge.mqtt; "
            "print('paho' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def test_labels_come_from_the_server_name_and_id_and_stay_unique():
    assert label_for("sim-python", "tinymcp/sim", set()) == "sim-python"
    assert label_for("b07", "tinymcp/sim", set()) == "sim-b07"
    # folded (case, ":"): marked by a hash, never the label of the server-id "pico-3c-61-05-2a"
    assert label_for("3C:61:05:2A", "site/hall/pico", set()).startswith("pico-3c-61-05-2a-")
    assert label_for("b07", "tinymcp/sim", {"sim-b07"}) == "sim-b07-2"
    assert label_for("b07", "tinymcp/sim", {"sim-b07", "sim-b07-2"}) == "sim-b07-3"
    long = label_for("a-very-long-server-id-from-a-fleet", "tinymcp/greenhouse", set())
    assert long.startswith("greenhouse-") and len(long) <= 24
    assert long == label_for("a-very-long-server-id-from-a-fleet", "tinymcp/greenhouse", set())
    for odd in (("x", "9/1"), ("--", "//"), ("\u00e9t\u00e9", "tinymcp/\u00e9")):
        assert LABEL.match(label_for(odd[0], odd[1], set())), odd


@pytest.mark.parametrize("argv, said", [
    (["--mqtt", "http://127.0.0.1:1883"], "is not a broker URL: mqtt://HOST[:PORT]"),
    (["--mqtt", "mqtt://127.0.0.1:99999"], "is not a broker URL"),
    (["--mqtt", "mqtt://me:secret@127.0.0.1"], "no credentials in the URL"),
    (["--mqtt", "mqtt://127.0.0.1", "--mqtt-filter", "a#"], "is not a topic filter"),
    (["--mqtt", "mqtts://127.0.0.1"], "$TINYMCP_MQTT_CA: /nonexistent/ca.pem is not a usable CA "
                                      "certificate (PEM): No such file or directory"),
    (["--sim", "--mqtt-filter", "site/#"], "--mqtt-filter goes with --mqtt"),
])
def test_a_bad_broker_url_or_filter_is_one_line_and_exit_2(argv, said):
    bridge = Bridge(argv, stdin=subprocess.DEVNULL,
                    env=clean_env(TINYMCP_MQTT_CA="/nonexistent/ca.pem"))
    assert bridge.proc.wait(20) == 2
    lines = bridge.stderr().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tinymcp-bridge") and said in lines[0], lines
    assert "secret" not in lines[0]


def test_a_broker_down_at_the_start_is_waited_for(boards, bridges):
    port = free_port()
    url, bridge = bridges("--sim", "--mqtt", "mqtt://127.0.0.1:%d" % port, "--mqtt-insecure")
    bridge.wait_stderr(r"the broker mqtt://127.0.0.1:%d is out of reach \(Connection refused\); "
                       r"trying again" % port)
    broker = Broker(port=port)
    try:
        boards("python", broker.url, "late")

        async def main():
            async with Client(url, mode="legacy") as client:
                assert await celsius(client, "sim")   # served while the broker was away
                await tools_when(client, lambda n: "sim-late_" + READ in n, 45)
                assert await celsius(client, "sim-late")
        asyncio.run(main())
        assert bridge.stderr().count("is out of reach") == 1
    finally:
        broker.stop()


class FakeBoard:
    # A "board" made with paho: its presence retained, and what it does with the bridge's
    # initialize on its control topic up to answer(client, rpc topic, message).
    def __init__(self, port, server_id, answer, login=None):
        import paho.mqtt.client as mqtt
        from paho.mqtt.packettypes import PacketTypes
        from paho.mqtt.properties import Properties
        self.answer = answer
        self.props = Properties(PacketTypes.PUBLISH)
        self.props.UserProperty = [("MCP-COMPONENT-TYPE", "mcp-server"),
                                   ("MCP-MQTT-CLIENT-ID", server_id)]
        self.name = "tinymcp/fake"
        self.id = server_id
        self.asked = threading.Event()
        c = self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=server_id,
                                      protocol=mqtt.MQTTv5)
        c.on_message = self._message
        if login:
            c.username_pw_set(*login)
        up = threading.Event()
        c.on_connect = lambda *a: up.set()
        c.connect("127.0.0.1", port)
        c.loop_start()
        assert up.wait(10)
        c.subscribe("$mcp-server/%s/%s" % (server_id, self.name))
        online = {"jsonrpc": "2.0", "method": "notifications/server/online",
                  "params": {"server_name": self.name, "description": "a fake", "meta": {}}}
        self.publish("$mcp-server/presence/%s/%s" % (server_id, self.name), online, retain=True)

    def publish(self, topic, payload, retain=False):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.client.publish(topic, data, retain=retain, properties=self.props)

    def _message(self, client, userdata, m):
        sender = dict(m.properties.UserProperty)["MCP-MQTT-CLIENT-ID"]
        self.asked.set()
        self.answer(self, "$mcp-rpc/%s/%s/%s" % (sender, self.id, self.name), json.loads(m.payload))

    def close(self):
        self.publish("$mcp-server/presence/%s/%s" % (self.id, self.name), b"", retain=True)
        self.client.disconnect()
        self.client.loop_stop()


def garbage(fake, rpc, request):
    for junk in (b"{not json", b"\xff\xfe", b"[1, 2]", b"", b'{"jsonrpc":"2.0","id":' +
                 str(request["id"]).encode() + b',"result":7}', b"x" * 300000,
                 b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"'
                 + b"x" * (2 << 20) + b'"}}'):   # over the 1 MiB the bridge takes: never sent
        fake.publish(rpc, junk)
    for i in range(3000):   # a flood of answers nobody asked for
        fake.publish(rpc, {"jsonrpc": "2.0", "id": 10 ** 6 + i, "result": {}})


@pytest.mark.parametrize("answer", [garbage, lambda fake, rpc, request: None],
                         ids=["garbage", "silent"])
def test_a_hostile_board_never_costs_the_bridge_or_another_board(broker, boards, bridges,
                                                                 answer):
    boards("python", broker.url, "honest")
    fake = FakeBoard(broker.port, "fake-" + answer.__name__.strip("<>"), answer)
    try:
        url, bridge = bridges("--mqtt", broker.url, "--mqtt-insecure")

        async def main():
            async with Client(url, mode="legacy") as client:
                await tools_when(client, lambda n: "sim-honest_" + READ in n)
                assert fake.asked.wait(10)   # the bridge tried to initialize it
                for _ in range(10):
                    assert await celsius(client, "sim-honest")
                names = await board_tools(client)
                assert not [n for n in names if n.startswith("fake")]
        asyncio.run(main())
        assert bridge.proc.poll() is None
    finally:
        fake.close()


def _fleet_block(after):
    # The code block of docs/fleet.md that follows the line containing `after`.
    with open(os.path.join(REPO, "docs", "fleet.md")) as f:
        text = f.read()
    start = text.index("```\n", text.index(after)) + 4
    return text[start:text.index("```", start)]


def test_the_fleet_acl_lets_a_board_publish_only_under_its_own_server_id(boards, bridges):
    # docs/fleet.md's Mosquitto ACL, as written there: b1 is served to the site's bridge; b2,
    # logged in as itself, can neither clear b1's presence nor answer for it.
    config = _fleet_block("`mosquitto.conf`:")
    assert "use_username_as_clientid true" in config
    broker = Broker(users={"b1": "pw1", "b2": "pw2", "bridge-site-a": "pwb"},
                    acl=_fleet_block("`/etc/mosquitto/acl`"),
                    config=["use_username_as_clientid true"])
    try:
        boards("python", "mqtt://b1:pw1@127.0.0.1:%d" % broker.port, "b1", "--name", "site-a/sim")
        url, bridge = bridges("--mqtt", broker.url, "--mqtt-filter", "site-a/#",
                              env=clean_env(TINYMCP_MQTT_USERNAME="bridge-site-a",
                                            TINYMCP_MQTT_PASSWORD="pwb"))
        client_id = bridge.wait_stderr(r"as (tinymcp-bridge-[0-9a-f]+)").group(1)

        async def main():
            async with Client(url, mode="legacy") as client:
                await tools_when(client, lambda n: "sim-b1_" + READ in n)
                rogue = FakeBoard(broker.port, "b2", lambda *a: None, login=("b2", "pw2"))
                rogue.publish("$mcp-server/presence/b1/site-a/sim", b"", retain=True)
                rogue.publish("$mcp-rpc/%s/b1/site-a/sim" % client_id,
                              {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
                await anyio.sleep(1.5)
                assert "sim-b1_" + READ in await board_tools(client)
                assert await celsius(client, "sim-b1")
                rogue.client.disconnect()
                rogue.client.loop_stop()
        asyncio.run(main())
        assert "went offline" not in bridge.stderr()
    finally:
        broker.stop()


def test_install_puts_the_brokers_login_in_the_entrys_env_and_keeps_the_file_private(
        tmp_path, capsys):
    from tests.bridge.test_install import fake_os, place, run_main
    environ, roots = fake_os(tmp_path, "linux")
    environ.update(TINYMCP_MQTT_USERNAME="bridge-site-a", TINYMCP_MQTT_PASSWORD="pw-in-env",
                   TINYMCP_MQTT_CA="/etc/ssl/site-ca.pem")
    status, out, err = run_main(["--install", "claude-code", "--mqtt", "mqtts://broker:8883",
                                 "--mqtt-filter", "site-a/#"], "linux", environ, capsys)
    assert status == 0, err
    path = place("claude-code", "linux", roots)
    server = json.load(open(path))["mcpServers"]["tinymcp"]
    assert server["args"] == ["--mqtt", "mqtts://broker:8883", "--mqtt-filter", "site-a/#"]
    assert server["env"] == {"TINYMCP_MQTT_USERNAME": "bridge-site-a",
                             "TINYMCP_MQTT_PASSWORD": "pw-in-env",
                             "TINYMCP_MQTT_CA": "/etc/ssl/site-ca.pem"}
    assert "pw-in-env" not in out and "pw-in-env" not in err and "in clear" in err
    assert oct(os.stat(path).st_mode & 0o777) == oct(0o600)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_a_board_with_many_tools_lists_them_all(broker, boards, bridges, runtime):
    # Issue 30: the bench sim board's tools/list is longer than one of its MQTT messages; it
    # pages it, and the bridge follows nextCursor: hosts see every tool, not only the
    # bridge's own wait_for_event.
    board = "many-" + runtime
    boards(runtime, broker.url, board, "--bench")
    url, _ = bridges("--mqtt", broker.url, "--mqtt-insecure")
    # (a board's own wait_for_event is folded into the bridge's, across its boards)
    wanted = {"sim-%s_%s" % (board, name) for name in bench_tools() - {WAIT}}

    async def main():
        async with Client(url, mode="legacy") as client:
            assert await tools_when(client, lambda n: n >= {"sim-%s_%s" % (board, READ)}) == wanted
    asyncio.run(main())


def test_an_answer_a_board_cannot_send_is_logged_naming_the_board(boards, bridges):
    # Behind a broker that takes 1 KiB packets, a page holding one 1.4 KB bench tool cannot
    # be sent: the board answers with an error, and the bridge says so, naming the board.
    broker = Broker(config=["max_packet_size 1024"])
    try:
        boards("python", broker.url, "tight", "--bench")
        url, bridge = bridges("--mqtt", broker.url, "--mqtt-insecure")
        said = bridge.wait_stderr(r"board sim-tight: tools/list failed .*").group(0)
        assert "answer-too-long" in said and "hosts see none of its tools" in said
        assert ("board mqtt://127.0.0.1:%d tight/tinymcp/sim could not send its answer to "
                "tools/list: longer than its link carries" % broker.port) in bridge.stderr()
    finally:
        broker.stop()


@pytest.mark.parametrize("era", ["2025-11-25", "2026-07-28"])
def test_a_hosts_first_list_waits_for_the_boards_the_broker_has(broker, boards, spec_clients,
                                                                era):
    # Issue 30: the board is online before the bridge starts; a host's first tools/list, sent
    # as the bridge starts, waits for it (both eras), as for a board that is starting.
    board = boards("micropython", broker.url, "early-" + era)
    spec_clients("watch-" + era).discover(board.id)   # its presence is retained now
    bridge = LineClient.spawn([bridge_script(), "--mqtt", broker.url, "--mqtt-insecure"],
                              cwd=REPO, env=clean_env())
    try:
        if era == "2026-07-28":
            listed = bridge.request("tools/list", {"_meta": {
                "io.modelcontextprotocol/protocolVersion": era,
                "io.modelcontextprotocol/clientCapabilities": {}}})
        else:
            bridge.initialize(era)
            listed = bridge.request("tools/list")
        names = {tool["name"] for tool in listed["result"]["tools"]}
        assert "sim-early-%s_%s" % (era, READ) in names, (names, bridge.stderr())
    finally:
        bridge.close()


def test_calls_over_http_take_the_express_lane(broker, boards):
    # A session's tools/call of a read-only tool (the raw benchmark client's, one write each)
    # reaches its board through the HTTP front's express lane (tests/hostile/
    # test_http_express_lane.py), each answered by the board it names, over the broker.
    from tools.bench_support.mcp_http import HttpClient
    for server_id in ("lane-a", "lane-b"):
        boards("python", broker.url, server_id)
    bridge = Bridge(["--mqtt", broker.url, "--mqtt-insecure", "--http", "127.0.0.1:0",
                     "--no-auth", "--log-level", "debug"], stdin=subprocess.DEVNULL)
    try:
        url = bridge.wait_stderr(r"serving (http://\S+/mcp)").group(1)
        names = ["sim-lane-a_" + READ, "sim-lane-b_" + READ]
        calls = [("tools/call", {"name": name, "arguments": {}}) for name in names]
        client = HttpClient(url)
        client.session()
        end = time.monotonic() + 30
        while True:
            try:
                client.rate(2, 1, calls)
                break
            except RuntimeError:   # a board not listed yet
                assert time.monotonic() < end, bridge.stderr()
                time.sleep(0.2)
        for window in (1, 8):
            client.rate(40, window, calls)   # raises on any error
    finally:
        assert bridge.stop() == 0
    taken = int(re.search(r"http: (\d+) tools/call took the express lane",
                          bridge.stderr()).group(1))
    assert taken >= 80, bridge.stderr()
