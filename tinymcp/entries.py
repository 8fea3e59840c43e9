# The one layout of a registry entry (a tool, a resource or template, a prompt): a tuple each, the
# least RAM an entry can take. Read by name by host code, tools and the tests, never by a board:
# each module there that reads an entry keeps private copies of the slots it reads
# (`_FN = const(1)`, which mpy-cross folds away: no RAM), and tests/test_entries.py checks every
# copy against these, and that the registries build this layout.

# Every entry starts (key, fn, description, title); key is a tool's or a prompt's name, a
# resource's URI or URI template.
KEY = 0
FN = 1
DESCRIPTION = 2
TITLE = 3
# A tool goes on (inputs, outputs, hints, wants_ctx): inputs and outputs as declared (the compact
# form or a whole schema), hints its annotations and task support packed (tools.pack_hints).
INPUTS = 4
OUTPUTS = 5
HINTS = 6
CTX = 7
# A resource goes on (complete, name, mime, watch, parts), parts None for an exact URI, else the
# template's (literals, variables); a prompt on (complete, arguments), its arguments as listed.
COMPLETE = 4
NAME = 5
MIME = 6
WATCH = 7
PARTS = 8
ARGUMENTS = 5
