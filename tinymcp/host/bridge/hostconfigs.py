# The desktop hosts whose MCP config tinymcp-bridge --install writes, and where each keeps it:
# read by the command line (options.py: --install's choices) and by install.py.
import collections

# key: the servers' key in the file; files: where the file is, per OS layout ("~" the home,
# "%APPDATA%" Windows' roaming folder, "$XDG" the Linux config folder); typed: the entry says
# "type": "stdio"; then: what makes the host load it.
Host = collections.namedtuple("Host", "title key files typed then")
HOSTS = {
    "claude-desktop": Host("Claude Desktop", "mcpServers", {
        "darwin": "~/Library/Application Support/Claude/claude_desktop_config.json",
        "win32": "%APPDATA%/Claude/claude_desktop_config.json",
        "linux": "$XDG/Claude/claude_desktop_config.json"}, False,
        "quit Claude Desktop completely and start it again to load it"),
    "vscode": Host("VS Code", "servers", {
        "darwin": "~/Library/Application Support/Code/User/mcp.json",
        "win32": "%APPDATA%/Code/User/mcp.json",
        "linux": "$XDG/Code/User/mcp.json"}, True,
        "VS Code sees the change; start the server from MCP: List Servers"),
    "cursor": Host("Cursor", "mcpServers", {"*": "~/.cursor/mcp.json"}, False,
                   "restart Cursor, or turn the server on in Cursor Settings > MCP"),
    "claude-code": Host("Claude Code", "mcpServers", {"*": "~/.claude.json"}, True,
                        "new Claude Code sessions have it (claude mcp list shows it)"),
}
