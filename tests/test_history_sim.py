# The sim board's temperature history under both runtimes: it fills while the board runs, its
# times increase by the period, and the statistics tool agrees with the samples.
import json
import time

import pytest

from tests.board_process import MICROPYTHON, BoardProcess


@pytest.mark.parametrize("runtime", ["python", "micropython"])
def test_the_sim_board_keeps_a_history_of_its_temperature(runtime):
    if runtime == "micropython" and MICROPYTHON is None:
        pytest.skip("micropython not installed")
    board = BoardProcess(runtime)
    try:
        board.initialize()
        time.sleep(3.5)  # the serve loop samples from its idle time
        read = board.request("resources/read", {"uri": "sensor://temperature/history"})
        content = read["result"]["contents"][0]
        assert content["mimeType"] == "application/json"
        found = json.loads(content["text"])
        times = [t for t, _v in found["samples"]]
        assert found["unit"] == "Cel" and found["period_ms"] == 1000
        assert len(times) >= 3, found
        assert all(b - a >= 1000 for a, b in zip(times, times[1:])), times
        assert all(10 < v < 40 for _t, v in found["samples"])
        stats = board.request("tools/call", {"name": "read_history",
                                             "arguments": {"quantity": "temperature"}})
        stats = stats["result"]["structuredContent"]
        assert stats["count"] >= len(times) and stats["min"] <= stats["mean"] <= stats["max"]
        plot = board.request("tools/call", {"name": "plot_history",
                                            "arguments": {"quantity": "temperature"}})
        assert plot["result"]["content"][0]["mimeType"] == "image/svg+xml"
    finally:
        board.close()
