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
# locks you out of the REPL.
import os
import sys

SKIP_FLAG = "noserve"


def skip_reason(button=None, flag=SKIP_FLAG):
    # -> why serving should be skipped, or None. button() is true while the button is held.
    if button is not None:
        try:
            if button():
                return "button held at reset"
        except Exception:
            pass  # a button that cannot be read is not a reason to stay off the air
    if flag:
        try:
            os.stat(flag)
            return "flag file '" + flag + "' exists (remove it to serve)"
        except OSError:
            pass
    return None


def start(build, button=None, flag=SKIP_FLAG, heartbeat=None, watchdog_ms=None, stream=None,
          serve=None):
    # -> why serving stopped ("eof", "interrupt") or was skipped. heartbeat: a Pin to blink;
    # watchdog_ms: reset the board if the serve loop stalls that long (rp2 max ~8300 ms).
    reason = skip_reason(button, flag)
    if reason:
        print("tinymcp: not serving: " + reason)
        return "skipped"
    try:
        server = build()
    except Exception as e:
        print("tinymcp: build() failed, not serving:")
        if hasattr(sys, "print_exception"):
            sys.print_exception(e)
        else:
            print(repr(e))
        return "build failed"
    wdt = None
    if watchdog_ms or heartbeat is not None:   # loaded only with one of them
        from ports.micropython.idle import watch
        wdt = watch(server, heartbeat, watchdog_ms)
    try:
        if serve is None and stream is None:
            try:
                os.stat("network.json")
            except OSError:   # none: no network code is loaded (tinymcp-deploy ships none)
                pass
            else:   # serve on Wi-Fi (ports/micropython/wifi.py)
                try:
                    from ports.micropython.wifi import start as on_network
                    why = on_network(server)
                except ImportError:   # deployed without it: tinymcp-deploy --wifi ships it
                    why = "this image has no network code for network.json (tinymcp-deploy --wifi)"
                if why is None:
                    return "network"
                print("tinymcp: not on the network: " + why + "; serving over USB")
        if serve is None:
            from ports import serve
        return serve(server, stream)
    finally:
        if wdt is not None:
            from ports.micropython.idle import keep_fed
            keep_fed(wdt)

