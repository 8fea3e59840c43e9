# What one board offers (tools, prompts, resources, templates), learned from the board once per
# (re)initialize or list_changed, and the names hosts see for it. With several boards behind the
# bridge a tool or prompt is LABEL_NAME and a resource URI LABEL+URI (docs/bridge.md, "Several
# boards"): unique across boards, and taken back to the board's own by the label.
import hashlib
import re

from tinymcp.host.bridge.methods import LISTS

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")   # what a host may rely on for a tool name
LABEL = re.compile(r"^[a-z][a-z0-9-]{0,23}$")  # a letter first: LABEL+URI keeps a valid scheme
# kind -> (the board's list method, the result's key, the field that names an item); the list
# methods are the catalogue's (methods.py).
_SHAPES = {"tools": ("tools", "name"), "prompts": ("prompts", "name"),
           "resources": ("resources", "uri"), "templates": ("resourceTemplates", "uriTemplate")}
_METHOD = {kind: method for method, kind in LISTS.items()}
KINDS = {kind: (_METHOD[kind],) + shape for kind, shape in _SHAPES.items()}
# A board capability -> the kinds it lists.
OFFERS = {"tools": ("tools",), "prompts": ("prompts",), "resources": ("resources", "templates")}


def slug(text, default="board"):
    # A board's name as a label: "tinymcp-rpi-pico" -> "rpi-pico".
    text = re.sub(r"[^a-z0-9]+", "-", str(text or "").lower())
    if text.startswith("tinymcp-"):
        text = text[len("tinymcp-"):]
    text = text.strip("-")[:20].strip("-")
    return text if text and text[0].isalpha() else default


def labelled_name(label, name):
    # LABEL_NAME, within the pattern hosts rely on: other characters become "_", and a name
    # too long keeps its start and a short hash of the whole.
    joined = "%s_%s" % (label, re.sub(r"[^a-zA-Z0-9_-]", "_", name))
    if len(joined) <= 64 and joined[len(label) + 1:] == name:
        return joined
    digest = hashlib.sha1(name.encode()).hexdigest()[:6]
    return (joined[:57] + "-" + digest) if len(joined) > 64 else joined


def labelled_uri(label, uri):
    return "%s+%s" % (label, uri)


def split_name(name):
    # "a_read_adc" -> ("a", "read_adc"); labels hold no "_", so the first one ends the label.
    label, sep, rest = name.partition("_")
    return (label, rest) if sep and rest else (None, name)


def split_uri(uri):
    # "a+sensor://temperature" -> ("a", "sensor://temperature"); labels hold no "+".
    label, sep, rest = uri.partition("+")
    return (label, rest) if sep and rest else (None, uri)


TASK_MODES = ("optional", "required")


class Catalog:
    # One board's lists, and (with a label) the names hosts see for its tools and prompts.
    def __init__(self):
        self.items = dict.fromkeys(KINDS)   # kind -> the board's items (None: not learned)
        self.names = {"tools": {}, "prompts": {}}   # kind -> {host's name: board's name}
        self.hidden = {kind: {} for kind in KINDS}   # kind -> {board's name or URI: why}: an
                                            # entry that reads as another board's (router.py)
        self.read_only = {}                 # board tool name -> readOnlyHint
        self.task_support = {}              # board tool name -> execution.taskSupport, if any

    def learn(self, kind, items, label=None):
        # The board's whole list of one kind -> True when it differs from what was known.
        items = [item for item in items if type(item) is dict]
        changed = self.items[kind] is not None and items != self.items[kind]
        self.items[kind] = items
        if kind == "tools":
            self.read_only = {}
            self.task_support = {}
            for tool in items:
                hints = tool.get("annotations")
                self.read_only[tool.get("name")] = (type(hints) is dict
                                                    and hints.get("readOnlyHint") is True)
                execution = tool.get("execution")
                if type(execution) is dict and execution.get("taskSupport") in TASK_MODES:
                    self.task_support[tool.get("name")] = execution["taskSupport"]
        if kind in self.names:
            self.names[kind] = {}
            if label is not None:
                taken = self.names[kind]
                for item in items:
                    if type(item.get("name")) is str:
                        shown, n = labelled_name(label, item["name"]), 1
                        while shown in taken:   # "a.b" and "a_b" both became "a_b"
                            n += 1
                            shown = labelled_name(label, "%s-%d" % (item["name"], n))
                        taken[shown] = item["name"]
        return changed

    def visible(self, kind):
        # The board's items of one kind that hosts may see (none that is hidden).
        field = KINDS[kind][2]
        return [item for item in self.items[kind] or ()
                if type(item.get(field)) is str and item[field] not in self.hidden[kind]]

    def listing(self, kind, label):
        # The board's items of one kind as hosts see them.
        field = KINDS[kind][2]
        mapped = {board: host for host, board in self.names.get(kind, {}).items()}
        shown = []
        for item in self.visible(kind):
            value = item[field]
            if kind in ("tools", "prompts"):
                value = mapped.get(value) or labelled_name(label, value)
            else:
                value = labelled_uri(label, value)
            shown.append(dict(item, **{field: value}))
        return shown


def outward(label, method, result):
    # A board's result as hosts see it: the URIs it names carry the board's label.
    if type(result) is not dict:
        return result
    if method == "resources/read" and type(result.get("contents")) is list:
        result = dict(result, contents=[_uri_in(label, c) for c in result["contents"]])
    elif method == "tools/call" and type(result.get("content")) is list:
        result = dict(result, content=[_content(label, c) for c in result["content"]])
    elif method == "prompts/get" and type(result.get("messages")) is list:
        result = dict(result, messages=[
            dict(m, content=_content(label, m["content"])) if type(m) is dict and "content" in m
            else m for m in result["messages"]])
    return result


def _uri_in(label, item):
    if type(item) is dict and type(item.get("uri")) is str:
        return dict(item, uri=labelled_uri(label, item["uri"]))
    return item


def _content(label, block):
    # resource_link blocks name a URI; embedded resources carry one.
    if type(block) is not dict:
        return block
    if block.get("type") == "resource_link":
        return _uri_in(label, block)
    if block.get("type") == "resource":
        return dict(block, resource=_uri_in(label, block.get("resource")))
    return block
