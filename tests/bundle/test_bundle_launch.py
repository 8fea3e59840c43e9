# The unpacked bridge bundle launched exactly as Claude Desktop launches a bundle: its manifest's
# command and args for the platform, ${__dirname} and ${user_config.*} substituted, another
# working directory, a clean environment and a Python with nothing but its standard library;
# an official SDK client holds a session with the simulated board through it, on POSIX and
# under the Windows shim (tests/windows_shim).
import asyncio
import json
import os
import subprocess
import sys

import pytest
from mcp import Client, StdioServerParameters

from tests.windows_shim import shimmed
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

pytestmark = pytest.mark.xdist_group("bundle")   # beside test_bundle.py: one build


def manifest_of(unpacked):
    with open(os.path.join(str(unpacked), "manifest.json"), encoding="utf-8") as f:
        return json.load(f)


def launch(manifest, unpacked, platform, user_config):
    # -> (command, args, env) as Claude Desktop makes them from the manifest: the platform's
    # override, then every ${__dirname} and ${user_config.KEY} replaced.
    config = manifest["server"]["mcp_config"]
    config = dict(config, **config.get("platform_overrides", {}).get(platform, {}))
    values = {"${__dirname}": str(unpacked)}
    for key, spec in manifest["user_config"].items():
        values["${user_config.%s}" % key] = str(user_config.get(key, spec.get("default", "")))

    def substituted(text):
        for name, value in values.items():
            text = text.replace(name, value)
        assert "${" not in text, text
        return text
    return (substituted(config["command"]), [substituted(a) for a in config["args"]],
            {k: substituted(v) for k, v in config.get("env", {}).items()})


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    # A Python with nothing but its standard library: what the bundle may count on.
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True,
                   timeout=300)
    bare = venv / "bin"
    lacking = subprocess.run([str(bare / "python3"), "-c", "import serial"], timeout=60,
                             stderr=subprocess.DEVNULL)
    assert lacking.returncode != 0   # so the bridge's own dependencies come from the bundle
    return bare


def test_the_unpacked_bundle_serves_an_sdk_session_launched_as_claude_desktop_does(
        built, bare_python, tmp_path, as_on_windows):  # noqa: F811
    _bundle, _entry, unpacked = built
    manifest = manifest_of(unpacked)
    platform = "win32" if as_on_windows else sys.platform
    command, args, env = launch(manifest, unpacked, platform, {"board": "sim"})
    assert command in ("python", "python3")
    env = shimmed(dict(env, PATH=str(bare_python) + os.pathsep + "/usr/bin:/bin",
                       HOME=str(tmp_path), TINYMCP_TEST_OS=os.environ.get("TINYMCP_TEST_OS", "")))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()

    async def session():
        params = StdioServerParameters(command=command, args=args, env=env, cwd=str(elsewhere))
        async with Client(params, mode="legacy") as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            reading = await client.call_tool("read_temperature", {})
            return tools, reading
    tools, reading = asyncio.run(session())
    assert tools == [t["name"] for t in manifest["tools"]]   # the list it was built with
    assert not reading.is_error and "celsius" in reading.structured_content
