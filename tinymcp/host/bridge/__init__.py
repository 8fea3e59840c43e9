# tinymcp-bridge: a board on a serial port served to MCP hosts over stdio or Streamable HTTP.
