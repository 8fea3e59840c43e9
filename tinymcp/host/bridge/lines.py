# Newline-delimited lines out of chunks of bytes, each at most max_line long: a longer line is
# dropped as it streams (never held whole) and reported once, as TOO_LONG, where it ends.

TOO_LONG = object()


class LineSplitter:
    def __init__(self, max_line):
        self.max_line = max_line
        self._partial = bytearray()
        self._dropping = False

    def feed(self, data):
        # -> the lines (bytes, without their newline) and TOO_LONG marks that data completes.
        lines = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._keep(data, start)
                return lines
            if self._dropping or len(self._partial) + nl - start > self.max_line:
                lines.append(TOO_LONG)
            else:
                self._partial += data[start:nl]
                lines.append(bytes(self._partial))
            self._partial.clear()
            self._dropping = False
            start = nl + 1

    def end(self):
        # The input ended: a last line without its newline, if any.
        lines = self.feed(b"\n") if self._partial or self._dropping else []
        return lines

    @property
    def partial(self):
        # The line begun and not yet ended (a REPL's prompt waits there for input).
        return self._partial

    def clear(self):
        self._partial.clear()
        self._dropping = False

    def _keep(self, data, start):
        if self._dropping:
            return
        if len(self._partial) + len(data) - start > self.max_line:
            self._partial.clear()
            self._dropping = True
        else:
            self._partial += data[start:]
