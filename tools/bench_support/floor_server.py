# The floor of section (a): a server that parses no JSON. It reads its requests line by line
# (buffered, as any line server does) and answers each with a canned tools/call result, finding
# the id by byte search, one write per answer. Whatever a real server does beyond this (parse,
# dispatch, validate, run the tool, encode) is its own cost; the pipe, the client and the
# interpreter are shared with it.
import sys

ANSWER = (b',"result":{"content":[{"type":"text","text":"{\\"celsius\\":22.5}"}],'
          b'"structuredContent":{"celsius":22.5}}}\n')
INIT = (b',"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},'
        b'"serverInfo":{"name":"floor","version":"0"}}}\n')


def main():
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        at = line.find(b'"id":')
        if at < 0:
            continue  # a notification
        end = at + 5
        while line[end:end + 1] not in (b",", b"}", b""):
            end += 1
        out.write(b'{"jsonrpc":"2.0","id":' + line[at + 5:end]
                  + (INIT if b'"initialize"' in line else ANSWER))
        out.flush()


if __name__ == "__main__":
    main()
