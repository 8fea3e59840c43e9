# Tools: one decorated function each; its declared schema drives tools/list and validation.
from tinymcp import schema
from tinymcp.jsonrpc import text
from tinymcp.server import Registry, describe_head


class Tool:
    def __init__(self, fn, name, description, inputs, outputs, title, annotations, wants_ctx):
        self.fn = fn
        self.name = name
        self.description = description
        self.title = title
        self.input_schema = _schema(inputs or {})
        self.output_schema = _schema(outputs) if outputs is not None else None
        self.annotations = annotations
        self.wants_ctx = wants_ctx

    def describe(self, era):
        d = describe_head(self, era)
        d["inputSchema"] = self.input_schema
        if self.output_schema is not None and era >= 2:
            d["outputSchema"] = self.output_schema
        if era >= 1 and (self.annotations or self.title):
            notes = {}
            if self.title:
                notes["title"] = self.title
            for key in self.annotations:
                notes[key] = self.annotations[key]
            d["annotations"] = notes
        return d


def _schema(declared):
    # The compact {"name": schema} form, or a whole JSON Schema (it has a "type" string) used
    # as written, for 2020-12 keywords such as $defs that the compact form does not spell.
    return declared if type(declared.get("type")) is str else schema.obj(declared)


def error_result(text):
    return {"content": [{"type": "text", "text": text}], "isError": True}


class Tools(Registry):
    def add(self, fn, name, description, inputs, outputs, title, annotations, wants_ctx):
        self.put(Tool(fn, name, description, inputs, outputs, title, annotations, wants_ctx))

    def call(self, tool, args, ctx, era):
        # Argument problems and tool failures are results with isError, so a model can retry.
        if type(args) is not dict:
            return error_result("Invalid arguments for " + tool.name + ": expected an object")
        problem = schema.check(tool.input_schema, args)
        if problem:
            return error_result("Invalid arguments for " + tool.name + ": " + problem)
        props = tool.input_schema["properties"]
        for key in props:
            prop = props[key]
            if key not in args:
                if "default" in prop:
                    args[key] = prop["default"]
            elif prop.get("type") == "integer" and type(args[key]) is float:
                args[key] = int(args[key])
        try:
            if tool.wants_ctx:
                value = tool.fn(ctx=ctx, **args)
            else:
                value = tool.fn(**args)
        except Exception as e:
            text = str(e)
            return error_result(tool.name + " failed: " + (text or e.__class__.__name__))
        return shape(value, tool.output_schema is not None, era)


_TEXT_HEAD = b'{"content":[{"type":"text","text":'


def shape(value, structured, era):
    # A tool's return value as a CallToolResult: dict -> structured content with a text mirror,
    # str -> one text block, list -> content blocks as given, None -> no content.
    if type(value) is dict:
        # Encoded as pieces, so no result dict is built: the JSON of value and its mirror.
        mirror = text(value)
        if era >= 2:
            return (_TEXT_HEAD, text(mirror), b'}],"structuredContent":', mirror, b"}")
        return (_TEXT_HEAD, text(mirror), b"}]}")
    if type(value) is str:
        return {"content": [{"type": "text", "text": value}]}
    if type(value) is list:
        return {"content": value}
    if value is None and not structured:
        return {"content": []}
    return error_result("tool returned " + value.__class__.__name__ + ", not a result")
