# Hostile hosts on stdio: whatever a host writes, it gets a JSON-RPC error (or, for a
# notification or a response, nothing), the bridge goes on, and calls in flight are answered.
import pytest

from tests.hostile.conftest import SLOW
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)
from tests.windows_shim import windows_paths_run_by


# Under the Windows shim (tests/windows_shim), stdin read in a thread takes a 40 MB line and
# malformed frames with calls in flight in the tests named below; a non-finite number is refused
# by the parser, the same on every OS. Tests marked @windows_covered run once, as on POSIX: under
# the shim they would take no path the tests named below do not.
windows_covered = windows_paths_run_by(
    "test_a_40_mb_line_draws_one_error",
    "test_malformed_notifications_and_responses_are_dropped_and_calls_in_flight_answered")

TESTBOARD = "tests/bridge/testboard.py"
MALFORMED = [
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":[1]}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized","params":7}',
    b'{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":[]}',
    b'{"jsonrpc":"2.0","id":[1],"result":{}}',      # a response with a list id
    b'{"jsonrpc":"2.0","id":{},"error":{"code":1}}',
    b'{"jsonrpc":"2.0","id":5}',                     # neither result nor error
]


@pytest.fixture
def host(line_client):
    client = line_client("--sim", TESTBOARD, "--timeout", str(SLOW))
    client.initialize()
    return client


def collect_until(client, rid, timeout=30):
    # Every message up to and including the answer to rid.
    seen = []
    while True:
        msg = client.message(timeout)
        seen.append(msg)
        if msg.get("id") == rid and "method" not in msg:
            return seen


def test_malformed_notifications_and_responses_are_dropped_and_calls_in_flight_answered(host):
    slow = host.start("tools/call", {"name": "slow", "arguments": {"seconds": 1.5}})
    for line in MALFORMED:
        host.write(line + b"\n")
    assert host.wait(slow)["result"]["structuredContent"] == {"slept": 1.5}
    assert host.request("ping")["result"] == {}
    assert host.proc.poll() is None
    assert host.noise == []


def test_a_request_nested_100000_deep_is_answered_and_the_bridge_goes_on(host):
    deep = b'{"jsonrpc":"2.0","id":"deep","method":"ping","params":{"x":' + b"[" * 100000 \
        + b"]" * 100000 + b"}}\n"
    host.write(deep)
    rid = host.start("ping")
    seen = collect_until(host, rid)
    errors = [m for m in seen if "error" in m]
    assert len(errors) == 1 and errors[0]["error"]["code"] == -32600, seen
    # Nesting the bridge can parse but the board should never see is refused with the id.
    nested = {"x": 1}
    for _ in range(100):
        nested = {"x": nested}
    reply = host.request("tools/call", {"name": "read_adc", "arguments": nested})
    assert reply["error"]["code"] == -32600 and "nested" in reply["error"]["message"]
    assert host.proc.poll() is None


@windows_covered
@pytest.mark.parametrize("number", [b"1e999", b"-1e400", b"NaN", b"Infinity", b"-Infinity"])
def test_non_finite_numbers_are_refused_at_once_with_the_requests_id(host, number):
    host.write(b'{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":'
                          b'"read_adc","arguments":{"channel":' + number + b'}}}\n')
    reply = host.wait(41, timeout=20)   # the board's --timeout is 60 s
    assert reply["error"]["code"] == -32602, reply
    assert "finite" in reply["error"]["message"]
    assert "result" in host.call("read_adc", channel=1)


def test_a_40_mb_line_draws_one_error(host):
    host.write(b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'
                          + b"a" * (40 << 20) + b'"}}\n')
    rid = host.start("ping")
    seen = collect_until(host, rid, timeout=60)
    assert [m["error"]["code"] for m in seen if "error" in m] == [-32600], seen
    assert seen[-1]["result"] == {}
    with pytest.raises(TimeoutError):
        host.message(0.5)
