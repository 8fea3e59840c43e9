# The discovery scenario of tests/bridge/test_discover.py, run inside a network namespace of its
# own (`unshare -n`): its loopback brought up with multicast, so no mDNS packet can leave the
# machine. Everything runs here: the simulated board (--listen, under RUNTIME) announcing itself,
# zeroconf browsing for it, tinymcp-bridge --port discover serving it to the official SDK client,
# and --list-ports --discover. What it sees is printed as one JSON object; the test judges it.
#
#   unshare -n python -m tests.bridge.discover_scenario python|micropython
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

from mcp import Client, StdioServerParameters

from tests.board_process import REPO, board_command, board_env
from tests.bridge.conftest import bridge_script
from tinymcp.host.bridge.pins import PINS_ENV

TOKEN = "d1scovered-b0ard-t0ken"
SERVICE = "_mcp._tcp.local."
WAIT_S = 60.0   # a bound on each wait, so a broken build ends; the figures are what it took


def loopback_with_multicast():
    # `ip link set lo up multicast on`, said to the kernel directly (no iproute2 needed): the
    # namespace's one interface. Sockets name it for multicast (IP_MULTICAST_IF, the group's
    # membership), so no route to 224.0.0.0/4 is needed. -> the namespace's interfaces.
    import fcntl
    import struct
    flags = 0x1 | 0x8 | 0x40 | 0x1000   # IFF_UP, IFF_LOOPBACK, IFF_RUNNING, IFF_MULTICAST
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH14x", b"lo", flags))   # SIOCSIFFLAGS
    return [name for _index, name in socket.if_nameindex()]


def default_sigint():
    # The board stops on SIGINT (its goodbye goes out then): its handling set here, whatever
    # this process inherited (a suite started in the background inherits it ignored).
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Board:
    def __init__(self, runtime, address, port, token=None):
        self.console = tempfile.TemporaryFile()
        argv = board_command(runtime) + ["--listen", "%s:%d" % (address, port)]
        if token:
            argv += ["--token", token]
        self.started = time.monotonic()
        self.proc = subprocess.Popen(argv, cwd=REPO, env=board_env(), stdin=subprocess.DEVNULL,
                                     stdout=self.console, stderr=subprocess.STDOUT,
                                     preexec_fn=default_sigint)

    def said(self):
        self.console.seek(0)
        return self.console.read().decode(errors="replace")

    def stop(self, sig=signal.SIGINT):
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def until(check, what):
    # -> check()'s first true value, polled; a failure names what never came.
    end = time.monotonic() + WAIT_S
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError("never: " + what)
        await asyncio.sleep(0.1)


async def tool_names(client):
    return sorted(tool.name for tool in (await client.list_tools()).tools)


def list_discovered(env):
    proc = subprocess.run([bridge_script(), "--list-ports", "--discover"], cwd=REPO, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=WAIT_S)
    return proc.returncode, proc.stdout


async def scenario(runtime):
    from zeroconf import IPVersion
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf
    seen = {"links": loopback_with_multicast()}
    env = {k: v for k, v in os.environ.items()   # the test's pins file kept (tests/conftest.py)
           if k == PINS_ENV or not k.startswith("TINYMCP_")}
    env_token = dict(env, TINYMCP_BOARD_TOKEN=TOKEN)
    browsed = []
    azc = AsyncZeroconf(ip_version=IPVersion.V4Only)
    browser = AsyncServiceBrowser(azc.zeroconf, [SERVICE], handlers=[
        lambda zeroconf, service_type, name, state_change: browsed.append(
            (name, state_change.name))])
    params = StdioServerParameters(command=bridge_script(),
                                   args=["--port", "discover", "--log-level", "info"],
                                   cwd=REPO, env=env_token)
    boards = []
    try:
        async with Client(params, mode="legacy") as client:
            seen["tools_before"] = await tool_names(client)

            # A board with a token comes: zeroconf sees its records, the bridge serves it.
            board = Board(runtime, "127.0.0.1", 8765, TOKEN)
            boards.append(board)
            served = await until(lambda: _tools_of(client, "read_temperature"),
                                 "the board's tools through the bridge")
            seen["seconds_to_serve"] = round(time.monotonic() - board.started, 2)
            seen["tools_served"] = served
            name = await until(lambda: _first(browsed, "Added"), "zeroconf browsing the board")
            info = AsyncServiceInfo(SERVICE, name)
            seen["resolved"] = await info.async_request(azc.zeroconf, 5000)
            seen["instance"] = name
            seen["txt"] = {k.decode(): (v or b"").decode() for k, v in info.properties.items()}
            seen["address"] = [info.parsed_addresses(), info.port]
            label_tool = [t for t in served if t.endswith("_read_temperature")][0]
            result = await client.call_tool(label_tool, {})
            seen["call"] = [result.is_error, result.structured_content]

            # --list-ports --discover, with and without the board's token.
            seen["list_with_token"] = list_discovered(env_token)
            seen["list_without_token"] = list_discovered(env)

            # It stops (SIGINT: its goodbye): withdrawn.
            board.stop()
            stopped = time.monotonic()
            await until(lambda: _none_of(client, "read_temperature"), "the board withdrawn")
            seen["seconds_to_withdraw"] = round(time.monotonic() - stopped, 2)
            seen["browsed_removed"] = await until(lambda: _first(browsed, "Removed"),
                                                  "zeroconf seeing the goodbye")
            seen["board_said"] = board.said()

            # A board without a token comes, dies without a goodbye, comes back at another
            # address under the same name: followed there, under the same label.
            first = Board(runtime, "127.0.0.1", 8770)
            boards.append(first)
            before = await until(lambda: _tools_of(client, "read_temperature"),
                                 "the tokenless board served")
            first.stop(signal.SIGKILL)
            moved = Board(runtime, "127.0.0.2", 8770)
            boards.append(moved)
            tool = [t for t in before if t.endswith("_read_temperature")][0]
            seen["moved_call"] = await until(lambda: _answers(client, tool), "the moved board's answer")
            seen["tools_moved"] = [before, await tool_names(client)]
            seen["moved_board_said"] = moved.said()
    finally:
        for board in boards:
            if board.proc.poll() is None:
                board.stop(signal.SIGKILL)
        await browser.async_cancel()
        await azc.async_close()
    return seen


async def _tools_of(client, tool):
    names = await tool_names(client)
    return names if any(name.endswith("_" + tool) for name in names) else None


async def _none_of(client, tool):
    return not await _tools_of(client, tool)


async def _first(browsed, state):
    return next((name for name, change in browsed if change == state), None)


async def _answers(client, tool):
    try:
        result = await client.call_tool(tool, {})
    except Exception:   # the bridge still reaching for the old address
        return None
    if result.is_error:
        return None
    return [result.is_error, result.structured_content]


if __name__ == "__main__":
    print(json.dumps(asyncio.run(scenario(sys.argv[1]))))
