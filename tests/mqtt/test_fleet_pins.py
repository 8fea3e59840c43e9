# A fleet found at once on a machine whose pins file already holds many boards (every bench run
# and every board ever served adds its own): the bridge pins each new board without holding its
# loop on the file. It wrote the whole file on the loop once per kind per board (a board's first
# sight pins its tools, resources, templates, prompts and instructions one after another), which
# made the discovery of 20 boards take minutes while their answers waited (issue 30).
import json
import sys
import time

from tests.bridge.conftest import LineClient, clean_env
from tests.mqtt.conftest import Board
from tests.mqtt.test_bridge import READ

BOARDS = 5
OTHERS = 300   # boards of earlier runs in the file: about 3 MB, as on a machine in use


def test_a_fleet_is_pinned_off_the_loop_in_few_writes_and_all_of_it_kept(broker, tmp_path):
    path, writes = tmp_path / "pins.json", tmp_path / "writes"
    tool = {"name": READ, "description": "Read the board's temperature. " * 20,
            "inputSchema": {"type": "object", "properties": {}}}
    others = {"old-%d mqtt://127.0.0.1:1 old-%d/tinymcp/sim" % (i, i): {
        "label": "old-%d" % i, "origin": "mqtt://127.0.0.1:1 old-%d/tinymcp/sim" % i,
        "accepted": "2026-12-01T00:00:00+00:00", "tools": [tool] * 8, "resources": [],
        "templates": [], "prompts": [], "instructions": "x" * 500}
        for i in range(OTHERS)}
    path.write_text(json.dumps({"format": 1, "boards": others}))
    ids = ["fleet-pins-%d" % i for i in range(BOARDS)]
    boards = [Board("python", broker.url, server_id) for server_id in ids]
    host = LineClient(["--mqtt", broker.url, "--mqtt-insecure"],
                      env=clean_env(TINYMCP_PINS=str(path), TINYMCP_TEST_PIN_WRITES=str(writes)),
                      command=[sys.executable, "-m", "tests.mqtt.pin_writes_bridge"])
    try:
        host.initialize()
        wanted = {"sim-%s_%s" % (server_id, READ) for server_id in ids}
        end = time.monotonic() + 120   # a deadline for a hang, never a measure
        while not wanted <= {t["name"] for t in host.request("tools/list")["result"]["tools"]}:
            assert time.monotonic() < end, host.stderr()
            time.sleep(0.2)
        assert host.stop() == 0
    finally:
        host.stop()
        for board in boards:
            board.stop()
    made = [line.split() for line in writes.read_text().splitlines()]
    # Never on the loop (before: each of the 5 kinds x BOARDS pins, one by one, on it).
    assert made and all(where == "off" for where, _n in made), made
    kept = json.loads(path.read_text())["boards"]
    assert set(others) <= set(kept) and kept["old-7 mqtt://127.0.0.1:1 old-7/tinymcp/sim"] == \
        others["old-7 mqtt://127.0.0.1:1 old-7/tinymcp/sim"]
    for server_id in ids:   # each new board whole: written before the bridge ended
        record = next(r for r in kept.values() if r["origin"].endswith(" %s/tinymcp/sim"
                                                                        % server_id))
        assert READ in [t["name"] for t in record["tools"]], record
        assert {"resources", "templates", "prompts", "instructions"} <= set(record)
