# The sim board's set_led lease on its real stdio, on both runtimes: a 2 s lease is off again
# after 2 s without renewal (read back through ADC channel 2, which sees the LED), a host behind a
# bridge that ends takes only its own lease, and a lease the schema refuses touches nothing.
import time

from tests.test_wire import board  # noqa: F401  (the fixture: the sim on stdio, both runtimes)
from tinymcp.protocol import OWNER_ENDED, OWNER_META


def call(board, name, args, owner=None):
    params = {"name": name, "arguments": args}
    if owner:
        params["_meta"] = {OWNER_META: owner}
    return board.request("tools/call", params)["result"]


def photodiode(board):
    return call(board, "read_adc", {"channel": 2})["structuredContent"]["volts"]


def test_a_two_second_lease_without_renewal_is_off_after_two_seconds(board):
    lit = call(board, "set_led", {"on": True, "lease_s": 2})
    start = time.monotonic()
    assert lit["structuredContent"] == {"on": True, "lease_s": 2}
    assert photodiode(board) > 2
    while photodiode(board) > 2 and time.monotonic() - start < 5:
        time.sleep(0.05)
    took = time.monotonic() - start
    print("dark %.2f s after a 2 s lease" % took)
    assert photodiode(board) < 1, "still lit 5 s into a 2 s lease"
    assert took > 1.5   # the lease was granted before start: it cannot have ended sooner


def test_a_renewal_keeps_it_lit(board):
    call(board, "set_led", {"on": True, "lease_s": 1.5})
    for _ in range(3):
        time.sleep(1)
        call(board, "set_led", {"on": True, "lease_s": 1.5})
        assert photodiode(board) > 2


def test_an_owner_that_ended_takes_its_lease_and_no_other(board):
    call(board, "set_led", {"on": True, "lease_s": 30}, owner="host-7")
    board.send({"jsonrpc": "2.0", "method": OWNER_ENDED, "params": {"owner": "host-8"}})
    assert photodiode(board) > 2
    board.send({"jsonrpc": "2.0", "method": OWNER_ENDED, "params": {"owner": "host-7"}})
    assert photodiode(board) < 1


def test_a_lease_out_of_range_is_an_error_result_and_the_led_stays_off(board):
    refused = call(board, "set_led", {"on": True, "lease_s": 0})
    assert refused["isError"] is True and "lease_s" in refused["content"][0]["text"]
    assert photodiode(board) < 1
