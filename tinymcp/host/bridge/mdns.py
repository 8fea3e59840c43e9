# --port discover: boards on the network found without an address. A board serving MCP over TCP
# announces _mcp._tcp.local over mDNS (ports/mdns.py); zeroconf (PyPI) browses for it here, and
# each tinymcp board found (TXT wire=jsonl) is one more board of the router, reached at
# socket://ADDRESS:PORT, under a label made from its instance name, the same each time it comes
# back. One that says goodbye (or whose records expire) is withdrawn; one that moves to another
# address is followed there. The board token (--board-token, $TINYMCP_BOARD_TOKEN) goes only to a
# board whose TXT record says it wants one; one that wants a token the bridge lacks is not served,
# and the log says why. zeroconf is imported only when discovery is asked for.
import asyncio
import logging

from tinymcp.host.bridge.link import Link

log = logging.getLogger("tinymcp.bridge.mdns")

SERVICE = "_mcp._tcp.local."
WIRE = "jsonl"          # what ports/mdns.py says a tinymcp board speaks: JSON lines over TCP
RESOLVE_MS = 3000       # how long a found name has to answer for its address
LIST_S = 3.0            # --list-ports --discover: how long it looks


class Announced:
    # A board as its records say: -> its instance label, and whether it can be served.
    def __init__(self, name, info):
        self.name = name
        self.instance = name[:-len(SERVICE) - 1] if name.endswith("." + SERVICE) else name
        props = {}
        for key, value in (info.properties or {}).items():
            props[key.decode("utf-8", "replace")] = (value or b"").decode("utf-8", "replace")
        self.props = props
        addresses = info.parsed_addresses()
        self.address = addresses[0] if addresses else None
        self.port = info.port
        self.wants_token = props.get("token") == "1"

    @property
    def url(self):
        return "socket://%s:%d" % (self.address, self.port)

    def why_not(self, token):
        # -> why the bridge cannot serve it, or None.
        if self.props.get("wire") != WIRE:
            return "not a tinymcp board (its TXT record says wire=%s)" % self.props.get("wire")
        if not self.address or not self.port:
            return "no address"
        if self.wants_token and not token:
            return ("it wants a token: give the bridge the board's (--board-token, or "
                    "$TINYMCP_BOARD_TOKEN)")
        return None

    def describe(self):
        props = self.props
        return "%s  %s (%s %s%s)" % (
            self.url if self.address else "(no address)", self.instance,
            props.get("name", "?"), props.get("version", "?"),
            ", token required" if self.wants_token else "")


async def _resolve(zc, name, timeout_ms=RESOLVE_MS):
    from zeroconf.asyncio import AsyncServiceInfo
    info = AsyncServiceInfo(SERVICE, name)
    if not await info.async_request(zc, timeout_ms):
        return None
    return Announced(name, info)


class Discover:
    # Follows the boards announced on the network and tells boards (a seams.PresentBoards: the
    # router's listener, mqtt.BrokerBoards, which keeps each board's label) of each one found
    # (found(key, connect) -> its handle) and gone (gone(handle)). make_connect(url, token) ->
    # connect(events) for the board's session.
    def __init__(self, boards, token, baud=115200):
        self.boards = boards
        self.token = token
        self.baud = baud
        self.served = {}     # mDNS name -> (url, handle)
        self.declined = {}   # mDNS name -> why, said once

    async def run(self):
        from zeroconf import IPVersion, ServiceStateChange
        from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf
        changes = asyncio.Queue()

        def changed(zeroconf, service_type, name, state_change):
            changes.put_nowait((name, state_change is ServiceStateChange.Removed))

        azc = AsyncZeroconf(ip_version=IPVersion.V4Only)
        browser = AsyncServiceBrowser(azc.zeroconf, [SERVICE], handlers=[changed])
        log.info("--port discover: looking for boards announced as %s", SERVICE)
        try:
            while True:
                name, removed = await changes.get()
                if removed:
                    await self._gone(name)
                else:
                    await self._found(await _resolve(azc.zeroconf, name), name)
        finally:
            await browser.async_cancel()
            await azc.async_close()
            for name in list(self.served):
                await self._gone(name)

    async def _found(self, board, name):
        if board is None:
            log.debug("--port discover: %s did not say where it is", name)
            return
        why = board.why_not(self.token)
        if why is not None:
            if self.declined.get(name) != why:
                log.warning("--port discover: not serving %s: %s", board.instance, why)
                self.declined[name] = why
            await self._gone(name)
            return
        self.declined.pop(name, None)
        url = board.url
        served = self.served.get(name)
        if served is not None and served[0] == url:
            return
        if served is not None:
            log.info("--port discover: %s moved to %s", board.instance, url)
            await self._gone(name)
        else:
            log.info("--port discover: %s at %s", board.instance, url)
        token = self.token if board.wants_token else None

        def connect(events):
            return Link(url, self.baud, None, token, events=events)
        key = (board.instance, board.props.get("name") or board.instance)
        self.served[name] = (url, self.boards.found(key, connect))

    async def _gone(self, name):
        served = self.served.pop(name, None)
        if served is not None:
            log.info("--port discover: %s has gone", name)
            await self.boards.gone(served[1])


async def browse(seconds=LIST_S):
    # -> [Announced] for every _mcp._tcp board that answered within seconds.
    from zeroconf import IPVersion
    from zeroconf.asyncio import AsyncServiceBrowser, AsyncZeroconf
    names = []
    azc = AsyncZeroconf(ip_version=IPVersion.V4Only)
    browser = AsyncServiceBrowser(azc.zeroconf, [SERVICE], handlers=[
        lambda zeroconf, service_type, name, state_change: names.append(name)])
    try:
        await asyncio.sleep(seconds)
        found = [await _resolve(azc.zeroconf, name, 1000) for name in dict.fromkeys(names)]
    finally:
        await browser.async_cancel()
        await azc.async_close()
    return sorted((board for board in found if board is not None), key=lambda b: b.instance)


def list_text(token=None, seconds=LIST_S):
    # --list-ports --discover: the boards announced on the network, each with whether
    # --port discover serves it.
    boards = asyncio.run(browse(seconds))
    if not boards:
        return ["no boards announced on the network (%s, looked %g s)" % (SERVICE, seconds)]
    lines = []
    for board in boards:
        why = board.why_not(token)
        lines.append(board.describe() + ("  <- --port discover serves it" if why is None
                                         else "  <- not served: " + why))
    return lines
