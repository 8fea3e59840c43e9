# Resources: exact URIs and RFC 6570 level-1 templates, matched as strings (never as paths).
from tinymcp import once
from tinymcp.jsonrpc import (BINARY, RpcError, INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND,
                             must, text)
from tinymcp.protocol import const

# The entry slots read here: private copies (mpy-cross folds them away, no RAM) of the layout
# tinymcp/entries.py owns; tests/test_entries.py checks each against the owner's.
_KEY = const(0)
_FN = const(1)
_MIME = const(6)
_WATCH = const(7)
_PARTS = const(8)


class Resources:
    def __init__(self):
        self.static = []
        self.templates = []

    def add(self, fn, uri, name, description, mime, title, watch, complete):
        self.remove(uri)
        parts = None
        if "{" in uri:
            from tinymcp.templates import parse
            parts = parse(uri)
        entry = (uri, fn, description, title, complete or {}, name, mime, watch, parts)
        (self.templates if parts else self.static).append(entry)

    def remove(self, uri):
        for group in (self.static, self.templates):
            for res in group:
                if res[_KEY] == uri:
                    group.remove(res)
                    return True
        return False

    def resolve(self, uri, strict=False):
        # -> (resource, variables) or None. Exact URIs win over templates. A URI that fits a
        # template with a value it refuses (tinymcp/templates.py) is None, or with strict a
        # ValueError saying why.
        for res in self.static:
            if res[_KEY] == uri:
                return res, {}
        if self.templates:
            from tinymcp.templates import match
            for res in self.templates:
                try:
                    found = match(res[_PARTS], uri)
                except ValueError:
                    if strict:
                        raise
                    return None
                if found is not None:
                    return res, found
        return None

    def lookup(self, uri):
        try:
            found = self.resolve(uri, True)
        except ValueError as e:  # a template's value is not one plain segment
            raise RpcError(INVALID_PARAMS, "Invalid params: " + str(e),
                           {"uri": uri} if once("tinymcp.echo.shown", uri) == uri else None)
        if found is None:
            shown = once("tinymcp.echo.shown", uri)
            raise RpcError(RESOURCE_NOT_FOUND, "Resource not found: " + shown,
                           {"uri": uri} if shown == uri else None)
        return found

    def template(self, uri_template):
        for res in self.templates:
            if res[_KEY] == uri_template:
                return res
        return None

    def watch(self, uri):
        # The current value of uri's watch (None without one, or when it fails).
        found = self.resolve(uri)
        if found is None or found[0][_WATCH] is None:
            return None
        try:
            return found[0][_WATCH](**found[1])
        except Exception:
            return None

    def read(self, params):
        uri = params.get("uri")
        if type(uri) is not str:
            raise RpcError(INVALID_PARAMS, must("uri", "a string"))
        res, variables = self.lookup(uri)
        try:
            value = res[_FN](**variables)
        except RpcError:
            raise
        except Exception as e:  # a sensor fault: its advice, not "Internal error"
            why = str(e) or e.__class__.__name__
            raise RpcError(INTERNAL_ERROR, "Reading " + uri + " failed: " + why, {"uri": uri})
        if type(value) is list and value and type(value[0]) is dict and "uri" in value[0]:
            return {"contents": value}  # the resource built its own contents
        return {"contents": [content(uri, value, res[_MIME])]}


def content(uri, value, mime=None):
    # One resource content: str -> text, bytes -> blob (raw; the link encodes it), anything
    # else -> JSON text.
    item = {"uri": uri}
    if type(value) is str:
        if mime:
            item["mimeType"] = mime
        item["text"] = value
    elif type(value) in BINARY:
        item["mimeType"] = mime or "application/octet-stream"
        item["blob"] = bytes(value)
    else:
        item["mimeType"] = mime or "application/json"
        item["text"] = text(value)
    return item
