# Prompts: a function filling a message template from string arguments.
from tinymcp.jsonrpc import RpcError, INVALID_PARAMS
from tinymcp.server import Registry, describe_head


class Prompt:
    def __init__(self, fn, name, description, args, title, complete):
        self.fn = fn
        self.name = name
        self.description = description
        self.title = title
        self.complete = complete or {}
        self.arguments = []  # [(name, description, required)]
        for key in (args or {}):
            optional = key[-1] == "?"
            self.arguments.append((key[:-1] if optional else key, args[key], not optional))

    def describe(self, era):
        d = describe_head(self, era)
        if self.arguments:
            d["arguments"] = [_argument(a) for a in self.arguments]
        return d


def _argument(arg):
    d = {"name": arg[0]}
    if arg[1]:
        d["description"] = arg[1]
    d["required"] = arg[2]
    return d


def _text_message(text):
    return {"role": "user", "content": {"type": "text", "text": text}}


class Prompts(Registry):
    def add(self, fn, name, description, args, title, complete):
        self.put(Prompt(fn, name, description, args, title, complete))

    def get(self, name, args):
        prompt = self.find(name)
        if prompt is None:
            raise RpcError(INVALID_PARAMS, "Unknown prompt: " + name)
        if args is None:
            args = {}
        if type(args) is not dict:
            raise RpcError(INVALID_PARAMS, "Invalid params: arguments must be an object")
        known = [a[0] for a in prompt.arguments]
        for key in args:
            if key not in known:
                raise RpcError(INVALID_PARAMS, "Unknown argument '" + key + "' for prompt " + name)
            if type(args[key]) is not str:
                raise RpcError(INVALID_PARAMS, "Argument '" + key + "' must be a string")
        for arg in prompt.arguments:
            if arg[2] and arg[0] not in args:
                raise RpcError(INVALID_PARAMS,
                               "Missing required argument '" + arg[0] + "' for prompt " + name)
        value = prompt.fn(**args)
        if type(value) is str:
            messages = [_text_message(value)]
        else:
            messages = [_text_message(m) if type(m) is str else m for m in value]
        result = {"messages": messages}
        if prompt.description:
            result["description"] = prompt.description
        return result
