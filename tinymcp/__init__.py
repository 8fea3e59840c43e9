# tinymcp: a Model Context Protocol server small enough for a microcontroller.
from tinymcp.server import Server, Context, VERSIONS
from tinymcp.jsonrpc import RpcError

__version__ = "0.1.0"
