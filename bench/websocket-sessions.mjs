// Memory per open WebSocket session (bench/run-websocket.sh runs it against crankd with the
// websocket plugin and crank-ws-fixture): opens SESSIONS sessions of the session tool
// ticks_session (one tick a second, a small buffer) on one MCP session, waits until the fixture
// counts them all open, lets them settle, and reports crankd's resident memory per open session
// (and the fixture's). Then stops them all and waits until the fixture counts them closed.
// Every answer is checked; a bad one, or a fixture count that does not match, exits 1.
// Plain fetch with keep-alive, as bench/sessions.mjs: the SDK client would measure itself.
import { readFileSync } from 'node:fs';

const url = process.env.CRANK_MCP_URL;
const crankdPid = process.env.CRANKD_PID;
const fixture = process.env.BENCH_FIXTURE;  // http://127.0.0.1:PORT
const fixturePid = process.env.BENCH_FIXTURE_PID;
const sessions = Number(process.env.SESSIONS ?? 1000);
const concurrency = Number(process.env.CONCURRENCY ?? 16);
const settleMs = Number(process.env.SETTLE_MS ?? 2000);

const status = (pid, field) =>
    Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
const rssKiB = (pid) => status(pid, 'VmRSS');
const threads = (pid) => status(pid, 'Threads');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function fail(message) {
    console.error(`bench: ${message}`);
    process.exit(1);
}

async function stats() {
    const response = await fetch(`${fixture}/stats`);
    if (!response.ok) fail(`GET /stats of the fixture: HTTP ${response.status}`);
    return response.json();
}

/// Waits (up to `ms`) until the fixture counts `open` open connections; the last count.
async function waitOpen(open, ms) {
    const end = performance.now() + ms;
    let s = await stats();
    while (s.open !== open && performance.now() < end) {
        await sleep(100);
        s = await stats();
    }
    return s.open;
}

let mcpSession = '';
async function post(body) {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (mcpSession) {
        headers['Mcp-Session-Id'] = mcpSession;
        headers['MCP-Protocol-Version'] = '2025-11-25';
    }
    const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await response.text();
    // a tools/call may be answered on an SSE stream: the JSON-RPC answer is its last data line
    const data = text.startsWith('{') ? text : text.split('\n').filter((l) => l.startsWith('data:')).pop()?.slice(5);
    return { response, json: data ? JSON.parse(data) : null };
}

async function call(name, args) {
    const { json } = await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    if (!json?.result || json.result.isError || !json.result.structuredContent) {
        fail(`${name}: ${JSON.stringify(json).slice(0, 2000)}`);
    }
    return json.result.structuredContent;
}

/// Runs make(i) for i in [0, n) with `concurrency` calls in flight.
async function inBatches(n, make) {
    for (let i = 0; i < n; i += concurrency) {
        const batch = [];
        for (let j = i; j < Math.min(n, i + concurrency); j++) batch.push(make(j));
        await Promise.all(batch);
    }
}

const init = await post({
    jsonrpc: '2.0', id: 0, method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
});
mcpSession = init.response.headers.get('mcp-session-id');
if (!mcpSession) fail('initialize: no Mcp-Session-Id');
await post({ jsonrpc: '2.0', method: 'notifications/initialized' });

// The window phases before this one closed their connections: the fixture's baseline.
const open0 = await waitOpen(0, 5000);
const crankdBefore = rssKiB(crankdPid);
const fixtureBefore = rssKiB(fixturePid);
const crankdThreadsBefore = threads(crankdPid);
const fixtureThreadsBefore = threads(fixturePid);

const ids = [];
const startedAt = performance.now();
await inBatches(sessions, async () => {
    const r = await call('ticks_session_start', {});
    if (!r.session_id || r.status !== 'active') fail(`ticks_session_start: ${JSON.stringify(r)}`);
    ids.push(r.session_id);
});
const startSeconds = (performance.now() - startedAt) / 1000;
// _start answers before the stream has connected: wait for the fixture to count every connection
const open = await waitOpen(open0 + sessions, 30000);
if (open !== open0 + sessions) fail(`the fixture counts ${open} open WebSockets, expected ${open0 + sessions}`);
await sleep(settleMs);  // every stream has connected, read its first ticks and settled
const crankdAfter = rssKiB(crankdPid);
const fixtureAfter = rssKiB(fixturePid);
const crankdThreadsAfter = threads(crankdPid);
const fixtureThreadsAfter = threads(fixturePid);

// the sessions read ticks: the first and the last one opened have some, and are active
for (const id of [ids[0], ids[ids.length - 1]]) {
    const r = await call('ticks_session_poll', { session_id: id });
    if (r.status !== 'active' || !Array.isArray(r.items) || r.items.length === 0 || !('seq' in r.items[0])) {
        fail(`ticks_session_poll: ${JSON.stringify(r).slice(0, 2000)}`);
    }
}

const stoppedAt = performance.now();
await inBatches(ids.length, async (i) => {
    const r = await call('ticks_session_stop', { session_id: ids[i] });
    if (r.status !== 'stopped') fail(`ticks_session_stop: ${JSON.stringify(r)}`);
});
const stopSeconds = (performance.now() - stoppedAt) / 1000;
const openLater = await waitOpen(open0, 30000);
if (openLater !== open0) fail(`after the stops the fixture counts ${openLater} open WebSockets, expected ${open0}`);
const crankdStopped = rssKiB(crankdPid);

const mib = (kib) => (kib / 1024).toFixed(1);
console.log(`sessions opened:          ${ids.length} in ${startSeconds.toFixed(1)} s (${(ids.length / startSeconds).toFixed(0)} starts/s); the fixture counts ${open} open (baseline ${open0})`);
console.log(`crankd threads:           ${crankdThreadsBefore} before, ${crankdThreadsAfter} with the sessions open`);
console.log(`crankd RSS:               ${mib(crankdBefore)} MiB before, ${mib(crankdAfter)} MiB with the sessions open, ${mib(crankdStopped)} MiB after the stops`);
console.log(`memory per open session:  crankd ${((crankdAfter - crankdBefore) / ids.length).toFixed(1)} KiB (RSS delta / sessions)`);
console.log(`fixture (its side):       ${((fixtureAfter - fixtureBefore) / ids.length).toFixed(1)} KiB RSS per connection; threads ${fixtureThreadsBefore} before, ${fixtureThreadsAfter} with the sessions open`);
console.log(`sessions stopped:         ${ids.length} in ${stopSeconds.toFixed(1)} s; the fixture counts ${openLater} open after`);
