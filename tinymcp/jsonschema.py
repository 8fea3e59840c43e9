# JSON Schema 2020-12 beyond tinymcp/schema.py's keywords ($ref, allOf, if/then/else, pattern,
# formats...), for a board that declares such a schema (tinymcp/schemakind.py tells). guard()
# runs as the tool is registered, refuses what this board cannot check, and puts a check of the
# arguments before the tool. Loaded only for such a board (tinymcp/later.py): the schema helpers
# stay the cheap path.
import re

from tinymcp.refusal import _json_type, _show, _where
from tinymcp.schema import obj, _join, _type_ok

# 2020-12 keywords this board cannot check: a schema holding one is refused where it is declared.
# Keywords it does not know at all are annotations (title, examples, x-...): passed on, unchecked.
_REFUSED = ("$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary",
            "unevaluatedProperties", "unevaluatedItems")
# Where subschemas sit: one schema, a list of them, or a name -> schema map.
_ONE = ("items", "additionalProperties", "propertyNames", "contains", "not", "if", "then",
        "else")
_LIST = ("allOf", "anyOf", "oneOf", "prefixItems")
_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_FORMATS = ("date-time", "date", "time", "email", "uuid", "ipv4", "uri")
_DEPTH = 64   # subschemas deep (refs followed included) before a check gives up


def guard(fn, declared):
    # -> fn behind a check of its arguments against declared (a whole schema, or the compact
    # {"name": schema, "optional?": schema} form); raises ValueError naming what the board
    # cannot check in it. A call whose arguments do not fit gets an isError result.
    root = _whole(declared)
    _vet(root, root, True)

    def checked(**args):
        ctx = args.pop("ctx", None)
        problem = _check(root, root, args, "", 0)
        if problem:
            raise ValueError("Invalid arguments: " + problem)
        if ctx is not None:
            args["ctx"] = ctx
        return fn(**args)
    return checked


def _whole(schema):
    return schema if type(schema.get("type")) is str else obj(schema)


def _vet(node, root, top):
    if type(node) is bool:
        return
    if type(node) is not dict:
        raise ValueError("inputSchema: a subschema must be an object or a boolean")
    for key in node:
        value = node[key]
        if key in _REFUSED:
            raise ValueError("inputSchema: this board cannot check '" + key + "'")
        if key == "$id" and not top:
            raise ValueError("inputSchema: '$id' below the root is not checked on this board")
        if key == "$ref":
            _resolve(root, value)
        elif key == "format" and value not in _FORMATS:
            raise ValueError("inputSchema: this board cannot check format '" + str(value)
                             + "' (it checks " + ", ".join(_FORMATS) + ")")
        elif key == "pattern":
            _compile(value)
        elif key in _ONE:
            _vet(value, root, False)
        elif key in _LIST:
            for sub in value:
                _vet(sub, root, False)
        elif key in _MAP:
            for name in value:
                if key == "patternProperties":
                    _compile(name)
                _vet(value[name], root, False)


def _compile(pattern):
    try:
        return re.compile(pattern)
    except Exception:
        raise ValueError("inputSchema: pattern " + _show(pattern)
                         + " is beyond this board's regular expressions")


def _resolve(root, ref):
    # A local $ref ("#", "#/json/pointer", "#anchor") -> its subschema.
    if type(ref) is not str or ref[:1] != "#":
        raise ValueError("inputSchema: only local $ref ('#...') is checked on this board, not "
                         + _show(ref))
    if ref[1:2] == "/" or ref == "#":
        node = root
        for part in ref[2:].split("/") if ref != "#" else ():
            part = part.replace("~1", "/").replace("~0", "~")
            if type(node) is list and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            elif type(node) is dict and part in node:
                node = node[part]
            else:
                raise ValueError("inputSchema: $ref " + ref + " points at nothing")
        return node
    found = _anchor(root, ref[1:])
    if found is None:
        raise ValueError("inputSchema: $ref " + ref + " names no $anchor")
    return found


def _anchor(node, name):
    if type(node) is dict:
        if node.get("$anchor") == name:
            return node
        node = list(node.values())
    if type(node) is list:
        for sub in node:
            found = _anchor(sub, name)
            if found is not None:
                return found
    return None


def _equal(a, b):
    # JSON equality: true is not 1, 1 is 1.0, objects by their members.
    if (type(a) is bool) != (type(b) is bool):
        return False
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(_equal(a[i], b[i]) for i in range(len(a)))
    if type(a) is dict and type(b) is dict:
        return len(a) == len(b) and all(k in b and _equal(a[k], b[k]) for k in a)
    return a == b


def _check(node, root, value, path, depth):
    if node is True:
        return None
    if node is False:
        return _where(path) + " is not allowed here"
    if depth > _DEPTH:
        return _where(path) + " nests deeper than this board checks"
    depth += 1
    if "$ref" in node:
        err = _check(_resolve(root, node["$ref"]), root, value, path, depth)
        if err:
            return err
    kind = node.get("type")
    if kind is not None and not _type_ok(kind, value):
        kinds = kind if type(kind) is list else [kind]
        return _where(path) + " must be " + " or ".join(kinds) + ", got " + _json_type(value)
    if "enum" in node and not any(_equal(value, v) for v in node["enum"]):
        return _where(path) + " must be one of " + ", ".join([_show(v) for v in node["enum"]])
    if "const" in node and not _equal(value, node["const"]):
        return _where(path) + " must be " + _show(node["const"])
    err = _combined(node, root, value, path, depth)
    if err:
        return err
    t = type(value)
    if t is int or t is float:
        return _number(node, value, path)
    if t is str:
        return _string(node, value, path)
    if t is list:
        return _array(node, root, value, path, depth)
    if t is dict:
        return _object(node, root, value, path, depth)
    return None


def _combined(node, root, value, path, depth):
    for sub in node.get("allOf", ()):
        err = _check(sub, root, value, path, depth)
        if err:
            return err
    if "anyOf" in node:
        if not any(_check(s, root, value, path, depth) is None for s in node["anyOf"]):
            return _where(path) + " must match at least one of its anyOf schemas"
    if "oneOf" in node:
        fits = len([s for s in node["oneOf"] if _check(s, root, value, path, depth) is None])
        if fits != 1:
            return _where(path) + " must match exactly one of its oneOf schemas, not " + str(fits)
    if "not" in node and _check(node["not"], root, value, path, depth) is None:
        return _where(path) + " must not match its 'not' schema"
    if "if" in node:
        branch = "then" if _check(node["if"], root, value, path, depth) is None else "else"
        if branch in node:
            return _check(node[branch], root, value, path, depth)
    return None


def _number(node, value, path):
    if "minimum" in node and value < node["minimum"]:
        return _where(path) + " must be >= " + _show(node["minimum"])
    if "maximum" in node and value > node["maximum"]:
        return _where(path) + " must be <= " + _show(node["maximum"])
    if "exclusiveMinimum" in node and value <= node["exclusiveMinimum"]:
        return _where(path) + " must be > " + _show(node["exclusiveMinimum"])
    if "exclusiveMaximum" in node and value >= node["exclusiveMaximum"]:
        return _where(path) + " must be < " + _show(node["exclusiveMaximum"])
    step = node.get("multipleOf")
    if step and abs(value / step - round(value / step)) > 1e-6 * max(1, abs(value / step)):
        return _where(path) + " must be a multiple of " + _show(step)
    return None


def _string(node, value, path):
    if "minLength" in node and len(value) < node["minLength"]:
        return _where(path) + " must have at least " + str(node["minLength"]) + " characters"
    if "maxLength" in node and len(value) > node["maxLength"]:
        return _where(path) + " must have at most " + str(node["maxLength"]) + " characters"
    if "pattern" in node and _compile(node["pattern"]).search(value) is None:
        return _where(path) + " must match the pattern " + _show(node["pattern"])
    if "format" in node and not _format(node["format"], value):
        return _where(path) + " must be a " + node["format"] + ", got " + _show(value)
    return None


_DATE = "[0-9][0-9][0-9][0-9]-[01][0-9]-[0-3][0-9]"
_TIME = "[0-2][0-9]:[0-5][0-9]:[0-6][0-9](\\.[0-9]+)?([Zz]|[+-][0-2][0-9]:[0-5][0-9])"
_SHAPES = {"date": _DATE, "time": _TIME, "date-time": _DATE + "[Tt ]" + _TIME,
           "email": "[^@ ]+@[^@ ]+\\.[^@ ]+",
           "uuid": "[0-9a-fA-F]+-[0-9a-fA-F]+-[0-9a-fA-F]+-[0-9a-fA-F]+-[0-9a-fA-F]+",
           "uri": "[a-zA-Z][a-zA-Z0-9+.-]*:[^ ]*"}


def _format(name, value):
    if name == "ipv4":
        parts = value.split(".")
        return len(parts) == 4 and all(p.isdigit() and len(p) <= 3 and int(p) < 256
                                       and (p == "0" or p[0] != "0") for p in parts)
    if name == "uuid" and (len(value) != 36 or [len(p) for p in value.split("-")]
                           != [8, 4, 4, 4, 12]):
        return False
    found = re.match(_SHAPES[name], value)
    return found is not None and found.group(0) == value


def _array(node, root, value, path, depth):
    if "minItems" in node and len(value) < node["minItems"]:
        return _where(path) + " must have at least " + str(node["minItems"]) + " items"
    if "maxItems" in node and len(value) > node["maxItems"]:
        return _where(path) + " must have at most " + str(node["maxItems"]) + " items"
    if node.get("uniqueItems") is True:
        for i in range(len(value)):
            for j in range(i):
                if _equal(value[i], value[j]):
                    return _where(path) + " must hold no item twice"
    first = node.get("prefixItems", ())
    for i in range(len(value)):
        sub = first[i] if i < len(first) else node.get("items", True)
        err = _check(sub, root, value[i], path + "[" + str(i) + "]", depth)
        if err:
            return err
    if "contains" in node:
        count = len([v for v in value if _check(node["contains"], root, v, path, depth) is None])
        least = node.get("minContains", 1)
        if count < least or ("maxContains" in node and count > node["maxContains"]):
            return _where(path) + " holds " + str(count) + " items its 'contains' schema matches"
    return None


def _object(node, root, value, path, depth):
    for name in node.get("required", ()):
        if name not in value:
            return "missing required argument '" + _join(path, name) + "'"
    if "minProperties" in node and len(value) < node["minProperties"]:
        return _where(path) + " must have at least " + str(node["minProperties"]) + " members"
    if "maxProperties" in node and len(value) > node["maxProperties"]:
        return _where(path) + " must have at most " + str(node["maxProperties"]) + " members"
    needs = node.get("dependentRequired") or {}
    for name in needs:
        if name in value:
            for other in needs[name]:
                if other not in value:
                    return ("missing argument '" + _join(path, other) + "', needed with '"
                            + _join(path, name) + "'")
    props = node.get("properties") or {}
    patterns = node.get("patternProperties") or {}
    extra = node.get("additionalProperties", True)
    for name in value:
        where = _join(path, name)
        if "propertyNames" in node:
            err = _check(node["propertyNames"], root, name, where, depth)
            if err:
                return "argument name " + err
        matched = name in props
        if matched:
            err = _check(props[name], root, value[name], where, depth)
            if err:
                return err
        for pattern in patterns:
            if _compile(pattern).search(name) is not None:
                matched = True
                err = _check(patterns[pattern], root, value[name], where, depth)
                if err:
                    return err
        if not matched:
            if extra is False:
                known = ", ".join(props) or "none"
                return "unknown argument '" + where + "' (accepted: " + known + ")"
            err = _check(extra, root, value[name], where, depth)
            if err:
                return err
    schemas = node.get("dependentSchemas") or {}
    for name in schemas:
        if name in value:
            err = _check(schemas[name], root, value, path, depth)
            if err:
                return err
    return None
