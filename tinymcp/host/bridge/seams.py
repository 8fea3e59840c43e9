# The bridge's seams, named (docs/bridge.md, "How the bridge is built"): what each layer may call
# on the one below it, and the one listener object it tells what it sees. Each layer is handed
# these at construction; pyright checks that the concrete classes fit (.ci/typecheck, with
# tests/bridge/seams_fit.py). Host-only: nothing here reaches a board.
from typing import Any, Awaitable, Callable, Optional, Protocol

Message = dict   # one decoded JSON-RPC message


# -- the link: bytes to and from one board (link.Link: a serial port or socket://;
#    mqtt.BrokerLink: a board's topics on a broker) --------------------------------------------

class LinkEvents(Protocol):
    # What a link tells its board session (board.BoardSession).
    def on_message(self, msg: Message, /) -> None: ...   # one frame from the board, decoded
    def on_noise(self, data: bytes, /) -> None: ...      # a line no frame (a REPL, a boot)
    def on_state(self, connected: bool, /) -> None: ...  # the port appeared or went away


class BoardLink(Protocol):
    # What a board session uses of its link. connect(events) makes one. mode: how frames to
    # the board are written ("json" or "cbor"), set by the session; frame_end: what ends a JSON
    # frame (a newline, or nothing where each message travels alone).
    mode: str
    frame_end: bytes

    @property
    def device(self) -> str: ...       # how the user names it (a port, a URL, a broker's topic)
    @property
    def first_try(self) -> bool: ...   # about to be opened for the first time: worth waiting for
    @property
    def network(self) -> bool: ...     # a socket or a broker (loses no frame), not a serial line
    @property
    def connected(self) -> bool: ...
    async def run(self) -> None: ...                  # keep the board reachable until close()
    def encode(self, msg: Message) -> bytes: ...      # a frame, as the link writes it
    def send(self, msg: Message, urgent: bool = False) -> Any: ...
    def write(self, frame: bytes, urgent: bool = False, now: bool = False) -> Any: ...
    def withdraw(self, frame: bytes) -> Any: ...      # not written after all, if still queued
    def send_raw(self, data: bytes) -> Any: ...       # bytes as they are (0x03, a REPL's line)
    def close(self) -> None: ...


Connect = Callable[[LinkEvents], BoardLink]


# -- a board session (board.BoardSession) and what it tells the router ----------------------

class BoardEvents(Protocol):
    # What a board session tells its listener (router.RoutedBoard, for the router).
    def on_notification(self, msg: Message, /) -> None: ...   # a notification of the board
    def on_request(self, msg: Message, /) -> None: ...        # the board asks the client
    def on_ready(self) -> Awaitable[None]: ...             # after each initialize: the replay
    def on_lost(self) -> None: ...                         # a ready session ended


# -- boards that come and go: what finds them tells its listener (cli.PluggedBoards for
#    discovery.Discovery, --port auto; mqtt.BrokerBoards for mqtt.Broker, a broker's presences)

class PluggedPorts(Protocol):
    # What --port auto (discovery.Discovery) tells as USB boards are plugged and unplugged.
    def taken(self, device: str, /) -> bool: ...            # served otherwise: a --port by name
    def found(self, device: str, port: Any, /) -> Any: ...  # it serves MCP -> its handle
    def gone(self, handle: Any, /) -> Awaitable[None]: ...  # unplugged: served no more


class PresentBoards(Protocol):
    # What a broker (mqtt.Broker) tells as boards' presences come and go.
    def found(self, key: tuple, connect: Connect, /) -> Any: ...  # (server-id, server-name),
                                                                   # its link -> its handle
    def gone(self, handle: Any, /) -> Awaitable[None]: ...  # offline, or the broker lost


# -- the router (router.Router) and what it tells every host ---------------------------------

class HostEvents(Protocol):
    # What the boards say that no single host call owns (hosts.Hosts).
    def on_list_changed(self, method: str, /) -> None: ...
    def on_updated(self, uri: str, params: dict, /) -> None: ...
    def on_log(self, msg: Message, /) -> None: ...


class SubscribingBoards(Protocol):
    # What the hosts' subscriptions (subscriptions.Subscriptions) ask of the boards (the router).
    async def subscribe(self, uri: str, /) -> dict: ...   # a first listener -> the board's reply
    def unsubscribe(self, uri: str, /) -> None: ...       # the last listener has gone


# -- a host session (host.HostSession) and the side that serves it (hosts.Hosts) -------------

class Era(Protocol):
    # A protocol era hosts are served in (handshake.HandshakeEra, stateless.StatelessEra).
    def serve(self, session: Any, rid: Any, method: str, params: Optional[dict],
              /) -> Awaitable[Optional[dict]]: ...   # -> the reply to a request


class RoutingEra(Era, Protocol):
    # The handshake era (handshake.HandshakeEra) also serves a routed request (a tools/call to
    # one board) without a task: -> the future that stands for it (cancel() abandons it), with
    # then(reply) called once it is answered; or None: serve() it.
    def start(self, session: Any, rid: Any, method: str, params: dict,
              then: Callable[[dict], None], /) -> Optional[Any]: ...


class SessionEvents(Protocol):
    # What a host session uses of the hosts' side: the eras its requests are served in, and
    # where its notifications and its end go.
    @property
    def handshake(self) -> RoutingEra: ...   # 2024-11-05 to 2025-11-25: initialize first
    @property
    def stateless(self) -> Era: ...   # 2026-07-28: each request carries its own envelope
    def notified(self, session: Any, method: str, params: Optional[dict], /) -> None: ...
    def closed(self, session: Any, /) -> None: ...


# -- a host front (stdio.py, http.py, demo.py) ------------------------------------------------

class HostLine(Protocol):
    # One host's session as its front sees it.
    def receive(self, msg: Message, /) -> None: ...
    def receive_batch(self, items: list, deliver: Callable[[Any], None], /) -> None: ...
    def close(self) -> None: ...


class HostFront(Protocol):
    # What a front serves its hosts through (hosts.Hosts): one session per host connection.
    @property
    def timeout(self) -> float: ...   # how long a board has to answer

    def open_session(self, send: Callable[..., None], label: str,
                     unanswered: Optional[Callable[[Any], None]] = None) -> HostLine: ...
