# tinymcp: a Model Context Protocol server small enough for a microcontroller.
#
# A lazy face, as MicroPython's own asyncio package: `import tinymcp` holds next to nothing, and
# `from tinymcp import Server` imports tinymcp.server then. once() loads what tinymcp/later.py's
# table says is loaded for a call and released after it.
__version__ = "0.1.0"

_attrs = {"Server": "server", "RpcError": "jsonrpc", "VERSIONS": "protocol"}


def __getattr__(attr):
    # A name of the face, or a submodule: MicroPython's `from tinymcp import framing` asks the
    # package before it imports the submodule.
    name = _attrs.get(attr)
    if name is None and attr[:2] == "__":
        raise AttributeError(attr)
    try:
        value = __import__("tinymcp." + (name or attr), None, None, (attr,))
    except ImportError:
        if name is not None:
            raise
        raise AttributeError(attr)
    if name is not None:
        value = globals()[attr] = getattr(value, attr)
    return value


def once(target, *args):
    # target(*args), target a function by its full dotted path ("tinymcp.listing.page"), a
    # "release" entry of tinymcp/later.py's table: its module is imported for the call and
    # released after it.
    at = target.rfind(".")
    try:
        return getattr(__import__(target[:at], None, None, (target[at + 1:],)),
                       target[at + 1:])(*args)
    finally:
        release(target[:at])


def release(name):
    # A module (full dotted name) no longer needed: dropped so its objects are collected (its
    # qstrs stay); imported again if wanted later.
    import sys
    if sys.modules.get(name) is not None:  # None: CPython's mark of a module kept out
        del sys.modules[name]
        at = name.rfind(".")   # its package holds it too
        try:
            delattr(sys.modules[name[:at]], name[at + 1:])
        except AttributeError:  # imported by name only: the package never held it
            pass
