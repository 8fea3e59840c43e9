# serve(server): the serve loop of this runtime's port. ports/ sits beside tinymcp/ on a board's
# flash (and on MICROPYPATH=. in a checkout); under CPython it may be only in the checkout beside
# this tinymcp, or in the copy an installed wheel carries (tinymcp/host/device/, see setup.py).
try:
    from ports import serve
except ImportError:
    import os
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path += [os.path.dirname(here), os.path.join(here, "host", "device")]
    from ports import serve
