# What a channel settles once: the link modes it offers (initialize's
# capabilities.experimental["tinymcp/link"], docs/cbor-link.md) and, at the first CBOR frame, the
# CBOR link or the one error that says the board has none. Imported for that by tinymcp.once and
# released after it.
from tinymcp.protocol import PARSE_ERROR, REASON, LINK_UNAVAILABLE


def offer(server, channel):
    # Checked once: a board offers only the link modes it has (the CBOR module loads with the
    # first CBOR frame).
    modes = {"maxFrame": channel.framer.max_frame}
    if channel.offer_cbor and _shipped("tinymcp.cborlink"):
        modes["cbor"] = True
    if server.identity:  # how a bridge knows the board again on another port
        modes["id"] = server.identity
    return modes


def cbor(server, channel):
    # -> the channel's CborLink, or False (said once, then JSON only) on a board deployed
    # without tinymcp/cborlink.py or a channel that offers none.
    if channel.offer_cbor:
        try:
            from tinymcp.cborlink import CborLink
            return CborLink(channel.out)
        except ImportError:
            pass
    channel.json.error(None, PARSE_ERROR,
                       "Parse error: CBOR frames need tinymcp/cborlink.py, which this board lacks",
                       {REASON: LINK_UNAVAILABLE, "link": "cbor"})
    return False


def _shipped(name):
    # Is module `name` on this board? Answered without importing it where a file says so.
    import sys
    if sys.modules.get(name, 0) is None:  # marked missing (tests)
        return False
    try:
        from importlib.util import find_spec  # CPython
        return find_spec(name) is not None
    except ImportError:
        pass
    import os
    path = name.replace(".", "/")
    for base in sys.path:
        if base == ".frozen":  # frozen code costs next to no RAM: importing is the check
            try:
                __import__(name)
                return True
            except ImportError:
                continue
        for ext in (".mpy", ".py"):
            try:
                os.stat((base + "/" if base else "") + path + ext)
                return True
            except OSError:
                pass
    return False
