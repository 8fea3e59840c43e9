# What-if for section (d): the sim board served with its 4 KiB line buffer allocated before build().
#
#   MICROPYPATH=. micropython -X heapsize=96k tools/bench_support/line_buffer_first.py
#
# The serve loop normally allocates the line buffer after the board is built, when the heap
# is fragmented; one contiguous 4 KiB block can then be missing at some heap sizes that
# otherwise suffice. An experiment for the lead: it reaches into Channel as of this commit.
import sys

sys.path.append(".")
import micropython  # noqa: E402
from tinymcp.channel import Channel  # noqa: E402
from ports.micropython import StdioStream  # noqa: E402


class _Later:
    # Stands in for the server until it is built.
    write = None
    pump = None


channel = Channel(_Later(), StdioStream())
sys.path.append("boards/sim")
import main as board  # noqa: E402

server = board.build()
channel.server = server
server.write = channel._send
server.pump = channel.pump
micropython.kbd_intr(-1)
try:
    channel.run()
finally:
    micropython.kbd_intr(3)
