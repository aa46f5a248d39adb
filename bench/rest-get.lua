-- wrk script: GET wrk's URL and count the bad answers (a status other than 200, or a body without
-- the text of the EXPECT env var); prints "bad answers: N" when wrk ends.
local expect = os.getenv("EXPECT") or ""
local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    bad = 0
end

function response(status, headers, body)
    if status ~= 200 or not string.find(body, expect, 1, true) then
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
