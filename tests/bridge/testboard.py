# The simulated board plus what the bridge tests need: stray prints, a slow call, sampling, logging.
import importlib.util
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, REPO)

from tinymcp.jsonrpc import RpcError  # noqa: E402
from tinymcp.schema import number, string  # noqa: E402


def sim_server():
    # boards/sim/main.py's build(), loaded by path (the test boards run as scripts).
    spec = importlib.util.spec_from_file_location("sim_main", os.path.join(REPO, "boards", "sim",
                                                                           "main.py"))
    sim = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sim)
    return sim.build()


def build():
    server = sim_server()

    @server.tool("chatty", "Prints REPL-like noise onto the line, then answers.", read_only=True)
    def chatty():
        print("stray print from a driver")
        print("Traceback (most recent call last):\n  File \"main.py\", line 7, in <module>\n"
              "OSError: [Errno 19] ENODEV")
        print(">>> ", end="")
        sys.stdout.flush()  # a half line: the answer frame follows right behind it
        return {"ok": True}

    @server.tool("slow", "Takes its time (stops early when cancelled).",
                 inputs={"seconds": number("how long")}, read_only=False, ctx=True)
    def slow(seconds, ctx):
        start = time.monotonic()
        step = 0
        while time.monotonic() < start + seconds and not ctx.cancelled:
            time.sleep(0.02)
            if int((time.monotonic() - start) * 10) > step:  # progress every 0.1 s
                step += 1
                ctx.progress(step / 10, seconds)
        return {"slept": seconds}

    @server.tool("shout", "Logs a warning through MCP logging.", read_only=True, ctx=True)
    def shout(ctx):
        ctx.log("warning", "the board is shouting")
        return {"ok": True}

    @server.tool("grow", "Adds a tool at run time (the board says tools/list_changed).")
    def grow():
        @server.tool("extra", "A tool that was not there at first.", read_only=True)
        def extra():
            return {"extra": True}
        return {"ok": True}

    @server.tool("ask", "Asks the host's model a question (sampling).", ctx=True)
    def ask(ctx):
        reply = ctx.request("sampling/createMessage", {
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "maxTokens": 10}, 20000)
        return {"answer": reply["content"]["text"]}

    @server.tool("elicit", "Asks the user in a mode (form or url); says what came back.",
                 inputs={"mode": string("form or url")}, ctx=True)
    def elicit(mode, ctx):
        params = {"mode": mode, "message": "Sign in to the cloud"}
        if mode == "url":
            params.update(elicitationId="e1", url="https://example.com/sign-in")
        else:
            params["requestedSchema"] = {"type": "object", "properties": {"name": string()}}
        try:
            return {"answer": ctx.request("elicitation/create", params, 20000)}
        except RpcError as e:
            return {"refused": {"code": e.code, "message": e.message, "data": e.data}}

    return server


if __name__ == "__main__":
    from ports import serve
    serve(build())
