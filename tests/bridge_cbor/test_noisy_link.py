# Bit flips and dropped bytes (1e-3 per byte) in both directions on the bridge's CBOR link: every
# response the host gets is exactly right, or the bridge's own timeout/reset/not-serving error. Flips at 1e-3
# per byte (one random bit) leave a usable link; at 1e-3 per bit almost nothing longer than ~100
# bytes survives (a 400-byte initialize answer gets through ~4% of the time), so that run only
# shows that nothing wrong gets through.
import base64
import json
import os
import subprocess
import sys
import time

import pytest

from tests.bridge.conftest import BRIDGE, REPO, clean_env
from tests.bridge_cbor.binboard import KIB
from tinymcp.host.lineclient import LineClient
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

HERE = os.path.dirname(os.path.abspath(__file__))
BUDGET = {"byte": 40.0, "bit": 20.0}   # seconds of requests
LEAST_EXACT = {"byte": 10, "bit": 0}
BRIDGE_ERRORS = {(-32001, "timeout"), (-32000, "reset"), (-32000, "not-serving")}


def judge(expected, reply):
    # -> "exact", "bridge error" or "WRONG"
    if "result" in reply and reply["result"] == expected:
        return "exact"
    err = reply.get("error")
    if type(err) is dict and (err.get("code"), (err.get("data") or {}).get("bridge")) in BRIDGE_ERRORS:
        return "bridge error"
    return "WRONG"


@pytest.mark.parametrize("per", ["byte", "bit"])
def test_no_corrupted_response_ever_reaches_the_host(tmp_path, per):
    budget, least = BUDGET[per], LEAST_EXACT[per]
    relay_err = open(tmp_path / "relay.err", "w+")
    bridge_err = open(tmp_path / "bridge.err", "w+")
    relay = subprocess.Popen([sys.executable, os.path.join(HERE, "noisyline.py"),
                              os.path.join(HERE, "binboard.py"), "6", "1e-3", "1e-3", per],
                             stdout=subprocess.PIPE, stderr=relay_err, cwd=REPO)
    bridge = None
    try:
        device = relay.stdout.readline().decode().strip()
        assert device.startswith("/dev/"), device
        bridge = subprocess.Popen(BRIDGE + ["--port", device, "--link", "cbor", "--timeout", "2",
                                            "--log-level", "info"],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=bridge_err,
                                  cwd=REPO, env=clean_env())
        host = LineClient(bridge.stdout.fileno(), bridge.stdin.fileno())
        init = host.initialize(client="noisy")
        assert "result" in init, init  # the bridge answers it, before or after the board is up
        assert "experimental" not in init["result"]["capabilities"]
        outcomes = []
        start = time.monotonic()
        n = 0
        while time.monotonic() - start < budget:
            n += 1
            if n % 2:
                text = "echo %d %s" % (n, "\x03\n\x10\x04" * (n % 5))
                out = {"text": text}
                expected = {"content": [{"type": "text", "text": json.dumps(out, separators=(",", ":"))}],
                            "structuredContent": out}
                reply = host.request("tools/call", {"name": "echo", "arguments": {"text": text}})
            else:
                size = (16, 48, 120)[n % 3]
                uri = "bytes://%d" % size
                expected = {"contents": [{"uri": uri, "mimeType": "application/octet-stream",
                                          "blob": base64.b64encode(KIB[:size]).decode()}]}
                reply = host.request("resources/read", {"uri": uri})
            outcomes.append((judge(expected, reply), reply))
        wrong = [reply for verdict, reply in outcomes if verdict == "WRONG"]
        exact = sum(1 for verdict, _ in outcomes if verdict == "exact")
        assert not wrong, wrong[:3]
        assert exact >= least, [r for _, r in outcomes[:5]]
    finally:
        if bridge is not None:
            bridge.terminate()
            try:
                bridge.wait(15)
            except subprocess.TimeoutExpired:
                bridge.kill()
                bridge.wait()
        relay.terminate()
        try:
            relay.wait(10)
        except subprocess.TimeoutExpired:
            relay.kill()
            relay.wait()
    relay_err.seek(0)
    bridge_err.seek(0)
    noise, log = relay_err.read(), bridge_err.read()
    print("\n" + noise.strip(), "| %d requests: %d exact, %d bridge errors"
          % (len(outcomes), exact, len(outcomes) - exact))
    assert "Traceback" not in log, log[-3000:]
    if least:  # the link came up: the bridge dropped (and counted) corrupted frames
        assert "board link: CBOR frames" in log, log[-3000:]
        dropped = int(log.split(" dropped for a bad CRC")[0].rsplit(",", 1)[1].split()[0])
        assert dropped > 0, log[-2000:]
    flips = [int(part.split(" flips")[0].rsplit(" ", 1)[1]) for part in noise.split(";")[1:]]
    assert len(flips) == 2 and min(flips) > 0, noise
