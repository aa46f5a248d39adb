-- wrk script: POST tools/call of the echo tool named by the TOOL env var ({"text":"bench"}) as a
-- stateless MCP 2026-07-28 request (_meta and the routing headers, no session), or with ERA=2025
-- as a sessionless 2025-11-25 request (which a stateless 2025 server answers), to crankd or
-- straight to an upstream MCP server, and count the bad answers: a status other than 200, or a
-- body without the echoed text or with a JSON-RPC error. Prints "bad answers: N" at the end.
local tool = os.getenv("TOOL") or "echo"
local threads = {}

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
if os.getenv("ERA") == "2025" then
    wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool ..
        '","arguments":{"text":"bench"}}}'
    wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
else
    wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"' .. tool ..
        '","arguments":{"text":"bench"},' ..
        '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",' ..
        '"io.modelcontextprotocol/clientCapabilities":{},' ..
        '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}}}'
    wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
    wrk.headers["Mcp-Method"] = "tools/call"
    wrk.headers["Mcp-Name"] = tool
end

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    bad = 0
end

function response(status, headers, body)
    if status ~= 200 or not string.find(body, '"text":"bench"', 1, true) or
        string.find(body, '"error":', 1, true) then
        bad = bad + 1
    end
end

function done(summary, latency, requests)
    local total = 0
    for _, thread in ipairs(threads) do
        total = total + thread:get("bad")
    end
    io.write(string.format("bad answers: %d\n", total))
end
