# The official SDK Client in the 2026-07-28 era (pinned and auto) through the bridge, on stdio and
# HTTP: the bridge serves it from a board session that only speaks the handshake era.
import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from tests.bridge_modern.conftest import MODERN, sdk_client

TRANSPORTS = ["stdio", "http"]
MODES = [MODERN, "auto"]


class Asked:
    # The client's side of sampling, elicitation and logging, recording what the board asked.
    def __init__(self):
        self.elicit = []
        self.sample = []
        self.logs = []

    async def elicitation(self, context, params):
        self.elicit.append(params.message)
        return types.ElicitResult(action="accept",
                                  content={"username": "testuser", "email": "t@example.com"})

    async def sampling(self, context, params):
        self.sample.append(params.messages[0].content.text)
        return types.CreateMessageResult(role="assistant", model="test",
                                         content=types.TextContent(type="text", text="four"))

    async def logging(self, params):
        self.logs.append(params.data)


def client(transport, mode, http_bridge, asked, **kwargs):
    return sdk_client(transport, mode, http_bridge, elicitation_callback=asked.elicitation,
                      sampling_callback=asked.sampling, logging_callback=asked.logging, **kwargs)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_lists_calls_reads_and_prompts(transport, mode, http_bridge):
    asked = Asked()

    async def session():
        async with client(transport, mode, http_bridge, asked) as c:
            assert c.protocol_version == MODERN
            if mode == "auto":  # the probe's server/discover answered: no initialize
                assert c.session.discover_result is not None
                assert c.session.initialize_result is None
                assert c.server_info.name == "tinymcp-conformance"
                assert "conformance" in c.instructions
            listed = await c.list_tools()
            assert listed.result_type == "complete" and listed.ttl_ms == 60000
            assert "test_sampling" in {t.name for t in listed.tools}
            text = await c.call_tool("test_simple_text", {})
            assert text.result_type == "complete"
            assert text.content[0].text == "This is a simple text response for testing."
            assert text.meta["io.modelcontextprotocol/serverInfo"]["name"] == "tinymcp-conformance"
            mixed = await c.call_tool("test_multiple_content_types", {})
            assert [b.type for b in mixed.content] == ["text", "image", "resource"]
            failed = await c.call_tool("test_error_handling", {})
            assert failed.is_error
            blob = await c.read_resource("test://static-binary")
            assert blob.ttl_ms == 0 and blob.cache_scope == "private"
            assert blob.contents[0].mime_type == "image/png" and blob.contents[0].blob
            with pytest.raises(MCPError) as missing:
                await c.read_resource("test://nothing/here")
            assert missing.value.error.code == -32602
            prompt = await c.get_prompt("test_prompt_with_image")
            assert prompt.messages[0].content.type == "image"

    anyio.run(session)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_board_questions_become_input_required_rounds(transport, mode, http_bridge):
    # The board sends real sampling/elicitation requests; the modern host gets input_required
    # results, answers them in retries, and the board's waiting request gets the answer.
    asked = Asked()

    async def session():
        async with client(transport, mode, http_bridge, asked) as c:
            got = await c.call_tool("test_elicitation", {"message": "Who are you?"})
            assert not got.is_error, got
            assert "testuser" in got.content[0].text
            assert asked.elicit == ["Who are you?"]
            got = await c.call_tool("test_sampling", {"prompt": "2+2?"})
            assert got.content[0].text == "LLM response: four"
            assert asked.sample == ["2+2?"]
            got = await c.call_tool("test_elicitation_sep1330_enums", {})
            assert got.content[0].text.startswith("Elicitation completed: action=accept")

    anyio.run(session)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_progress_logging_and_listen(transport, http_bridge):
    asked = Asked()
    progress = []

    async def on_progress(done, total, message):
        progress.append((done, total))

    async def session():
        async with client(transport, MODERN, http_bridge, asked, log_level="info") as c:
            await c.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            assert progress == [(0, 100), (50, 100), (100, 100)]
            await c.call_tool("test_tool_with_logging", {})
            assert asked.logs == ["Tool execution started", "Tool processing data",
                                  "Tool execution completed"]
            async with c.listen(resource_subscriptions=["test://watched-resource"],
                                tools_list_changed=True) as sub:
                assert sub.honored.resource_subscriptions == ["test://watched-resource"]
                assert sub.honored.tools_list_changed is True
                with anyio.fail_after(30):   # the resource changes every 5 s
                    event = await sub.__anext__()
                assert event.uri == "test://watched-resource"
            again = await c.call_tool("test_simple_text", {})
            assert not again.is_error

    anyio.run(session)


@pytest.mark.parametrize("mode", ["legacy", MODERN])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_json_schema_2020_12_reaches_the_host_unchanged_and_is_checked_on_the_board(
        transport, mode, http_bridge):
    from tests.core.test_jsonschema import SCHEMA
    board = "tests/bridge_modern/schema_board.py"

    async def session():
        async with sdk_client(transport, mode, http_bridge, board=board) as c:
            tool = {t.name: t for t in (await c.list_tools()).tools}["book"]
            assert tool.input_schema == SCHEMA and tool.output_schema == SCHEMA
            fits = {"name": "x", "kind": "a", "n": 10, "address": {"city": "Paris"}}
            ok = await c.call_tool("book", fits)
            assert not ok.is_error and ok.structured_content == fits
            wrong = await c.call_tool("book", {"name": "x", "address": {"city": "paris"}})
            assert wrong.is_error and "pattern" in wrong.content[0].text
    anyio.run(session)
