# Measures the bridge: round trips per second direct, through a raw relay (socat, the floor) and
# through the bridge on stdio; over HTTP against a peer (mcp-proxy 0.13.0, installed by
# .ci/install-bridge-bench into its own venv) one at a time and 8 and 32 in flight, with a raw HTTP
# client of its own; the bridge's memory and import time; four boards behind one bridge (and one
# of them killed meanwhile), recovery times, and what hostile hosts and boards cost it (memory, and
# how soon each refusal comes). Peer and bridge runs are interleaved, medians of 3.
#   python tools/bridge_bench.py [--calls N] [--only throughput|http|boards|recovery|limits]
#   (needs socat for the floor and the re-plug figures). A full run (no --only) writes
#   docs/bridge-benchmarks.md.
#   python tools/bridge_bench.py --only cpu --against TREE: the bridge's CPU per call (from
#   /proc, on stdio and HTTP) and its RSS on stdio beside another checkout's (a worktree), their
#   runs interleaved: what a change costs or saves, on a machine too loaded for calls/s.
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if REPO not in sys.path:   # run from a checkout, installed or not
    sys.path.insert(0, REPO)

from tinymcp.host.lineclient import LineClient, child, written  # noqa: E402
from tools.bench_support.mcp_http import HttpClient  # noqa: E402
from tools.bench_support.own_pins import own_pins  # noqa: E402

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


REPEATS = 3   # interleaved runs of each peer; the median is shown
# The stdio relay's rows: 2000 calls are a tenth of a second for socat or the bridge, and three
# such runs swung the bridge/socat ratio 0.53x-0.65x on one idle machine: longer, and more.
STDIO_CALLS = 10000
STDIO_REPEATS = 5


def median_rows(peers, measure, repeats=REPEATS):
    # peers: [(name, peer)] -> {name: [median of each figure measure(peer) gives]}, the peers'
    # runs interleaved (one of each, then again), as the machine's load changes meanwhile.
    runs = {name: [] for name, _peer in peers}
    for _ in range(repeats):
        for name, peer in peers:
            runs[name].append(measure(peer))
    return {name: [statistics.median(figures) for figures in zip(*found)]
            for name, found in runs.items()}


def socat_relay():
    # The raw relay floor: socat between its stdio (the host's) and a pty the board runs on,
    # the path the bridge's --sim takes with nothing in between but a copy.
    return Peer(["socat", "-", "EXEC:%s %s,pty,raw,echo=0" % tuple(BOARD)])


def throughput(calls):
    # -> rows (name, one at a time, 8 in flight, ratio to the socat floor or None), and the
    # bridge's RSS on stdio in MB after its calls.
    peers = [("direct: python boards/sim/main.py over pipes", Peer(BOARD)),
             ("direct: the same board on a pty (no bridge)", Peer(BOARD, pty=True))]
    floor = "socat: host stdio <-> pty <-> board (the raw relay floor)"
    if shutil.which("socat"):
        peers.append((floor, socat_relay()))
    bridge = "tinymcp-bridge --sim (stdio -> bridge -> pty -> board)"
    bridged = Peer(BRIDGE + ["--sim"])
    peers.append((bridge, bridged))
    try:
        for _name, peer in peers:
            peer.initialize()
        found = median_rows(peers, lambda peer: [
            figure for window in (1, 8) for figure in cpu_per_call(
                peer.proc.pid, lambda: (calls, round_trips(peer, calls, window)))],
            STDIO_REPEATS)
        rss = rss_mb(bridged.proc.pid)
    finally:
        for _name, peer in peers:
            if peer.proc.poll() is None:
                peer.proc.kill()
            peer.close()
    base = found.get(floor)
    rows = [(name, one, eight, (one / base[0], eight / base[2])
             if base and name == bridge else None) for name, (one, _, eight, _) in found.items()]
    # The relays' own CPU per call (socat's, the bridge's; not the board's they start).
    cpu = [(short, found[name][1], found[name][3])
           for short, name in (("socat", floor), ("tinymcp-bridge --sim", bridge)) if name in found]
    return rows, rss, cpu


def import_seconds(modules, repeats=REPEATS):
    # -> the median time a fresh interpreter takes to import these modules (startup excluded).
    code = ("import time; t = time.perf_counter(); import %s; print(time.perf_counter() - t)"
            % ", ".join(modules))
    took = [float(subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True,
                                 capture_output=True, text=True).stdout)
            for _ in range(repeats)]
    return statistics.median(took)


STDIO_PATH = ("tinymcp.host.bridge.cli", "tinymcp.host.bridge.hosts", "tinymcp.host.bridge.stdio",
              "tinymcp.host.bridge.board", "tinymcp.host.bridge.sim")


# -- HTTP: the bridge against a peer, with a raw client of the benchmark's own ---------------

HTTP_VERSION = "2025-06-18"   # what the HTTP rows' sessions initialize with
MCP_PROXY = os.path.join(REPO, "build", "bridge-bench", "mcp-proxy", "bin", "mcp-proxy")


def http_calls(client, count, window):
    # -> (calls per second, the p50 round trip in ms) of count tools/call read_temperature,
    # window of them in flight, each on its own keep-alive connection.
    rate, p50 = client.rate(count, window, [("tools/call", CALL)])
    return rate, p50 * 1000


class HttpPeer:
    # mcp-proxy 0.13.0 serving boards/sim/main.py (on pipes) as Streamable HTTP at /mcp.
    def __init__(self):
        from tests.free_port import free_port
        self.err = tempfile.TemporaryFile()
        port = free_port()
        self.proc = subprocess.Popen([MCP_PROXY, "--port", str(port), "--host", "127.0.0.1",
                                      "--log-level", "WARNING", "--"] + BOARD,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=self.err, cwd=REPO)
        self.url = "http://127.0.0.1:%d/mcp" % port
        end = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > end:
                    raise RuntimeError("mcp-proxy did not start: " + written(self.err))
                time.sleep(0.1)

    def rss(self):
        return rss_mb(self.proc.pid)

    def close(self):
        self.proc.terminate()
        self.proc.wait(20)


HTTP_WINDOWS = (1, 8, 32)


def http_figures(calls):
    # -> ({name: [calls/s at 1, p50 ms at 1, calls/s at 8, calls/s at 32]}, bridge RSS MB,
    # peer RSS MB), mcp-proxy and the bridge interleaved; None for the peer when it cannot be
    # installed.
    peer = None
    if not os.path.exists(MCP_PROXY):
        subprocess.run([os.path.join(REPO, ".ci", "install-bridge-bench")], check=False)
    if os.path.exists(MCP_PROXY):
        peer = HttpPeer()
    bridge = HttpBridge("--sim")
    servers = ([("mcp-proxy 0.13.0 -- python boards/sim/main.py", peer)] if peer else []) + [
        ("tinymcp-bridge --sim --http", bridge)]
    try:
        clients = []
        for name, server in servers:
            client = HttpClient(server.url, HTTP_VERSION)
            client.session()
            http_calls(client, 50, 1)   # warm up
            clients.append((name, client))

        def measure(client):
            one, p50 = http_calls(client, calls, 1)
            return [one, p50] + [http_calls(client, calls, window)[0]
                                 for window in HTTP_WINDOWS[1:]]
        found = median_rows(clients, measure)
        return found, bridge.rss(), peer.rss() if peer else None
    finally:
        for _name, server in servers:
            server.close()


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


def cpu_seconds(pid):
    # -> the user + system CPU time a process has used so far (Linux: /proc/PID/stat), or None.
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_per_call(pid, run):
    # -> (what run() returns, the process's CPU microseconds per call over it); run() -> (calls,
    # its figure). Wall-clock rates vary with the machine's load; CPU per call much less.
    before = cpu_seconds(pid)
    calls, figure = run()
    after = cpu_seconds(pid)
    return figure, (after - before) * 1e6 / calls if before is not None else float("nan")


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return float("nan")


class HttpBridge:
    # A bridge serving HTTP in front of a --sim board or a device, and a way to post to it.
    # tree: the checkout it runs from (another worktree, for --only cpu --against).
    def __init__(self, *args, tree=REPO):
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(BRIDGE + ["--http", "127.0.0.1:0", "--log-level", "info",
                                               "--no-auth"]
                                     + list(args), stdin=subprocess.DEVNULL, stderr=self.err,
                                     cwd=tree, env=tree_env(tree))
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


def tree_env(tree):
    # The environment that runs the bridge from the checkout tree (its tinymcp first).
    return dict(os.environ, PYTHONPATH=tree + os.pathsep + os.environ.get("PYTHONPATH", ""))


def bridge_cpu(calls, trees):
    # -> {tree: [bridge CPU us per call: stdio 1 and 8 in flight, HTTP 1 and 8 in flight; the
    # stdio bridge's RSS in MB after its calls]}:
    # the same --sim bridge run from each checkout (this one and --against ones), interleaved,
    # medians of REPEATS. The bridge's own CPU (from /proc), not the board's nor the client's.
    peers = []
    for tree in trees:
        stdio = Peer.__new__(Peer)
        LineClient.__init__(stdio, **child(BRIDGE + ["--sim"], cwd=tree, env=tree_env(tree)))
        stdio.initialize()
        http = HttpBridge("--sim", tree=tree)
        client = HttpClient(http.url, HTTP_VERSION)
        client.session()
        http_calls(client, 50, 1)   # warm up
        peers.append((tree, (stdio, http, client)))

    def measure(peer):
        stdio, http, client = peer
        pid = stdio.proc.pid
        return ([cpu_per_call(pid, lambda: (calls, round_trips(stdio, calls, window)))[1]
                 for window in (1, 8)]
                + [cpu_per_call(http.proc.pid, lambda: (calls, http_calls(client, calls,
                                                                            window)))[1]
                   for window in (1, 8)]
                + [rss_mb(pid)])
    try:
        return median_rows(peers, measure)
    finally:
        for _tree, (stdio, http, _client) in peers:
            stdio.proc.kill()
            stdio.close()
            http.close()


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
    parser.add_argument("--only", choices=("throughput", "http", "boards", "recovery", "limits",
                                           "cpu"))
    parser.add_argument("--against", action="append", default=[], metavar="TREE",
                        help="with --only cpu: another checkout (a worktree of the branch "
                             "point) whose bridge is measured in the same run")
    args = parser.parse_args()
    own_pins()   # neither the user's pins written nor the bridge measured with them
    started = time.monotonic()
    if args.only == "cpu":
        say("bridge CPU per tools/call read_temperature (us, from /proc; %d calls each, medians "
            "of %d interleaved runs), and the stdio bridge's RSS after them:"
            % (args.calls, REPEATS))
        say("  %-40s %12s %12s %12s %12s %10s" % ("checkout", "stdio 1", "stdio 8", "HTTP 1",
                                                  "HTTP 8", "stdio RSS"))
        trees = [REPO] + [os.path.abspath(tree) for tree in args.against]
        for tree, figures in bridge_cpu(args.calls, trees).items():
            say("  %-40s %12.0f %12.0f %12.0f %12.0f %7.1f MB" % ((tree,) + tuple(figures)))
        return
    if args.only in (None, "throughput"):
        calls = max(args.calls, STDIO_CALLS)
        say("round trips on stdio (tools/call read_temperature), %d calls each, medians of %d "
            "interleaved runs:" % (calls, STDIO_REPEATS))
        rows, rss, cpu = throughput(calls)
        for name, one, eight, ratio in rows:
            say("  %-58s %7.0f/s one at a time  %7.0f/s 8 in flight%s"
                % (name, one, eight, "  (%.2fx, %.2fx the floor; target 0.6x)" % ratio
                   if ratio else ""))
        for name, one, eight in cpu:
            say("  CPU per call of the relay itself: %-24s %6.0f us one at a time  %6.0f us 8 in "
                "flight" % (name, one, eight))
        say("  bridge RSS on stdio after its calls                        %7.1f MB (target 30 MB)"
            % rss)
        say("  import of the stdio path (%s...), fresh interpreter  %5.0f ms (target 200 ms)"
            % (STDIO_PATH[0], import_seconds(STDIO_PATH) * 1000))
    if args.only in (None, "http"):
        found, rss, peer_rss = http_figures(args.calls)
        say("Streamable HTTP, tools/call read_temperature with a raw keep-alive client, %d calls "
            "each, medians of %d interleaved runs:" % (args.calls, REPEATS))
        peer = next((figures for name, figures in found.items() if name.startswith("mcp-proxy")),
                    None)
        for name, (one, p50, eight, many) in found.items():
            say("  %-46s %6.0f/s one at a time (p50 %5.2f ms)  %6.0f/s 8 in flight  %6.0f/s 32 "
                "in flight" % (name, one, p50, eight, many))
            if peer is not None and not name.startswith("mcp-proxy"):
                say("  %-46s %6.2fx%27s%6.2fx%18s%6.2fx" % (
                    "  the bridge / mcp-proxy (targets 1.5x, 1.2x)", one / peer[0], "",
                    eight / peer[2], "", many / peer[3]))
        say("  bridge RSS on HTTP after its calls             %6.1f MB%s"
            % (rss, "  (mcp-proxy with its board: %.1f MB + the board's)" % peer_rss
               if peer_rss else ""))
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
