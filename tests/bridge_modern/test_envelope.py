# The bridge's own check of a 2026-07-28 request's _meta envelope (stateless.classify_envelope,
# so that the bridge on stdio, as the .mcpb bundle carries it, needs neither the SDK nor
# pydantic) says what the official SDK's ladder says, in its words, for every shape of envelope.
import subprocess
import sys

import pytest
from mcp.shared.inbound import classify_inbound_request

from tinymcp.host.bridge.stateless import classify_envelope

VERSION = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
ENVELOPES = [
    None, [], "x", {}, {"_meta": None}, {"_meta": []}, {"_meta": {}},
    {"_meta": {VERSION: "2026-07-28"}}, {"_meta": {CAPS: {}}},
    {"_meta": {VERSION: "2026-07-28", CAPS: {}}},
    {"_meta": {VERSION: "2026-07-28", CAPS: None, "io.modelcontextprotocol/clientInfo": {}}},
    {"_meta": {VERSION: "2025-11-25", CAPS: {}}}, {"_meta": {VERSION: "2027-01-01", CAPS: {}}},
    {"_meta": {VERSION: 20260728, CAPS: {}}}, {"_meta": {VERSION: None, CAPS: {}}},
    {"_meta": {VERSION: "", CAPS: {}}}, {"name": "read", "_meta": {VERSION: "2026-07-28"}},
]


@pytest.mark.parametrize("params", ENVELOPES)
def test_the_bridge_reads_an_envelope_as_the_sdk_does(params):
    verdict = classify_inbound_request({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                        "params": params})
    code = getattr(verdict, "code", None)
    expected = None if code is None else (code, verdict.message, verdict.data)
    assert classify_envelope(params) == expected


def test_the_bridge_on_stdio_imports_neither_the_sdk_nor_pydantic():
    code = ("import sys\n"
            "import tinymcp.host.bridge.cli, tinymcp.host.bridge.hosts, tinymcp.host.bridge.stdio\n"
            "import tinymcp.host.bridge.router, tinymcp.host.bridge.board, tinymcp.host.bridge.sim\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('mcp', 'mcp_types', 'pydantic', 'pydantic_core', 'starlette', 'uvicorn')))")
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True,
                          timeout=120)
    assert done.stdout.decode().strip() == "[]"
