# Tools: one decorated function each; its declared schema drives tools/list and validation.
from tinymcp import once, schema
from tinymcp.protocol import const
from tinymcp.registry import Registry

# The entry slots read here: private copies (mpy-cross folds them away, no RAM) of the layout
# tinymcp/entries.py owns; tests/test_entries.py checks each against the owner's.
_KEY = const(0)
_FN = const(1)
_INPUTS = const(4)
_OUTPUTS = const(5)
_HINTS = const(6)
_CTX = const(7)


def pack_hints(values):
    # (read_only, destructive, idempotent, open_world), each True/False/None -> one small int,
    # two bits a hint (0 = not given), in the order tinymcp/listing.py reads them.
    packed = 0
    for i in range(len(values)):
        if values[i] is not None:
            packed |= (2 if values[i] else 1) << (2 * i)
    return packed


def error_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": True}


class Tools(Registry):
    tasks = False  # a tool declares task support: the server offers tasks (tinymcp/tasks.py)

    def add(self, fn, name, description, inputs, outputs, title, hints, wants_ctx):
        inputs = inputs or {}
        fn = once("tinymcp.schemakind.checked", fn, inputs)  # JSON Schema beyond the helpers'
        self.put((name, fn, description, title, inputs, outputs, hints, wants_ctx))

    def call(self, server, params):
        tool = self.named(params, "tool")
        name = tool[_KEY]
        structured = tool[_OUTPUTS] is not None
        task = None
        if tool[_HINTS] >> 8 or (self.tasks and "task" in params):  # as a task? its revision says
            task = server.tasks().wanted(server, params, tool[_HINTS] >> 8, name)
        args = params.get("arguments")
        if args is None:
            args = {}
        # Argument problems and tool failures are results with isError, so a model can retry.
        declared = tool[_INPUTS]
        problem = schema.arguments(declared, args) if type(args) is dict else "expected an object"
        if problem:
            value = error_result("Invalid arguments for " + name + ": " + problem)
        else:
            _complete(declared, args)
            try:
                if tool[_CTX]:
                    value = tool[_FN](ctx=server.ctx, **args)
                else:
                    value = tool[_FN](**args)
                if type(value).__name__ != "generator":
                    value = shape(value, structured, server)
            except Exception as e:
                text = str(e)
                value = error_result(name + " failed: " + (text or e.__class__.__name__))
        if task is not None or type(value).__name__ == "generator":
            # a task, or a long tool called plainly: stepped in the loop's idle time
            again = None
            if task is not None:  # what a task's rerun needs (tinymcp/tasks.py)
                again = (tool[_FN], args, tool[_CTX], server.session.call.meta)
            return server.tasks().start(server, value, name, structured, task, again)
        return value


def _complete(declared, args):
    # Defaults for missing optional arguments; integers given as 2.0 become 2.
    props = declared.get("properties") if type(declared.get("type")) is str else declared
    if not props:
        return
    for key in props:
        prop = props[key]
        name = key[:-1] if key[-1] == "?" else key
        if name not in args:
            if "default" in prop:
                args[name] = prop["default"]
        elif prop.get("type") == "integer" and type(args[name]) is float:
            args[name] = int(args[name])


def shape(value, structured, server):
    # A tool's return value as a CallToolResult: dict -> structured content with a text mirror,
    # str -> one text block, list -> content blocks as given, None -> no content.
    if type(value) is dict:
        for key in value:  # a reading gone wrong must not become a frame JSON cannot carry
            x = value[key]
            if type(x) is float and x - x != 0:
                return error_result("the tool's result holds NaN or infinity in '" + key + "'")
        reply = server.structured  # [value, full, tail] (jsonrpc.py), refilled
        reply[0] = value
        reply[1] = server.session.era >= 2
        reply[2] = None  # the revision's finish() adds its own
        return reply
    if type(value) is str:
        return {"content": [{"type": "text", "text": value}]}
    if type(value) is list:
        return {"content": value}
    if value is None and not structured:
        return {"content": []}
    return error_result("tool returned " + value.__class__.__name__ + ", not a result")
