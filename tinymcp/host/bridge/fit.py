# The board's answers (protocol 2025-11-25) fitted to a host that negotiated an older version:
# fields a version does not define are left out rather than sent to a client that may reject them.
LISTS = ("tools", "resources", "resourceTemplates", "prompts")
SINCE_2025_06_18 = ("title", "outputSchema", "icons")


def fit_result(method, result, version):
    if version >= "2025-06-18" or type(result) is not dict:
        return result
    result = dict(result)
    if method == "tools/call":
        result.pop("structuredContent", None)  # its text mirror stays in "content"
    for key in LISTS:
        if type(result.get(key)) is list:
            result[key] = [_entry(entry, version) for entry in result[key]]
    return result


def _entry(entry, version):
    if type(entry) is not dict:
        return entry
    entry = {k: v for k, v in entry.items() if k not in SINCE_2025_06_18}
    if version < "2025-03-26":
        entry.pop("annotations", None)
    return entry


def fit_initialize(result, version):
    if version >= "2025-06-18":
        return result
    result = dict(result)
    info = result.get("serverInfo")
    if type(info) is dict:
        result["serverInfo"] = {k: v for k, v in info.items() if k in ("name", "version")}
    if version < "2025-03-26":
        result["capabilities"] = {k: v for k, v in (result.get("capabilities") or {}).items()
                                  if k != "completions"}
    return result
