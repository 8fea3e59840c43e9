# A small board whose tool asks the user (elicitation), for the SDK tests of both eras.
# Runs from the repo root: `python tests/stateless_board.py`, `MICROPYPATH=. micropython tests/stateless_board.py`.
import sys

sys.path.insert(0, ".")

from tinymcp import Server  # noqa: E402
from tinymcp.schema import string  # noqa: E402

NAME_FORM = {"message": "Who is asking?", "requestedSchema": {
    "type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}


def build():
    server = Server("modern-test", "0.0.1")

    @server.tool("greet", "Greets whoever the user says they are.",
                 inputs={"greeting?": string("how to greet")}, outputs={"text": string()},
                 ctx=True)
    def greet(ctx, greeting="Hello"):
        # The same code serves both eras: a real elicitation/create request on a handshake
        # connection, an input-required result and a retry on a 2026-07-28 one.
        answer = ctx.request("elicitation/create", NAME_FORM)
        if answer.get("action") != "accept":
            return {"text": "nobody to greet"}
        confirm = ctx.request("elicitation/create", {
            "message": "Greet " + answer["content"]["name"] + "?",
            "requestedSchema": {"type": "object", "properties": {}}})
        if confirm.get("action") != "accept":
            return {"text": "not greeting " + answer["content"]["name"]}
        return {"text": greeting + ", " + answer["content"]["name"] + "!"}

    return server


if __name__ == "__main__":
    from ports import serve
    serve(build())
