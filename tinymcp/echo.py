# What of a host's own text an error quotes back: a name it asked for (a tool, prompt, method,
# argument or URI) when it could be one, else a few words about it. An answer is read by a model
# and shown by dashboards and logs: a request's "<script>", "$(id)" or "../../../etc/passwd" has no
# business coming back in it. Loaded for the refusal and released after it (tinymcp/later.py).

# What names are made of: MCP's tool name characters, and a URI's with no quotes, spaces,
# brackets, braces, "$" or "`".
_KINDS = "_-./:+@%=?&#~,;!*"


def shown(text, quote=""):
    # -> text (between quotes) when it could be a name (1 to 128 of the characters above, no
    # ".." in it), else how it is not one
    if 0 < len(text) <= 128 and ".." not in text:
        for c in text:
            if not ("a" <= c <= "z" or "A" <= c <= "Z" or "0" <= c <= "9" or c in _KINDS):
                break
        else:
            return quote + text + quote
    if not text:
        return "(an empty name)"
    return "(not shown: " + str(len(text)) + " characters that no name is made of)"
