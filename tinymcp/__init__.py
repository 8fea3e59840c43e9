# tinymcp: a Model Context Protocol server small enough for a microcontroller.
from tinymcp.server import Server
from tinymcp.jsonrpc import RpcError
from tinymcp.protocol import VERSIONS

__version__ = "0.1.0"
