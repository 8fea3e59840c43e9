# Measures boards behind an MQTT broker: a Mosquitto of its own (loopback, a config of its own),
# N CPython sim boards serving through it and one tinymcp-bridge --mqtt over HTTP: discovery time
# (bridge start -> every board listed, the official SDK client), tools/call round trips per
# second round-robin over the boards (1, 8 and 32 in flight) through the bridge, from a raw HTTP
# client (tools/bench_support/mcp_http.py), against their floor: the same calls asked of the
# same boards straight through the broker by a raw MQTT 5 client (ports/mqtt5.py: one socket,
# no thread), interleaved run by run; beside it, the raw HTTP client through --sim; the
# bridge's own CPU per call with a host on stdio (no HTTP): --mqtt boards against one --sim
# board on a pty, interleaved; and how soon a board's tools are withdrawn (tools/list_changed at
# the host) once it is killed, or frozen at keep-alive 2 s and at the default 60 s.
#   python tools/mqtt_bench.py [--boards 20] [--calls 2000] [--no-default-keepalive]
# A full run (the defaults) writes docs/mqtt-benchmarks.md.
import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:   # run from a checkout, installed or not
    sys.path.insert(0, REPO)

from tests.mqtt.conftest import MOSQUITTO, Board, Broker, ListChanged  # noqa: E402
from tinymcp.host.lineclient import written  # noqa: E402
from tools.bench_support.mcp_http import HttpClient  # noqa: E402
from tools.bench_support.own_pins import own_pins  # noqa: E402
from tools.bridge_bench import Peer, cpu_per_call, round_trips  # noqa: E402

BRIDGE = [sys.executable, "-m", "tinymcp.host.bridge"]
READ = "read_temperature"
RUNS = 3   # each rate is measured this often, and the best is the figure: the machine is shared
CALLS = 2000   # in each run: 500 (a tenth of a second at 1 in flight) measured mostly noise
CPU_CALLS = 5000   # in each CPU run: /proc counts 10 ms ticks, 2 us a call over these
WINDOWS = (1, 8, 32)   # calls in flight
REPORT = []


def say(line):
    print(line, flush=True)
    REPORT.append(line)


class Bridge:
    def __init__(self, url):
        self.err = tempfile.TemporaryFile()
        self.started = time.monotonic()
        board = ["--mqtt", url, "--mqtt-insecure"] if url else ["--sim"]   # its own broker
        self.proc = subprocess.Popen(BRIDGE + board + ["--http", "127.0.0.1:0", "--no-auth"],
                                     cwd=REPO,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.err)
        end = time.monotonic() + 30
        while time.monotonic() < end:
            found = re.search(r"serving (http://\S+/mcp)", written(self.err))
            if found:
                self.url = found.group(1)
                return
            time.sleep(0.02)
        raise SystemExit("mqtt_bench: the bridge did not serve: " + written(self.err)[-2000:])


async def listed(client, names, timeout):
    # -> when every one of the tool names was first seen in tools/list.
    wanted = set(names)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        names = {t.name for t in (await client.list_tools()).tools}
        if wanted <= names:
            return time.monotonic()
        await asyncio.sleep(0.05)
    raise SystemExit("mqtt_bench: not every board was listed within %d s" % timeout)


def calls_to(names):
    return [("tools/call", {"name": name, "arguments": {}}) for name in names]


class Floor:
    # The boards asked straight through the broker, as the specification has a client ask them,
    # by the boards' own MQTT 5 client (ports/mqtt5.py) in this process: one socket, one input
    # buffer, no thread, so the boards and the broker set the pace.
    def __init__(self, port, ids, name="tinymcp/sim"):
        from ports.mqtt5 import NO_LOCAL, Client
        import socket
        self.cid = "bench-floor-%d" % os.getpid()
        self.users = [("MCP-COMPONENT-TYPE", "mcp-client"), ("MCP-MQTT-CLIENT-ID", self.cid)]
        self.client = Client(self.cid, keepalive=0)   # idle for minutes while the bridge runs
        self.client.connect("127.0.0.1", port, self.users[:1])
        self.client.stream.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.client.subscribe([("$mcp-rpc/%s/+/%s" % (self.cid, name), NO_LOCAL)])
        self.rpc = ["$mcp-rpc/%s/%s/%s" % (self.cid, board, name) for board in ids]
        self.ids = 0
        for board, rpc in zip(ids, self.rpc):   # initialize on the control topic, each board
            self.ask("$mcp-server/%s/%s" % (board, name), "initialize", {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"}})
            self.answers(1)
            self.send(rpc, {"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, topic, msg):
        payload = json.dumps(msg, separators=(",", ":")).encode()
        self.client.publish(topic, payload, None, self.users)

    def ask(self, topic, method, params):
        self.ids += 1
        self.send(topic, {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})

    def answers(self, wanted, timeout=30):
        # Reads until `wanted` answers (results) came; an error or a silence ends the run.
        got = 0
        end = time.monotonic() + timeout
        while got < wanted:
            packet = self.client.poll(1000)
            if packet is None:
                if time.monotonic() > end:
                    raise SystemExit("mqtt_bench: the boards stopped answering over MQTT")
                continue
            msg = json.loads(bytes(packet[1]))
            if "method" in msg:
                continue
            if "result" not in msg or msg["result"].get("isError"):
                raise SystemExit("mqtt_bench: a call over MQTT failed: %r" % msg)
            got += 1
        return got

    def rate(self, calls, window, method="tools/call", params=None):
        # -> calls per second: `calls` requests round-robin over the boards, `window` in flight.
        params = params or {"name": READ, "arguments": {}}
        began = time.perf_counter()
        sent = done = 0
        while done < calls:
            while sent < calls and sent - done < window:
                self.ask(self.rpc[sent % len(self.rpc)], method, params)
                sent += 1
            done += self.answers(1)
        return calls / (time.perf_counter() - began)

    def close(self):
        self.client.close()


async def withdrawn(client, seen, proc, label, timeout, sig):
    # Signal the board -> seconds until the host is told its tools changed and they are gone.
    # SIGKILL: the OS closes its socket and the broker sends its will at once; SIGSTOP: it
    # freezes with its socket open, like a board that lost power or its network, and the broker
    # sends its will once 1.5 keep-alive periods pass without a packet.
    before = len(seen.list_changed)
    killed = time.monotonic()
    proc.send_signal(sig)
    end = killed + timeout
    try:
        while time.monotonic() < end:
            if len(seen.list_changed) > before:
                names = {t.name for t in (await client.list_tools()).tools}
                if "%s_%s" % (label, READ) not in names:
                    return seen.list_changed[before] - killed
                before = len(seen.list_changed)
            await asyncio.sleep(0.02)
        return None
    finally:
        proc.kill()
        proc.wait(10)


def rss_mb(pid):
    # A process's resident set in MB (Linux), or None.
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def wait_online(port, count, timeout=120):
    # Until count boards' presences are retained on the broker (they are all up).
    import threading
    import paho.mqtt.client as mqtt
    online = set()
    done = threading.Event()

    def message(client, userdata, m):
        if m.payload:
            online.add(m.topic)
        if len(online) >= count:
            done.set()
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    c.on_message = message
    c.on_connect = lambda *a: c.subscribe("$mcp-server/presence/#")
    c.connect("127.0.0.1", port)
    c.loop_start()
    try:
        if not done.wait(timeout):
            raise SystemExit("mqtt_bench: only %d of %d boards came online" % (len(online), count))
    finally:
        c.disconnect()
        c.loop_stop()


async def run(args, broker, boards):
    from mcp import Client
    ids = [board.id for _label, board in boards]
    names = ["sim-%s_%s" % (board, READ) for board in ids]
    bridge = Bridge(broker.url)
    seen = ListChanged()
    try:
        async with Client(bridge.url, mode="legacy", message_handler=seen) as client:
            found = await listed(client, names, 120)
            say("%d CPython sim boards, one Mosquitto, one tinymcp-bridge --mqtt (HTTP); the "
                "machine's 2 cores shared with other jobs (load average %.1f at the start):"
                % (args.boards, os.getloadavg()[0]))
            say("  discovery: bridge started -> all %d boards listed     %6.2f s (the SDK client)"
                % (args.boards, found - bridge.started))
            rss = rss_mb(bridge.proc.pid)
            if rss is not None:
                say("  the bridge's resident memory then                   %6.1f MB" % rss)
            await fleet_against_floor(args, broker, bridge, ids, names)
            await asyncio.to_thread(stdio_cpu, args, broker, ids)
            kinds = [(boards[-1], signal.SIGKILL, "killed (SIGKILL), keep-alive 2 s"),
                     (boards[-2], signal.SIGSTOP, "frozen (SIGSTOP), keep-alive 2 s")]
            if args.default_keepalive:
                kinds.append((boards[0], signal.SIGSTOP, "frozen (SIGSTOP), keep-alive 60 s"))
            say("  a board gone, until its tools are withdrawn (tools/list_changed at the host):")
            for (label, board), sig, what in kinds:
                took = await withdrawn(client, seen, board.proc, label, 150, sig)
                say("    %-38s %s" % (what, "%7.3f s" % took if took is not None
                                      else "not within 150 s"))
        rates, rss = await beside(args.calls)
        say("  beside it: tinymcp-bridge --sim (one board on a pty), the same raw HTTP client, "
            "best of %d: %s%s" % (RUNS, ", ".join("%.0f/s %d in flight" % (rate, window)
                                                  for window, rate in zip(WINDOWS, rates)),
                                  "; %.1f MB resident" % rss if rss is not None else ""))
    finally:
        bridge.proc.terminate()
        bridge.proc.wait(15)


async def fleet_against_floor(args, broker, bridge, ids, names):
    # tools/call round-robin over the boards: through the bridge from the raw HTTP client, and
    # straight over MQTT (the floor), their runs interleaved; the best of RUNS each.
    session = HttpClient(bridge.url)
    await asyncio.to_thread(session.session)
    floor = Floor(broker.port, ids)
    try:
        say("  tools/call %s round-robin over the %d boards, best of %d runs of %d calls each "
            "(the others in brackets):" % (READ, len(ids), RUNS, args.calls))
        say("    in flight   through the bridge (raw HTTP)      floor: straight over MQTT (raw "
            "MQTT 5)   bridge/floor")
        for window in WINDOWS:
            fleet, floors, p50s = [], [], []
            for _ in range(RUNS):
                rate, p50 = await asyncio.to_thread(session.rate, args.calls, window,
                                                    calls_to(names))
                fleet.append(rate)
                p50s.append(p50)
                floors.append(await asyncio.to_thread(floor.rate, args.calls, window))
            say("    %5d       %6.0f/s %-14s p50 %5.1f ms   %6.0f/s %-24s %5.2fx"
                % (window, max(fleet), _others(fleet), sorted(p50s)[RUNS // 2] * 1000,
                   max(floors), _others(floors), max(fleet) / max(floors)))
    finally:
        floor.close()


def stdio_cpu(args, broker, ids):
    # The bridge's CPU (utime + stime, /proc) per tools/call from a host on stdio, round-robin
    # over the --mqtt boards, against one --sim board on a pty through another bridge: the MQTT
    # side's cost per call against the serial side's, without HTTP. Interleaved, best of RUNS.
    mqtt = Peer(BRIDGE + ["--mqtt", broker.url, "--mqtt-insecure"])
    sim = Peer(BRIDGE + ["--sim"])
    try:
        mqtt.initialize()
        sim.initialize()
        names = ["sim-%s_%s" % (board, READ) for board in ids]
        end = time.monotonic() + 60
        while not set(names) <= {t["name"] for t in mqtt.request("tools/list")["result"]["tools"]}:
            if time.monotonic() > end:
                raise SystemExit("mqtt_bench: the stdio bridge did not list every board")
            time.sleep(0.2)
        calls = max(args.calls, CPU_CALLS)
        say("  the bridge's own CPU per tools/call, a host on stdio (no HTTP), best of %d runs of "
            "%d calls:" % (RUNS, calls))
        say("    in flight   --mqtt (%d boards)     --sim (one board, pty)   mqtt/sim"
            % len(ids))
        for window in WINDOWS:
            cpu = {"mqtt": [], "sim": []}
            for _ in range(RUNS):
                for kind, peer, tools in (("mqtt", mqtt, names), ("sim", sim, (READ,))):
                    cpu[kind].append(cpu_per_call(peer.proc.pid, lambda: (
                        calls, round_trips(peer, calls, window, tools)))[1])
            mqtt_us, sim_us = min(cpu["mqtt"]), min(cpu["sim"])
            say("    %5d       %6.0f us               %6.0f us                %s"
                % (window, mqtt_us, sim_us,
                   "%5.2fx" % (mqtt_us / sim_us) if sim_us > 0 else "  (under a tick)"))
    finally:
        for peer in (mqtt, sim):
            peer.proc.kill()
            peer.close()


def _others(rates):
    return "(%s)" % ", ".join("%.0f" % r for r in sorted(rates)[:-1])


async def beside(calls):
    # The raw HTTP client's calls through tinymcp-bridge --sim (one board on a pty), for scale.
    from mcp import Client
    bridge = Bridge(None)
    try:
        async with Client(bridge.url, mode="legacy") as client:
            await listed(client, [READ], 30)   # one board: its tools carry no label
        session = HttpClient(bridge.url)
        await asyncio.to_thread(session.session)
        rss = rss_mb(bridge.proc.pid)
        rates = []
        for window in WINDOWS:
            rates.append(max([(await asyncio.to_thread(session.rate, calls, window,
                                                       calls_to([READ])))[0]
                              for _ in range(RUNS)]))
        return rates, rss
    finally:
        bridge.proc.terminate()
        bridge.proc.wait(15)


def write_report(path, took_s, command):
    from tools.bench_support.report import write_page
    write_page(path, "MQTT benchmarks",
               "Boards through a broker (issues 22, 30): figures vary from run to run on a "
               "shared machine, whose load at the start is said with them. The floor is the "
               "same tools/call asked of the same boards straight through the same broker by a "
               "raw MQTT 5 client, with no bridge; bridge/floor is the share of it the bridge "
               "keeps (the target is 0.5x). A killed board's socket is closed by its OS, and "
               "the broker sends its will at once; a frozen one (as a board that lost power or "
               "its network) is given "
               "1.5 keep-alive periods of silence and whatever the broker takes to look "
               "(Mosquitto checks keep-alives every few seconds).",
               command, took_s, REPORT, mosquitto_version())


def mosquitto_version():
    try:
        out = subprocess.run([MOSQUITTO, "-h"], capture_output=True, text=True, timeout=10)
    except OSError:
        return "mosquitto"
    first = (out.stdout or out.stderr).splitlines()
    return first[0].strip() if first else "mosquitto"


def main():
    parser = argparse.ArgumentParser(description="boards behind an MQTT broker, measured")
    parser.add_argument("--boards", type=int, default=20)
    parser.add_argument("--calls", type=int, default=CALLS)
    parser.add_argument("--no-default-keepalive", dest="default_keepalive",
                        action="store_false",
                        help="skip the killed board at the default keep-alive (90 s)")
    args = parser.parse_args()
    own_pins()   # neither the user's pins written nor the bridge measured with them
    if MOSQUITTO is None:
        raise SystemExit("mqtt_bench: mosquitto is not installed (.ci/install-mosquitto)")
    if args.boards < 3:
        raise SystemExit("mqtt_bench: --boards 3 at least")
    started = time.monotonic()
    broker = Broker()
    boards = []
    try:
        for i in range(args.boards):   # the last two have keep-alive 2 s, the others the default
            extra = ["--keepalive", "2"] if i >= args.boards - 2 else []
            boards.append(("sim-b%02d" % i, Board("python", broker.url, "b%02d" % i, *extra)))
        wait_online(broker.port, args.boards)
        asyncio.run(run(args, broker, boards))
    finally:
        for _label, board in boards:
            board.stop()
        broker.stop()
        shutil.rmtree(broker.dir, ignore_errors=True)
    if args.boards == 20 and args.calls == CALLS and args.default_keepalive:
        write_report(os.path.join(REPO, "docs", "mqtt-benchmarks.md"), time.monotonic() - started,
                     "python tools/mqtt_bench.py")


if __name__ == "__main__":
    main()
