# A TCP port on 127.0.0.1 for a server a test starts on an address it must know beforehand
# (mosquitto, a board's --listen, a bridge's --http URL): free now, and not handed to anyone
# else before that server binds it, even with the suite split over pytest-xdist workers.
# bind(port 0) would return a port from the kernel's ephemeral range, which the kernel may hand
# to any socket (another worker's client, a connect()) between our close() and the server's
# bind(). These ports come from below every OS's ephemeral range (Linux 32768+, macOS and
# Windows 49152+); each xdist worker walks its own stretch of them (from a random start, for
# other suites running on the machine), and never hands a port out twice, so a test may stop
# its server and start it again on the same port.
import os
import random
import socket

LOW, HIGH = 10000, 32768


def _stretch():
    # -> (first, size) of this process's ports: worker gwN of M gets the Nth of M stretches.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    count = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    size = (HIGH - LOW) // max(count, 1)
    return LOW + int(worker.lstrip("gw") or 0) % max(count, 1) * size, size


_FIRST, _SIZE = _stretch()
_taken = [random.randrange(_SIZE)]


def free_port(host="127.0.0.1"):
    for _ in range(_SIZE):
        port = _FIRST + _taken[0]
        _taken[0] = (_taken[0] + 1) % _SIZE
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue    # in use (by anyone: another suite's server, a port in TIME_WAIT)
            return port
    raise RuntimeError("no free TCP port in %d..%d" % (_FIRST, _FIRST + _SIZE - 1))
