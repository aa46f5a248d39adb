// Sessions under load (bench/run-sessions.sh runs it against crankd with the synthetic plugin):
// opens SESSIONS sessions on one MCP session, reports crankd's resident memory per open session,
// then polls them round-robin with CONCURRENCY requests in flight for SECONDS and reports
// polls/s against JSON-RPC pings sent the same way in the same run (the endpoint's floor).
// Plain fetch with keep-alive: the SDK client would measure itself.
import { readFileSync } from 'node:fs';

const url = process.env.CRANK_MCP_URL;
const pid = process.env.CRANKD_PID;
const sessions = Number(process.env.SESSIONS ?? 10000);
const seconds = Number(process.env.SECONDS ?? 10);
const concurrency = Number(process.env.CONCURRENCY ?? 16);

const rssKiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const threads = () => Number(/Threads:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

let mcpSession = '';
async function post(body) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (mcpSession) {
        headers['Mcp-Session-Id'] = mcpSession;
        headers['MCP-Protocol-Version'] = '2025-11-25';
    }
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await response.text();
    return { response, json: text ? JSON.parse(text) : null };
}

async function call(name, args) {
    const { json } = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    if (!json?.result || json.result.isError) {
        throw new Error(`${name}: ${JSON.stringify(json)}`);
    }
    return json.result.structuredContent;
}

const init = await post({
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
});
mcpSession = init.response.headers.get('mcp-session-id');
await post({ jsonrpc: '2.0', method: 'notifications/initialized' });

const before = rssKiB();
const threadsBefore = threads();
const ids = [];
const startedAt = performance.now();
const lastTenthFrom = sessions - Math.floor(sessions / 10);
let lastTenthAt = startedAt;
let lastTenthStarts = sessions;
for (let i = 0; i < sessions; i += concurrency) {
    if (i <= lastTenthFrom && lastTenthFrom < i + concurrency) {
        lastTenthAt = performance.now();
        lastTenthStarts = sessions - i;
    }
    const batch = [];
    for (let j = i; j < Math.min(sessions, i + concurrency); j++) {
        batch.push(call('feed_start', {}).then((r) => ids.push(r.session_id)));
    }
    await Promise.all(batch);
}
const startSeconds = (performance.now() - startedAt) / 1000;
const lastTenthSeconds = (performance.now() - lastTenthAt) / 1000;
await new Promise((r) => setTimeout(r, 2000));  // every stream has emitted and settled
const after = rssKiB();

async function drive(make) {
    let done = 0;
    let failed = 0;
    const end = performance.now() + seconds * 1000;
    const lanes = Array.from({ length: concurrency }, async (_, lane) => {
        let k = lane;
        while (performance.now() < end) {
            try {
                const { json } = await post(make(k));
                if (!json?.result || json.result.isError) failed++;
            } catch {
                failed++;
            }
            done++;
            k += concurrency;
        }
    });
    await Promise.all(lanes);
    return { rate: done / seconds, failed };
}
const ping = await drive(() => ({ jsonrpc: '2.0', id: 2, method: 'ping' }));
const poll = await drive((k) => ({
    jsonrpc: '2.0', id: 3, method: 'tools/call',
    params: { name: 'feed_poll', arguments: { session_id: ids[k % ids.length] } },
}));

console.log(`sessions opened:        ${ids.length} in ${startSeconds.toFixed(1)} s (${(ids.length / startSeconds).toFixed(0)} starts/s; the last tenth ${(lastTenthStarts / lastTenthSeconds).toFixed(0)} starts/s)`);
console.log(`crankd threads:         ${threadsBefore} before, ${threads()} after (one thread per session: the synthetic stream's, or crankd's poller)`);
console.log(`crankd RSS:             ${(before / 1024).toFixed(1)} MiB before, ${(after / 1024).toFixed(1)} MiB with the sessions open`);
console.log(`memory per open session: ${((after - before) / ids.length).toFixed(1)} KiB (RSS delta / sessions)`);
console.log(`poll throughput:        ${poll.rate.toFixed(0)} polls/s; ping (same endpoint, same run) ${ping.rate.toFixed(0)}/s; ratio ${(poll.rate / ping.rate).toFixed(2)}  (${concurrency} in flight, ${seconds} s each)`);
if (poll.failed || ping.failed) {
    console.error(`bench: failed requests: polls ${poll.failed}, pings ${ping.failed}`);
    process.exit(1);
}
