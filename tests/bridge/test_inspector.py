# The MCP Inspector CLI (Node 22, installed by .ci/install-node) through the bridge, stdio and HTTP.
import json
import subprocess

from tests.bridge.conftest import BRIDGE, REPO, inspector_command


def inspect(target, *args):
    argv, env = inspector_command()
    done = subprocess.run(argv + target + list(args), cwd=REPO, env=env, capture_output=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return json.loads(done.stdout)


def check(target):
    tools = inspect(target, "--method", "tools/list")["tools"]
    assert {"read_temperature", "read_adc", "set_led"} <= {t["name"] for t in tools}
    adc = inspect(target, "--method", "tools/call", "--tool-name", "read_adc",
                  "--tool-arg", "channel=1")
    assert abs(adc["structuredContent"]["volts"] - 0.825) < 0.01
    read = inspect(target, "--method", "resources/read", "--uri", "sensor://temperature")
    assert "celsius" in json.loads(read["contents"][0]["text"])


def test_inspector_cli_over_stdio():
    check(BRIDGE + ["--sim"])


def test_inspector_cli_over_http(http_bridge):
    url, bridge = http_bridge()
    check([url, "--transport", "http"])
    assert "Traceback" not in bridge.stderr(), bridge.stderr()
