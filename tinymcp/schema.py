# JSON Schema, declared compactly once: builds tool/prompt schemas and validates arguments.
#
#   inputs={"channel": integer("ADC channel", 0, 3), "unit?": string(enum=("C", "F"))}
#
# A trailing "?" on a property name makes it optional; everything else is required.
from tinymcp import once


def _put(schema, description, extra):
    if description:
        schema["description"] = description
    for key in extra:
        if extra[key] is not None:
            schema[key] = extra[key]
    return schema


def string(description=None, enum=None, min_length=None, max_length=None, default=None, title=None):
    return _put({"type": "string"}, description, {
        "enum": list(enum) if enum else None, "minLength": min_length,
        "maxLength": max_length, "default": default, "title": title})


def integer(description=None, minimum=None, maximum=None, default=None, enum=None, title=None):
    return _put({"type": "integer"}, description, {
        "minimum": minimum, "maximum": maximum, "default": default,
        "enum": list(enum) if enum else None, "title": title})


def number(description=None, minimum=None, maximum=None, default=None, title=None):
    return _put({"type": "number"}, description, {
        "minimum": minimum, "maximum": maximum, "default": default, "title": title})


def boolean(description=None, default=None, title=None):
    return _put({"type": "boolean"}, description, {"default": default, "title": title})


def array(items, description=None, min_items=None, max_items=None):
    return _put({"type": "array", "items": items}, description,
                {"minItems": min_items, "maxItems": max_items})


def obj(properties, description=None):
    # An object schema from the compact {"name": schema, "optional?": schema} form; a whole
    # schema (it has a "type" string) is returned as it is.
    if type(properties.get("type")) is str:
        return properties
    props = {}
    required = []
    for name in properties:
        if name[-1] == "?":
            props[name[:-1]] = properties[name]
        else:
            props[name] = properties[name]
            required.append(name)
    schema = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


_NUMBERS = (int, float)  # built once: a tuple literal of names is rebuilt on every use
_PY_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
             "object": (dict,), "array": (list,), "null": (type(None),)}


def _type_ok(kind, value):
    if type(kind) is list:  # {"type": ["string", "null"]}
        for k in kind:
            if _type_ok(k, value):
                return True
        return False
    if type(value) is float and (value != value or value - value != 0):
        return False  # NaN or infinity: no JSON number, whatever the schema says
    if kind == "integer" and type(value) is float:
        return value == int(value)  # JSON has one number type: 2.0 is an integer
    if type(value) is bool:
        return kind == "boolean"
    return isinstance(value, _PY_TYPES.get(kind, object))


def check(schema, value, path=""):
    # -> None when value conforms, else a sentence a model can act on (tinymcp/refusal.py words
    # it: a valid call never loads it).
    kind = schema.get("type")
    if kind is not None and not _type_ok(kind, value):
        return _refused(path, "type", schema, value)
    if "enum" in schema and value not in schema["enum"]:
        return _refused(path, "enum", schema, value)
    if "const" in schema and value != schema["const"]:
        return _refused(path, "const", schema, value)
    if type(value) in _NUMBERS:
        if "minimum" in schema and value < schema["minimum"]:
            return _refused(path, "minimum", schema, value)
        if "maximum" in schema and value > schema["maximum"]:
            return _refused(path, "maximum", schema, value)
    elif type(value) is str:
        if "minLength" in schema and len(value) < schema["minLength"]:
            return _refused(path, "minLength", schema, value)
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return _refused(path, "maxLength", schema, value)
    elif type(value) is list:
        if "minItems" in schema and len(value) < schema["minItems"]:
            return _refused(path, "minItems", schema, value)
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return _refused(path, "maxItems", schema, value)
        items = schema.get("items")
        if items:
            for i in range(len(value)):
                err = check(items, value[i], path + "[" + str(i) + "]")
                if err:
                    return err
    elif type(value) is dict:
        return _check_object(schema, value, path)
    return None


def _refused(path, key, schema, value):
    return once("tinymcp.refusal.sentence", path, key, schema, value)


def arguments(declared, args):
    # -> None when args (a dict) fit a tool's declared inputs, else the sentence for the model.
    # declared: the compact form, checked as the object schema obj() publishes for it, or a
    # whole schema.
    if type(declared.get("type")) is str:
        return check(declared, args)
    for key in declared:
        if key[-1] != "?" and key not in args:
            return _refused(key, "required", None, None)
    for name in args:
        sub = declared.get(name)
        if sub is None:
            sub = declared.get(name + "?")
            if sub is None:
                known = [k[:-1] if k[-1] == "?" else k for k in declared]
                return _refused(name, "additionalProperties", None, known)
        err = check(sub, args[name], name)
        if err:
            return err
    return None


def _check_object(schema, value, path):
    props = schema.get("properties") or {}
    for name in schema.get("required", ()):
        if name not in value:
            return _refused(_join(path, name), "required", None, None)
    extra = schema.get("additionalProperties", True)
    for name in value:
        sub = props.get(name)
        if sub is None:
            if extra is False:
                return _refused(_join(path, name), "additionalProperties", None, list(props))
            if type(extra) is dict:
                sub = extra
            else:
                continue
        err = check(sub, value[name], _join(path, name))
        if err:
            return err
    return None


def _join(path, name):
    return path + "." + name if path else name
