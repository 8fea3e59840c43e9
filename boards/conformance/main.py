# The conformance board: the official MCP conformance suite's fixtures, from tinymcp's public API.
import json
import sys
import time

if __name__ == "__main__":  # run from a checkout: the repo root holds tinymcp/ and ports/
    sys.path.append(globals().get("__file__", "").rsplit("boards", 1)[0] or ".")

try:
    from binascii import a2b_base64, b2a_base64
except ImportError:
    from ubinascii import a2b_base64, b2a_base64

from tinymcp import Server
from tinymcp.schema import array, boolean, integer, number, string

# A 1x1 red PNG, and a WAV header with no samples: the smallest valid media of each kind.
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJ"
       "RU5ErkJggg==")
WAV = b2a_base64(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x40\x1f\x00\x00"
                 b"\x80\x3e\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00").decode().strip()
STEP_S = 0.05   # the suite asks for ~50 ms between a tool's notifications


def _image():
    return {"type": "image", "data": PNG, "mimeType": "image/png"}


def _text(text):
    return {"type": "text", "text": text}


def _answer(result):
    # Compact JSON of a client's answer, for the text a tool returns.
    return json.dumps(result)


def build():
    server = Server("tinymcp-conformance", "0.1.0", title="tinymcp conformance board",
                    instructions="Fixtures of the official MCP conformance suite.")
    _tools(server)
    _elicitations(server)
    _inputs(server)
    _tasks(server)
    _resources(server)
    _prompts(server)
    return server


def _tools(server):
    @server.tool("test_simple_text", "Returns one text block")
    def simple_text():
        return "This is a simple text response for testing."

    @server.tool("test_image_content", "Returns a 1x1 PNG image")
    def image_content():
        return [_image()]

    @server.tool("test_audio_content", "Returns a short WAV clip")
    def audio_content():
        return [{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]

    @server.tool("test_embedded_resource", "Returns an embedded text resource")
    def embedded_resource():
        return [{"type": "resource", "resource": {
            "uri": "test://embedded-resource", "mimeType": "text/plain",
            "text": "This is an embedded resource content."}}]

    @server.tool("test_multiple_content_types", "Returns text, an image and a resource")
    def multiple_content_types():
        return [_text("Multiple content types test:"), _image(),
                {"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource", "mimeType": "application/json",
                    "text": '{"test":"data","value":123}'}}]

    @server.tool("test_tool_with_logging", "Logs three messages while it runs", ctx=True)
    def tool_with_logging(ctx):
        ctx.log("info", "Tool execution started")
        time.sleep(STEP_S)
        ctx.log("info", "Tool processing data")
        time.sleep(STEP_S)
        ctx.log("info", "Tool execution completed")
        return "Logging test completed"

    @server.tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100", ctx=True)
    def tool_with_progress(ctx):
        for done in (0, 50, 100):
            if done:
                time.sleep(STEP_S)
            ctx.progress(done, 100)
        return "Progress test completed"

    @server.tool("test_error_handling", "Always fails")
    def error_handling():
        raise ValueError("This tool intentionally returns an error for testing")

    @server.tool("test_reconnection", "Takes a moment, so a client may poll for its result")
    def reconnection():
        time.sleep(STEP_S * 4)
        return "Reconnection test completed"

    @server.tool("test_sampling", "Asks the client's LLM", ctx=True,
                 inputs={"prompt": string("The prompt to send to the LLM")})
    def sampling(prompt, ctx):
        result = ctx.request("sampling/createMessage", {
            "messages": [{"role": "user", "content": _text(prompt)}], "maxTokens": 100})
        content = (result or {}).get("content") or {}
        return "LLM response: " + str(content.get("text", _answer(content)))

    @server.tool("test_elicitation", "Asks the user for a username and an email", ctx=True,
                 inputs={"message": string("The message to show the user")})
    def elicitation(message, ctx):
        result = ctx.request("elicitation/create", {
            "message": message,
            "requestedSchema": {"type": "object", "properties": {
                "username": string("User's response"),
                "email": string("User's email address")}, "required": ["username", "email"]}})
        return "User response: " + _answer(result)

    # SEP-1613 and SEP-2106: a schema using 2020-12 keywords ($defs with an $anchor, allOf/anyOf,
    # if/then/else), listed exactly as declared and checked on the board (tinymcp/jsonschema.py).
    @server.tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features",
                 inputs={"$schema": "https://json-schema.org/draft/2020-12/schema",
                         "type": "object",
                         "$defs": {"address": {"$anchor": "addressDef", "type": "object",
                                               "properties": {"street": string(),
                                                              "city": string()}}},
                         "properties": {"name": string(), "address": {"$ref": "#/$defs/address"},
                                        "contactMethod": string(enum=("phone", "email")),
                                        "phone": string(), "email": string()},
                         "allOf": [{"anyOf": [{"required": ["phone"]},
                                              {"required": ["email"]}]}],
                         "if": {"properties": {"contactMethod": {"const": "phone"}},
                                "required": ["contactMethod"]},
                         "then": {"required": ["phone"]},
                         "else": {"required": ["email"]},
                         "additionalProperties": False})
    def json_schema_2020_12(name=None, address=None, contactMethod=None, phone=None, email=None):
        return "Received: " + _answer({"name": name, "address": address,
                                       "contactMethod": contactMethod, "phone": phone,
                                       "email": email})

    # SEP-2243: a parameter the client mirrors into an Mcp-Param-Region header, which the bridge's
    # HTTP front checks against the body (tinymcp/host/bridge/http.py).
    @server.tool("test_custom_header", "Echoes a region the client also sends as a header",
                 inputs={"type": "object", "properties": {"region": {
                     "type": "string", "description": "A region", "x-mcp-header": "Region"}}})
    def custom_header(region=None):
        return "Region: " + str(region)


def _elicitations(server):
    @server.tool("test_elicitation_sep1034_defaults", "Elicits values with defaults", ctx=True)
    def sep1034(ctx):
        result = ctx.request("elicitation/create", {
            "message": "Please review and update the form fields with defaults",
            "requestedSchema": {"type": "object", "properties": {
                "name": string("User name", default="John Doe"),
                "age": integer("User age", default=30),
                "score": number("User score", default=95.5),
                "status": string("User status", enum=("active", "inactive", "pending"),
                                 default="active"),
                "verified": boolean("Verification status", default=True)}}})
        return _elicited(result)

    @server.tool("test_elicitation_sep1330_enums", "Elicits every kind of enum", ctx=True)
    def sep1330(ctx):
        def titled(prefix, titles):
            return [{"const": prefix + str(i + 1), "title": t} for i, t in enumerate(titles)]
        options = ("option1", "option2", "option3")
        result = ctx.request("elicitation/create", {
            "message": "Please select options from the enum fields",
            "requestedSchema": {"type": "object", "properties": {
                "untitledSingle": string("Select one option", enum=options),
                "titledSingle": {"type": "string", "description": "Select one titled option",
                                 "oneOf": titled("value", ("First Option", "Second Option",
                                                           "Third Option"))},
                "legacyEnum": {"type": "string", "description": "Select one (legacy)",
                               "enum": ["opt1", "opt2", "opt3"],
                               "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": array(string(enum=options), "Select several options"),
                "titledMulti": array({"anyOf": titled("value", ("First Choice", "Second Choice",
                                                                "Third Choice"))},
                                     "Select several titled options")}}})
        return _elicited(result)


def _form(message, field, kind="string"):
    return {"message": message, "requestedSchema": {
        "type": "object", "properties": {field: {"type": kind}}, "required": [field]}}


_NAME = ("elicitation/create", _form("What is your name?", "name"))
_ROOTS = ("roots/list", {})


def _sample(text, tokens):
    return ("sampling/createMessage", {"messages": [{"role": "user", "content": _text(text)}],
                                       "maxTokens": tokens})


def _inputs(server):
    # Input-required results (SEP-2322): on a 2026-07-28 request each ctx.request ends the call
    # with the question (under the key the suite expects); the client's retry answers it. On a
    # handshake session the same code asks the client for real.
    @server.tool("test_input_required_result_elicitation", "Asks the user's name", ctx=True)
    def ir_elicitation(ctx):
        answer = ctx.request(_NAME[0], _NAME[1], key="user_name")
        return "Hello, " + str((answer.get("content") or {}).get("name")) + "!"

    @server.tool("test_input_required_result_sampling", "Asks the client's LLM", ctx=True)
    def ir_sampling(ctx):
        method, params = _sample("What is the capital of France?", 100)
        answer = ctx.request(method, params, key="capital_question")
        return "LLM said: " + _answer(answer.get("content"))

    @server.tool("test_input_required_result_list_roots", "Asks the client's roots", ctx=True)
    def ir_roots(ctx):
        answer = ctx.request(_ROOTS[0], _ROOTS[1], key="client_roots")
        return "Roots: " + _answer([r.get("uri") for r in answer.get("roots") or ()])

    @server.tool("test_input_required_result_request_state", "Asks for a confirmation",
                 ctx=True)
    def ir_state(ctx):
        answer = ctx.request("elicitation/create", _form("Please confirm", "ok", "boolean"),
                             key="confirm")
        return "state-ok: " + _answer(answer)

    @server.tool("test_input_required_result_tampered_state", "Asks for a confirmation",
                 ctx=True)
    def ir_tampered(ctx):
        answer = ctx.request("elicitation/create", _form("Please confirm", "ok", "boolean"),
                             key="confirm")
        return "confirmed: " + _answer(answer)

    @server.tool("test_input_required_result_multiple_inputs", "Asks three things at once",
                 ctx=True)
    def ir_multiple(ctx):
        got = ctx.requests({"user_name": _NAME, "greeting": _sample("Generate a greeting", 50),
                            "client_roots": _ROOTS})
        return "Got: " + ", ".join(sorted(got))

    @server.tool("test_input_required_result_multi_round", "Asks twice, one after the other",
                 ctx=True)
    def ir_rounds(ctx):
        name = ctx.request("elicitation/create", _form("Step 1: What is your name?", "name"),
                           key="step1")
        color = ctx.request("elicitation/create",
                            _form("Step 2: What is your favorite color?", "color"), key="step2")
        return ("Name " + _answer(name.get("content")) + ", color "
                + _answer(color.get("content")))

    @server.tool("test_input_required_result_capabilities",
                 "Asks only what the client declared it can answer", ctx=True)
    def ir_capabilities(ctx):
        asks = {}
        if ctx.can("sampling/createMessage"):
            asks["capital_question"] = _sample("What is the capital of France?", 100)
        if ctx.can("elicitation/create"):
            asks["user_name"] = _NAME
        if ctx.can("roots/list"):
            asks["client_roots"] = _ROOTS
        if not asks:
            return "The client can be asked nothing"
        return "Got: " + ", ".join(sorted(ctx.requests(asks)))

    @server.prompt("test_input_required_result_prompt", "A prompt that asks for its context")
    def ir_prompt():
        answer = server.ctx.request("elicitation/create",
                                    _form("What context should the prompt use?", "context"),
                                    key="user_context")
        return "Use this context: " + str((answer.get("content") or {}).get("context"))

    # SEP-2575's diagnostic tools (server-stateless).
    @server.tool("test_missing_capability", "Needs sampling, which a client may not declare",
                 ctx=True)
    def missing_capability(ctx):
        method, params = _sample("Say hi", 10)
        return "LLM said: " + _answer(ctx.request(method, params).get("content"))

    @server.tool("test_streaming_elicitation", "Elicits while the request is open", ctx=True)
    def streaming_elicitation(ctx):
        return "User said: " + _answer(ctx.request(_NAME[0], _NAME[1]))

    @server.tool("test_logging_tool", "Logs, at the level the request asks for", ctx=True)
    def logging_tool(ctx):
        ctx.log("info", "test_logging_tool ran")
        return "Logged"


def _tasks(server):
    # The tasks extension's fixtures (SEP-2663). A generator tool runs in the serve loop's idle
    # time, so a client may run it as a task (tinymcp/tasks.py); a plain one answers at once.
    from tinymcp.clock import ticks_diff, ticks_ms
    from tinymcp.jsonrpc import RpcError
    from tinymcp.protocol import INTERNAL_ERROR

    def wait(ms):
        start = ticks_ms()
        while ticks_diff(ticks_ms(), start) < ms:
            yield ticks_diff(ticks_ms(), start) / ms

    @server.tool("greet", "Greets someone, at once", inputs={"name": string("Who")})
    def greet(name):
        return "Hello, " + name + "!"

    @server.tool("slow_compute", "Takes `seconds` seconds, then answers",
                 inputs={"seconds?": number("How long", 0, 60, default=1)}, task="optional")
    def slow_compute(seconds):
        yield from wait(int(seconds * 1000))
        return "Computed after " + str(seconds) + " s"

    @server.tool("failing_job", "Fails as a tool (isError) after about a second",
                 task="required")
    def failing_job():
        yield from wait(1000)
        raise ValueError("failing_job failed, as it always does")

    @server.tool("protocol_error_job", "Ends in a protocol error", task="optional")
    def protocol_error_job():
        yield 0
        raise RpcError(INTERNAL_ERROR, "protocol_error_job: an internal failure")

    # Tasks that ask for input (SEP-2663 over SEP-2322): a question pauses the task
    # (input_required) until the client answers; the tool then runs again from its start and
    # ctx.request returns the answer, so each asks before it acts.
    @server.tool("confirm_delete", "Deletes a file once the user confirms", ctx=True,
                 inputs={"filename": string("The file to delete")}, task="optional")
    def confirm_delete(filename, ctx):
        answer = ctx.request("elicitation/create",
                             _form("Delete " + filename + "?", "confirm", "boolean"),
                             key="confirm_delete")
        yield 0
        if answer.get("action") != "accept" or not (answer.get("content") or {}).get("confirm"):
            return "Kept " + filename
        return "Deleted " + filename

    @server.tool("multi_input", "Asks two things at once", ctx=True, task="optional")
    def multi_input(ctx):
        got = ctx.requests({"name": _NAME,
                            "confirm": ("elicitation/create",
                                        _form("Go ahead?", "confirm", "boolean"))})
        yield 0
        return ("Got name " + _answer((got["name"].get("content") or {}).get("name"))
                + ", confirm " + _answer((got["confirm"].get("content") or {}).get("confirm")))

    @server.tool("test_tool_with_task", "Asks a name, then works on it as a task", ctx=True,
                 task="required")
    def tool_with_task(ctx):
        # The question comes before the task: an input-required result (or, on a handshake
        # session, a request to the client); the answer rides into the task's work.
        answer = ctx.request(_NAME[0], _NAME[1], key="user_name")
        name = str((answer.get("content") or {}).get("name"))

        def work():
            yield from wait(200)
            return "Hello, " + name + "! (from a task)"
        return work()


def _elicited(result):
    result = result or {}
    return ("Elicitation completed: action=" + str(result.get("action")) + ", content="
            + _answer(result.get("content") or {}))


def _resources(server):
    @server.resource("test://static-text", "static-text", "A fixed text resource",
                     mime="text/plain")
    def static_text():
        return "This is the content of the static text resource."

    @server.resource("test://static-binary", "static-binary", "A fixed PNG image",
                     mime="image/png")
    def static_binary():
        return a2b_base64(PNG)

    @server.resource("test://template/{id}/data", "template-data", "Data for one id",
                     mime="application/json")
    def template_data(id):
        return {"id": id, "templateTest": True, "data": "Data for ID: " + id}

    # Changes every 5 s, so a subscriber sees notifications/resources/updated.
    @server.resource("test://watched-resource", "watched-resource", "A resource that changes",
                     mime="text/plain", watch=lambda: time.time() // 5)
    def watched():
        return "Watched resource content, revision " + str(int(time.time() // 5))


def _prompts(server):
    @server.prompt("test_simple_prompt", "A prompt without arguments")
    def simple_prompt():
        return "This is a simple prompt for testing."

    @server.prompt("test_prompt_with_arguments", "A prompt with two arguments",
                   args={"arg1": "First test argument", "arg2": "Second test argument"},
                   complete={"arg1": ["paris", "park", "party"], "arg2": ["world", "wonder"]})
    def prompt_with_arguments(arg1, arg2):
        return "Prompt with arguments: arg1='" + arg1 + "', arg2='" + arg2 + "'"

    @server.prompt("test_prompt_with_embedded_resource", "A prompt embedding a resource",
                   args={"resourceUri": "URI of the resource to embed"})
    def prompt_with_embedded_resource(resourceUri):
        return [{"role": "user", "content": {"type": "resource", "resource": {
                    "uri": resourceUri, "mimeType": "text/plain",
                    "text": "Embedded resource content for testing."}}},
                "Please process the embedded resource above."]

    @server.prompt("test_prompt_with_image", "A prompt with an image")
    def prompt_with_image():
        return [{"role": "user", "content": _image()}, "Please analyze the image above."]


if __name__ == "__main__":
    from ports import serve
    serve(build())  # the MicroPython port collects garbage before its line buffer
