# Read by pyright only (.ci/typecheck, pyrightconfig.host.json), never run: each concrete class of
# the bridge fits the seam it is handed across (tinymcp/host/bridge/seams.py).
from tinymcp.host.bridge.board import BoardSession, Unheard
from tinymcp.host.bridge.cli import PluggedBoards
from tinymcp.host.bridge.handshake import HandshakeEra
from tinymcp.host.bridge.hosts import Hosts
from tinymcp.host.bridge.link import Link
from tinymcp.host.bridge.mqtt import BrokerBoards, BrokerLink
from tinymcp.host.bridge.router import RoutedBoard, Router
from tinymcp.host.bridge.seams import (BoardEvents, BoardLink, Era, HostEvents, HostFront,
                                       HostLine, LinkEvents, PluggedPorts, PresentBoards,
                                       RoutingEra, SessionEvents, SubscribingBoards)
from tinymcp.host.bridge.stateless import StatelessEra
from tinymcp.host.bridge.host import HostSession


def links(serial: Link, broker: BrokerLink) -> "list[BoardLink]":
    return [serial, broker]


def link_listeners(session: BoardSession) -> LinkEvents:
    return session


def board_listeners(board: RoutedBoard, nobody: Unheard) -> "list[BoardEvents]":
    return [board, nobody]


def host_listeners(hosts: Hosts) -> "tuple[HostEvents, SessionEvents, HostFront]":
    return hosts, hosts, hosts


def subscribing(router: Router) -> SubscribingBoards:
    return router


def host_lines(session: HostSession) -> HostLine:
    return session


def found_boards(plugged: PluggedBoards,
                 present: BrokerBoards) -> "tuple[PluggedPorts, PresentBoards]":
    return plugged, present


def eras(handshake: HandshakeEra, stateless: StatelessEra) -> "list[Era]":
    return [handshake, stateless]


def routing_era(handshake: HandshakeEra) -> RoutingEra:
    return handshake
