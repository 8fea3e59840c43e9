# A board whose tool waits for the host between two steps, so a test knows the host's cancel is
# there before the tool's next ctx.progress, on both runtimes without timing.
# Runs from the repo root: `python tests/cancel_board.py`, `MICROPYPATH=. micropython tests/cancel_board.py`.
import select
import sys

sys.path.insert(0, ".")

from tinymcp import Server  # noqa: E402


def input_waiting(timeout_ms=30000):
    # Blocks until the host has written something (its cancel) on stdin, unread yet.
    poller = select.poll()
    poller.register(sys.stdin, select.POLLIN)
    poller.poll(timeout_ms)


def build():
    server = Server("cancel-test", "0.0.1")

    @server.tool("steps", "Reports progress 0, waits for the host, then logs and reports 1 and 2",
                 ctx=True)
    def steps(ctx):
        ctx.progress(0, 2)
        input_waiting()
        ctx.log("info", "step 1")
        ctx.progress(1, 2)
        ctx.progress(2, 2)
        return "done"

    return server


if __name__ == "__main__":
    from ports import serve
    serve(build())
