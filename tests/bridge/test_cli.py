# The command line: exit codes and one-line reasons, stdio framing and ids, --sim, the demo.
import json
import os
import pty
import re
import signal
import socket
import subprocess
import time

import serial

from tests.bridge.conftest import BRIDGE, REPO, TESTBOARD, clean_env
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)
from tests.windows_shim import windows_paths_run_by


# Under the Windows shim (tests/windows_shim), these take every Windows path this module's tests
# take: the port checks and their one-line refusals, stdin read in a thread (ids, garbage, a file
# piped in, its end), the board on pipes with a timeout, progress and a restart, the demo; the
# tests left out differ from them only in the protocol's rules or what is printed. Tests marked
# @windows_covered run once, as on POSIX: under the shim they would take no path the tests named
# below do not.
windows_covered = windows_paths_run_by(
    "test_bad_arguments_and_ports_exit_2_with_one_line",
    "test_busy_port_exits_2_and_says_so",
    "test_list_ports_exits_0",
    "test_stdio_ids_come_back_exactly",
    "test_timeout_answers_the_host_and_cancels_on_the_board",
    "test_progress_reaches_the_host_with_its_own_token",
    "test_sim_board_that_dies_is_restarted",
    "test_stdin_closed_is_a_clean_end_and_the_board_goes_with_the_bridge",
    "test_demo_narrates_a_session_and_ends_cleanly",
    "test_requests_piped_from_a_file_are_all_answered")


def run(*args, timeout=30):
    return subprocess.run(BRIDGE + list(args), cwd=REPO, env=clean_env(), capture_output=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def refused(done, *words):
    assert done.returncode == 2, done
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1, lines
    for word in words:
        assert word in lines[0].lower(), lines[0]
    assert done.stdout == b""


def test_bad_arguments_and_ports_exit_2_with_one_line():
    refused(run(), "--port")
    refused(run("--port", "/dev/ttyNOPE0"), "does not exist", "--list-ports")
    refused(run("--port", "/dev/null"), "not a serial port")
    refused(run("--sim", "no-such-board"), "no board")
    refused(run("--sim", "--http", "notaport"), "[host:]port")
    refused(run("--sim", "--timeout", "0"), "timeout")


def test_busy_port_exits_2_and_says_so():
    master, slave = pty.openpty()
    device = os.ttyname(slave)
    holder = serial.Serial(device, exclusive=True)   # another program has the board open
    try:
        refused(run("--port", device), "busy")
    finally:
        holder.close()
        os.close(slave)
        os.close(master)


@windows_covered
def test_busy_http_port_exits_2():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        refused(run("--sim", "--http", "127.0.0.1:%d" % s.getsockname()[1]), "listen")


def test_list_ports_exits_0():
    done = run("--list-ports")
    assert done.returncode == 0, done
    assert done.stdout.strip()


def test_stdio_ids_come_back_exactly(line_client):
    client = line_client("--sim")
    client.initialize()
    for rid in (0, "0", "abc", 7, -1):
        client.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                     "params": {"name": "read_adc", "arguments": {"channel": 1}}})
    for rid in (0, "0", "abc", 7, -1):
        reply = client.wait(rid)
        assert reply["id"] == rid and type(reply["id"]) is type(rid)
        assert "result" in reply
    client.send({"jsonrpc": "2.0", "id": 1, "method": "no/such/method"})
    assert client.wait(1)["error"]["code"] == -32601
    client.write(b"{not json\n")
    assert client.wait(None)["error"]["code"] == -32700
    client.send({"jsonrpc": "2.0", "id": [1], "method": "ping"})
    assert client.wait(None)["error"]["code"] == -32600
    client.send({"jsonrpc": "1.0", "id": 5, "method": "ping"})
    assert client.wait(5)["error"]["code"] == -32600
    assert client.noise == []


@windows_covered
def test_requests_before_initialize_and_unknown_probe(line_client):
    client = line_client("--sim")
    reply = client.request("server/discover", {})
    assert reply["error"]["code"] == -32602   # a 2026-07-28 request without its _meta envelope
    assert client.request("tools/list")["error"]["code"] == -32600
    assert "result" in client.request("ping")


def test_timeout_answers_the_host_and_cancels_on_the_board(line_client):
    client = line_client("--sim", TESTBOARD, "--timeout", "1")
    client.initialize()
    reply = client.call("slow", seconds=30)
    assert reply["error"]["code"] == -32001 and reply["error"]["data"]["bridge"] == "timeout"
    # The board stopped the slow call when cancelled, so it answers the next one.
    assert "result" in client.call("read_temperature")


def test_progress_reaches_the_host_with_its_own_token(line_client):
    client = line_client("--sim", TESTBOARD)
    client.initialize()
    for token in (0, "tok"):
        reply = client.request("tools/call", {"name": "slow", "arguments": {"seconds": 0.5},
                                              "_meta": {"progressToken": token}})
        assert reply["result"]["structuredContent"] == {"slept": 0.5}
        progress = [n["params"] for n in client.notes if n["method"] == "notifications/progress"]
        assert progress and all(p["progressToken"] == token for p in progress), progress
        assert all(type(p["progressToken"]) is type(token) for p in progress)
        client.notes.clear()


@windows_covered
def test_logging_levels_filter_board_messages(line_client):
    client = line_client("--sim", TESTBOARD)
    client.initialize()
    assert client.request("logging/setLevel", {"level": "error"})["result"] == {}
    assert "result" in client.call("shout")
    assert not [n for n in client.notes if n["method"] == "notifications/message"]
    assert client.request("logging/setLevel", {"level": "debug"})["result"] == {}
    assert "result" in client.call("shout")
    messages = [n["params"] for n in client.notes if n["method"] == "notifications/message"]
    assert messages == [{"level": "warning", "data": "the board is shouting"}], messages
    assert client.request("logging/setLevel", {"level": "loud"})["error"]["code"] == -32602


@windows_covered
def test_list_changed_from_the_board_reaches_the_host(line_client):
    # A tool added at run time is served when the user accepts changes (pins, issue 26).
    client = line_client("--sim", TESTBOARD, "--trust-changes")
    client.initialize()
    assert "extra" not in str(client.request("tools/list"))
    assert "result" in client.call("grow")
    client.request("ping")
    assert any(n["method"] == "notifications/tools/list_changed" for n in client.notes)
    assert "extra" in [t["name"] for t in client.request("tools/list")["result"]["tools"]]
    assert client.call("extra")["result"]["structuredContent"] == {"extra": True}


@windows_covered
def test_host_cancellation_reaches_the_board(line_client):
    client = line_client("--sim", TESTBOARD)
    client.initialize()
    rid = client.start("tools/call", {"name": "slow", "arguments": {"seconds": 30}})
    time.sleep(0.3)
    client.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": rid, "reason": "user"}})
    assert "result" in client.call("read_temperature", timeout=8)
    time.sleep(0.3)
    assert rid not in client.early   # a cancelled request gets no response


def test_sim_board_that_dies_is_restarted(line_client):
    client = line_client("--sim", TESTBOARD, "--log-level", "info", "--timeout", "8")
    client.initialize()
    pid = int(client.wait_stderr(r"started, pid (\d+)").group(1))
    rid = client.start("tools/call", {"name": "slow", "arguments": {"seconds": 30}})
    time.sleep(0.3)
    os.kill(pid, signal.SIGKILL)
    reply = client.wait(rid, timeout=15)
    assert reply["error"]["data"]["bridge"] == "reset", reply
    assert "result" in client.call("read_temperature", timeout=15)
    client.wait_stderr(r"started, pid (?!%d)\d+" % pid)


def test_stdin_closed_is_a_clean_end_and_the_board_goes_with_the_bridge(line_client):
    client = line_client("--sim", "--log-level", "info")
    client.initialize()
    pid = int(client.wait_stderr(r"started, pid (\d+)").group(1))
    client.proc.stdin.close()
    assert client.proc.wait(15) == 0
    end = time.monotonic() + 10
    while os.path.exists("/proc/%d" % pid) and _state(pid) != "Z":
        assert time.monotonic() < end, "the sim board outlived the bridge"
        time.sleep(0.05)


def _state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


def test_demo_narrates_a_session_and_ends_cleanly():
    done = run("--sim", "--demo", "--demo-seconds", "4", timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout == b""
    text = done.stderr.decode()
    assert '"mcpServers"' in text and '"servers"' in text
    assert re.search(r"\u2192 tools/call read_temperature", text)
    assert "\u2192 resources/subscribe" in text
    assert "\u2190 notifications/resources/updated" in text
    # the board at work: every tool answers, numbers as people read them, the plot as a file
    answers = re.findall(r"\u2190 (.*)", text)
    assert not [a for a in answers if a.startswith(("tool error", "error"))], answers
    called = text.split("\u2192 tools/call ")[1:]
    assert len(called) >= 8
    assert not re.search(r"\d\.\d{7,}", "".join(c.split("\u2192")[0] for c in called))
    # the plot as the host gets it: a PNG (the test extra has the renderer), then its text
    # (the line is cut at the terminal's width)
    plot = re.search(r"\u2192 tools/call plot_history .*\n\u2190 \[\"image/png, [0-9.]+ KB: "
                     r"([^\"]+)\", \"tem", text)
    assert plot and open(plot.group(1), "rb").read().startswith(b"\x89PNG\r\n\x1a\n")


def test_requests_piped_from_a_file_are_all_answered(tmp_path):
    # A script that writes everything at once and closes stdin still gets every answer.
    requests = tmp_path / "requests.jsonl"
    requests.write_text("\n".join(json.dumps(m) for m in [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": "read_adc", "arguments": {"channel": 3}}}]) + "\n")
    with open(requests, "rb") as stdin:
        done = subprocess.run(BRIDGE + ["--sim"], cwd=REPO, env=clean_env(), stdin=stdin,
                              capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [0, 1]
    assert replies[0]["result"]["protocolVersion"] == "2025-06-18"
    assert "volts" in replies[1]["result"]["structuredContent"]


@windows_covered
def test_an_older_host_gets_only_the_fields_its_version_defines(line_client):
    client = line_client("--sim")
    init = client.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {}})
    assert init["result"]["protocolVersion"] == "2025-03-26"
    assert "title" not in init["result"]["serverInfo"]
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = client.request("tools/list")["result"]["tools"]
    assert tools and all("outputSchema" not in t and "title" not in t for t in tools)
    assert all("annotations" in t for t in tools)          # 2025-03-26 has annotations
    called = client.call("read_adc", channel=1)["result"]
    assert "structuredContent" not in called
    assert '"raw"' in called["content"][0]["text"]          # the text mirror carries the value
    resources = client.request("resources/list")["result"]["resources"]
    assert all("title" not in r for r in resources)


@windows_covered
def test_a_2024_host_gets_no_annotations(line_client):
    client = line_client("--sim")
    client.request("initialize", {"protocolVersion": "2024-11-05", "capabilities": {}})
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = client.request("tools/list")["result"]["tools"]
    assert tools and all("annotations" not in t for t in tools)


@windows_covered
def test_the_demo_shows_a_board_folder_by_its_absolute_path(tmp_path):
    # What a terminal shows to paste into a host's config works from any folder, as --install's.
    from tinymcp.host.deploy.starter import main_py
    (tmp_path / "myboard").mkdir()
    (tmp_path / "myboard" / "main.py").write_text(main_py("myboard"))
    done = subprocess.run(BRIDGE + ["--sim", "./myboard", "--demo", "--demo-seconds", "1"],
                          cwd=str(tmp_path), env=clean_env(), capture_output=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    text = done.stderr.decode()
    assert "--install HOST --sim %s\n" % (tmp_path / "myboard") in text
    assert json.dumps(str(tmp_path / "myboard")) in text and "./myboard" not in text
