# JSON Schema, declared compactly once: builds tool/prompt schemas and validates arguments.
#
#   inputs={"channel": integer("ADC channel", 0, 3), "unit?": string(enum=("C", "F"))}
#
# A trailing "?" on a property name makes it optional; everything else is required.


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


def _where(path):
    return ("'" + path + "'") if path else "the arguments"


def check(schema, value, path=""):
    # -> None when value conforms, else a sentence a model can act on.
    kind = schema.get("type")
    if kind is not None and not _type_ok(kind, value):
        kinds = kind if type(kind) is list else [kind]
        return _where(path) + " must be " + (" or ".join(kinds)) + ", got " + _json_type(value)
    if "enum" in schema and value not in schema["enum"]:
        return _where(path) + " must be one of " + ", ".join([_show(v) for v in schema["enum"]])
    if "const" in schema and value != schema["const"]:
        return _where(path) + " must be " + _show(schema["const"])
    if type(value) in _NUMBERS:
        if "minimum" in schema and value < schema["minimum"]:
            return _where(path) + " must be >= " + _show(schema["minimum"])
        if "maximum" in schema and value > schema["maximum"]:
            return _where(path) + " must be <= " + _show(schema["maximum"])
    elif type(value) is str:
        if "minLength" in schema and len(value) < schema["minLength"]:
            return _where(path) + " must have at least " + str(schema["minLength"]) + " characters"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return _where(path) + " must have at most " + str(schema["maxLength"]) + " characters"
    elif type(value) is list:
        if "minItems" in schema and len(value) < schema["minItems"]:
            return _where(path) + " must have at least " + str(schema["minItems"]) + " items"
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            return _where(path) + " must have at most " + str(schema["maxItems"]) + " items"
        items = schema.get("items")
        if items:
            for i in range(len(value)):
                err = check(items, value[i], path + "[" + str(i) + "]")
                if err:
                    return err
    elif type(value) is dict:
        return _check_object(schema, value, path)
    return None


def arguments(declared, args):
    # -> None when args (a dict) fit a tool's declared inputs, else the sentence for the model.
    # declared: the compact form, checked as the object schema obj() publishes for it, or a
    # whole schema.
    if type(declared.get("type")) is str:
        return check(declared, args)
    for key in declared:
        if key[-1] != "?" and key not in args:
            return "missing required argument '" + key + "'"
    for name in args:
        sub = declared.get(name)
        if sub is None:
            sub = declared.get(name + "?")
            if sub is None:
                known = ", ".join([k[:-1] if k[-1] == "?" else k for k in declared]) or "none"
                return "unknown argument '" + name + "' (accepted: " + known + ")"
        err = check(sub, args[name], name)
        if err:
            return err
    return None


def _check_object(schema, value, path):
    props = schema.get("properties") or {}
    for name in schema.get("required", ()):
        if name not in value:
            return "missing required argument '" + _join(path, name) + "'"
    extra = schema.get("additionalProperties", True)
    for name in value:
        sub = props.get(name)
        if sub is None:
            if extra is False:
                known = ", ".join(props) or "none"
                return "unknown argument '" + _join(path, name) + "' (accepted: " + known + ")"
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
