# The protocol's vocabulary, at the bottom of the core and shared with the host programs: versions,
# error codes, the reasons a peer acts on, what a client must declare before it is asked, log levels.
try:
    from micropython import const
except ImportError:
    def const(x):
        return x

# Revisions. The handshake era (initialize), newest first; its "era" number counts up from the
# oldest: 0 = 2024-11-05 ... 3 = 2025-11-25. STATELESS has no handshake (per-request _meta).
VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST = "2025-11-25"
STATELESS = "2026-07-28"
BATCHES = "2025-03-26"  # the one revision whose JSON-RPC carries batches (arrays of messages)

# JSON-RPC 2.0 and MCP error codes.
PARSE_ERROR = const(-32700)
INVALID_REQUEST = const(-32600)
METHOD_NOT_FOUND = const(-32601)
INVALID_PARAMS = const(-32602)
INTERNAL_ERROR = const(-32603)
RESOURCE_NOT_FOUND = const(-32002)       # handshake era; 2026-07-28 uses INVALID_PARAMS
HEADER_MISMATCH = const(-32020)          # 2026-07-28 HTTP: a routing header disagrees with the body
MISSING_CAPABILITY = const(-32021)
UNSUPPORTED_VERSION = const(-32022)

# error.data["reason"]: what the other side must act on, as data rather than message text.
REASON = "reason"
NOT_INITIALIZED = "not-initialized"      # the board lost its session (a reset): initialize again
FRAME_TOO_LONG = "frame-too-long"        # with data["limit"]: the board's frame limit in bytes
LINK_UNAVAILABLE = "link-unavailable"    # with data["link"]: a link mode the board cannot read
UNAUTHORIZED = "unauthorized"            # a board on the network wants its token first
# "answer-too-long", with data["limit"]: an MQTT board's answer longer than one PUBLISH of it can
# be; spelled where it is used (ports/mqtt.py, tinymcp/host/bridge/board.py), as one more name
# here would cost every board RAM (this module's dict grows a size).

# A board on the network: a client's first line is TOKEN_LINE + the token, before any frame; a
# board listens only with a token of MIN_TOKEN characters or more.
TOKEN_LINE = "TOKEN "
MIN_TOKEN = const(16)

# The board's link offer in initialize: capabilities.experimental[LINK_KEY] =
# {"maxFrame": bytes, "cbor": true when it reads CBOR link frames}.
LINK_KEY = "tinymcp/link"

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

# The stateless revision's per-request _meta key that decides the era; its other keys are
# tinymcp/stateless.py's, loaded with it.
VERSION_META = "io.modelcontextprotocol/protocolVersion"

# Outputs that fail safe (tinymcp/leases.py): a bridge names the host behind a tools/call in its
# _meta[OWNER_META], and tells the board OWNER_ENDED {"owner": ...} when that host has gone.
OWNER_META = "io.tinymcp/owner"
OWNER_ENDED = "notifications/io.tinymcp/owner_ended"

