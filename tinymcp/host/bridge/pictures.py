# Pictures hosts can show: a board's SVG image content in a tool result reaches hosts as PNG.
# The models behind most hosts take PNG, JPEG, GIF and WebP only, so an SVG reaches them as
# nothing. The bridge renders it with resvg (the optional extra `pip install tinymcp-hw[plots]`)
# in a child process it can kill; without the extra, switched off ($TINYMCP_RENDER_SVG=0), or for
# an SVG it will not render (too large, a reference outside the picture, malformed) or that
# fails, the SVG passes as it is, with a line of text saying what it shows and why no PNG.
#
# A board's SVG is not trusted: it is screened here first (bounded size, sides and elements, no
# DTD, no href or url() but to its own #ids, none of the elements that load or reference files),
# then drawn into a box of at most MAX_SIDE px a side by a child killed at RENDER_TIMEOUT. A
# child, not a thread: resvg holds the GIL while it draws, which would stall the event loop.
import base64
import binascii
import logging
import os
import re
import sys

log = logging.getLogger("tinymcp.bridge.pictures")

SVG = "image/svg+xml"
PNG = "image/png"
EXTRA = "pip install tinymcp-hw[plots]"
SWITCH = "TINYMCP_RENDER_SVG"   # "0": the bridge renders no SVG (hosts get it with the text)
MAX_SVG = 256 * 1024    # bytes of one SVG rendered (a board's plot_history: about 2 KB)
MAX_SIDE = 2048         # px: the box a picture is drawn into, at most, each side
MAX_PIXELS = 4 << 20    # px in all: a larger picture is drawn smaller
MAX_ELEMENTS = 20000    # elements in one SVG
MAX_DEPTH = 64          # elements inside one another
MAX_PNG = 4 << 20       # bytes of one PNG passed to hosts
MAX_PER_RESULT = 4      # SVGs of one tool result rendered; more pass as SVG
RENDER_TIMEOUT = 10.0   # seconds a render may take, its process's start included
RENDERS = 2             # renders at once, each its own process
MAX_LABELS = 300        # characters of the picture's own text quoted in the summary
NO_RENDERER = 3         # the child's exit status when resvg_py is not installed
MISSING = "the bridge renders SVG as PNG with its plots extra: " + EXTRA
# What a plot is drawn with. Left out: image (reads files), use (references, and nested uses
# multiply), filter, pattern, mask, foreignObject, script, switch, a.
ELEMENTS = frozenset((
    "svg", "g", "defs", "title", "desc", "metadata", "style", "rect", "circle", "ellipse",
    "line", "polyline", "polygon", "path", "text", "tspan", "textPath", "linearGradient",
    "radialGradient", "stop", "clipPath", "marker"))
SVG_NS = "http://www.w3.org/2000/svg"
_OUTSIDE = re.compile(r"url\(\s*(?!['\"]?\s*#)|@import", re.I)   # what reaches past the picture
_LENGTH = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(px)?\s*$")


class NotDrawn(Exception):
    # An SVG the bridge does not draw as PNG; the message says why, for the log and the summary.
    pass


class Picture:
    # What screening learned of one SVG: the box it is drawn into, its title and its labels.
    def __init__(self):
        self.width = self.height = None
        self.title = ""
        self.labels = []


def screen(data):
    # An SVG's bytes -> a Picture; raises NotDrawn. Parsed by expat with no DTD allowed (so no
    # entity expands) and every element, attribute and style checked against what a plot uses.
    from xml.parsers import expat   # the bridge's stdio path never needs it
    if len(data) > MAX_SVG:
        raise NotDrawn("it is larger than %d KiB" % (MAX_SVG // 1024))
    picture = Picture()
    stack = []
    count = [0]
    parser = expat.ParserCreate(namespace_separator=" ")

    def refuse(*_args):
        raise NotDrawn("it declares a DTD or entities")

    def instruction(target, _data):
        raise NotDrawn("it has a <?%s?> instruction" % target[:40])

    def start(name, attrs):
        ns, _, local = name.rpartition(" ")
        for key, value in attrs.items():
            if key.rpartition(" ")[2] == "href" and not value.startswith("#"):
                raise NotDrawn("it refers to %r outside the picture" % value[:80])
            if _OUTSIDE.search(value):
                raise NotDrawn("its %s refers to something outside the picture"
                              % key.rpartition(" ")[2][:40])
        count[0] += 1
        if ns not in ("", SVG_NS) or local not in ELEMENTS:
            raise NotDrawn("it has a <%s> element, which the bridge does not draw" % local[:40])
        if count[0] > MAX_ELEMENTS or len(stack) >= MAX_DEPTH:
            raise NotDrawn("it has more than %d elements or is nested deeper than %d"
                          % (MAX_ELEMENTS, MAX_DEPTH))
        if not stack and local != "svg":
            raise NotDrawn("its root is not <svg>")
        if not stack:
            picture.width, picture.height = _size(attrs)
        stack.append([local, []])

    def end(_name):
        local, text = stack.pop()
        text = " ".join("".join(text).split())
        if local == "title" and not picture.title:
            picture.title = text
        elif local in ("text", "tspan", "textPath") and text:
            picture.labels.append(text)

    def chars(text):
        if not stack:
            return
        if stack[-1][0] == "style" and _OUTSIDE.search(text):
            raise NotDrawn("its style sheet refers to something outside the picture")
        if stack[-1][0] in ("title", "text", "tspan", "textPath") and len(stack[-1][1]) < 64:
            stack[-1][1].append(text)

    parser.StartDoctypeDeclHandler = parser.EntityDeclHandler = refuse
    parser.ExternalEntityRefHandler = refuse
    parser.ProcessingInstructionHandler = instruction
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = chars
    try:
        data.decode("utf-8")   # what the renderer reads it as
        parser.Parse(data, True)
    except UnicodeDecodeError:
        raise NotDrawn("it is not UTF-8 text") from None
    except (expat.ExpatError, LookupError) as e:   # LookupError: an encoding expat lacks
        raise NotDrawn("it is not well-formed XML (%s)" % e) from None
    if picture.width is None:
        raise NotDrawn("it has no <svg> element")
    return picture


def _size(attrs):
    # The picture's size in px as resvg takes it (numeric width and height, else the viewBox's,
    # else 100), fitted into the box the bridge draws in.
    box = (attrs.get("viewBox") or "").replace(",", " ").split()
    sizes = []
    for i, key in enumerate(("width", "height")):
        found = _LENGTH.match(attrs.get(key) or "")
        try:
            size = float(found.group(1)) if found else float(box[2 + i]) if len(box) == 4 else 100.0
        except ValueError:
            raise NotDrawn("its viewBox is not four numbers") from None
        if not 0 < size < 1e9:
            raise NotDrawn("its %s is %r" % (key, attrs.get(key) or box[2 + i]))
        sizes.append(size)
    width, height = sizes
    scale = min(1.0, MAX_SIDE / width, MAX_SIDE / height, (MAX_PIXELS / (width * height)) ** 0.5)
    return max(1, round(width * scale)), max(1, round(height * scale))


# -- rendering, in a child process ----------------------------------------------------------

_missing = []       # the reason once the child found no renderer: not looked for again
_slots = {}         # event loop -> its asyncio.Semaphore of RENDERS


def renderer():
    # None when the bridge renders SVG, else why it does not (for the summary and the log).
    if os.environ.get(SWITCH) == "0":
        return "$%s=0 switches the bridge's rendering off" % SWITCH
    if _missing:
        return _missing[0]
    if getattr(sys, "frozen", False):
        return "this bridge is a frozen program, which cannot start a renderer"
    from importlib.util import find_spec
    try:
        found = find_spec("resvg_py") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        _missing.append(MISSING)
        return MISSING
    return None


def _render_now(svg, width, height):
    # In a worker thread: the child draws svg into a width x height box -> PNG bytes; raises
    # NotDrawn. The child is killed at RENDER_TIMEOUT (subprocess.run kills it).
    import subprocess   # here and asyncio in render(): the child starts without them
    # The child imports what this process would: its sys.path (a bundle's lib/, a checkout).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tinymcp.host.bridge.pictures", str(width), str(height)],
            input=svg, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=RENDER_TIMEOUT,
            env=env, creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
    except subprocess.TimeoutExpired:
        raise NotDrawn("drawing it took longer than %g s" % RENDER_TIMEOUT) from None
    except OSError as e:
        raise NotDrawn("the renderer could not start (%s)" % e) from None
    if done.returncode == NO_RENDERER:   # find_spec found it, yet it does not import
        if not _missing:
            _missing.append(MISSING)
        raise NotDrawn(MISSING)
    why = done.stderr.decode("utf-8", "replace").strip().splitlines()
    png = done.stdout
    if done.returncode != 0:
        raise NotDrawn("the renderer failed (%s)" % (why[-1][:200] if why else
                                                  "status %s" % done.returncode))
    if not png.startswith(b"\x89PNG\r\n\x1a\n") or len(png) > MAX_PNG:
        raise NotDrawn("the renderer's PNG is not one the bridge passes on")
    return png


async def render(svg, picture):
    # The SVG as PNG bytes, drawn off the event loop, RENDERS at once; raises NotDrawn.
    import asyncio
    loop = asyncio.get_running_loop()
    slots = _slots.get(loop)
    if slots is None:
        _slots.clear()   # a loop that has ended keeps none
        slots = _slots[loop] = asyncio.Semaphore(RENDERS)
    try:
        await asyncio.wait_for(slots.acquire(), RENDER_TIMEOUT)
    except asyncio.TimeoutError:
        raise NotDrawn("the bridge was busy drawing other pictures") from None
    try:
        return await loop.run_in_executor(None, _render_now, svg, picture.width, picture.height)
    finally:
        slots.release()


# -- tool results -----------------------------------------------------------------------------

def svg_items(reply):
    # The positions of the SVG image items in a reply that carries a tool result.
    result = reply.get("result")
    content = result.get("content") if type(result) is dict else None
    if type(content) is not list:
        return []
    return [i for i, item in enumerate(content) if type(item) is dict and
            item.get("type") == "image" and item.get("mimeType") == SVG]


async def for_hosts(reply, board="board"):
    # A reply carrying a tool result (tools/call, tasks/result) as hosts get it: each SVG
    # image as PNG, else the SVG and, when the result has no text, a line of text about it.
    where = svg_items(reply)
    if not where:
        return reply
    result = reply["result"]
    content = list(result["content"])
    notes = []
    for n, i in enumerate(where):
        item = content[i]
        picture = None
        try:
            svg = _svg_bytes(item.get("data"))
            picture = screen(svg)
            why = renderer()
            if why is not None:
                raise NotDrawn(why)
            if n >= MAX_PER_RESULT:
                raise NotDrawn("a tool result gets at most %d pictures drawn" % MAX_PER_RESULT)
            png = await render(svg, picture)
        except NotDrawn as e:
            log.info("board %s's SVG image passes as SVG: %s", board, e)
            notes.append(_summary(picture, str(e)))
            continue
        except Exception as e:   # a fault of ours must cost the picture, never the call
            log.warning("board %s's SVG image passes as SVG: drawing it failed: %r", board, e)
            notes.append(_summary(picture, "the bridge could not draw it (%s)" % e))
            continue
        shown = {"type": "image", "data": base64.b64encode(png).decode("ascii"),
                 "mimeType": PNG}
        for key in ("annotations", "_meta"):
            if key in item:
                shown[key] = item[key]
        content[i] = shown
    if notes and not any(type(c) is dict and c.get("type") == "text" for c in content):
        content.append({"type": "text", "text": " ".join(notes)})
    return dict(reply, result=dict(result, content=content))


def _svg_bytes(data):
    if type(data) in (bytes, bytearray):
        data = bytes(data)
    elif type(data) is str:
        if len(data) > (MAX_SVG + 2) // 3 * 4 + 4:
            raise NotDrawn("it is larger than %d KiB" % (MAX_SVG // 1024))
        try:
            data = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise NotDrawn("its data is not base64") from None
    else:
        raise NotDrawn("it carries no data")
    return data


def _summary(picture, why):
    # One line for a host whose model sees no SVG: what the picture is and says, and why it
    # came as SVG.
    if picture is None:
        return ("[The board sent an SVG image. It comes as SVG, which many hosts' models cannot "
                "see: %s.]" % why)
    labels = []
    left = MAX_LABELS
    for label in ([picture.title] if picture.title else []) + picture.labels:
        if left <= 0:
            labels.append("...")
            break
        labels.append(label[:left])
        left -= len(label)
    said = "; its text: " + ", ".join(labels) if labels else ""
    return ("[The board sent a %dx%d px SVG image%s. It comes as SVG, which many hosts' models "
            "cannot see: %s.]" % (picture.width, picture.height, said, why))


# -- the child: python -m tinymcp.host.bridge.pictures WIDTH HEIGHT < svg > png ---------------

def _child(argv):
    # Draws the SVG on stdin into a WIDTH x HEIGHT box (its aspect kept), the PNG to stdout.
    try:
        # POSIX: a bound on the memory a hostile picture may make it take. RLIMIT_DATA counts
        # what it allocates, not the system fonts resvg maps from their files.
        import resource
        limit = 2 << 30
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    except (ImportError, ValueError, OSError, AttributeError):
        pass
    try:
        import resvg_py
    except ImportError as e:
        sys.stderr.write("no renderer: %s\n" % e)
        return NO_RENDERER
    width, height = int(argv[1]), int(argv[2])
    svg = sys.stdin.buffer.read(MAX_SVG + 1)
    if len(svg) > MAX_SVG or not (0 < width <= MAX_SIDE and 0 < height <= MAX_SIDE):
        sys.stderr.write("refused: too large\n")
        return 1
    try:
        png = resvg_py.svg_to_bytes(svg_string=svg.decode("utf-8"), width=width, height=height)
    except Exception as e:   # resvg's errors are plain exceptions: their message is the news
        sys.stderr.write("%s\n" % e)
        return 1
    sys.stdout.buffer.write(bytes(png))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv))
