# Resources: exact URIs and RFC 6570 level-1 templates, matched as strings (never as paths).
from tinymcp.jsonrpc import BINARY, RpcError, INTERNAL_ERROR, RESOURCE_NOT_FOUND, text
from tinymcp.server import describe_head

try:
    from binascii import b2a_base64
except ImportError:
    from ubinascii import b2a_base64

_RESERVED = "/?#"


class Resource:
    def __init__(self, fn, uri, name, description, mime, title, watch, complete):
        self.fn = fn
        self.uri = uri
        self.name = name
        self.description = description
        self.mime = mime
        self.title = title
        self.watch = watch
        self.complete = complete or {}
        self.literals = None
        self.variables = None
        if "{" in uri:
            pieces = uri.split("{")
            self.literals = [pieces[0]]
            self.variables = []
            for piece in pieces[1:]:
                var, _, literal = piece.partition("}")
                self.variables.append(var)
                self.literals.append(literal)

    def describe(self, era):
        d = describe_head(self, era)
        d["uriTemplate" if self.variables else "uri"] = self.uri
        if self.mime:
            d["mimeType"] = self.mime
        return d

    def match(self, uri):
        # Template variables from uri, or None. A value is never empty and never spans a
        # reserved character, so "{id}" cannot swallow "../x" or "a/b".
        literals = self.literals
        if not uri.startswith(literals[0]):
            return None
        pos = len(literals[0])
        found = {}
        last = len(self.variables) - 1
        for i in range(last + 1):
            literal = literals[i + 1]
            if literal == "" and i == last:
                end = len(uri)
            elif literal == "":
                return None  # adjacent variables are ambiguous
            else:
                end = uri.find(literal, pos)
                if end < 0:
                    return None
            value = uri[pos:end]
            if not value:
                return None
            for ch in _RESERVED:
                if ch in value:
                    return None
            found[self.variables[i]] = _unquote(value)
            pos = end + len(literal)
        return found if pos == len(uri) else None


def _unquote(text):
    if "%" not in text:
        return text
    raw = text.encode()
    out = bytearray()
    i = 0
    while i < len(raw):
        if raw[i] == 37 and i + 2 < len(raw) and _hex(raw[i + 1:i + 3]):
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    return out.decode()


def _hex(pair):
    for c in pair:
        if not (48 <= c <= 57 or 65 <= c <= 70 or 97 <= c <= 102):
            return False
    return len(pair) == 2


class Resources:
    def __init__(self):
        self.static = []
        self.templates = []

    def add(self, fn, uri, name, description, mime, title, watch, complete):
        self.remove(uri)
        res = Resource(fn, uri, name, description, mime, title, watch, complete)
        (self.templates if res.variables else self.static).append(res)

    def remove(self, uri):
        for group in (self.static, self.templates):
            for res in group:
                if res.uri == uri:
                    group.remove(res)
                    return True
        return False

    def resolve(self, uri):
        # -> (resource, variables) or None. Exact URIs win over templates.
        for res in self.static:
            if res.uri == uri:
                return res, {}
        for res in self.templates:
            found = res.match(uri)
            if found is not None:
                return res, found
        return None

    def lookup(self, uri):
        found = self.resolve(uri)
        if found is None:
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found: " + uri, {"uri": uri})
        return found

    def template(self, uri_template):
        for res in self.templates:
            if res.uri == uri_template:
                return res
        return None

    def fetch(self, uri):
        # -> (resource, what its function returned); a failing read is an RpcError naming it.
        res, variables = self.lookup(uri)
        try:
            return res, res.fn(**variables)
        except RpcError:
            raise
        except Exception as e:  # a sensor fault: its advice, not "Internal error"
            why = str(e) or e.__class__.__name__
            raise RpcError(INTERNAL_ERROR, "Reading " + uri + " failed: " + why, {"uri": uri})

    def read(self, uri):
        res, value = self.fetch(uri)
        if type(value) is list and value and type(value[0]) is dict and "uri" in value[0]:
            return {"contents": value}  # the resource built its own contents
        return {"contents": [content(uri, value, res.mime)]}


def content(uri, value, mime=None):
    # One resource content: str -> text, bytes -> base64 blob, anything else -> JSON text.
    item = {"uri": uri}
    if type(value) is str:
        if mime:
            item["mimeType"] = mime
        item["text"] = value
    elif type(value) in BINARY:
        item["mimeType"] = mime or "application/octet-stream"
        item["blob"] = b2a_base64(value).decode().rstrip("\n")
    else:
        item["mimeType"] = mime or "application/json"
        item["text"] = text(value)
    return item
