# Prompts: a function filling a message template from string arguments.
from tinymcp.jsonrpc import RpcError, INVALID_PARAMS
from tinymcp.registry import Registry

# An entry: (name, fn, description, arguments, title, complete); arguments is
# [(name, description, required)]. Its list entry is tinymcp/listing.py's.


def _text_message(text):
    return {"role": "user", "content": {"type": "text", "text": text}}


class Prompts(Registry):
    def add(self, fn, name, description, args, title, complete):
        arguments = []
        for key in (args or {}):
            optional = key[-1] == "?"
            arguments.append((key[:-1] if optional else key, args[key], not optional))
        self.put((name, fn, description, arguments, title, complete or {}))

    def get(self, params):
        prompt = self.named(params, "prompt")
        name = prompt[0]
        args = params.get("arguments")
        if args is None:
            args = {}
        if type(args) is not dict:
            raise RpcError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        known = [a[0] for a in prompt[3]]
        for key in args:
            if key not in known:
                raise RpcError(INVALID_PARAMS, "Unknown argument '" + key + "' for prompt " + name)
            if type(args[key]) is not str:
                raise RpcError(INVALID_PARAMS, "Argument '" + key + "' must be a string")
        for arg in prompt[3]:
            if arg[2] and arg[0] not in args:
                raise RpcError(INVALID_PARAMS,
                               "Missing required argument '" + arg[0] + "' for prompt " + name)
        value = prompt[1](**args)
        if type(value) is str:
            messages = [_text_message(value)]
        else:
            messages = [_text_message(m) if type(m) is str else m for m in value]
        result = {"messages": messages}
        if prompt[2]:
            result["description"] = prompt[2]
        return result


# The prompts/* methods, in the server's table from its first prompt on (Server.add_methods).
def _list(server, params):
    return server.page("prompts", server.prompts.items, params)


def _get(server, params):
    return server.prompts.get(params)


HANDLERS = {"prompts/list": _list, "prompts/get": _get}
