# RFC 6570 level-1 URI templates ("sensor://{name}/{id}"), matched as strings, never as paths.
# Loaded with the first template a board registers.
#
# A value is a whole segment, split first and percent-decoded after: it is never empty and never
# holds "/", "\", NUL, nor is it "." or ".." (docs/writing-boards.md). A URI that fits a template
# but whose value breaks that is refused (TemplateRefused), not passed on and not "not found".

_RESERVED = "/?#"
_UNSAFE = ("/", "\\", "\x00")


class TemplateRefused(ValueError):
    # A value the template cannot hand to its function: the message says why, plainly.
    pass


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
    # Template variables from uri, or None; TemplateRefused when uri fits but a decoded value is
    # not one plain segment. A raw value never spans a reserved character, so "{id}" cannot
    # swallow "../x" or "a/b".
    literals, variables = parts
    if not uri.startswith(literals[0]):
        return None
    pos = len(literals[0])
    raw = []
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
        raw.append(value)
        pos = end + len(literal)
    if pos != len(uri):
        return None
    found = {}
    for i in range(len(raw)):  # split first, decode after: only a whole match is decoded
        found[variables[i]] = segment(variables[i], raw[i])
    return found


def segment(name, text):
    # The decoded value of one segment, or TemplateRefused.
    value = _unquote(name, text) if "%" in text else text
    for ch in _UNSAFE:
        if ch in value:
            raise TemplateRefused("{" + name + "} must be one path segment: it may not hold "
                                  "'/', '\\' or NUL, decoded or not")
    if value == "." or value == "..":
        raise TemplateRefused("{" + name + "} may not be '.' or '..'")
    return value


def _unquote(name, text):
    raw = text.encode()
    out = bytearray()
    i = 0
    n = len(raw)
    while i < n:
        if raw[i] == 37:  # "%": two hex digits must follow
            if not _hex(raw[i + 1:i + 3]):
                raise TemplateRefused("{" + name + "} has a bad percent-escape: '%' takes two "
                                      "hex digits")
            out.append(int(raw[i + 1:i + 3], 16))
            i += 3
        else:
            out.append(raw[i])
            i += 1
    try:
        return out.decode()
    except UnicodeError:
        raise TemplateRefused("{" + name + "} is not UTF-8 once percent-decoded")


def _hex(pair):
    if len(pair) != 2:
        return False
    for c in pair:
        if not (48 <= c <= 57 or 65 <= c <= 70 or 97 <= c <= 102):
            return False
    return True
