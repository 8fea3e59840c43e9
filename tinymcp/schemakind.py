# Which checker a tool's declared inputs need: tinymcp/schema.py's (the helpers' keywords) or
# tinymcp/jsonschema.py's (any other). Loaded as each tool is registered and let go after, so a
# board that only uses the helpers never holds it, nor tinymcp/jsonschema.py.
_PLAIN = ("type", "description", "title", "default", "enum", "const", "minimum", "maximum",
          "minLength", "maxLength", "items", "minItems", "maxItems", "properties", "required",
          "additionalProperties")


def checked(fn, inputs):
    # -> fn as it is when inputs (a whole schema, or the compact {"name": schema} form) hold
    # only keywords tinymcp/schema.py checks, else fn behind tinymcp/jsonschema.py's check
    # (which refuses what it cannot check).
    if _plain(inputs if type(inputs.get("type")) is str else {"properties": inputs}):
        return fn
    from tinymcp import once
    return once("tinymcp.jsonschema.guard", fn, inputs)


def _plain(schema):
    for key in schema:
        if key not in _PLAIN:
            return False
        sub = schema[key]
        if type(sub) is dict and key != "default" and key != "const":  # values, not schemas
            for s in (sub.values() if key == "properties" else (sub,)):
                if type(s) is dict and not _plain(s):
                    return False
    return True
