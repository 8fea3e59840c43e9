# Trust on first use (docs/bridge.md, "Pins"): what each board declares -- its tools, prompts,
# resources, resource templates and instructions -- is pinned in a file the first time the bridge
# sees that board; what changes later is withheld from hosts until the user accepts it with
# `tinymcp-bridge --trust LABEL` (or serves it for one run with --trust-changes).
import asyncio
import datetime
import difflib
import json
import logging
import os
import re
import sys
import tempfile
import threading

from tinymcp.host.bridge.routes import KINDS

log = logging.getLogger("tinymcp.bridge.pins")

PINS_ENV = "TINYMCP_PINS"    # the pins file, when neither --pins nor the default is wanted
FILE_NAME = "pins.json"
FORMAT = 1
INSTRUCTIONS = "instructions"   # pinned beside the kinds of routes.KINDS
# What a resource says of its contents, not of what it is: it may change unseen.
VOLATILE = {"resources": ("size",)}
DIFF_CHARS = 400             # of a changed text in the log line
USERINFO = re.compile(r"(?<=://)[^/@\s]*@")


class PinsError(Exception):
    pass


def default_path():
    # $TINYMCP_PINS, else pins.json in the user's state directory (platformdirs: ~/.local/state/
    # tinymcp on Linux, ~/Library/Application Support/tinymcp on macOS, %LOCALAPPDATA%\tinymcp
    # on Windows).
    given = os.environ.get(PINS_ENV)
    if given:
        return given
    import platformdirs
    return os.path.join(platformdirs.user_state_dir("tinymcp", appauthor=False), FILE_NAME)


def trust_command(label):
    return "tinymcp-bridge --trust %s" % label


def _field(kind):
    return KINDS[kind][2] if kind in KINDS else None


def _clean(kind, item):
    # An entry as pinned: what the board declared, less what may change unseen.
    return {k: v for k, v in item.items() if k not in VOLATILE.get(kind, ())}


def _escaped(text):
    # Board text in a log line: control characters shown, never acted on by a terminal.
    return json.dumps(text, ensure_ascii=False)[1:-1]


def _short(text, limit=DIFF_CHARS):
    return text if len(text) <= limit else text[:limit] + "...(cut)"


def describe(kind, name):
    return INSTRUCTIONS if kind == INSTRUCTIONS else "%s %s" % (kind[:-1].replace(
        "template", "resource template"), name)


def difference(kind, before, now):
    # -> (the fields that differ, a one-line unified diff of the first one that differs).
    if kind == INSTRUCTIONS:
        fields, old, new = [INSTRUCTIONS], before or "", now or ""
    else:
        fields = sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
        shown = "description" if "description" in fields else (fields[0] if fields else None)
        old, new = (("" if d.get(shown) is None else d.get(shown) if type(d.get(shown)) is str
                     else json.dumps(d.get(shown), sort_keys=True)) for d in (before, now))
    lines = difflib.unified_diff(old.splitlines(), new.splitlines(), "pinned", "now", n=0,
                                 lineterm="")
    diff = " | ".join(_escaped(line) for line in lines if not line.startswith("@@"))
    return fields, _short(diff)


_SPACE = re.compile(r"[ \t\n\r]*")
_SKIPPED = object()
_value = json.JSONDecoder().scan_once   # (text, index) -> (value, index after it)


def _members(text, i, value):
    # The JSON object at text[i] -> ({key: what value(key, j) keeps}, the index after it), each
    # member's value at text[j] read by value(key, j) -> (what to keep or _SKIPPED, index after
    # it). ValueError where the text is not such an object.
    if text[i:i + 1] != "{":
        raise ValueError("not an object at %d" % i)
    out = {}
    i = _SPACE.match(text, i + 1).end()
    if text[i:i + 1] == "}":
        return out, i + 1
    while True:
        if text[i:i + 1] != '"':
            raise ValueError("no key at %d" % i)
        key, i = json.decoder.scanstring(text, i + 1)
        i = _SPACE.match(text, i).end()
        if text[i:i + 1] != ":":
            raise ValueError("no colon at %d" % i)
        kept, i = value(key, _SPACE.match(text, i + 1).end())
        if kept is not _SKIPPED:
            out[key] = kept
        i = _SPACE.match(text, i).end()
        if text[i:i + 1] == "}":
            return out, i + 1
        if text[i:i + 1] != ",":
            raise ValueError("no comma at %d" % i)
        i = _SPACE.match(text, i + 1).end()


def _decoded(text, i):
    try:
        return _value(text, i)
    except StopIteration:
        raise ValueError("no value at %d" % i) from None


def picked(text, wanted, spans=None):
    # The pins file's text -> its data with only the wanted boards' records; a board's record that
    # is not an object is kept (the caller refuses the file). spans: a dict given gets where each
    # board's record left out is in the text, {key: (start, end)}. Text this cannot follow is
    # read whole by json (its error, or its reading of it: every record kept, no spans).
    def board(key, i):
        record, end = _decoded(text, i)
        if key in wanted or type(record) is not dict:
            return record, end
        if spans is not None:
            spans[key] = (i, end)
        return _SKIPPED, end

    def top(key, i):
        if key != "boards":
            return _decoded(text, i)
        if spans is not None:
            spans.clear()   # a second "boards" is the one json keeps
        return _members(text, i, board)
    try:
        data, end = _members(text, _SPACE.match(text).end(), top)
        if _SPACE.match(text, end).end() == len(text):
            return data
    except (ValueError, IndexError, RecursionError):
        pass
    if spans is not None:
        spans.clear()
    return json.loads(text)


def _record_text(record):
    # A board's record as json.dump(indent=1) writes it inside the file's "boards".
    return json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False).replace("\n", "\n  ")


class PinBook:
    # The pins file: {"format": 1, "boards": {key: {"label", "origin", "accepted", kind: [entry],
    # "instructions": text or null}}}. A key is a board's label and its origin (its sim path,
    # its port or URL, its broker and server-id). Written whole, atomically, soon after each
    # change (changed(): by a thread, with what changes meanwhile in the same write), and what is
    # left at the end (flush()).
    # Held: only the records of the boards this bridge serves, each read from the file when its
    # board first shows up. The file holds every board ever pinned on the machine (boards on
    # brokers at other ports, in other checkouts), which a bridge has no use for: decoded whole
    # and kept, a 6 MB file was 17 MB of the bridge's memory.

    def __init__(self, path, trust_changes=False):
        self.path = path
        self.trust_changes = trust_changes   # changes are served this run (and not written)
        self.boards = {}   # key -> record (None: never pinned), of the boards asked about
        self._load(())     # a damaged file stops the bridge now, not at its first board
        self._dirty = set()      # keys whose pins changed and are not yet written
        self._writer = None      # the task writing them, while it runs
        self._lock = threading.Lock()   # one write at a time (the writer's thread, the end)

    def changed(self, key):
        # A board's pins changed: written soon, off the loop, together with whatever else
        # changes meanwhile. Written at each change on the loop, a board's first sight (five
        # kinds, one after another) was five reads and writes of the whole file, and a fleet
        # found at once (twenty boards, a file of every board ever seen) held the loop for
        # minutes while the boards' answers waited.
        self._dirty.add(key)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:   # no loop (a caller of its own): now
            self.flush()
            return
        if self._writer is None:
            self._writer = loop.create_task(self._write())

    async def _write(self):
        loop = asyncio.get_running_loop()
        try:
            while self._dirty:
                keys, self._dirty = self._dirty, set()
                # the records as they are now: the loop goes on changing them meanwhile
                records = {key: dict(self.boards[key]) for key in keys if self.boards.get(key)}
                try:
                    await loop.run_in_executor(None, self.save, keys, records)
                except (OSError, PinsError) as e:
                    log.warning("could not write the pins file %s: %s", self.path, e)
                except asyncio.CancelledError:   # the bridge is ending: flush() writes them
                    self._dirty |= keys
                    raise
        finally:
            self._writer = None

    def flush(self):
        # What is not yet written, now (the bridge ends, or there is no loop).
        keys, self._dirty = self._dirty, set()
        if keys:
            try:
                self.save(keys)
            except (OSError, PinsError) as e:
                log.warning("could not write the pins file %s: %s", self.path, e)

    def record(self, key):
        # -> this board's record (None: never pinned), from the file the first time it is asked.
        if key not in self.boards:
            try:
                self.boards[key] = self._load((key,)).get(key)
            except PinsError as e:   # damaged since the start: first sight, and no write either
                log.warning("%s", e)
                self.boards[key] = None
        return self.boards[key]

    def _load(self, wanted):
        # -> the boards of the file whose key is in wanted, the others each decoded, checked and
        # dropped in turn (so the file never sits decoded whole in the bridge's memory).
        text = self._text()
        return {} if text is None else self._checked(lambda: picked(text, wanted))

    def _text(self):
        # -> the file's text, or None when there is none.
        try:
            with open(self.path, encoding="utf-8") as f:
                return f.read()
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as e:
            raise self._unreadable(e) from None

    def _unreadable(self, e):
        return PinsError("the pins file %s is unreadable (%s): fix it, or remove it and accept "
                         "the boards again" % (self.path, e))

    def _checked(self, decode):
        # decode() -> the file's data (ValueError: not JSON) -> its boards, or PinsError.
        try:
            data = decode()
        except ValueError as e:
            raise self._unreadable(e) from None
        if type(data) is not dict or data.get("format") != FORMAT:
            raise PinsError("the pins file %s is not one this bridge wrote (format %d): fix "
                            "it, or remove it and accept the boards again" % (self.path, FORMAT))
        boards = data.get("boards")
        if type(boards) is not dict or not all(type(r) is dict for r in boards.values()):
            raise PinsError("the pins file %s is damaged (boards): fix it, or remove it and "
                            "accept the boards again" % self.path)
        return boards

    def save(self, keys, records=None):
        # The pins of these boards (records: theirs as changed() took them, any thread) into the
        # file, atomically (a reader sees the old file or the new one, never half), over what the
        # file holds now: another bridge may share it. The other boards' records are copied as
        # the file has them, never decoded all at once; the file comes out as
        # json.dump(indent=1, sort_keys=True) writes it.
        with self._lock:
            self._save(keys, self.boards if records is None else records)

    def _save(self, keys, records):
        text = self._text()
        spans = {}
        boards = {} if text is None else self._checked(lambda: picked(text, (), spans))
        for key in keys:   # PinsError above: a file damaged meanwhile is left as it is
            if records.get(key) is not None:
                boards[key] = records[key]
                spans.pop(key, None)
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=".pins-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write('{\n "boards": {')
                for n, key in enumerate(sorted(set(boards) | set(spans))):
                    f.write("%s%s: %s" % (",\n  " if n else "\n  ",
                                          json.dumps(key, ensure_ascii=False),
                                          text[slice(*spans[key])] if key in spans
                                          else _record_text(boards[key])))
                f.write('%s},\n "format": %d\n}\n' % ("\n " if boards or spans else "", FORMAT))
                f.flush()
                os.fsync(f.fileno())
            os.replace(temp, self.path)
        except BaseException:
            try:
                os.unlink(temp)
            except OSError:
                pass
            raise

    def board(self, label, origin):
        return BoardPins(self, label, origin)


def origin_of(where):
    # What identifies a board besides its label, without any credentials a URL may carry.
    return USERINFO.sub("", str(where))


class BoardPins:
    # One board's pins as the router asks about them: review() what it declares now -> what
    # hosts may see; pending: what is withheld, and why.

    def __init__(self, pins, label, origin):
        self.pins = pins
        self.label = label
        self.where = origin          # as the router knows it
        self.origin = origin_of(origin)
        self.key = "%s %s" % (label, self.origin)
        self.declared = {}   # kind -> what the board declares now (its items, or its text)
        self.pending = {}    # (kind, name) -> {"kind", "name", "change", "fields", "diff"}
        self.told = {}       # (kind, name) -> the change last logged, so a change is told once

    def _record(self):
        return self.pins.record(self.key)

    def _pin(self, kind, value):
        record = self._record()
        if record is None:
            record = self.pins.boards[self.key] = {
                "label": self.label, "origin": self.origin,
                "accepted": datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds")}
        record[kind] = value
        self.pins.changed(self.key)

    def review(self, kind, items):
        # The board's whole list of one kind -> the items hosts may see: each as pinned; the
        # rest is pending. The first sight of a board (of a kind) is pinned as it is.
        field = _field(kind)
        items = [item for item in items if type(item) is dict and type(item.get(field)) is str]
        self.declared[kind] = items
        record = self._record()
        if record is None or type(record.get(kind)) is not list:
            self._pin(kind, [_clean(kind, item) for item in items])
            return items
        pinned = {e.get(field): e for e in record[kind] if type(e) is dict}
        served, changes = [], []
        for item in items:
            name = item[field]
            before = pinned.get(name)
            if before == _clean(kind, item):
                served.append(item)
            elif before is None:
                changes.append((name, "added", None, item))
            else:
                changes.append((name, "changed", before, _clean(kind, item)))
        now = {item[field] for item in items}
        changes += [(name, "removed", entry, None) for name, entry in pinned.items()
                    if name not in now]
        self._withhold(kind, changes)
        return items if self.pins.trust_changes else served

    def review_instructions(self, text):
        # The board's instructions -> the text hosts may see, or None (withheld).
        text = text if type(text) is str else None
        self.declared[INSTRUCTIONS] = text
        record = self._record()
        if record is None or INSTRUCTIONS not in record:
            self._pin(INSTRUCTIONS, text)
            return text
        before = record[INSTRUCTIONS]
        if before == text:
            self._withhold(INSTRUCTIONS, [])
            return text
        self._withhold(INSTRUCTIONS, [("", "changed" if before and text else
                                       "added" if text else "removed", before, text)])
        return text if self.pins.trust_changes else None

    def _withhold(self, kind, changes):
        for key in [k for k in self.pending if k[0] == kind]:
            del self.pending[key]
        for name, change, before, now in changes:
            if change == "changed":
                fields, diff = difference(kind, before, now)
            else:
                fields, diff = [], ""
            entry = {"kind": kind, "name": name, "change": change, "fields": fields,
                     "diff": diff}
            self.pending[(kind, name)] = entry
            if self.told.get((kind, name)) != entry:
                self.told[(kind, name)] = entry
                self._log(entry)

    def _log(self, entry):
        what = "board %s: %s %s since it was accepted" % (
            self.label, describe(entry["kind"], _escaped(entry["name"])), entry["change"])
        if entry["fields"]:
            what += " (%s)" % ", ".join(_escaped(f) for f in entry["fields"])
        if self.pins.trust_changes:
            log.warning("%s; served this run (--trust-changes)%s", what,
                        "; " + entry["diff"] if entry["diff"] else "")
        else:
            log.warning("%s; withheld from hosts until you accept it: %s (with the same board "
                        "options)%s", what, trust_command(self.label),
                        "; " + entry["diff"] if entry["diff"] else "")

    def withheld(self, kind, name):
        # -> why hosts may not use this entry now (the text of an isError), or None.
        if not self.pending:   # the usual: nothing withheld
            return None
        entry = None if self.pins.trust_changes else self.pending.get((kind, name))
        if entry is None:
            return None
        return ("The bridge withholds %s of board %s: it was %s since the user accepted this "
                "board%s. Nothing of it reaches the board until the user accepts it: run "
                "`%s` with the same board options (the bridge's log shows the change), or "
                "start the bridge with --trust-changes."
                % (describe(kind, name), self.label, entry["change"],
                   " (%s)" % ", ".join(entry["fields"]) if entry["fields"] else "",
                   trust_command(self.label)))

    def accepts(self, kind, item):
        # Whether hosts may see this item as the board lists it now (a page of its list).
        if self.pins.trust_changes:
            return True
        record = self._record()
        field = _field(kind)
        if record is None or type(record.get(kind)) is not list:
            return True   # not seen yet: it is pinned as the board's first sight
        if type(item) is not dict:
            return False
        return any(type(e) is dict and e.get(field) == item.get(field) and e == _clean(kind, item)
                   for e in record[kind])

    def changes(self):
        # What is withheld now, for the dashboard: [{"kind", "name", "change", "fields", "diff"}].
        if self.pins.trust_changes:
            return []
        return [dict(entry, accept=trust_command(self.label))
                for _key, entry in sorted(self.pending.items())]

    def accept(self):
        # --trust: what the board declares now becomes its pins -> lines saying what.
        record = {"label": self.label, "origin": self.origin,
                  "accepted": datetime.datetime.now(datetime.timezone.utc).isoformat(
                      timespec="seconds")}
        lines = []
        for kind in KINDS:
            items = self.declared.get(kind) or []
            record[kind] = [_clean(kind, item) for item in items]
            if items:
                lines.append("  %s: %s" % (kind, ", ".join(
                    _escaped(item[_field(kind)]) for item in items)))
        text = self.declared.get(INSTRUCTIONS)
        record[INSTRUCTIONS] = text
        if text:
            lines.append("  instructions: %d characters" % len(text))
        self.pins.boards[self.key] = record
        self.pending.clear()
        self.told.clear()
        return ["board %s (%s):" % (self.label, _escaped(self.origin))] + (
            lines or ["  nothing declared"])


async def accept(router, pins, wanted, wait, discovering, out):
    # tinymcp-bridge --trust LABEL|all: waits for the boards (up to `wait` seconds; the whole
    # of it while boards may still be found: --port auto, --mqtt), accepts what the wanted ones
    # declare now into the pins file, prints it -> the exit status.
    loop = asyncio.get_running_loop()
    end = loop.time() + wait

    def answered(board):
        return board.pinned is not None and board.session.ready.is_set()
    while loop.time() < end:
        if not discovering and router.boards and all(answered(b) for b in router.boards):
            break
        await asyncio.sleep(0.1)
    found = [b for b in router.boards if answered(b) and wanted in ("all", b.name)]
    missed = [b.name for b in router.boards
              if not answered(b) and b.label is not None and wanted in ("all", b.name)]
    if not found:
        print("tinymcp-bridge: no board %sanswered within %g s: nothing accepted" % (
            "" if wanted == "all" else "labelled %s " % wanted, wait), file=sys.stderr)
        return 2
    lines = []
    for board in found:
        lines += board.pinned.accept()
    try:
        pins.save([board.pinned.key for board in found])
    except (OSError, PinsError) as e:
        print("tinymcp-bridge: cannot write the pins file %s: %s" % (pins.path, e),
              file=sys.stderr)
        return 2
    print("tinymcp-bridge: accepted into %s:" % pins.path, file=out)
    for line in lines:
        print(line, file=out)
    for name in missed:
        print("tinymcp-bridge: board %s did not answer: not accepted" % name, file=sys.stderr)
    out.flush()
    return 0
