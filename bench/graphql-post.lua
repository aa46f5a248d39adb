-- wrk script of bench/run-graphql.sh: POST the BODY env var to wrk's URL and count the bad answers.
-- The same script drives both sides, so that the client's cost is the same:
--   direct  BODY a GraphQL request {"query", "operationName", "variables"} to the fixture's /graphql
--   crank   BODY a JSON-RPC tools/call, SESSION the MCP session id (sent as Mcp-Session-Id)
-- ACCEPT is the Accept header. An answer is bad when its status is not 200, when it lacks any of
-- the lines of EXPECT (each a text the body must hold), or, with TOOL=1, when it lacks
-- "isError":false (a JSON-RPC error, or a tool result with isError true). Prints
-- "bad answers: N" when wrk ends.
local expect = {}
for line in string.gmatch(os.getenv("EXPECT") or "", "[^\n]+") do
    table.insert(expect, line)
end
local tool = os.getenv("TOOL") == "1"
local threads = {}

wrk.method = "POST"
wrk.body = os.getenv("BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = os.getenv("ACCEPT") or "application/json"
local session = os.getenv("SESSION")
if session and session ~= "" then
    wrk.headers["Mcp-Session-Id"] = session
    wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
end

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    bad = 0
end

function response(status, headers, body)
    if status ~= 200 or (tool and not string.find(body, '"isError":false', 1, true)) then
        bad = bad + 1
        return
    end
    for _, text in ipairs(expect) do
        if not string.find(body, text, 1, true) then
            bad = bad + 1
            return
        end
    end
end

function done(summary, latency, requests)
    local total = 0
    for _, thread in ipairs(threads) do
        total = total + thread:get("bad")
    end
    io.write(string.format("bad answers: %d\n", total))
end
