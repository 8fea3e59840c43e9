# What loads later, in one table: when, by full dotted name, on what condition a board ships it, and
# whether it is let go after each call. tinymcp.once(target, *args) loads each "release" entry
# (imports it, calls it, releases its module); "keep" entries are an `import` inside a function.
# Deploy's file set (tinymcp/host/deploy/files.py), the import tests and tests/deploy/test_later.py
# (which holds the call sites to this table) read it; a board never imports it.
#
# shipped: "with M": whenever module M is shipped; "if F": when deploy's trace of the board finds
# F (completions, long_tools, leases, context, jsonschema), its __main__ block asks for it
# (idle), or the link is CBOR (cbor). after: "release": dropped after each call, kept only where
# docs/ram.md shows it saves about 1 KiB or more between calls; "keep": held from its first load on.
LATER = (
    # trigger                       target
    #                               shipped                          after
    ("initialize",                 "tinymcp.declare.initialize",
                                   "with tinymcp.server",          "release"),
    ("server/discover",            "tinymcp.declare.discover",
                                   "with tinymcp.stateless",       "release"),
    ("a list page is built",       "tinymcp.listing.page",
                                   "with tinymcp.server",          "release"),
    # released by initialize too: a client that probed 2026-07-28 first and fell back
    ("a 2026-07-28 first request", "tinymcp.stateless.Stateless",
                                   "with tinymcp.server",          "keep"),
    ("a 2026-07-28 ctx.request()", "tinymcp.asking.ask",
                                   "with tinymcp.stateless",       "keep"),
    ("a JSON-RPC batch",           "tinymcp.batch.Batch",
                                   "with tinymcp.server",          "keep"),
    ("handle(), or no channel",    "tinymcp.direct.Direct",
                                   "with tinymcp.server",          "keep"),
    ("completion/complete",        "tinymcp.complete.complete",
                                   "if completions",               "keep"),
    ("a long tool's first call",   "tinymcp.tasks.start",
                                   "if long_tools",                "keep"),
    ("a first call with lease_s",  "tinymcp.leases.Leases",
                                   "if leases",                    "keep"),
    ("a call's arguments refused", "tinymcp.refusal.sentence",
                                   "with tinymcp.schema",          "release"),
    ("an unknown name refused",    "tinymcp.echo.shown",
                                   "with tinymcp.server",          "release"),
    # guard: its module is let go, its check stays held by the tool it wraps
    ("a tool is registered",       "tinymcp.schemakind.checked",
                                   "with tinymcp.tools",           "release"),
    ("a rich schema declared",     "tinymcp.jsonschema.guard",
                                   "if jsonschema",                "release"),
    ("a first ctx tool call",      "tinymcp.context.Context",
                                   "if context",                   "keep"),
    ("a channel opens",            "tinymcp.linkmode.offer",
                                   "with tinymcp.channel",         "release"),
    ("the first CBOR frame",       "tinymcp.linkmode.cbor",
                                   "with tinymcp.channel",         "release"),
    ("the first CBOR frame",       "tinymcp.cborlink.CborLink",
                                   "if cbor",                      "keep"),
    ("history.attach() at build",  "tinymcp.historytools.register",
                                   "with tinymcp.history",         "release"),
    ("read_history",               "tinymcp.historytools.read_history",
                                   "with tinymcp.history",         "release"),
    ("set_alert",                  "tinymcp.historytools.set_alert",
                                   "with tinymcp.history",         "release"),
    ("plot_history",               "tinymcp.historytools.plot_history",
                                   "with tinymcp.history",         "release"),
    ("sensor://alerts read",       "tinymcp.historytools.alerts",
                                   "with tinymcp.history",         "release"),
    ("sensor://NAME/history read", "tinymcp.historytools.samples_json",
                                   "with tinymcp.history",         "release"),
    ("events.attach() at build",   "tinymcp.eventtools.register",
                                   "with tinymcp.events",          "release"),
    ("wait_for_event",             "tinymcp.eventtools.wait",
                                   "with tinymcp.events",          "release"),
    ("a bus fault",                "tinymcp.sensors.faults.advice",
                                   "with tinymcp.sensors.common",  "keep"),
    ("scan_i2c",                   "tinymcp.sensors.i2cparts.scan",
                                   "with tinymcp.sensors.i2cscan", "release"),
    ("boot.start()",               "ports.micropython.safeboot.ready",
                                   "with ports.micropython.boot",  "release"),
    ("boot.start(), then",         "ports.micropython.safeboot.on_network",
                                   "with ports.micropython.boot",  "release"),
    ("ports.tcp.listen() on 0.0.0.0", "ports.mdnsrecords.own_address",
                                   "with ports.mdns",              "release"),
    ("ports.mdns.start()",         "ports.mdnsrecords.records",
                                   "with ports.mdns",              "release"),
    ("start(heartbeat=, watchdog_ms=)", "ports.micropython.idle.watch",
                                   "if idle",                      "keep"),
)
