# Helpers for the bridge's 2026-07-28 host side: the bridge fixtures and SDK clients on it.
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import (REPO, bridge_script, clean_env, http_bridge,  # noqa: F401
                                   line_client)

MODERN = "2026-07-28"


def sdk_client(transport, mode, http_bridge, board="conformance", **kwargs):
    # An SDK Client on a bridge in front of boards/<board>, over stdio or Streamable HTTP.
    if transport == "http":
        url, _bridge = http_bridge(board=board)
        return Client(url, mode=mode, **kwargs)
    params = StdioServerParameters(command=bridge_script(), args=["--sim", board], cwd=REPO,
                                   env=clean_env())
    return Client(params, mode=mode, **kwargs)
