-- wrk script: POST tools/call of the no-op tool on an existing MCP session (SESSION env var).
wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"noop","arguments":{}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = os.getenv("SESSION")
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
