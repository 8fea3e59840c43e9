# Safe boot for a board's main.py: a way out before serving, then serve with an optional
# heartbeat LED and watchdog.
#
#   if __name__ == "__main__":
#       from ports.micropython.boot import start
#       start(build, button=rp2.bootsel_button)
#
# Serving is skipped, leaving the REPL free, when the button is held at reset or the flag file
# exists (`mpremote touch :noserve`; `mpremote rm :noserve` to serve again). A build() that
# raises is reported on the console and also skips serving, so a broken board file never
# locks you out of the REPL. Those checks are in ports/micropython/safeboot.py, loaded for them
# and released after (tinymcp/later.py; tinymcp's face imports nothing else, so the way out to the
# REPL works when the rest of tinymcp cannot import).
SKIP_FLAG = "noserve"


def start(build, button=None, flag=SKIP_FLAG, heartbeat=None, watchdog_ms=None, stream=None,
          serve=None):
    # -> why serving stopped ("eof", "interrupt") or was skipped. heartbeat: a Pin to blink;
    # watchdog_ms: reset the board if the serve loop stalls that long (rp2 max ~8300 ms).
    from tinymcp import once
    server = once("ports.micropython.safeboot.ready", build, button, flag)
    if type(server) is str:   # "skipped", "build failed"
        return server
    wdt = None
    if watchdog_ms or heartbeat is not None:   # loaded only with one of them
        from ports.micropython.idle import watch
        wdt = watch(server, heartbeat, watchdog_ms)
    try:
        if serve is None and stream is None and once("ports.micropython.safeboot.on_network",
                                                     server):
            return "network"
        if serve is None:
            from ports import serve
        return serve(server, stream)
    finally:
        if wdt is not None:
            from ports.micropython.idle import keep_fed
            keep_fed(wdt)

