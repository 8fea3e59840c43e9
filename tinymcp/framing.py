# Newline-delimited frames from a byte stream into one preallocated, bounded line buffer.

try:
    from micropython import const
except ImportError:
    def const(x):
        return x

NOTHING = const(0)    # no complete frame yet (or a blank line)
FRAME = const(1)      # frame() holds one whole line
OVERSIZE = const(2)   # a line over the limit ended; its bytes were discarded as they came
INTERRUPT = const(3)  # a raw 0x03 byte: never valid inside JSON, means "give the REPL back"


class LineFramer:
    max_frame = 4096

    def __init__(self, max_frame=None):
        if max_frame:
            self.max_frame = max_frame
        self.buf = bytearray(self.max_frame)
        self.view = memoryview(self.buf)
        self.fill = 0
        self.size = 0
        self.dropping = False
        self.event = NOTHING
        self._source = None       # the stream buffer last fed, and one view of it made once
        self._source_view = None

    def feed(self, data, pos, end):
        # Consume data[pos:end] up to and including the first newline; return the new
        # position and leave the outcome in self.event.
        self.event = NOTHING
        newline = data.find(b"\n", pos, end)
        stop = end if newline < 0 else newline
        if data.find(b"\x03", pos, stop) >= 0:
            self.event = INTERRUPT
            return end
        count = stop - pos
        if count and not self.dropping:
            if self.fill + count > self.max_frame:
                self.dropping = True  # keep nothing of it; resume at the next newline
                self.fill = 0
            else:
                if data is not self._source:
                    self._source = data
                    self._source_view = memoryview(data)
                self.view[self.fill:self.fill + count] = self._source_view[pos:stop]
                self.fill += count
        if newline < 0:
            return end
        if self.dropping:
            self.dropping = False
            self.event = OVERSIZE
        else:
            size = self.fill
            buf = self.buf
            while size and buf[size - 1] in b"\r \t":
                size -= 1
            if size:
                self.size = size
                self.event = FRAME
        self.fill = 0
        return newline + 1

    def frame(self):
        return self.view[:self.size]
