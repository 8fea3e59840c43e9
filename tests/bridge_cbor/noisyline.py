# A noisy serial line: a pty for the bridge on one side, a board process on pipes on the other,
# and random bit flips and dropped bytes in both directions. Restarts the board when it exits
# (a flip can make the 0x03 that ends serving), as a watchdog would.
#   python noisyline.py BOARD.py SEED FLIP_RATE DROP_RATE_PER_BYTE [bit|byte]
# bit: every bit flips with FLIP_RATE; byte: every byte has one random bit flipped with FLIP_RATE.
# Prints the pty path on its first stdout line; a summary on stderr when it ends (SIGTERM).
import os
import random
import select
import signal
import subprocess
import sys
import tty


class Noise:
    def __init__(self, rng, flip, drop, per="bit"):
        self.rng = rng
        self.per_bit = per == "bit"
        self.flip = flip
        self.drop = drop
        self.flips = self.drops = self.bytes = 0

    def __call__(self, data):
        rng = self.rng
        out = bytearray()
        for b in data:
            self.bytes += 1
            if rng.random() < self.drop:
                self.drops += 1
                continue
            if self.per_bit:
                for bit in range(8):
                    if rng.random() < self.flip:
                        b ^= 1 << bit
                        self.flips += 1
            elif rng.random() < self.flip:
                b ^= 1 << rng.randrange(8)
                self.flips += 1
            out.append(b)
        return bytes(out)


def main(board, seed, flip, drop, per="bit"):
    rng = random.Random(seed)
    to_board = Noise(rng, flip, drop, per)
    to_bridge = Noise(rng, flip, drop, per)
    master, slave = os.openpty()
    tty.setraw(slave)
    print(os.ttyname(slave), flush=True)
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    stopping = []
    signal.signal(signal.SIGTERM, lambda *a: stopping.append(1))
    starts = 0
    proc = None
    try:
        while not stopping:
            if proc is None or proc.poll() is not None:
                if proc is not None:
                    proc.stdout.close()
                    proc.stdin.close()
                proc = subprocess.Popen([sys.executable, board], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, cwd=repo, bufsize=0)
                starts += 1
            try:
                ready, _, _ = select.select([master, proc.stdout], [], [], 0.2)
            except InterruptedError:
                continue
            if master in ready:
                data = os.read(master, 4096)
                try:
                    proc.stdin.write(to_board(data))
                except (BrokenPipeError, ValueError):
                    pass
            if proc.stdout in ready:
                data = os.read(proc.stdout.fileno(), 4096)
                if data:
                    os.write(master, to_bridge(data))
                else:
                    proc.wait()
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
        sys.stderr.write("noisyline: %d board starts; to board %d bytes, %d flips, %d drops; "
                         "to bridge %d bytes, %d flips, %d drops\n"
                         % (starts, to_board.bytes, to_board.flips, to_board.drops,
                            to_bridge.bytes, to_bridge.flips, to_bridge.drops))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), *sys.argv[5:6])
