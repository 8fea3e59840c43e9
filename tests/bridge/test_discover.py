# Boards found on the network without an address: the simulated board on TCP announces
# _mcp._tcp.local over mDNS (ports/mdns.py, under both runtimes), zeroconf browses it, and
# tinymcp-bridge --port discover serves it to the official SDK client, follows it to a new
# address and withdraws it when it stops. No multicast may leave the machine: each scenario runs
# in a network namespace of its own (tests/bridge/discover_scenario.py, under `unshare -n`),
# whose one interface is its loopback; where none can be made the test says so, and fails in CI.
import json
import os
import subprocess
import sys

import pytest

from tests.board_process import MICROPYTHON, REPO
from tests.bridge.conftest import bridge_script
from tests.bridge.discover_scenario import TOKEN
from tests.needs import missing

pytestmark = pytest.mark.xdist_group("discover")   # one scenario a runtime, on one worker


def namespace_or_why():
    # -> None when `unshare -n` makes a network namespace here, else why not.
    if not sys.platform.startswith("linux"):
        return "network namespaces are Linux's"
    try:
        made = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True,
                              timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "unshare -n: %s" % e
    if made.returncode != 0:
        return "unshare -n cannot make a network namespace here (root, or user namespaces, " \
               "are needed): %s" % made.stderr.strip()
    return None


def run_scenario(runtime):
    why = namespace_or_why()
    if why is not None:
        missing("no network namespace for the mDNS tests, and they never multicast on the "
                "machine's own interfaces: " + why)
    if runtime == "micropython" and MICROPYTHON is None:
        missing("micropython not installed")
    proc = subprocess.run(["unshare", "-n", sys.executable, "-m", "tests.bridge.discover_scenario",
                           runtime], cwd=REPO, capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr[-4000:]
    seen = json.loads(proc.stdout)
    print("%s: served %.2f s after the board started, withdrawn %.2f s after it stopped"
          % (runtime, seen["seconds_to_serve"], seen["seconds_to_withdraw"]))
    return seen


@pytest.fixture(scope="module", params=["python", "micropython"])
def seen(request):
    return run_scenario(request.param)


def test_the_scenario_has_no_interface_but_its_loopback(seen):
    assert seen["links"] == ["lo"]


def test_a_board_on_the_network_is_announced_as_mcp_over_tcp(seen):
    assert seen["resolved"] is True
    assert seen["instance"].endswith("._mcp._tcp.local.")
    assert seen["address"] == [["127.0.0.1"], 8765]
    txt = seen["txt"]
    assert txt["name"] == "tinymcp-sim"
    assert txt["revisions"].split(",") == ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
    assert txt["token"] == "1" and txt["wire"] == "jsonl"
    assert not any(TOKEN in value for value in txt.values())   # whether one is needed, never it
    assert "announced over mDNS as " in seen["board_said"]


def test_discover_serves_the_board_it_finds_to_the_sdk_client(seen):
    assert seen["tools_before"] == ["wait_for_event"]   # no board yet
    served = seen["tools_served"]
    label = [name for name in served if name.endswith("_read_temperature")][0][:-len(
        "_read_temperature")]
    assert label == seen["instance"].split(".")[0]       # labelled by its instance name
    assert "%s_set_led" % label in served
    is_error, reading = seen["call"]
    assert is_error is False and reading["units"] == {"celsius": "Cel"}


def test_a_board_that_stops_is_withdrawn_after_its_goodbye(seen):
    assert seen["browsed_removed"] == seen["instance"]   # zeroconf saw its TTL-0 records


def test_a_board_that_moves_is_followed_under_its_label(seen):
    before, after = seen["tools_moved"]
    assert after == before                    # the same label, at 127.0.0.2 now
    assert "listening on 127.0.0.2:8770" in seen["moved_board_said"]
    assert seen["moved_call"][0] is False and "celsius" in seen["moved_call"][1]


def test_list_ports_discover_says_which_boards_discover_serves(seen):
    status, listed = seen["list_with_token"]
    assert status == 0
    line = [line for line in listed.splitlines() if line.startswith("socket://127.0.0.1:8765")]
    assert line and "token required" in line[0] and "<- --port discover serves it" in line[0]
    status, listed = seen["list_without_token"]
    assert status == 0 and "not served: it wants a token" in listed
    assert TOKEN not in listed


@pytest.mark.parametrize("argv, why", [
    (["--port", "discover", "--port", "discover"], "--port discover is given once"),
    (["--port", "lab=discover"], "--port discover takes no label"),
    (["--discover", "--sim"], "--discover goes with --list-ports"),
])
def test_discover_options_that_make_no_sense_are_refused(argv, why, capsys):
    from tinymcp.host.bridge.cli import main
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert why in capsys.readouterr().err


def test_a_host_config_with_discover_carries_the_board_token_in_its_env(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TINYMCP_")}
    printed = subprocess.run([bridge_script(), "--print-config", "cursor", "--port", "discover"],
                             cwd=str(tmp_path), env=dict(env, TINYMCP_BOARD_TOKEN=TOKEN),
                             capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    entry = json.loads(printed.stdout)["mcpServers"]["tinymcp"]
    assert entry["args"] == ["--port", "discover"]
    assert entry["env"] == {"TINYMCP_BOARD_TOKEN": "<set TINYMCP_BOARD_TOKEN>"}   # never shown
