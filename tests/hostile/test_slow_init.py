# A board slower to answer initialize than the bridge's pause between attempts (a loaded or
# slow board): it is served on the first answer that comes, and is not flooded meanwhile.
import queue
import threading
import time

from tests.hostile.fakeboard import FakeBoard

DELAY = 2.5   # seconds the board takes over each initialize: more than the bridge's 1 s pause
NOT_INITIALIZED = {"code": -32600, "message": "Server not initialized: send initialize first",
                   "data": {"reason": "not-initialized"}}


class SlowBoard(FakeBoard):
    # Serves one request at a time in the order read, as tinymcp's serve loop does, taking
    # DELAY over each initialize; lose() makes it forget its session (as a restart would):
    # then it answers requests "Server not initialized" until it is initialized again.
    def __init__(self):
        self.work = queue.Queue()
        self.ready = True
        self.answered = []   # the ids of the initialize attempts it answered
        FakeBoard.__init__(self, on_request=lambda board, msg: self.work.put(msg) or True)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while not self.closed:
            msg = self.work.get()
            if msg["method"] == "initialize":
                time.sleep(DELAY)
                self.ready = True
                self.answered.append(msg["id"])
            elif not self.ready and msg["method"] != "ping":
                self.answer(msg, error=NOT_INITIALIZED)
                continue
            self.default(msg)

    def lose(self):
        self.ready = False


def test_a_board_slower_than_the_pause_is_served_by_its_first_answer(stdio_bridge):
    board = SlowBoard()
    try:
        # --timeout 20: before the fix every answer was dropped as late and the host's first
        # call timed out waiting for a board that never became ready.
        host = stdio_bridge(board.device, "--timeout", "20")
        host.initialize()
        reply = host.call("echo", n=0, timeout=40)
        assert reply.get("result", {}).get("structuredContent") == {"n": 0}, reply
        first = board.answered[0]
        assert first == board.received("initialize")[0]["id"], board.answered
        heard = len(board.received("initialize"))
        assert heard <= 3, heard   # 0 s, 1 s, then the pause doubles: the answer came at 2.5 s
        for n in range(1, 4):   # several times: the board loses its session, slow again
            board.lose()
            before = len(board.received("initialize"))
            reply = host.call("echo", n=n, timeout=40)
            assert reply.get("result", {}).get("structuredContent") == {"n": n}, reply
            again = len(board.received("initialize")) - before
            assert 1 <= again <= 3, (n, again)
        time.sleep(2 * DELAY)   # what the board was sent while slow is all answered by now
        total = len(board.received("initialize"))
        assert total <= 12, total
        assert "result" in host.call("echo", n=9, timeout=40)
        assert len(board.received("initialize")) == total   # a served board is not asked again
    finally:
        board.close()
