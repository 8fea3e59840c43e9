# RFC 6570 level-1 URI templates ("sensor://{name}/{id}"), matched as strings, never as paths.
# Loaded with the first template a board registers.

_RESERVED = "/?#"


def parse(uri):
    # "a/{x}/b/{y}" -> (["a/", "/b/", ""], ["x", "y"])
    pieces = uri.split("{")
    literals = [pieces[0]]
    variables = []
    for piece in pieces[1:]:
        var, _, literal = piece.partition("}")
        variables.append(var)
        literals.append(literal)
    return literals, variables


def match(parts, uri):
    # Template variables from uri, or None. A value is never empty and never spans a
    # reserved character, so "{id}" cannot swallow "../x" or "a/b".
    literals, variables = parts
    if not uri.startswith(literals[0]):
        return None
    pos = len(literals[0])
    found = {}
    last = len(variables) - 1
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
        found[variables[i]] = _unquote(value)
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
