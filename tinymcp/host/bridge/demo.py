# The live demo of `tinymcp-bridge --sim` in a terminal: a small client drives the bridge, narrated.
import asyncio
import base64
import itertools
import json
import os
import shutil
import sys
import tempfile

from tinymcp.host.bridge.pictures import EXTRA

ARROW_OUT = "\u2192"
ARROW_IN = "\u2190"


def snippet(command, args, name="tinymcp"):
    # The command that puts this bridge into a host's own config, and the entry it writes for
    # Claude Desktop and VS Code. command: [the bridge's command, its leading args].
    from tinymcp.host.bridge.install import HOSTS, entry
    text = ("Put this bridge into your MCP host's config: tinymcp-bridge --install HOST %s\n"
            "(HOST: %s; --print-config HOST shows the entry and its file first)\n"
            % (" ".join(args), ", ".join(sorted(HOSTS))))
    for host in ("claude-desktop", "vscode"):
        text += "\n%s:\n%s\n" % (HOSTS[host].title, json.dumps(
            {HOSTS[host].key: {name: entry(host, command + args, None)}}, indent=2))
    return text


# Arguments that show a tool of the simulated board at work where the smallest valid ones do
# not (set_alert needs exactly one of its bounds): merged in when the tool has the property.
SENSIBLE = {"set_alert": {"above": 25}}


def _sample(schema, tool=None):
    # Arguments for a demo call: the smallest valid value of each required property, and what
    # SENSIBLE gives for the tool.
    args = {}
    props = (schema or {}).get("properties", {})
    for name in (schema or {}).get("required", []):
        kind = props.get(name, {}).get("type")
        if kind == "boolean":
            args[name] = True
        elif kind in ("integer", "number"):
            args[name] = props[name].get("minimum", 0)
        elif kind == "string":
            args[name] = props[name].get("enum", [""])[0]
        else:
            args[name] = None
    for name, value in SENSIBLE.get(tool, {}).items():
        if name in props:
            args[name] = value
    return args


def rounded(value):
    # Numbers as people read them: 6 significant digits (a float32 board's 22.06999969482422 is
    # 22.07), in lists and objects too.
    if type(value) is float:
        return float("%.6g" % value)
    if type(value) is list:
        return [rounded(v) for v in value]
    if type(value) is dict:
        return {k: rounded(v) for k, v in value.items()}
    return value


def shown_content(item, tool):
    # A content item of a tool result: its text, or an image saved where the user can open it.
    if item.get("type") == "text":
        return item.get("text")
    if item.get("type") == "image" and type(item.get("data")) is str:
        mime = item.get("mimeType", "")
        data = base64.b64decode(item["data"])
        ext = {"image/svg+xml": ".svg", "image/png": ".png", "image/jpeg": ".jpg"}.get(mime, "")
        fd, path = tempfile.mkstemp(prefix="tinymcp-demo-%s-" % (tool or "image"), suffix=ext)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        if mime == "image/svg+xml":   # what the bridge passes when it draws no PNG
            mime += " (most hosts' models see no SVG: the bridge draws PNG with %s)" % EXTRA
        return "%s, %.1f KB: %s" % (mime or "image", len(data) / 1024, path)
    return item.get("type")


def summary(method, result, tool=None):
    # The interesting part of a result, so a transcript line shows the reading, not the wrapping.
    result = result if type(result) is dict else {}
    if method == "initialize":
        info = result.get("serverInfo", {})
        return "%s %s, protocol %s, capabilities %s" % (
            info.get("name"), info.get("version"), result.get("protocolVersion"),
            ", ".join(sorted(result.get("capabilities", {}))))
    if method == "tools/list":
        return "tools: " + ", ".join(t.get("name", "?") for t in result.get("tools", []))
    if method == "resources/list":
        return "resources: " + ", ".join(r.get("uri", "?") for r in result.get("resources", []))
    if method == "tools/call":
        shown = result.get("structuredContent")
        if shown is None:
            shown = [shown_content(c, tool) for c in result.get("content", [])
                     if type(c) is dict]
        return ("tool error " if result.get("isError") else "") + json.dumps(rounded(shown))
    if method == "resources/read":
        return " ".join("%s %s" % (c.get("uri"), c.get("text", "<%d bytes>" % len(
            c.get("blob", "")))) for c in result.get("contents", []))
    return json.dumps(result)


class DemoClient:
    def __init__(self, hosts, out=None):
        self.out = out or sys.stderr
        self.width = max(60, shutil.get_terminal_size((100, 20)).columns) - 1
        self.waiting = {}
        self.ids = itertools.count(0)   # id 0 first, as the Inspector does: ids pass back exactly
        self.updates = asyncio.Queue()
        self.session = hosts.open_session(self._receive, "demo")

    def say(self, arrow, text):
        line = "%s %s" % (arrow, text)
        if len(line) > self.width:
            line = line[:self.width - 1] + "\u2026"
        print(line, file=self.out, flush=True)

    def _receive(self, msg, related=None):
        if "method" not in msg:
            future, method, tool = self.waiting.pop(msg.get("id"), (None, None, None))
            if "error" in msg:
                self.say(ARROW_IN, "error " + json.dumps(msg["error"]))
            else:
                self.say(ARROW_IN, summary(method, msg.get("result"), tool))
            if future is not None and not future.done():
                future.set_result(msg)
            return
        self.say(ARROW_IN, "%s %s" % (msg["method"], json.dumps(msg.get("params", {}))))
        if msg["method"] == "notifications/resources/updated":
            self.updates.put_nowait(msg["params"]["uri"])

    async def request(self, method, params=None, show=None):
        rid = next(self.ids)
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.say(ARROW_OUT, show or "%s %s" % (method, json.dumps(params or {})))
        future = asyncio.get_running_loop().create_future()
        self.waiting[rid] = (future, method, (params or {}).get("name"))
        self.session.receive(msg)
        return await future

    def notify(self, method):
        self.say(ARROW_OUT, method)
        self.session.receive({"jsonrpc": "2.0", "method": method})


async def run_demo(hosts, seconds=None, out=None):
    # Initialize, list and call every tool, read and subscribe to every resource, then show
    # updates as they arrive for `seconds` (forever when None). The tour is always shown whole
    # and the seconds count from its end: a slow board or a busy machine still shows updates.
    client = DemoClient(hosts, out)
    loop = asyncio.get_running_loop()
    try:
        await client.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                            "clientInfo": {"name": "tinymcp-demo",
                                                           "version": "0.1.0"}})
        client.notify("notifications/initialized")
        tools = (await client.request("tools/list")).get("result", {}).get("tools", [])
        for tool in tools:
            args = _sample(tool.get("inputSchema"), tool["name"])
            await client.request("tools/call", {"name": tool["name"], "arguments": args},
                                 show="tools/call %s %s" % (tool["name"], json.dumps(args)))
        listed = (await client.request("resources/list")).get("result", {})
        for resource in listed.get("resources", []):
            await client.request("resources/read", {"uri": resource["uri"]})
            await client.request("resources/subscribe", {"uri": resource["uri"]})
        print("-- watching for resources/updated (Ctrl-C ends) --", file=client.out, flush=True)
        end = None if seconds is None else loop.time() + seconds
        while end is None or loop.time() < end:
            timeout = None if end is None else max(0.0, end - loop.time())
            try:
                uri = await asyncio.wait_for(client.updates.get(), timeout)
            except asyncio.TimeoutError:
                break
            await client.request("resources/read", {"uri": uri})
    finally:
        client.session.close()
