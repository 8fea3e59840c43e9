# Writes held while the bridge handles one chunk of input (a host's stdin, a board's port), made
# as soon as it has been handled: every message that chunk leads to goes out in one write per
# output, in the same turn of the event loop (a write left to call_soon costs the relay one more
# turn, and one more epoll_wait, per message).
import logging
import threading

log = logging.getLogger("tinymcp.bridge.turn")


class _Turn(threading.local):
    # Per thread, as each event loop runs in its own: the flushes held while a chunk is
    # handled there, or None when none is (one attribute of a thread's own: each read of it
    # looks for this thread's).
    held = None


_turn = _Turn()


def hold(flush):
    # -> True when flush() will be called once the chunk being handled has been (the caller
    # leaves its bytes waiting for it), False when no chunk is being handled now (a timer, a
    # task: the caller writes its own way).
    held = _turn.held
    if held is None:
        return False
    if flush not in held:   # a bound method is equal to another of the same object's
        held.append(flush)
    return True


def handled(handle, data):
    # handle(data), then the writes it led to, in the order they were first held.
    turn = _turn
    if turn.held is not None:
        handle(data)   # inside another chunk's handling: its end writes for both
        return
    turn.held = held = []
    try:
        handle(data)
    finally:
        turn.held = None
        for flush in held:
            try:
                flush()
            except Exception:   # one output's failure must not cost the others their bytes
                log.exception("writing after a chunk of input")
