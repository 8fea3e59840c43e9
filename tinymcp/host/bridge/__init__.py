# tinymcp-bridge: boards (serial ports, USB found as plugged, the network) served to MCP hosts
# over stdio or Streamable HTTP.
