# What a board with task tools holds from their registration on: the tasks/* methods and the
# capability that offers them. Their work (tinymcp/tasks.py) loads with the first task request or
# long tool call, so a board pays for it only once a client uses it.
MODES = ("optional", "required")
METHODS = ("tasks/get", "tasks/result", "tasks/list", "tasks/cancel", "tasks/update")


def offer(server, mode):
    # A tool registered with task="optional" or "required" -> the mode's number for its hints.
    if mode not in MODES:
        raise ValueError("task must be 'optional' or 'required'")
    tools = server.tools
    if not tools.tasks:
        tools.tasks = True
        server.add_methods({method: _later(method) for method in METHODS})
    return MODES.index(mode) + 1


def capability(caps, era):
    # 2025-11-25's tasks utility, 2026-07-28's io.modelcontextprotocol/tasks extension.
    if era == 3:
        caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    else:
        caps["extensions"] = {"io.modelcontextprotocol/tasks": {}}


def _later(method):
    def handle(server, params):
        return server.tasks().HANDLERS[method](server, params)
    return handle
