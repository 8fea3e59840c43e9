# The board's answers (protocol 2025-11-25) fitted to a host that negotiated an older version:
# fields a version does not define are left out rather than sent to a client that may reject them.
LISTS = ("tools", "resources", "resourceTemplates", "prompts")
SINCE_2025_06_18 = ("title", "outputSchema", "icons")


TASKS_SINCE = "2025-11-25"


def fit_result(method, result, version):
    if version >= TASKS_SINCE or type(result) is not dict:
        return result
    if version >= "2025-06-18":   # only tasks are newer: no tool says how it runs as one
        if method == "tools/list" and type(result.get("tools")) is list:
            result = dict(result, tools=[_untasked(t) for t in result["tools"]])
        return result
    result = dict(result)
    if method == "tools/call":
        result.pop("structuredContent", None)  # its text mirror stays in "content"
    for key in LISTS:
        if type(result.get(key)) is list:
            result[key] = [_entry(entry, version) for entry in result[key]]
    return result


def _untasked(entry):
    return {k: v for k, v in entry.items() if k != "execution"} if type(entry) is dict else entry


def _entry(entry, version):
    if type(entry) is not dict:
        return entry
    entry = {k: v for k, v in entry.items() if k not in SINCE_2025_06_18 and k != "execution"}
    if version < "2025-03-26":
        entry.pop("annotations", None)
    return entry


def fit_initialize(result, version):
    if version >= TASKS_SINCE:
        return result
    result = dict(result)
    result["capabilities"] = {k: v for k, v in (result.get("capabilities") or {}).items()
                              if k != "tasks"}
    if version >= "2025-06-18":
        return result
    info = result.get("serverInfo")
    if type(info) is dict:
        result["serverInfo"] = {k: v for k, v in info.items() if k in ("name", "version")}
    if version < "2025-03-26":
        result["capabilities"] = {k: v for k, v in (result.get("capabilities") or {}).items()
                                  if k != "completions"}
    return result
