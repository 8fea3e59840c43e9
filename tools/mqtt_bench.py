# Measures boards behind an MQTT broker: a Mosquitto of its own (loopback, a config of its own),
# N CPython sim boards serving through it and one tinymcp-bridge --mqtt over HTTP, driven by the
# official SDK client: discovery time (bridge start -> every board listed), tools/call round
# trips per second (round-robin over the boards, one at a time and 8 in flight; beside it, the
# same client through --sim), and how soon a board's tools are withdrawn (tools/list_changed at
# the host) once it is killed, or frozen at keep-alive 2 s and at the default 60 s.
#   python tools/mqtt_bench.py [--boards 20] [--calls 1000] [--no-default-keepalive]
# A full run (the defaults) writes docs/mqtt-benchmarks.md.
import argparse
import asyncio
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

BRIDGE = [sys.executable, "-m", "tinymcp.host.bridge"]
READ = "read_temperature"
RUNS = 3   # each rate is measured this often, and the best is the figure: the machine is shared
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


async def calls_per_second(client, names, calls, window):
    todo = iter(range(calls))

    async def worker():
        for i in todo:
            result = await client.call_tool(names[i % len(names)], {})
            if result.is_error:
                raise SystemExit("mqtt_bench: a call failed: %r" % result)
    began = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(window)))
    return calls / (time.monotonic() - began)


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
    names = ["sim-b%02d_%s" % (i, READ) for i in range(args.boards)]
    bridge = Bridge(broker.url)
    seen = ListChanged()
    try:
        async with Client(bridge.url, mode="legacy", message_handler=seen) as client:
            found = await listed(client, names, 120)
            say("%d CPython sim boards, one Mosquitto, one tinymcp-bridge --mqtt (HTTP), the "
                "SDK client:" % args.boards)
            say("  discovery: bridge started -> all %d boards listed     %6.2f s"
                % (args.boards, found - bridge.started))
            rss = rss_mb(bridge.proc.pid)
            if rss is not None:
                say("  the bridge's resident memory then                   %6.1f MB" % rss)
            for window in (1, 8):
                rates = [await calls_per_second(client, names, args.calls, window)
                         for _ in range(RUNS)]
                say("  tools/call %s round-robin, %d in flight  %6.0f/s (best of %d runs of %d "
                    "calls; the others %s)" % (READ, window, max(rates), RUNS, args.calls,
                                              ", ".join("%.0f" % r for r in sorted(rates)[:-1])))
            kinds = [(boards[-1], signal.SIGKILL, "killed (SIGKILL), keep-alive 2 s"),
                     (boards[-2], signal.SIGSTOP, "frozen (SIGSTOP), keep-alive 2 s")]
            if args.default_keepalive:
                kinds.append((boards[0], signal.SIGSTOP, "frozen (SIGSTOP), keep-alive 60 s"))
            say("  a board gone, until its tools are withdrawn (tools/list_changed at the host):")
            for (label, board), sig, what in kinds:
                took = await withdrawn(client, seen, board.proc, label, 150, sig)
                say("    %-38s %s" % (what, "%7.3f s" % took if took is not None
                                      else "not within 150 s"))
        one, eight, rss = await beside(args.calls)
        say("  beside it: tinymcp-bridge --sim (one board on a pty), the same client, best of "
            "%d: %.0f/s one at a time, %.0f/s 8 in flight%s"
            % (RUNS, one, eight, "; %.1f MB resident" % rss if rss is not None else ""))
    finally:
        bridge.proc.terminate()
        bridge.proc.wait(15)


async def beside(calls):
    # The same SDK client and calls through tinymcp-bridge --sim (one board on a pty), for scale.
    from mcp import Client
    bridge = Bridge(None)
    try:
        async with Client(bridge.url, mode="legacy") as client:
            await listed(client, [READ], 30)   # one board: its tools carry no label
            rss = rss_mb(bridge.proc.pid)
            return [max([await calls_per_second(client, [READ], calls, window)
                         for _ in range(RUNS)]) for window in (1, 8)] + [rss]
    finally:
        bridge.proc.terminate()
        bridge.proc.wait(15)


def write_report(path, took_s, command):
    from tools.bench_support.report import write_page
    write_page(path, "MQTT benchmarks",
               "Boards through a broker (issue 22): figures vary from run to run on a shared "
               "machine. A killed board's socket is closed by its OS, and the broker sends its "
               "will at once; a frozen one (as a board that lost power or its network) is given "
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
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--no-default-keepalive", dest="default_keepalive",
                        action="store_false",
                        help="skip the killed board at the default keep-alive (90 s)")
    args = parser.parse_args()
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
    if args.boards == 20 and args.calls == 1000 and args.default_keepalive:
        write_report(os.path.join(REPO, "docs", "mqtt-benchmarks.md"), time.monotonic() - started,
                     "python tools/mqtt_bench.py")


if __name__ == "__main__":
    main()
