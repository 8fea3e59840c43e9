# Measures the bridge: round trips per second direct vs through the bridge, four boards behind one
# bridge (and one of them killed meanwhile), recovery times, and what hostile hosts and boards
# cost it (memory, and how soon each refusal comes).
#   python tools/bridge_bench.py [--calls N] [--only throughput|boards|recovery|limits]
#   (needs socat for the re-plug figures). A full run (no --only) writes docs/bridge-benchmarks.md.
import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:   # run from a checkout, installed or not
    sys.path.insert(0, REPO)

from tinymcp.host.lineclient import LineClient, child, written  # noqa: E402

BRIDGE = [sys.executable, "-m", "tinymcp.host.bridge"]
BOARD = [sys.executable, os.path.join(REPO, "boards", "sim", "main.py")]


class Peer(LineClient):
    # The shared line client on a subprocess's stdio, its stderr kept. pty=True puts the
    # process on a pseudo-terminal instead of pipes (a board on a tty).
    def __init__(self, argv, pty=False):
        LineClient.__init__(self, **child(argv, cwd=REPO, pty=pty))

    def initialize(self):
        return LineClient.initialize(self, client="bench")


CALL = {"name": "read_temperature", "arguments": {}}


def round_trips(peer, calls, window=1, tools=("read_temperature",)):
    # -> calls per second with `window` requests in flight, to each of the tools in turn.
    calls_to = [{"name": name, "arguments": {}} for name in tools]
    for i in range(20):
        peer.request("tools/call", calls_to[i % len(calls_to)])   # warm up
    start = time.perf_counter()
    sent = done = 0
    while done < calls:
        while sent < calls and sent - done < window:
            peer.start("tools/call", calls_to[sent % len(calls_to)])
            sent += 1
        msg = peer.message()
        if "method" not in msg:
            assert "result" in msg, msg
            done += 1
    return calls / (time.perf_counter() - start)


def first_success(peer, deadline=60):
    # Seconds until a tools/call succeeds, calling again right after each error.
    start = time.perf_counter()
    while time.perf_counter() - start < deadline:
        if "result" in peer.request("tools/call", CALL):
            return time.perf_counter() - start
        time.sleep(0.005)
    raise RuntimeError("no recovery in %ss" % deadline)


def throughput(calls):
    rows = []
    direct = Peer(BOARD)
    direct.initialize()
    rows.append(("direct: python boards/sim/main.py over pipes", round_trips(direct, calls),
                 round_trips(direct, calls, 8)))
    direct.close()
    on_pty = Peer(BOARD, pty=True)
    on_pty.initialize()
    rows.append(("direct: the same board on a pty (no bridge)", round_trips(on_pty, calls),
                 round_trips(on_pty, calls, 8)))
    on_pty.proc.kill()
    on_pty.close()
    bridged = Peer(BRIDGE + ["--sim"])
    bridged.initialize()
    rows.append(("tinymcp-bridge --sim (stdio -> bridge -> pty -> board)",
                 round_trips(bridged, calls), round_trips(bridged, calls, 8)))
    bridged.close()
    return rows


def latencies(peer, names, seconds):
    # -> the round trips (s) of calls to these tools, one at a time, for that long.
    took = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for name in names:
            start = time.perf_counter()
            reply = peer.request("tools/call", {"name": name, "arguments": {}})
            assert "result" in reply, reply
            took.append(time.perf_counter() - start)
    return sorted(took)


def four_boards(calls):
    # Four simulated boards behind one bridge: calls spread over them, then one board killed
    # (the bridge restarts it) while the other three are called. -> a dict of figures.
    labels = ("a", "b", "c", "d")
    args = []
    for label in labels:
        args += ["--sim", "%s=sim" % label]
    peer = Peer(BRIDGE + args + ["--log-level", "info"])
    peer.initialize()
    end = time.monotonic() + 60
    while len([t for t in peer.request("tools/list")["result"]["tools"]
               if t["name"].endswith("_read_temperature")]) < len(labels):
        assert time.monotonic() < end, peer.stderr()[-2000:]
        time.sleep(0.1)
    spread = ["%s_read_temperature" % label for label in labels]
    found = {"one": round_trips(peer, calls, 1, spread),
             "eight": round_trips(peer, calls, 8, spread)}
    others = spread[:-1]
    found["before"] = latencies(peer, others, 2.0)
    pid = int(peer.stderr().split("sim board d started, pid ")[1].split()[0])
    os.kill(pid, signal.SIGKILL)
    found["during"] = latencies(peer, others, 2.0)   # d is dead, then restarting, meanwhile
    restarted = "sim board d started, pid " in peer.stderr().split("sim board d exited")[-1]
    found["restarted"] = restarted
    peer.close()
    return found


def percentile(values, p):
    return values[min(len(values) - 1, int(len(values) * p))] * 1000


def sim_reset():
    # --sim: the board process is killed; the bridge restarts it (0.2 s pause) and re-initializes.
    peer = Peer(BRIDGE + ["--sim", "--log-level", "info"])
    peer.initialize()
    peer.request("tools/call", CALL)
    pid = int(peer.stderr().split("started, pid ")[1].split()[0])
    os.kill(pid, signal.SIGKILL)
    took = first_success(peer)
    peer.close()
    return took


def socat_faults():
    # A real pty pair: (board restart while the port stays, whole link re-plugged), each from
    # the moment the board process is started again to the first successful call.
    tmp = tempfile.mkdtemp()
    a, b = os.path.join(tmp, "A"), os.path.join(tmp, "B")

    def link_up():
        proc = subprocess.Popen(["socat", "pty,raw,echo=0,link=" + a, "pty,raw,echo=0,link=" + b])
        while not (os.path.exists(a) and os.path.exists(b)):
            time.sleep(0.005)
        return proc

    def board_up():
        fd = os.open(b, os.O_RDWR | os.O_NOCTTY)
        proc = subprocess.Popen(BOARD, stdin=fd, stdout=fd, cwd=REPO)
        os.close(fd)
        return proc

    socat = link_up()
    board = board_up()
    peer = Peer(BRIDGE + ["--port", a, "--timeout", "3"])
    peer.initialize()
    peer.request("tools/call", CALL)
    board.kill()
    board.wait()
    board = board_up()
    reset = first_success(peer)
    board.kill()
    board.wait()
    socat.terminate()
    socat.wait()
    while os.path.lexists(a):
        time.sleep(0.005)
    peer.request("tools/call", CALL)       # "board disconnected"
    socat = link_up()
    board = board_up()
    replug = first_success(peer)
    peer.close()
    board.kill()
    socat.terminate()
    return reset, replug


# -- limits: hostile hosts and boards ----------------------------------------------------------

ACCEPT = "application/json, text/event-stream"
TESTBOARD = os.path.join(REPO, "tests", "bridge", "testboard.py")


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


class HttpBridge:
    # A bridge serving HTTP in front of a --sim board or a device, and a way to post to it.
    def __init__(self, *args):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(BRIDGE + ["--http", "127.0.0.1:0", "--log-level", "info",
                                               "--no-auth"]
                                     + list(args), stdin=subprocess.DEVNULL, stderr=self.err,
                                     cwd=REPO)
        while True:
            text = written(self.err)
            if "board ready" in text and "serving http" in text:
                break
            if self.proc.poll() is not None:
                raise RuntimeError(text)
            time.sleep(0.05)
        self.url = text.split("serving ")[1].split()[0]

    def post(self, body, sid=None, timeout=60, **headers):
        import httpx2 as httpx
        headers = dict({"accept": ACCEPT, "content-type": "application/json"}, **headers)
        if sid:
            headers.update({"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"})
        if type(body) is dict:
            body = json.dumps(body).encode()
        return httpx.post(self.url, content=body, headers=headers, timeout=timeout)

    def session(self, capabilities=None):
        response = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities or {},
            "clientInfo": {"name": "bench", "version": "0"}}})
        sid = response.headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, sid)
        return sid

    def rss(self):
        return rss_mb(self.proc.pid)

    def close(self):
        self.proc.terminate()
        self.proc.wait(20)


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def abandoned_sessions(n=1500):
    # -> RSS growth in MB: each session makes one call, then is left open.
    bridge = HttpBridge("--sim")
    try:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": CALL}
        bridge.post(call, bridge.session())
        before = bridge.rss()
        for _ in range(n):
            bridge.post(call, bridge.session())
        return bridge.rss() - before
    finally:
        bridge.close()


def stalled_listener(n=100000):
    # A host opens its GET stream and stops reading while the board logs n lines; another
    # host's call meanwhile. -> (RSS growth in MB, seconds for the other host's call)
    import socket
    from tests.hostile.fakeboard import FakeBoard
    line = json.dumps({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "warning", "data": "x" * 150}}).encode() + b"\n"
    board = FakeBoard()
    bridge = HttpBridge("--port", board.device, "--timeout", "60")
    stalled = socket.socket()
    try:
        listener, caller = bridge.session(), bridge.session()
        where = bridge.url.split("/")[2]
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.connect(("127.0.0.1", int(where.split(":")[1])))
        stalled.sendall(("GET /mcp HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n"
                         "Mcp-Session-Id: %s\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n"
                         % (where, listener)).encode())
        stalled.recv(100)
        before = bridge.rss()
        flood = threading.Thread(target=board.write, args=(line * n,))
        flood.start()
        time.sleep(0.5)
        took, _ = timed(lambda: bridge.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                             "params": {"name": "echo", "arguments": {}}},
                                            caller))
        flood.join()
        bridge.post({"jsonrpc": "2.0", "id": 2, "method": "ping"}, caller)
        return bridge.rss() - before, took
    finally:
        stalled.close()
        bridge.close()
        board.close()


def big_post(mb=20):
    # -> (RSS growth in MB, seconds to the 413) for a body of mb MB inside a session, sent
    # without a Content-Length (so the bridge has to count).
    bridge = HttpBridge("--sim")
    try:
        sid = bridge.session()
        before = bridge.rss()
        body = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"' + b"x" * (mb << 20)

        def chunks():
            for i in range(0, len(body), 1 << 16):
                yield body[i:i + (1 << 16)]
        try:
            took, response = timed(lambda: bridge.post(chunks(), sid))
            status = response.status_code
        except Exception as e:   # the bridge may close while we still send
            took, status = float("nan"), type(e).__name__
        return bridge.rss() - before, took, status
    finally:
        bridge.close()


def refusals():
    # -> [(what, seconds to the answer, the answer's code)] with a --timeout of 60 s.
    rows = []
    peer = Peer(BRIDGE + ["--sim", TESTBOARD, "--timeout", "60"])
    peer.initialize()
    for what, method, params in (
            ("stdio: a tools/call longer than the board's frames",
             "tools/call", {"name": "read_adc", "arguments": {"x": "x" * 5000}}),
            ("stdio: nested 100 deep", "tools/call",
             {"name": "read_adc", "arguments": json.loads("[" * 100 + "]" * 100)})):
        took, msg = timed(lambda: peer.request(method, params))
        rows.append((what, took, msg.get("error", {}).get("code")))
    rid = next(peer.ids)
    start = time.perf_counter()
    peer.write(b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":'
               b'"read_adc","arguments":{"channel":1e999}}}\n' % rid)
    msg = peer.wait(rid, 60)
    rows.append(("stdio: 1e999 in the arguments", time.perf_counter() - start,
                 msg.get("error", {}).get("code")))
    peer.close()
    bridge = HttpBridge("--sim", TESTBOARD, "--timeout", "60")
    try:
        sid = bridge.session()
        took, answer = timed(lambda: _raw(bridge.url, b"POST /mcp HTTP/1.1\r\nHost: %s\r\n"
                                          b"Content-Type: application/json\r\nContent-Length: "
                                          b"20000000\r\n\r\n" % bridge.url.split("/")[2]
                                          .encode()))
        rows.append(("http: Content-Length 20 MB", took, answer.split(b" ")[1].decode()))
        for what, body, headers in (
                ("http: NaN in the arguments", b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
                 b'"params":{"name":"read_adc","arguments":{"channel":NaN}}}', {}),
                ("http: an unknown session", b'{"jsonrpc":"2.0","id":1,"method":"ping"}',
                 {"mcp-session-id": "nope"})):
            try:
                took, response = timed(lambda: bridge.post(body, None if "mcp-session-id"
                                                           in headers else sid, **headers))
                rows.append((what, took, response.status_code))
            except Exception as e:
                rows.append((what, float("nan"), type(e).__name__))
    finally:
        bridge.close()
    rows.append(board_ask_refused())
    return rows


def _raw(url, data):
    # The first bytes the bridge answers to data sent on a new connection.
    import socket
    host, port = url.split("/")[2].split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:
        s.sendall(data)
        return s.recv(4096)


def board_ask_refused():
    # A board asks sampling/createMessage while no host's call runs: refused, and how soon.
    from tests.hostile.fakeboard import FakeBoard
    board = FakeBoard()
    peer = Peer(BRIDGE + ["--port", board.device, "--timeout", "60"])
    try:
        peer.initialize()
        start = time.perf_counter()
        board.send({"jsonrpc": "2.0", "id": "ask", "method": "sampling/createMessage",
                    "params": {"messages": [], "maxTokens": 1}})
        answer = board.wait_for(lambda: board.answer_to("ask"), 60)
        return ("board: sampling while no host call runs", time.perf_counter() - start,
                answer["error"]["code"])
    finally:
        peer.close()
        board.close()


REPORT = []   # what a run printed, for the page a full run writes


def say(line):
    print(line)
    REPORT.append(line)


def write_report(path, took_s, calls):
    from tools.bench_support.report import write_page
    write_page(path, "Bridge benchmarks",
               "Ranges vary from run to run on a shared machine: compare rows of one run.",
               "python tools/bridge_bench.py --calls %d" % calls, took_s, REPORT)


def limits():
    say("hostile hosts and boards (bridge RSS growth; how soon each refusal comes):")
    say("  1,500 abandoned HTTP sessions, one call each   %+6.1f MB" % abandoned_sessions())
    grown, took = stalled_listener()
    say("  a stalled GET stream, 100,000 board logs       %+6.1f MB; another host's call "
          "took %.2f s" % (grown, took))
    grown, took, status = big_post()
    say("  a 20 MB POST in a session, streamed            %+6.1f MB; answered %s in %.3f s"
          % (grown, status, took))
    for what, took, code in refusals():
        say("  %-52s %.4f s (%s)" % (what, took, code))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--only", choices=("throughput", "boards", "recovery", "limits"))
    args = parser.parse_args()
    started = time.monotonic()
    if args.only in (None, "throughput"):
        say("round trips (tools/call read_temperature), %d calls each:" % args.calls)
        for name, one, eight in throughput(args.calls):
            say("  %-58s %7.0f/s one at a time  %7.0f/s 8 in flight" % (name, one, eight))
    if args.only in (None, "boards"):
        found = four_boards(args.calls)
        say("four boards behind one bridge (--sim a=sim ... --sim d=sim), %d calls spread over "
              "them:" % args.calls)
        say("  %-58s %7.0f/s one at a time  %7.0f/s 8 in flight"
              % ("stdio -> bridge -> four ptys -> four boards", found["one"], found["eight"]))
        for when in ("before", "during"):
            took = found[when]
            say("  a, b, c called one at a time, %-6s d is killed: %5d calls, median %.2f ms, "
                  "p99 %.2f ms, max %.1f ms" % (when, len(took), percentile(took, 0.5),
                                                percentile(took, 0.99), took[-1] * 1000))
        say("  (d %s restarted by the bridge within those 2 s)"
              % ("was" if found["restarted"] else "was not yet"))
    if args.only in (None, "recovery"):
        say("recovery, from the board process (re)started to the first successful call:")
        say("  --sim board killed (bridge restarts it)   %.3f s incl. 0.2 s restart pause"
              % sim_reset())
        if shutil.which("socat"):
            reset, replug = socat_faults()
            say("  socat pty, board restarted, port stays    %.3f s" % reset)
            say("  socat pty pair torn down and recreated    %.3f s" % replug)
        else:
            say("  (socat not installed: no pty re-plug figures)")
    if args.only in (None, "limits"):
        limits()
    if args.only is None:
        write_report(os.path.join(REPO, "docs", "bridge-benchmarks.md"), time.monotonic() - started,
                     args.calls)


if __name__ == "__main__":
    main()
