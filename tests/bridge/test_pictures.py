# A board's SVG pictures as the bridge passes them to hosts (tinymcp/host/bridge/pictures.py):
# the plot as a PNG drawn where its samples put it; hostile SVGs (huge, reaching for files or
# URLs, entity bombs, malformed, slow) and a missing or switched-off renderer answered with the
# SVG and a line of text, never a lost call.
import asyncio
import base64
import io
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from tests.bridge import plotboard
from tests.bridge.picture_check import TEXT, check_plot_png
from tinymcp.host.bridge import pictures

RED = (255, 0, 0)


def reply_of(svg, text=None):
    content = [{"type": "image", "data": base64.b64encode(svg.encode()).decode(),
                "mimeType": pictures.SVG}]
    if text is not None:
        content.append({"type": "text", "text": text})
    return {"result": {"content": content}}


def shown(reply):
    return asyncio.run(pictures.for_hosts(reply, "plot"))["result"]["content"]


@pytest.fixture(autouse=True)
def renderer_state(monkeypatch):
    # Each test finds the renderer afresh (a test may hide it).
    monkeypatch.delenv(pictures.SWITCH, raising=False)
    monkeypatch.setattr(pictures, "_missing", [])


def plot_content():
    # plot_history's reply as the plot board answers it on the wire (its serve loop's JSON).
    server = plotboard.build()
    server.handle(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":'
                  b'"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
    out = server.handle(b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":'
                        b'"plot_history","arguments":{"quantity":"temperature"}}}')
    return json.loads(out)


def test_the_boards_plot_reaches_hosts_as_a_png_with_the_line_where_the_samples_put_it():
    reply = plot_content()
    assert [c["mimeType"] if c["type"] == "image" else c["text"]
            for c in reply["result"]["content"]] == [pictures.SVG, TEXT]
    content = shown(reply)
    assert [c["type"] for c in content] == ["image", "text"] and content[1]["text"] == TEXT
    assert content[0]["mimeType"] == pictures.PNG
    check_plot_png(content[0]["data"])


def test_a_reply_without_svg_is_passed_as_it_is():
    reply = {"result": {"content": [{"type": "image", "data": "iVBORw0KGgo=",
                                     "mimeType": "image/png"}, {"type": "text", "text": "x"}]}}
    assert asyncio.run(pictures.for_hosts(reply)) is reply
    error = {"error": {"code": -32602, "message": "no"}}
    assert asyncio.run(pictures.for_hosts(error)) is error


def test_the_threat_is_real_resvg_itself_draws_a_file_an_svg_names(tmp_path):
    # Why the bridge screens: asked as it is, the renderer reads an image off the bridge's disk.
    import resvg_py
    from PIL import Image
    red = tmp_path / "red.png"
    Image.new("RGB", (40, 40), RED).save(red)
    svg = plotboard.HOSTILE["file"].replace(plotboard.RED, str(red))
    png = resvg_py.svg_to_bytes(svg_string=svg)
    assert Image.open(io.BytesIO(bytes(png))).getpixel((20, 20))[:3] == RED
    with pytest.raises(pictures.NotDrawn, match="outside the picture"):
        pictures.screen(svg.encode())


@pytest.mark.parametrize("kind, why", [
    ("file", "refers to '/"), ("file-url", "refers to 'file://"),
    ("http", "refers to something outside"), ("entities", "DTD or entities"),
    ("malformed", "not well-formed")])
def test_a_hostile_svg_passes_as_svg_with_a_line_saying_why(kind, why):
    content = shown(reply_of(plotboard.HOSTILE[kind]))
    assert [c["type"] for c in content] == ["image", "text"]
    assert content[0]["mimeType"] == pictures.SVG   # untouched
    assert content[0]["data"] == base64.b64encode(plotboard.HOSTILE[kind].encode()).decode()
    assert why in content[1]["text"] and content[1]["text"].startswith("[The board sent")


def test_a_huge_picture_is_drawn_into_the_bridges_box():
    content = shown(reply_of(plotboard.HOSTILE["huge"]))   # 100000 x 50000 px asked
    from PIL import Image
    image = Image.open(io.BytesIO(base64.b64decode(content[0]["data"])))
    assert content[0]["mimeType"] == pictures.PNG and len(content) == 1
    assert image.size == (2048, 1024)
    assert image.getpixel((1000, 500))[:3] == (0x1f, 0x77, 0xb4)


@pytest.mark.parametrize("svg, why", [
    ("<svg xmlns='http://www.w3.org/2000/svg' width='40' height='40'>%s</svg>"
     % ("<g>" * 70 + "</g>" * 70), "nested deeper"),
    ("<svg xmlns='http://www.w3.org/2000/svg'>%s</svg>" % ("<rect/>" * 20001), "more than 20000"),
    ("<svg xmlns='http://www.w3.org/2000/svg'><rect/>%s</svg>" % (" " * (256 * 1024)),
     "larger than 256 KiB"),
    ("<svg xmlns='http://www.w3.org/2000/svg'><foreignObject/></svg>", "<foreignObject>"),
    ("<svg xmlns='http://www.w3.org/2000/svg'><use href='#a'/></svg>", "<use>"),
    ("<svg xmlns='http://www.w3.org/2000/svg'><style>@import 'x.css';</style></svg>",
     "style sheet"),
    ("<?xml-stylesheet href='http://127.0.0.1:9/x.css'?><svg "
     "xmlns='http://www.w3.org/2000/svg'/>", "instruction"),
    ("<html><svg xmlns='http://www.w3.org/2000/svg'/></html>", "<html>"),
    ("<svg xmlns='http://www.w3.org/2000/svg' width='0' height='4'/>", "its width is '0'"),
])
def test_what_the_screen_refuses(svg, why):
    with pytest.raises(pictures.NotDrawn, match=why.replace("(", r"\(")):
        pictures.screen(svg.encode())


def test_what_a_plot_may_use_passes_the_screen():
    picture = pictures.screen(
        b"<svg xmlns='http://www.w3.org/2000/svg' xmlns:xlink='http://www.w3.org/1999/xlink' "
        b"viewBox='0 0 300 100'><title>Air</title><defs><linearGradient id='g'><stop/>"
        b"</linearGradient><clipPath id='c'><rect/></clipPath></defs><rect fill=\"url('#g')\" "
        b"clip-path='url(#c)'/><path id='p' d='M0 0L1 1'/><text><textPath xlink:href='#p'>a "
        b"<tspan>b</tspan></textPath></text></svg>")
    assert (picture.width, picture.height) == (300, 100)
    assert picture.title == "Air" and picture.labels == ["b", "a"]


def test_a_board_text_beside_the_svg_is_not_repeated(monkeypatch):
    monkeypatch.setenv(pictures.SWITCH, "0")
    content = shown(reply_of(plotboard.HOSTILE["huge"], text="the board's own words"))
    assert [c.get("text") for c in content] == [None, "the board's own words"]


def test_switched_off_the_svg_passes_with_what_it_says(monkeypatch):
    monkeypatch.setenv(pictures.SWITCH, "0")
    reply = plot_content()
    content = list(reply["result"]["content"])
    assert shown(reply) == content   # the board's text is there: nothing added
    del reply["result"]["content"][1]   # an older board: no text of its own
    content = shown(reply)
    assert content[0]["mimeType"] == pictures.SVG
    said = content[1]["text"]
    assert "480x200 px SVG image; its text: 30 Cel, 10, 9 s" in said, said
    assert "TINYMCP_RENDER_SVG=0" in said


def test_without_the_renderer_installed_the_svg_passes_with_the_extra_named(tmp_path,
                                                                            monkeypatch):
    # resvg_py unimportable for the renderer the bridge starts (a module of that name that
    # fails to import, first on the bridge's path).
    shadow = tmp_path / "resvg_py"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("raise ImportError('not installed (the test)')\n")
    monkeypatch.syspath_prepend(str(tmp_path))   # the child imports from the bridge's path
    reply = plot_content()
    del reply["result"]["content"][1]
    content = shown(reply)
    assert content[0]["mimeType"] == pictures.SVG
    assert "pip install tinymcp-hw[plots]" in content[1]["text"]
    assert pictures.renderer() is not None   # remembered: no child started for the next


def test_a_render_that_fails_or_takes_too_long_falls_back(monkeypatch):
    # resvg refuses a size in inches at the root; then a render given no time at all.
    content = shown(reply_of("<svg xmlns='http://www.w3.org/2000/svg' width='2in' "
                             "height='1in'><text>x</text></svg>"))
    assert content[0]["mimeType"] == pictures.SVG and "renderer failed" in content[1]["text"]
    monkeypatch.setattr(pictures, "RENDER_TIMEOUT", 0.001)
    content = shown(plot_content())
    assert content[0]["mimeType"] == pictures.SVG and content[1]["text"] == TEXT


def test_the_bridges_stdio_path_loads_no_renderer_nor_xml_parser():
    code = ("import sys\n"
            "import tinymcp.host.bridge.cli, tinymcp.host.bridge.hosts, tinymcp.host.bridge.stdio\n"
            "import tinymcp.host.bridge.router, tinymcp.host.bridge.board, tinymcp.host.bridge.sim\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('resvg_py', 'PIL', 'xml', 'pyexpat')))")
    done = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, check=True,
                          timeout=120)
    assert done.stdout.decode().strip() == "[]"


PIECES = st.sampled_from([
    "<svg xmlns='http://www.w3.org/2000/svg'", "<svg", ">", "/>", "</svg>", "<g>", "</g>",
    "<rect width='10' height='1e9'/>", " width='", " height='", " viewBox='0 0 ", "'", "100",
    "-1", "1e400", "%", "px", "in", "<text>", "</text>", "&amp;", "&x;", "<!DOCTYPE svg>",
    "<![CDATA[", "]]>", "<?xml version='1.0' encoding='bogus'?>", "href='#a'", "href='x'",
    "style='fill:url(#a)'", "url(", "\x00", "\ud7ff", "\u00e9", " "])


@settings(max_examples=300, deadline=None)
@given(st.lists(PIECES, max_size=30).map("".join), st.booleans())
def test_whatever_a_board_sends_as_svg_the_call_gets_an_answer(svg, as_text):
    # Screening (the renderer switched off: no child is started) never fails the call: an SVG
    # that is not drawn passes with a line of text, whatever it holds.
    os.environ[pictures.SWITCH] = "0"
    try:
        data = svg if as_text else base64.b64encode(svg.encode("utf-8", "surrogatepass")).decode()
        reply = {"result": {"content": [{"type": "image", "data": data,
                                          "mimeType": pictures.SVG}]}}
        content = shown(reply)
    finally:
        del os.environ[pictures.SWITCH]
    assert content[0] == reply["result"]["content"][0] and content[1]["type"] == "text"
    try:   # and the screen's only complaint is NotDrawn (the catch-all is for our faults)
        pictures.screen(svg.encode("utf-8", "surrogatepass"))
    except pictures.NotDrawn:
        pass
