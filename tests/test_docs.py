# The docs name real things: every file, folder and module of this repository that README.md or
# docs/*.md names (as `code`) exists, so a rename cannot leave a page pointing at nothing.
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md"] + ["docs/" + n for n in sorted(os.listdir(os.path.join(REPO, "docs")))
                         if n.endswith(".md")]
TOPS = ("tinymcp", "ports", "boards", "tests", "tools", "docs", ".ci")
# Paths that name what a user or a build makes (a wheel holds tinymcp/host/device/), not what
# the repository holds.
MADE = ("build/", "dist/", ".venv", "node_modules", "typings/", "tinymcp/host/device")
CODE = re.compile(r"`([^`\n]+)`")
PATH = re.compile(r"^(?:\./)?((?:%s)/[\w./-]*)$" % "|".join(re.escape(t) for t in TOPS))
# Names shaped like paths that are something else: MCP methods, MicroPython's own source tree.
NOT_OURS = re.compile(r"^(tools/(list|call)|ports/(rp2|esp32|unix|webassembly|stm32)\b)")
MODULE = re.compile(r"^(tinymcp(?:\.\w+)+|ports(?:\.\w+)+)$")


def named(page):
    with open(os.path.join(REPO, page), encoding="utf-8") as f:
        text = f.read()
    for span in CODE.findall(text):
        for word in span.split():
            word = word.strip("()[],;:'\"").split("#")[0].split(":")[0]
            yield word


def missing_names(page):
    gone = []
    for word in named(page):
        if (word.startswith(MADE) or NOT_OURS.match(word) or "<" in word or "*" in word
                or re.search(r"[A-Z]{3,}", word)):   # BOARD, NAME, DIR: placeholders
            continue
        path = PATH.match(word)
        if path:
            rel = path.group(1).rstrip("/.")
            if rel.endswith(".mpy"):   # what deploy compiles from the .py of that name
                rel = rel[:-4] + ".py"
            if not os.path.exists(os.path.join(REPO, rel)):
                gone.append(word)
            continue
        module = MODULE.match(word)
        if module:
            parts = module.group(1).split(".")
            for cut in range(len(parts), 0, -1):   # a.b.name: a module a/b.py holding name
                base = os.path.join(REPO, *parts[:cut])
                if os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py")):
                    break
            else:
                gone.append(word)
            if cut < len(parts) - 1:                # more than one name past the module file
                gone.append(word)
    return gone


@pytest.mark.parametrize("page", PAGES)
def test_every_repository_path_and_module_a_page_names_exists(page):
    assert missing_names(page) == []


def test_the_check_finds_a_name_that_is_not_there(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    page.write_text("see `tinymcp/modern.py`, `tinymcp.modern`, `tools/bench_firmware.py`, "
                    "but `tinymcp/server.py` and `tinymcp.server.Server` are real\n")
    monkeypatch.setattr("tests.test_docs.REPO", str(tmp_path))
    os.makedirs(tmp_path / "tinymcp")
    (tmp_path / "tinymcp" / "server.py").write_text("")
    assert missing_names("page.md") == ["tinymcp/modern.py", "tinymcp.modern", "tools/bench_firmware.py"]
