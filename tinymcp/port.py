# serve(server): the serve loop of this runtime's port. ports/ sits beside tinymcp/ on a board's
# flash (and on MICROPYPATH=. in a checkout); elsewhere, under CPython, the host programs know
# where this tinymcp keeps it (a checkout, or the copy an installed wheel carries).
try:
    from ports import serve
except ImportError:
    import sys
    from tinymcp.host.deploy.tree import device_tree
    sys.path.append(device_tree().device)
    from ports import serve
