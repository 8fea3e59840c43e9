# The bridge's method catalogue (tinymcp/host/bridge/methods.py) against what a board serves: a
# method the board answers cannot be missing from the bridge, in either era.
import tinymcp.prompts
import tinymcp.stateless
import tinymcp.tasks
import tinymcp.tasktools
from tinymcp.context import CLIENT_NEEDS
from tinymcp.server import Server

from tinymcp.host.bridge import methods, routes
from tinymcp.host.bridge.methods import HANDSHAKE, REQUESTS, STATELESS


def board_handshake_methods():
    # Every request a handshake-era board may answer: the core's table and those its extensions
    # attach (prompts, tasks).
    return (set(Server.handlers) | set(tinymcp.prompts.HANDLERS) | set(tinymcp.tasks.HANDLERS)
            | set(tinymcp.tasktools.METHODS))


def board_stateless_methods():
    # The 2026-07-28 revision: the same table less the handshake's own, plus its own methods.
    return (board_handshake_methods() - set(tinymcp.stateless.HANDSHAKE_ONLY)
            | set(tinymcp.stateless._OWN))


def test_every_method_a_board_serves_is_in_the_catalogue():
    assert board_handshake_methods() | board_stateless_methods() <= set(REQUESTS)


def test_the_catalogue_has_no_method_no_board_serves():
    assert set(REQUESTS) == board_handshake_methods() | board_stateless_methods()


def test_each_era_is_the_boards():
    # tasks/update belongs to the stateless tasks extension only (tinymcp/tasks.py refuses it
    # in the utility era); tasks/result and tasks/list are the handshake era's only.
    handshake = board_handshake_methods() - {"tasks/update"}
    stateless = board_stateless_methods() - {"tasks/result", "tasks/list"}
    assert methods.requests(HANDSHAKE) == handshake
    assert methods.requests(STATELESS) == stateless


def test_the_stateless_sets_are_the_cores():
    assert methods.REMOVED == set(tinymcp.stateless.HANDSHAKE_ONLY)
    assert methods.ASKING == tinymcp.stateless._ASKING


def test_the_list_kinds_are_the_catalogs():
    assert set(methods.LISTS.values()) == set(routes.KINDS)
    assert set(methods.LIST_CHANGED.values()) == set(routes.OFFERS)
    for method, kind in methods.LISTS.items():
        assert routes.KINDS[kind][0] == method


def test_what_a_board_asks_the_client_is_a_client_request_not_a_host_request():
    assert not set(CLIENT_NEEDS) & set(REQUESTS)


def test_the_derived_sets():
    # The sets the bridge used to keep by hand, as the catalogue now gives them.
    assert methods.HANDSHAKE_TASKS == {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"}
    assert methods.STATELESS_TASKS == {"tasks/get", "tasks/cancel", "tasks/update"}
    assert methods.RETRIED == {"tools/list", "resources/list", "resources/templates/list",
                               "resources/read", "resources/subscribe", "prompts/list",
                               "prompts/get", "completion/complete"}
    assert methods.FORWARDED == set(methods.LISTS) | set(methods.ASKING) | {"completion/complete"}
    assert methods.NEEDS_INITIALIZE == methods.requests(HANDSHAKE) - {"initialize", "ping"}
    assert methods.CLIENT_NOTIFICATIONS == {"notifications/initialized",
                                            "notifications/roots/list_changed"}
    assert methods.TASKABLE == {"tools/call"}


def test_every_request_is_routed_one_known_way():
    routes = {methods.TO_OWNER, methods.TO_ALL, methods.TO_TASK, methods.BRIDGE}
    for name, m in REQUESTS.items():
        assert m.route in routes, name
        assert m.eras and set(m.eras) <= {HANDSHAKE, STATELESS}, name
        assert (m.lists is not None) == (m.route == methods.TO_ALL), name
