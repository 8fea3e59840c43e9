# The bridge on stdio is a light process: serving a host there imports no part of the official
# SDK, nor what the SDK brings (its HTTP server and client, pydantic): those load with --http,
# or with the first 2026-07-28 request (issue 30: the SDK was 41 MB of a 65 MB bridge, and most
# of a second to import). What it costs is measured by tools/bridge_bench.py, never timed here.
import os
import subprocess
import sys
import tempfile

import mcp_types
import pytest
from mcp.shared.inbound import classify_inbound_request

from tests.bridge.conftest import DEADLINE, REPO, LineClient, clean_env
from tinymcp import stateless
from tinymcp.host.bridge.stateless import classify_envelope

HEAVY = ("mcp", "mcp_types", "httpx", "httpx2", "starlette", "uvicorn", "anyio", "pydantic",
         "pydantic_core")
# A fresh interpreter running the bridge's own main(), which writes down at its exit which of
# the HEAVY modules it ever loaded.
SERVE = """
import atexit, os, sys
HEAVY = %r
def written_down():
    with open(os.environ["LOADED"], "w") as f:
        f.write(" ".join(sorted(m for m in sys.modules if m.partition(".")[0] in HEAVY)))
atexit.register(written_down)
from tinymcp.host.bridge.cli import main
sys.exit(main(sys.argv[1:]))
""" % (HEAVY,)


def loaded_by(args, session):
    # -> the HEAVY modules a bridge run with args loaded while session(client) talked to it.
    with tempfile.TemporaryDirectory() as tmp:
        where = os.path.join(tmp, "loaded")
        client = LineClient(args, env=clean_env(LOADED=where),
                            command=[sys.executable, "-c", SERVE])
        try:
            session(client)
        finally:
            client.stop()
        with open(where) as f:
            return f.read().split()


def test_a_stdio_session_imports_no_part_of_the_sdk():
    def session(client):
        assert client.initialize()["serverInfo"]["name"]
        tools = client.request("tools/list")["result"]["tools"]
        assert "read_temperature" in [tool["name"] for tool in tools]
        reply = client.request("tools/call", {"name": "read_temperature", "arguments": {}})
        assert "celsius" in reply["result"]["structuredContent"], reply

    assert loaded_by(["--sim"], session) == []


def test_importing_the_stdio_path_imports_no_part_of_the_sdk():
    code = ("import sys\nimport tinymcp.host.bridge.cli, tinymcp.host.bridge.hosts, "
            "tinymcp.host.bridge.stdio, tinymcp.host.bridge.board, tinymcp.host.bridge.sim\n"
            "print(' '.join(sorted(m for m in sys.modules if m.partition('.')[0] in %r)))"
            % (HEAVY,))
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=clean_env(),
                         capture_output=True, text=True, timeout=DEADLINE, check=True)
    assert out.stdout.split() == [], out.stdout


def test_the_stateless_meta_keys_are_the_sdks():
    # The bridge reads 2026-07-28 _meta keys by the device core's names (tinymcp/stateless.py),
    # not the SDK's: the same strings.
    assert stateless.CAPABILITIES_META == mcp_types.CLIENT_CAPABILITIES_META_KEY
    assert stateless.LOG_LEVEL_META == mcp_types.LOG_LEVEL_META_KEY
    assert stateless.SERVER_INFO_META == mcp_types.SERVER_INFO_META_KEY


V, C = mcp_types.PROTOCOL_VERSION_META_KEY, mcp_types.CLIENT_CAPABILITIES_META_KEY


@pytest.mark.parametrize("params", [
    None, [], {}, {"_meta": None}, {"_meta": []}, {"_meta": {}}, {"_meta": {V: "2026-07-28"}},
    {"_meta": {C: {}}}, {"_meta": {V: 20260728, C: {}}}, {"_meta": {V: None, C: {}}},
    {"_meta": {V: "2025-11-25", C: {}}}, {"_meta": {V: "2026-07-28", C: {}}},
    {"_meta": {V: "2026-07-28", C: None, "x": 1}, "name": "t"}])
def test_the_envelope_ladder_answers_as_the_sdks(params):
    # The bridge's own ladder (so stdio needs no SDK) against the SDK's, rung by rung.
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    if params is not None:
        body["params"] = params
    sdk = classify_inbound_request(body)
    ours = classify_envelope(body.get("params"))
    if getattr(sdk, "code", None) is None:
        assert ours is None
    else:
        assert ours == (sdk.code, sdk.message, sdk.data)
