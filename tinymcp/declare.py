# The handshake, and what a server declares about itself: initialize's result and the
# capabilities server/discover names too. Each runs once a session, so this module is imported
# for that and released after it (tinymcp.once, tinymcp/later.py). initialize's answer is made
# each time, not cached: a session asks for it once (docs/ram.md, "Cuts (issue 27)").
from tinymcp.jsonrpc import RpcError, INVALID_PARAMS, must
from tinymcp.protocol import LINK_KEY, VERSIONS


def initialize(server, params):
    asked = params.get("protocolVersion")
    if type(asked) is not str:
        raise RpcError(INVALID_PARAMS, must("protocolVersion", "a string"))
    session = server.session
    previous = session.version
    if session.initialized:  # a new session on the same link: the last one's leases end
        server.end_session(session)
    at = VERSIONS.index(asked) if asked in VERSIONS else 0  # else the latest
    version = VERSIONS[at]  # the constant: the client's copy of it is let go with its message
    if version != previous:
        session.cache = {}  # cached results are written for one protocol version
    session.version = version
    session.era = len(VERSIONS) - 1 - at
    caps = params.get("capabilities")
    session.client_capabilities = caps if type(caps) is dict else {}
    session.initialized = True  # the rest of what a session starts with is set above
    session.log_level = 1  # info
    return result(server)


def result(server):
    info = server.info
    session = server.session
    if session.era < 2 and "title" in info:
        info = {"name": info["name"], "version": info["version"]}
    caps = capabilities(server)
    if session.link_modes:  # the link's offer (docs/cbor-link.md)
        caps["experimental"] = {LINK_KEY: session.link_modes}
    result = {"protocolVersion": session.version, "capabilities": caps, "serverInfo": info}
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def discover(server):
    # server/discover's answer but for the versions, which are the stateless revision's.
    result = {"capabilities": capabilities(server)}
    if server.instructions:
        result["instructions"] = server.instructions
    return result


def capabilities(server):
    caps = {"logging": {}}
    era = server.session.era
    if server.tools is not None:
        caps["tools"] = {"listChanged": True}
    if server.resources is not None:
        caps["resources"] = {"subscribe": True, "listChanged": True}
    if server.prompts is not None:
        caps["prompts"] = {"listChanged": True}
    if server.completions and era >= 1:
        caps["completions"] = {}
    if server.tools is not None and server.tools.tasks and era >= 3:
        from tinymcp.tasktools import capability
        capability(caps, era)
    return caps
