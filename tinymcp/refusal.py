# The sentence an argument check refuses with: tinymcp/schema.py's check finds what failed (the
# path, the schema keyword); this words it for the model. A valid call never needs it, so it is
# imported for a refusal and released after it (tinymcp.once, tinymcp/later.py).
from tinymcp import once


def sentence(path, key, schema, value):
    # key: the keyword value failed ("type", "enum", "minimum"...), or "required" (path names
    # the missing argument) or "additionalProperties" (value: the names accepted).
    if key == "required":
        return "missing required argument '" + path + "'"
    if key == "additionalProperties":
        return ("unknown argument " + once("tinymcp.echo.shown", path, "'") + " (accepted: "
                + (", ".join(value) or "none") + ")")
    bound = schema[key]
    if key == "type":
        kinds = bound if type(bound) is list else [bound]
        return _where(path) + " must be " + " or ".join(kinds) + ", got " + _json_type(value)
    if key == "enum":
        return _where(path) + " must be one of " + ", ".join([_show(v) for v in bound])
    if key == "const":
        return _where(path) + " must be " + _show(bound)
    if key == "minimum" or key == "maximum":
        return _where(path) + (" must be >= " if key == "minimum" else " must be <= ") + _show(bound)
    return (_where(path) + (" must have at least " if key[:3] == "min" else " must have at most ")
            + str(bound) + (" characters" if key[3:] == "Length" else " items"))


def _where(path):
    return ("'" + path + "'") if path else "the arguments"


def _show(value):
    if type(value) is str:
        return '"' + value + '"'
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def _json_type(value):
    if value is None:
        return "null"
    if type(value) is bool:
        return "boolean"
    if type(value) is int:
        return "integer"
    if type(value) is float:
        return "number" if value - value == 0 else "NaN or infinity"
    if type(value) is str:
        return "string"
    if type(value) is list:
        return "array"
    return "object"
