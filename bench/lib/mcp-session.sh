# shellcheck shell=bash
# Sourced by the benches: opens a 2025-era MCP session.
#   open_mcp_session URL
# POSTs initialize to URL (an MCP endpoint) and prints the Mcp-Session-Id crankd answered, or
# nothing when it answered none.
open_mcp_session() {
    curl -s -D - -o /dev/null -H 'Content-Type: application/json' \
        -H 'Accept: application/json, text/event-stream' "$1" \
        -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}' |
        sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: *\([0-9a-f]*\).*/\1/p'
}
