-- wrk script: POST tools/call of the REST tool "rest_item" (id 7) on an existing MCP session
-- (SESSION env var) and count the bad answers: a status other than 200, a body without
-- "isError":false (a JSON-RPC error, or a tool result with isError true), or a body without the
-- text of the EXPECT env var (the item, in structuredContent). Prints "bad answers: N" at the end.
local expect = os.getenv("EXPECT") or ""
local threads = {}

wrk.method = "POST"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"rest_item","arguments":{"id":7}}}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Mcp-Session-Id"] = os.getenv("SESSION")
wrk.headers["MCP-Protocol-Version"] = "2025-11-25"

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    bad = 0
end

function response(status, headers, body)
    if status ~= 200 or not string.find(body, '"isError":false', 1, true) or
        not string.find(body, expect, 1, true) then
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
