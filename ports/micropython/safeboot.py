# What boot.start() runs once before serving: the way out (a held button, the flag file), the
# board's build() with its failure reported, and the network settings' check. Imported for each
# and released after it (tinymcp/later.py), so none of it stays in RAM while the board serves over
# USB. It imports nothing of boot.py, which loads it.
import os
import sys


def skip_reason(button=None, flag=None):
    # -> why serving should be skipped, or None. button() is true while the button is held;
    # flag: the file whose presence skips serving (boot.SKIP_FLAG), None or "" for none.
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


def ready(build, button, flag):
    # -> the built server, or why not serving ("skipped", "build failed"), said on the console.
    reason = skip_reason(button, flag)
    if reason:
        print("tinymcp: not serving: " + reason)
        return "skipped"
    try:
        return build()
    except Exception as e:
        print("tinymcp: build() failed, not serving:")
        if hasattr(sys, "print_exception"):
            sys.print_exception(e)
        else:
            print(repr(e))
        return "build failed"


def on_network(server):
    # Serve on Wi-Fi when the board holds network.json (ports/micropython/wifi.py) -> True once
    # that serving ended; False: serve over USB (no file: no network code is loaded, and
    # tinymcp-deploy ships none).
    try:
        os.stat("network.json")
    except OSError:
        return False
    try:
        from ports.micropython.wifi import start
        why = start(server)
    except ImportError:   # deployed without it: tinymcp-deploy --wifi ships it
        why = "this image has no network code for network.json (tinymcp-deploy --wifi)"
    if why is None:
        return True
    print("tinymcp: not on the network: " + why + "; serving over USB")
    return False
