# Between mcp-fuzzer and a stdio server: relays both ways line by line and keeps every line the
# server writes (appended to LOG); once the fuzzer is done with it (closes its side, or kills the
# tap, as mcp-fuzzer does), asks the same server session one more request (a ping) and keeps its
# answer too. LOG.sessions gets "started" and "answered" lines, one each per server.
#   python tests/fuzz_tap.py LOG COMMAND...
# The server is held by a keeper in a session of its own, which a kill of the tap's process
# group does not reach: the tap's end is the keeper's end of input.
import json
import subprocess
import sys
import threading

PING_ID = "fuzz-tap-after"


def pipe(source, sink, keep=None, skip=None):
    # Copies source to sink line by line (keep: a file that gets every line too) until source
    # ends; a line holding skip is kept, not copied. -> whether a skipped line came.
    seen = False
    for line in source:
        if keep is not None:
            keep.write(line)
            keep.flush()
        if skip is not None and skip in line:
            seen = True
            continue
        try:
            sink.write(line)
            sink.flush()
        except (BrokenPipeError, ValueError, OSError):
            sink = None if keep is not None else sink   # the other side has gone
            if keep is None:
                break
    return seen


def tap(log, command):
    keeper = subprocess.Popen([sys.executable, __file__, "--keeper", log] + command,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              start_new_session=True)
    threading.Thread(target=pipe, args=(keeper.stdout, sys.stdout.buffer), daemon=True).start()
    pipe(sys.stdin.buffer, keeper.stdin)
    keeper.stdin.close()
    keeper.wait()


def keep(log, command):
    with open(log + ".sessions", "a") as sessions:
        sessions.write("started\n")
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    answered = []
    with open(log, "ab") as kept:
        reader = threading.Thread(target=lambda: answered.append(
            pipe(child.stdout, sys.stdout.buffer, kept, PING_ID.encode())), daemon=True)
        reader.start()
        pipe(sys.stdin.buffer, child.stdin)
        child.stdin.write(json.dumps({"jsonrpc": "2.0", "id": PING_ID, "method": "ping"})
                          .encode() + b"\n")
        child.stdin.flush()
        child.stdin.close()   # after the ping: the server answers it, then sees the end
        reader.join(60)
        child.wait(30)
    with open(log + ".sessions", "a") as sessions:
        sessions.write("answered\n" if answered and answered[0] else "silent\n")


if __name__ == "__main__":
    if sys.argv[1] == "--keeper":
        keep(sys.argv[2], sys.argv[3:])
    else:
        tap(sys.argv[1], sys.argv[2:])
