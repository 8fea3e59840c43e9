# Which MCP methods exist, as the bridge knows them: one host-only catalogue (no board holds it).
# Per request a host may send: the eras it belongs to, whether the bridge may send it to a board
# again after a reset, how it is routed, which param names what may ask the client, the list it
# answers, whether it may run as a task. Per notification: who sends it and the list it tells of.
# Every set the bridge uses is derived here; tests/bridge/test_methods.py checks the catalogue
# against the board's own handler tables.
import collections

HANDSHAKE = "handshake"   # 2024-11-05 .. 2025-11-25: initialize first
STATELESS = "stateless"   # 2026-07-28: per-request _meta, no initialize
BOTH = (HANDSHAKE, STATELESS)

# Routes: how a host's request reaches the boards.
TO_OWNER = "owner"   # to the board that owns the name or URI in its params
TO_ALL = "all"       # answered from every board (the lists)
TO_TASK = "task"     # to the board that owns the task, for the host that created it
BRIDGE = "bridge"    # answered by the bridge itself (it may tell the boards after)

Method = collections.namedtuple("Method", (
    "eras",     # the eras a host may send it in
    "retry",    # sent again after a board reset: it only reads (tools/call: per tool)
    "route",    # TO_OWNER, TO_ALL, TO_TASK or BRIDGE
    "asks",     # the param naming what runs, when the board may ask the client meanwhile
    "lists",    # the list kind it answers (routes.KINDS), or None
    "task"))    # may run as a task (params.task)


def _m(eras, route, retry=False, asks=None, lists=None, task=False):
    return Method(eras, retry, route, asks, lists, task)


REQUESTS = {
    "initialize": _m((HANDSHAKE,), BRIDGE),
    "ping": _m((HANDSHAKE,), BRIDGE),
    "logging/setLevel": _m((HANDSHAKE,), BRIDGE),
    "tools/list": _m(BOTH, TO_ALL, retry=True, lists="tools"),
    "tools/call": _m(BOTH, TO_OWNER, asks="name", task=True),
    "resources/list": _m(BOTH, TO_ALL, retry=True, lists="resources"),
    "resources/templates/list": _m(BOTH, TO_ALL, retry=True, lists="templates"),
    "resources/read": _m(BOTH, TO_OWNER, retry=True, asks="uri"),
    "resources/subscribe": _m((HANDSHAKE,), BRIDGE, retry=True),
    "resources/unsubscribe": _m((HANDSHAKE,), BRIDGE),
    "prompts/list": _m(BOTH, TO_ALL, retry=True, lists="prompts"),
    "prompts/get": _m(BOTH, TO_OWNER, retry=True, asks="name"),
    "completion/complete": _m(BOTH, TO_OWNER, retry=True),
    "tasks/get": _m(BOTH, TO_TASK),
    "tasks/result": _m((HANDSHAKE,), TO_TASK),
    "tasks/list": _m((HANDSHAKE,), TO_TASK),
    "tasks/cancel": _m(BOTH, TO_TASK),
    "tasks/update": _m((STATELESS,), TO_TASK),
    "server/discover": _m((STATELESS,), BRIDGE),
    "subscriptions/listen": _m((STATELESS,), BRIDGE),
}

# Notifications: who sends them ("client" or "server"), and the list kind a list_changed tells of.
CLIENT, SERVER = "client", "server"
NOTIFICATIONS = {
    "notifications/initialized": (CLIENT, None),
    "notifications/roots/list_changed": (CLIENT, None),
    "notifications/cancelled": (BOTH, None),
    "notifications/progress": (BOTH, None),
    "notifications/message": (SERVER, None),
    "notifications/resources/updated": (SERVER, None),
    "notifications/tools/list_changed": (SERVER, "tools"),
    "notifications/prompts/list_changed": (SERVER, "prompts"),
    "notifications/resources/list_changed": (SERVER, "resources"),
    "notifications/tasks/status": (SERVER, None),
}


def requests(era=None, route=None):
    # The names of the requests of that era and route (None: any).
    return frozenset(name for name, m in REQUESTS.items()
                     if (era is None or era in m.eras) and (route is None or m.route == route))


# -- the sets the bridge uses, derived ----------------------------------------------------------

# Handshake era: what a session must be initialized for (else not found before initialize).
NEEDS_INITIALIZE = requests(HANDSHAKE) - {"initialize", "ping"}
# What a board is asked again after its reset without side effects.
RETRIED = frozenset(name for name, m in REQUESTS.items() if m.retry)
# Relayed to the board that owns the task: the router's (handshake) tasks, and the stateless
# tasks extension's (tasks/update is the extension's own; tasks/result and tasks/list are not).
TASK_ROUTED = requests(route=TO_TASK)
HANDSHAKE_TASKS = requests(HANDSHAKE, TO_TASK)
STATELESS_TASKS = requests(STATELESS, TO_TASK)
# list method -> list kind; a list_changed notification -> the kind that changed.
LISTS = {name: m.lists for name, m in REQUESTS.items() if m.lists}
LIST_CHANGED = {name: kind for name, (_who, kind) in NOTIFICATIONS.items() if kind}
# Stateless: the handshake era's requests that are not found there; those whose board handler
# may ask the client (-> the param naming what runs); the requests forwarded to the boards.
HANDSHAKE_ONLY = frozenset(name for name, m in REQUESTS.items() if STATELESS not in m.eras)
REMOVED = HANDSHAKE_ONLY - TASK_ROUTED   # the tasks extension refuses its own in its words
ASKING = {name: m.asks for name, m in REQUESTS.items() if m.asks}
FORWARDED = requests(STATELESS, TO_ALL) | requests(STATELESS, TO_OWNER)
# May run as a task (params.task).
TASKABLE = frozenset(name for name, m in REQUESTS.items() if m.task)
# A client's notifications: a board that sends one is echoing, not speaking.
CLIENT_NOTIFICATIONS = frozenset(name for name, (who, _k) in NOTIFICATIONS.items()
                                 if who == CLIENT)
