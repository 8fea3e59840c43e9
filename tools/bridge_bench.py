# Measures the bridge: round trips per second direct vs through the bridge, and recovery times.
#   python tools/bridge_bench.py [--calls N]        (needs socat for the re-plug figures)
import argparse
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tty

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BRIDGE = [sys.executable, "-m", "tinymcp.host.bridge"]
BOARD = [sys.executable, os.path.join(REPO, "boards", "sim", "main.py")]
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}


class Peer:
    # A JSON-RPC peer on a subprocess's stdio: one request at a time, or a window of them.
    # pty=True puts the process on a pseudo-terminal instead of pipes (a board on a tty).
    def __init__(self, argv, pty=False):
        self.err = tempfile.TemporaryFile()
        if pty:
            master, slave = os.openpty()
            tty.setraw(slave)
            self.proc = subprocess.Popen(argv, stdin=master, stdout=master, stderr=self.err,
                                         cwd=REPO)
            os.close(master)
            self.writer = os.fdopen(slave, "wb")
            self.reader = os.fdopen(os.dup(slave), "rb")
        else:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=self.err, cwd=REPO)
            self.writer, self.reader = self.proc.stdin, self.proc.stdout
        self.inbox = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        try:
            for line in self.reader:
                msg = json.loads(line)
                if "method" not in msg:
                    self.inbox.put(msg)
        except OSError:  # EIO: the pty's other side closed
            pass

    def send(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.writer.write(json.dumps(msg).encode() + b"\n")
        self.writer.flush()
        return self.next_id

    def request(self, method, params=None, timeout=30):
        rid = self.send(method, params)
        while True:
            msg = self.inbox.get(timeout=timeout)
            if msg.get("id") == rid:
                return msg

    def initialize(self):
        self.request("initialize", INIT)
        self.writer.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.writer.flush()

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def close(self):
        self.writer.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


CALL = {"name": "read_temperature", "arguments": {}}


def round_trips(peer, calls, window=1):
    # -> calls per second with `window` requests in flight.
    for _ in range(20):
        peer.request("tools/call", CALL)   # warm up
    start = time.perf_counter()
    sent = done = 0
    while done < calls:
        while sent < calls and sent - done < window:
            peer.send("tools/call", CALL)
            sent += 1
        msg = peer.inbox.get(timeout=30)
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


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    print("round trips (tools/call read_temperature), %d calls each:" % args.calls)
    for name, one, eight in throughput(args.calls):
        print("  %-58s %7.0f/s one at a time  %7.0f/s 8 in flight" % (name, one, eight))
    print("recovery, from the board process (re)started to the first successful call:")
    print("  --sim board killed (bridge restarts it)   %.3f s incl. 0.2 s restart pause"
          % sim_reset())
    if shutil.which("socat"):
        reset, replug = socat_faults()
        print("  socat pty, board restarted, port stays    %.3f s" % reset)
        print("  socat pty pair torn down and recreated    %.3f s" % replug)
    else:
        print("  (socat not installed: no pty re-plug figures)")


if __name__ == "__main__":
    main()
