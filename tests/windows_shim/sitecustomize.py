# A Windows-like CPython on Linux, for the bridge's tests: put this folder first on PYTHONPATH and
# the process (the bridge, and the sim boards it starts) is refused what Windows cannot do, the
# way Windows refuses it. sys.platform stays real; what the code may use is what changes:
# - asyncio's add_reader, add_writer, remove_*, add_signal_handler: NotImplementedError, as on
#   the ProactorEventLoop (which has none of them, not even for sockets);
# - connect_read_pipe / connect_write_pipe on anything but a socket: a console or file stdin is
#   not an overlapped pipe (the official SDK reads stdin in a thread for that reason);
# - serial.Serial.fileno(): io.UnsupportedOperation, as pyserial's serialwin32 Serial has none;
# - import pty, tty, resource: ImportError; fcntl and termios too, and select.select on anything
#   but a socket, for tinymcp's own code (pyserial's POSIX backend, standing in for its Windows
#   one, still uses them underneath).
import builtins
import io
import os
import select
import socket
import sys

SHIMMED = "windows"
_OWN = ("tinymcp", "ports", "boards", "__main__")
_NEVER = {"pty", "tty", "resource"}
_NOT_OURS = {"fcntl", "termios"}


def _ours(depth):
    name = sys._getframe(depth + 1).f_globals.get("__name__") or ""
    return name.split(".")[0] in _OWN


_import = builtins.__import__


def _shim_import(name, globals=None, locals=None, fromlist=(), level=0):
    top = name.split(".")[0] if level == 0 else None
    if top in _NEVER or (top in _NOT_OURS and _ours(1)):
        raise ImportError("No module named %r (the Windows shim)" % name, name=name)
    module = _import(name, globals, locals, fromlist, level)
    if top == "serial" and "serial" in sys.modules:
        _shim_serial(sys.modules["serial"])
    return module


builtins.__import__ = _shim_import


def _no_fileno(self):
    raise io.UnsupportedOperation("fileno (the Windows shim: a COM port has no file descriptor)")


def _shim_serial(serial):
    cls = getattr(serial, "Serial", None)
    if cls is not None and cls.fileno is not _no_fileno:
        cls.fileno = _no_fileno


_select = select.select


def _shim_select(rlist, wlist, xlist, *timeout):
    if _ours(1):
        for item in list(rlist) + list(wlist) + list(xlist):
            if not isinstance(item, socket.socket):
                raise OSError(10038, "An operation was attempted on something that is not a "
                                     "socket (the Windows shim)")
    return _select(rlist, wlist, xlist, *timeout)


select.select = _shim_select


def _refuse(*args, **kwargs):
    raise NotImplementedError("not on Windows' event loop (the Windows shim)")


def _pipe_only_sockets(method):
    def connect(self, protocol_factory, pipe):
        if not isinstance(pipe, socket.socket):
            raise OSError("the Windows shim: %r is not an overlapped pipe" % (pipe,))
        return method(self, protocol_factory, pipe)
    return connect


def _shim_asyncio():
    from asyncio import selector_events, unix_events
    for name in ("add_reader", "add_writer", "remove_reader", "remove_writer"):
        setattr(selector_events.BaseSelectorEventLoop, name, _refuse)
    for name in ("add_signal_handler", "remove_signal_handler"):
        setattr(unix_events._UnixSelectorEventLoop, name, _refuse)
    loop = unix_events._UnixSelectorEventLoop
    loop.connect_read_pipe = _pipe_only_sockets(loop.connect_read_pipe)
    loop.connect_write_pipe = _pipe_only_sockets(loop.connect_write_pipe)


if os.name == "posix":
    _shim_asyncio()
