# completion/complete: values for a prompt argument or a resource-template variable.
from tinymcp import once
from tinymcp.jsonrpc import RpcError, INVALID_PARAMS
from tinymcp.protocol import const

# The entry slots read here: private copies (mpy-cross folds them away, no RAM) of the layout
# tinymcp/entries.py owns; tests/test_entries.py checks each against the owner's.
_COMPLETE = const(4)

MAX_VALUES = 100


def complete(server, params):
    ref = params.get("ref")
    arg = params.get("argument")
    if type(ref) is not dict or type(arg) is not dict or type(arg.get("name")) is not str:
        raise RpcError(INVALID_PARAMS, "Invalid params: ref and argument {name, value} required")
    value = arg.get("value", "")
    if type(value) is not str:
        raise RpcError(INVALID_PARAMS, "Invalid params: argument value must be a string")
    kind = ref.get("type")
    completers = None
    if kind == "ref/prompt" and server.prompts is not None:
        prompt = server.prompts.find(ref.get("name"))
        completers = prompt[_COMPLETE] if prompt else None
    elif kind == "ref/resource" and server.resources is not None:
        template = server.resources.template(ref.get("uri"))
        completers = template[_COMPLETE] if template else None
    if completers is None:
        raise RpcError(INVALID_PARAMS, "Invalid params: unknown "
                       + (once("tinymcp.echo.shown", kind) if type(kind) is str else "ref type")
                       + " reference")
    completer = completers.get(arg["name"])
    context = params.get("context")
    known = context.get("arguments") if type(context) is dict else None
    if completer is None:
        values = []
    elif callable(completer):
        values = list(completer(value, known or {}))
    else:
        values = [str(v) for v in completer if str(v).startswith(value)]
    total = len(values)
    return {"completion": {"values": values[:MAX_VALUES], "total": total,
                           "hasMore": total > MAX_VALUES}}
