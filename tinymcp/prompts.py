# Prompts: a function filling a message template from string arguments.
from tinymcp import once
from tinymcp.jsonrpc import RpcError, INVALID_PARAMS
from tinymcp.protocol import const
from tinymcp.registry import Registry

# The entry slots read here: private copies (mpy-cross folds them away, no RAM) of the layout
# tinymcp/entries.py owns; tests/test_entries.py checks each against the owner's.
_KEY = const(0)
_FN = const(1)
_DESCRIPTION = const(2)
_ARGUMENTS = const(5)


def _text_message(text):
    return {"role": "user", "content": {"type": "text", "text": text}}


class Prompts(Registry):
    def add(self, fn, name, description, args, title, complete):
        arguments = []   # as prompts/list shows them
        for key in (args or {}):
            optional = key[-1] == "?"
            arg = {"name": key[:-1] if optional else key}
            if args[key]:
                arg["description"] = args[key]
            arg["required"] = not optional
            arguments.append(arg)
        self.put((name, fn, description, title, complete or {}, arguments))

    def get(self, params):
        prompt = self.named(params, "prompt")
        name = prompt[_KEY]
        args = params.get("arguments")
        if args is None:
            args = {}
        if type(args) is not dict:
            raise RpcError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        known = [a["name"] for a in prompt[_ARGUMENTS]]
        for key in args:
            if key not in known:
                raise RpcError(INVALID_PARAMS, "Unknown argument " + once("tinymcp.echo.shown", key, "'")
                               + " for prompt " + name)
            if type(args[key]) is not str:
                raise RpcError(INVALID_PARAMS, "Argument '" + key + "' must be a string")
        for arg in prompt[_ARGUMENTS]:
            if arg["required"] and arg["name"] not in args:
                raise RpcError(INVALID_PARAMS,
                               "Missing required argument '" + arg["name"] + "' for prompt " + name)
        value = prompt[_FN](**args)
        if type(value) is str:
            messages = [_text_message(value)]
        else:
            messages = [_text_message(m) if type(m) is str else m for m in value]
        result = {"messages": messages}
        if prompt[_DESCRIPTION]:
            result["description"] = prompt[_DESCRIPTION]
        return result


# The prompts/* methods, in the server's table from its first prompt on (Server.add_methods).
def _list(server, params):
    return server.page("prompts", server.prompts.items, params)


def _get(server, params):
    return server.prompts.get(params)


HANDLERS = {"prompts/list": _list, "prompts/get": _get}
