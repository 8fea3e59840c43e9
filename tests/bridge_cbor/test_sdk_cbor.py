# The official SDK client through the bridge with the board link in CBOR mode: the host sees the
# same MCP as over JSON lines, binary content arrives base64ed, and CBOR really was on the link.
import asyncio
import base64
import json
import os
import tempfile

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.bridge.conftest import REPO, Updates, bridge_script, clean_env
from tests.bridge_cbor.binboard import KIB, PIXELS

BOARD = os.path.join(REPO, "tests", "bridge_cbor", "binboard.py")
TEXT = "grüße \n\x03\x04\x10 {\"a\": [1, 2]} ✓"


def run_session(link, errpath, mode="legacy"):
    # -> what the host saw of a fixed session, as plain data to compare between link modes.
    updates = Updates()
    # The bridge's stderr goes to a file: the link log line shows which frames were used.
    params = StdioServerParameters(command="/bin/sh", cwd=REPO, env=clean_env(),
                                   args=["-c", 'exec "$0" "$@" 2>>"%s"' % errpath, bridge_script(),
                                         "--sim", BOARD, "--link", link, "--log-level", "info"])
    seen = {}

    async def main():
        async with Client(params, mode=mode, message_handler=updates) as client:
            tools = (await client.list_tools()).tools
            seen["tools"] = sorted(t.model_dump_json() for t in tools)
            adc = await client.call_tool("read_adc", {"channel": 1})
            assert not adc.is_error
            assert json.loads(adc.content[0].text) == adc.structured_content
            seen["adc_keys"] = sorted(adc.structured_content)
            echo = await client.call_tool("echo", {"text": TEXT})
            seen["echo"] = echo.model_dump()
            shot = await client.call_tool("snapshot", {})
            seen["snapshot"] = shot.model_dump()
            blob = await client.read_resource("blob://kib")
            seen["blob"] = blob.model_dump()
            temp = await client.read_resource("sensor://temperature")
            assert '"celsius"' in temp.contents[0].text
            bad = await client.call_tool("read_adc", {"channel": 9})
            seen["bad"] = bad.model_dump()
            with pytest.warns(Warning):
                await client.subscribe_resource("sensor://temperature")
            with anyio.fail_after(30):
                await updates.event.wait()
            seen["updated"] = updates.uris[0]
            seen["experimental"] = client.server_capabilities.experimental
    asyncio.run(main())
    return seen


@pytest.fixture
def errlog():
    fd, path = tempfile.mkstemp(suffix=".log")
    os.close(fd)
    yield path
    os.unlink(path)


def test_sdk_client_through_a_cbor_link_sees_exactly_what_json_lines_give(errlog):
    cbor = run_session("cbor", errlog)
    with open(errlog) as f:
        log = f.read()
    assert "board link: CBOR frames with CRC-32" in log, log
    assert "0 dropped for a bad CRC" in log and "Traceback" not in log, log

    data = base64.b64decode(cbor["snapshot"]["content"][0]["data"])
    assert data == PIXELS
    assert base64.b64decode(cbor["blob"]["contents"][0]["blob"]) == KIB
    assert cbor["echo"]["structured_content"] == {"text": TEXT}
    assert cbor["bad"]["is_error"] is True
    assert cbor["updated"] == "sensor://temperature"
    assert not cbor["experimental"]  # the link offer never reaches the host

    os.truncate(errlog, 0)
    plain = run_session("json", errlog)
    with open(errlog) as f:
        assert "CBOR" not in f.read()
    assert plain == cbor
