// Soak (bench/run-soak.sh runs it against crankd with bench/soak.json over crank-demo-upstream):
// SOAK_CLIENTS lanes, each with its own long-lived MCP session (the official TypeScript SDK
// client), run a weighted random mix of traffic for SOAK_DURATION seconds: unary calls, windows
// over SSE and over long-poll, sessions (started, polled, stopped; some abandoned to expire), async
// jobs (started, polled, their result fetched; some cancelled), MCP sessions opened and closed
// (some abandoned to expire) and standalone GET SSE streams opened and closed. Every answer is
// checked. Every SOAK_INTERVAL seconds crankd's RSS (VmRSS), open fds (/proc/PID/fd, the sockets
// told apart by /proc/PID/net/tcp: clients', to the upstream, the rest) and threads are sampled,
// with the demo upstream's RSS and fds, crankd's gauges (/metrics) and the operations and errors
// by kind, into SOAK_RESULTS/samples.csv.
// The timeline: idle samples; the warm-up (the first SOAK_WARMUP_FRACTION of the run, at least
// SOAK_MIN_WARMUP s); a pause of SOAK_SETTLE s without traffic (the lanes keep their own sessions
// with a ping every 5 s), long enough for the abandoned sessions and MCP sessions to expire:
// crankd idle "at the warm-up"; the rest of the run; the same pause: crankd idle "at the end";
// then the lanes close their sessions and one last sample must show no MCP session and no SSE
// stream left.
// The summary (SOAK_RESULTS/summary.txt and summary.json): for RSS, fds and threads the value at
// the warm-up (just after the pause), the final value, the max and the least-squares slope per
// minute after the warm-up, and the idle values; operations and errors by kind; the verdict
// against the thresholds (bench/README.md, "Soak"). Exits 1 when something is not flat or the
// error rate of a kind is above its limit.
import { appendFileSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

const sdk = new URL('../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Client } = await import(new URL('client/index.js', sdk));
const { StreamableHTTPClientTransport } = await import(new URL('client/streamableHttp.js', sdk));

const env = process.env;
const url = env.CRANK_MCP_URL;
const crankdPid = env.CRANKD_PID;
const upstreamPid = env.UPSTREAM_PID ?? '';
const upstreamPort = Number(env.UPSTREAM_PORT ?? 0);
const resultsDir = env.SOAK_RESULTS;
const number = (name, fallback) => Number(env[name] || fallback);
const duration = number('SOAK_DURATION', 600);
const clients = number('SOAK_CLIENTS', 4);
const interval = number('SOAK_INTERVAL', 5);
const settle = number('SOAK_SETTLE', 35);
const warmup = Math.min(duration / 2, Math.max(number('SOAK_WARMUP_FRACTION', 0.1) * duration, number('SOAK_MIN_WARMUP', 15)));
const seed = number('SOAK_SEED', 1);
const limits = {
    rssSlopeKiBPerMin: number('SOAK_RSS_SLOPE_KIB', 256),
    heapSlopeKiBPerMin: number('SOAK_HEAP_SLOPE_KIB', 256),
    rssGrowthPct: number('SOAK_RSS_GROWTH_PCT', 10),
    fdTolerance: number('SOAK_FD_TOLERANCE', Math.max(4, clients)),
    fdSlopePerMin: number('SOAK_FD_SLOPE', 0.5),
    threadTolerance: number('SOAK_THREAD_TOLERANCE', Math.max(4, clients)),
    threadSlopePerMin: number('SOAK_THREAD_SLOPE', 0.5),
    idleFdTolerance: number('SOAK_IDLE_FD_TOLERANCE', 2),
    idleUpstreamMax: number('SOAK_IDLE_UPSTREAM_MAX', 16),
    idleThreadTolerance: number('SOAK_IDLE_THREAD_TOLERANCE', 2),
    maxErrorRate: number('SOAK_MAX_ERROR_RATE', 0.005),
    minSlopeSpan: number('SOAK_MIN_SLOPE_SPAN', 180),
};
const REQUEST_TIMEOUT = 20_000;
if (!url || !crankdPid || !resultsDir) throw new Error('CRANK_MCP_URL, CRANKD_PID and SOAK_RESULTS must be set');
if (!(duration > 0 && interval > 0 && settle >= 0 && Number.isInteger(clients) && clients >= 1 && warmup >= 0)) {
    const { SOAK_DURATION, SOAK_CLIENTS, SOAK_INTERVAL, SOAK_SETTLE, SOAK_WARMUP_FRACTION } = env;
    throw new Error(`bad SOAK_DURATION (${SOAK_DURATION}), SOAK_CLIENTS (${SOAK_CLIENTS}), SOAK_INTERVAL (${SOAK_INTERVAL}), SOAK_SETTLE (${SOAK_SETTLE}) or SOAK_WARMUP_FRACTION (${SOAK_WARMUP_FRACTION})`);
}

// ---- traffic --------------------------------------------------------------------------------

// The kinds of traffic, with their weights in the mix (a lane picks its next one at random).
// "ops" counts the operations that passed every check, "errors" the ones that did not, and
// "requests" every MCP request they sent (JSON-RPC requests, DELETEs, GETs; not notifications).
const MIX = {
    unary: 4,                  // 10 calls: get_item (GET) and echo (POST), alternating
    window_sse: 2,             // recent_logs or cpu_stats (1 s over an SSE stream), half with progress
    window_longpoll: 1,        // recent_events (1.5 s of long-poll requests, the feed to its end)
    session: 2,                // follow_logs_start, 3 to 6 polls 250 ms apart, follow_logs_stop
    session_abandoned: 1,      // follow_logs_start, one poll, never stopped: expires after 10 s
    job: 2,                    // report_start, report_status until it ends, report_result
    job_cancelled: 1,          // report_start, report_status, report_cancel, report_status, report_result
    mcp_session: 2,            // a new MCP session (initialize, its GET stream), a call, DELETE
    mcp_session_abandoned: 1,  // the same, closed without DELETE: expires after 20 s
    get_stream: 2,             // a standalone GET SSE stream on the lane's session, held, dropped
};
const only = (env.SOAK_KINDS ?? '').split(',').map((k) => k.trim()).filter(Boolean);
for (const k of only) {
    if (!(k in MIX)) throw new Error(`SOAK_KINDS: unknown kind ${k} (one of ${Object.keys(MIX).join(', ')})`);
}
const kinds = Object.keys(MIX).filter((k) => only.length === 0 || only.includes(k));
const stats = Object.fromEntries(kinds.map((k) => [k, { ops: 0, errors: 0, requests: 0 }]));
const errorMessages = new Map();  // "kind: message" -> count, at most 100 distinct
let transportErrors = 0;
let lateCancels = 0;  // job_cancelled: the job had ended before the cancel came

function noteError(kind, err) {
    stats[kind].errors++;
    const key = `${kind}: ${String(err?.message ?? err).slice(0, 300)}`;
    if (errorMessages.has(key) || errorMessages.size < 100) errorMessages.set(key, (errorMessages.get(key) ?? 0) + 1);
}

// A small seeded generator (mulberry32), one per lane: the same seed gives the same mix.
function generator(s) {
    let a = s >>> 0;
    return () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
}
const between = (rng, lo, hi) => lo + Math.floor(rng() * (hi - lo + 1));

function check(condition, what, value) {
    if (!condition) throw new Error(`${what}: ${String(JSON.stringify(value)).slice(0, 300)}`);
}

async function connect(name, onError) {
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const client = new Client({ name, version: '1' });
    client.onerror = onError;
    await client.connect(transport, { timeout: REQUEST_TIMEOUT });
    return { client, transport };
}

/** The CallToolResult of `name` through `client`. */
async function callRaw(client, kind, name, args, options = {}) {
    stats[kind].requests++;
    return client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT, ...options });
}

/** structuredContent of a call that must succeed. */
async function call(client, kind, name, args, options) {
    const result = await callRaw(client, kind, name, args, options);
    check(!result.isError && typeof result.structuredContent === 'object', name, result);
    return result.structuredContent;
}

const NAMES = ['bolt', 'nut', 'gear', 'spring', 'valve', 'pump'];  // the demo upstream's item names
const TERMINAL_JOB = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

const scenarios = {
    async unary(lane, kind) {
        for (let i = 0; i < 10; i++) {
            if (i % 2 === 0) {
                const id = between(lane.rng, 1, 1000);
                const item = await call(lane.client, kind, 'get_item', { id });
                check(item.id === id && item.name === `${NAMES[id % 6]}-${id}`, `get_item ${id}`, item);
            } else {
                const note = `soak ${lane.index} ${lane.seq++}`;
                const echoed = await call(lane.client, kind, 'echo', { note, tags: ['soak'] });
                check(echoed.note === note, 'echo', echoed);
            }
        }
    },

    async window_sse(lane, kind) {
        const logs = lane.rng() < 0.5;
        // Half the windows ask for progress: crankd answers those on an SSE stream.
        let progress = 0;
        const options = lane.rng() < 0.5 ? { onprogress: () => { progress++; } } : {};
        const name = logs ? 'recent_logs' : 'cpu_stats';
        const w = await call(lane.client, kind, name, logs ? { rate: between(lane.rng, 50, 200) } : {}, options);
        check(w.item_count > 0 && w.dropped_count === 0 && ['duration', 'max_items'].includes(w.stop_reason), name, w);
        check(logs ? w.summary?.count === w.item_count : w.stats?.count === w.item_count, name, w);
    },

    async window_longpoll(lane, kind) {
        // The window reads the feed from its start and follows it to its end (bench/soak.json):
        // every event once, the last one past this lane's previous window's last.
        const w = await call(lane.client, kind, 'recent_events', {});
        const last = w.items?.at(-1)?.n;
        check(w.item_count > 0 && w.summary?.count === w.item_count && w.dropped_count === 0
            && w.stop_reason === 'duration', 'recent_events', w);
        check(last === w.item_count && last > lane.lastEvent, `recent_events: the last event after ${lane.lastEvent}`, w.items);
        lane.lastEvent = last;
    },

    async session(lane, kind) {
        const started = await call(lane.client, kind, 'follow_logs_start', { rate: between(lane.rng, 20, 100) });
        check(started.status === 'active' && /^ses_/.test(started.session_id), 'follow_logs_start', started);
        const id = started.session_id;
        let cursor = null;
        let last = 0;
        try {
            const polls = between(lane.rng, 3, 6);
            for (let i = 0; i < polls; i++) {
                await sleep(250);
                const page = await call(lane.client, kind, 'follow_logs_poll', cursor ? { session_id: id, cursor } : { session_id: id });
                check(page.status === 'active' && Array.isArray(page.items), 'follow_logs_poll', page);
                for (const item of page.items) {
                    check(item.seq === last + 1, `follow_logs_poll: seq after ${last}`, item);
                    last = item.seq;
                }
                cursor = page.cursor;
            }
        } finally {
            const stopped = await call(lane.client, kind, 'follow_logs_stop', { session_id: id });
            check(stopped.status === 'stopped', 'follow_logs_stop', stopped);
        }
        check(last > 0, 'follow_logs: no item in the session', { last });
    },

    async session_abandoned(lane, kind) {
        // The oldest abandoned session of this lane, once past its idle timeout (10 s, checked
        // every 100 ms), must answer "expired" (closed sessions answer for a minute).
        const now = Date.now();
        while (lane.abandonedSessions.length && now - lane.abandonedSessions[0].at > 50_000) lane.abandonedSessions.shift();
        if (lane.abandonedSessions.length && now - lane.abandonedSessions[0].at >= 13_000) {
            const { id, at } = lane.abandonedSessions.shift();
            const page = await call(lane.client, kind, 'follow_logs_poll', { session_id: id });
            check(page.status === 'expired', `abandoned session after ${((now - at) / 1000).toFixed(1)} s`, page);
        }
        const started = await call(lane.client, kind, 'follow_logs_start', { rate: between(lane.rng, 20, 100) });
        check(started.status === 'active', 'follow_logs_start', started);
        await sleep(200);
        const page = await call(lane.client, kind, 'follow_logs_poll', { session_id: started.session_id });
        check(page.status === 'active', 'follow_logs_poll', page);
        lane.abandonedSessions.push({ id: started.session_id, at: Date.now() });
    },

    async job(lane, kind) {
        const rows = between(lane.rng, 100, 1000);  // 2.0 to 2.2 s upstream
        const started = await call(lane.client, kind, 'report_start', { rows });
        check(/^job_/.test(started.job_id) && started.status === 'queued', 'report_start', started);
        let status = started;
        for (let i = 0; i < 100 && !TERMINAL_JOB.has(status.status); i++) {  // at most 30 s
            await sleep(300);
            status = await call(lane.client, kind, 'report_status', { job_id: started.job_id });
        }
        check(status.status === 'succeeded' && status.result_ready === true, 'report_status', status);
        const result = await call(lane.client, kind, 'report_result', { job_id: started.job_id });
        check(result.ready === true && result.result?.rows === rows && result.result?.by_region?.length === 4,
            'report_result', result);
    },

    async job_cancelled(lane, kind) {
        const started = await call(lane.client, kind, 'report_start', { rows: between(lane.rng, 1000, 5000) });
        check(/^job_/.test(started.job_id), 'report_start', started);
        const job = { job_id: started.job_id };
        await sleep(between(lane.rng, 100, 500));
        const running = await call(lane.client, kind, 'report_status', job);
        check(['queued', 'running', 'succeeded'].includes(running.status), 'report_status', running);
        // A report takes 2.2 to 3 s and the cancel comes within 0.6 s of the start, unless this
        // client was held up (a saturated machine): then the job has ended, and the cancel says
        // so. Either way the job ends in exactly one state, and the answers agree on it.
        const cancel = await call(lane.client, kind, 'report_cancel', job);
        const status = await call(lane.client, kind, 'report_status', job);
        const result = await callRaw(lane.client, kind, 'report_result', job);
        if (cancel.cancelled === true) {
            check(cancel.status === 'cancelled', 'report_cancel', cancel);
            check(status.status === 'cancelled' && status.result_ready === false, 'report_status', status);
            check(result.structuredContent?.ready === false, 'report_result', result);
        } else {
            lateCancels++;
            check(cancel.cancelled === false && cancel.status === 'succeeded', 'report_cancel', cancel);
            check(status.status === 'succeeded' && status.result_ready === true, 'report_status', status);
            check(result.structuredContent?.ready === true, 'report_result', result);
        }
    },

    async mcp_session(lane, kind) {
        await churn(lane, kind, false);
    },

    async mcp_session_abandoned(lane, kind) {
        // The oldest abandoned MCP session of this lane, once past mcp.session_idle_timeout_ms
        // (20 s), must be gone: 404.
        const now = Date.now();
        if (lane.abandonedMcp.length && now - lane.abandonedMcp[0].at >= 26_000) {
            const { sid, version, at } = lane.abandonedMcp.shift();
            stats[kind].requests++;
            const r = await fetch(url, {
                method: 'POST',
                headers: {
                    'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
                    'Mcp-Session-Id': sid, 'MCP-Protocol-Version': version,
                },
                body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
                signal: AbortSignal.timeout(REQUEST_TIMEOUT),
            });
            await r.arrayBuffer();
            check(r.status === 404, `abandoned MCP session after ${((now - at) / 1000).toFixed(1)} s: HTTP`, r.status);
        }
        await churn(lane, kind, true);
    },

    async get_stream(lane, kind) {
        const aborter = new AbortController();
        const timer = setTimeout(() => aborter.abort(), REQUEST_TIMEOUT);
        stats[kind].requests++;
        try {
            const r = await fetch(url, {
                method: 'GET',
                headers: {
                    Accept: 'text/event-stream',
                    'Mcp-Session-Id': lane.transport.sessionId,
                    'MCP-Protocol-Version': lane.transport.protocolVersion,
                },
                signal: aborter.signal,
            });
            check(r.status === 200 && (r.headers.get('content-type') ?? '').startsWith('text/event-stream'),
                'GET stream: HTTP', r.status);
            const first = await r.body.getReader().read();  // the priming event
            check(!first.done, 'GET stream: ended before its priming event', null);
            await sleep(between(lane.rng, 200, 800));
        } finally {
            clearTimeout(timer);
            aborter.abort();
        }
    },
};

/** A new MCP session: initialize (the SDK then opens its GET stream), tools/list, a call, and
 * DELETE, or (abandon) the connection dropped without DELETE. */
async function churn(lane, kind, abandon) {
    let closing = false;
    stats[kind].requests += 2;  // initialize and the SDK's GET stream
    const { client, transport } = await connect(`crank-bench-soak-${lane.index}-churn`, (err) => {
        if (!closing) lane.transportError(err);
    });
    try {
        stats[kind].requests++;
        const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
        check(tools.some((t) => t.name === 'get_item'), 'tools/list', tools.map((t) => t.name));
        const id = between(lane.rng, 1, 1000);
        const item = await call(client, kind, 'get_item', { id });
        check(item.id === id, `get_item ${id}`, item);
        await sleep(between(lane.rng, 0, 100));
        closing = true;
        if (abandon) {
            lane.abandonedMcp.push({ sid: transport.sessionId, version: transport.protocolVersion, at: Date.now() });
        } else {
            stats[kind].requests++;
            await transport.terminateSession();
        }
    } finally {
        closing = true;
        await client.close();
    }
}

async function openLane(index) {
    const lane = {
        index, rng: generator(seed * 1000 + index), seq: 0, ops: 0, lastEvent: 0, abandonedSessions: [], abandonedMcp: [],
        transportError(err) {
            if (lane.closing) return;  // the aborts of its own close
            transportErrors++;
            if (transportErrors <= 5) console.error(`soak: lane ${index}: transport error: ${err?.message ?? err}`);
        },
    };
    Object.assign(lane, await connect(`crank-bench-soak-${index}`, (err) => lane.transportError(err)));
    return lane;
}

/** SOAK_LANE_RENEW_OPS > 0: a lane replaces its own MCP session (DELETE, a new one) every that
 * many operations, so that nothing crankd keeps per session can pile up over the run (a
 * diagnostic: by default the lanes keep theirs for the whole run). */
const renewEvery = number('SOAK_LANE_RENEW_OPS', 0);
let renewals = 0;
async function renewLane(lane) {
    lane.client.onerror = () => {};  // the abort of the old GET stream is no transport error
    try {
        await lane.transport.terminateSession();
    } finally {
        await lane.client.close().catch(() => {});
    }
    Object.assign(lane, await connect(`crank-bench-soak-${lane.index}`, (e) => lane.transportError(e)));
    renewals++;
}

async function runLane(lane, until) {
    const total = kinds.reduce((sum, k) => sum + MIX[k], 0);
    let failedInARow = 0;
    while (Date.now() < until) {
        let pick = lane.rng() * total;
        const kind = kinds.find((k) => (pick -= MIX[k]) < 0) ?? kinds.at(-1);
        try {
            await scenarios[kind](lane, kind);
            stats[kind].ops++;
            failedInARow = 0;
            if (renewEvery > 0 && ++lane.ops % renewEvery === 0) await renewLane(lane);
        } catch (err) {
            noteError(kind, err);
            await sleep(200);
            // The lane's own MCP session may be what broke: a new one after 3 failures in a row.
            if (++failedInARow >= 3) {
                failedInARow = 0;
                lane.client.onerror = () => {};  // the abort of the old GET stream is no transport error
                await lane.client.close().catch(() => {});
                try {
                    Object.assign(lane, await connect(`crank-bench-soak-${lane.index}`, (e) => lane.transportError(e)));
                } catch (e) {
                    noteError(kind, new Error(`reconnecting the lane: ${e.message}`));
                }
            }
        }
    }
}

// ---- samples ----------------------------------------------------------------------------------

const base = url.replace(/\/mcp$/, '');
const crankdPort = Number(new URL(url).port);
const csvPath = `${resultsDir}/samples.csv`;
const samples = [];
const t0 = Date.now();

function status(pid) {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN);
    // VmRSS is RssAnon (the heap, stacks: where a leak shows) + RssFile (pages of the binary and
    // libraries faulted in as code runs for the first time) + RssShmem.
    return { rss: kib('VmRSS'), rss_anon: kib('RssAnon'), rss_file: kib('RssFile'), threads: kib('Threads') };
}

/** The TCP sockets of crankd's network namespace: inode -> {local, remote} ports. */
function tcpSockets(pid) {
    const byInode = new Map();
    for (const file of ['tcp', 'tcp6']) {
        let text = '';
        try {
            text = readFileSync(`/proc/${pid}/net/${file}`, 'utf8');
        } catch {
            continue;  // no IPv6
        }
        for (const line of text.split('\n').slice(1)) {
            const f = line.trim().split(/\s+/);
            if (f.length < 10) continue;
            const port = (address) => parseInt(address.slice(address.lastIndexOf(':') + 1), 16);
            byInode.set(f[9], { local: port(f[1]), remote: port(f[2]) });
        }
    }
    return byInode;
}

/** crankd's open fds: all, and the sockets of its clients' connections (on its port, the
 * listening one left out) and of its connections to the upstream. */
function fds(pid, classify) {
    const names = readdirSync(`/proc/${pid}/fd`);
    const out = { fds: names.length, client: 0, upstream: 0 };
    if (!classify) return out;
    const tcp = tcpSockets(pid);
    for (const name of names) {
        let target = '';
        try {
            target = readlinkSync(`/proc/${pid}/fd/${name}`);
        } catch {
            continue;  // closed in between
        }
        const m = /^socket:\[(\d+)\]$/.exec(target);
        const socket = m && tcp.get(m[1]);
        if (!socket) continue;
        if (socket.local === crankdPort && socket.remote !== 0) out.client++;
        else if (upstreamPort && socket.remote === upstreamPort) out.upstream++;
    }
    return out;
}

/** A KiB figure for samples.csv: whole KiB, empty when crankd did not say. */
const fmtKiB = (x) => (Number.isFinite(x) ? x.toFixed(0) : '');

async function gauges() {
    const out = { mcp_sessions: -1, sse_streams: -1, stream_sessions: -1, jobs_live: -1, heap_in_use: NaN, heap_taken: NaN, sqlite: NaN };
    try {
        const r = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) });
        const text = await r.text();
        const value = (re) => {
            const m = re.exec(text);
            return m ? Number(m[1]) : NaN;
        };
        out.mcp_sessions = value(/^crank_mcp_sessions (\S+)$/m);
        out.sse_streams = value(/^crank_sse_streams (\S+)$/m);
        out.stream_sessions = value(/^crank_stream_sessions (\S+)$/m);
        out.jobs_live = value(/^crank_jobs\{status="queued"\} (\S+)$/m) + value(/^crank_jobs\{status="running"\} (\S+)$/m);
        // crankd's own account of its memory, KiB: glibc's heap in use and taken, SQLite's heap.
        out.heap_in_use = value(/^crank_heap_bytes\{state="in_use"\} (\S+)$/m) / 1024;
        out.heap_taken = value(/^crank_heap_bytes\{state="taken"\} (\S+)$/m) / 1024;
        out.sqlite = value(/^crank_sqlite_memory_bytes (\S+)$/m) / 1024;
    } catch {
        // -1: the scrape failed (crankd's RSS and fds are what is judged)
    }
    return out;
}

const columns = ['t_s', 'phase', 'rss_kib', 'rss_anon_kib', 'rss_file_kib', 'fds', 'fds_client', 'fds_upstream', 'fds_rest', 'threads',
    'upstream_rss_kib', 'upstream_fds', 'mcp_sessions', 'sse_streams', 'stream_sessions', 'jobs_live',
    'heap_in_use_kib', 'heap_taken_kib', 'sqlite_kib',
    ...kinds.flatMap((k) => [`${k}_ops`, `${k}_errors`]), 'requests'];
writeFileSync(csvPath, `${columns.join(',')}\n`);

async function sample(phase) {
    const s = { t: (Date.now() - t0) / 1000, phase, ...status(crankdPid) };
    const f = fds(crankdPid, true);
    s.fds = f.fds;
    s.fds_client = f.client;
    s.fds_upstream = f.upstream;
    s.fds_rest = f.fds - f.client - f.upstream;
    s.upstream_rss = -1;
    s.upstream_fds = -1;
    if (upstreamPid) {
        try {
            s.upstream_rss = status(upstreamPid).rss;
            s.upstream_fds = fds(upstreamPid, false).fds;
        } catch {
            // the upstream is gone: its calls fail and say so
        }
    }
    Object.assign(s, await gauges());
    const row = [s.t.toFixed(1), phase, s.rss, s.rss_anon, s.rss_file, s.fds, s.fds_client, s.fds_upstream, s.fds_rest, s.threads,
        s.upstream_rss, s.upstream_fds, s.mcp_sessions, s.sse_streams, s.stream_sessions, s.jobs_live,
        fmtKiB(s.heap_in_use), fmtKiB(s.heap_taken), fmtKiB(s.sqlite),
        ...kinds.flatMap((k) => [stats[k].ops, stats[k].errors]),
        kinds.reduce((sum, k) => sum + stats[k].requests, 0)];
    appendFileSync(csvPath, `${row.join(',')}\n`);
    samples.push(s);
    return s;
}

/** Samples every `interval` s (on the clock, not after each sample) until `until`. */
async function sampleUntil(phase, until, onSample) {
    let next = Date.now();
    while (next <= until) {
        await sleep(Math.max(0, next - Date.now()));
        const s = await sample(phase);  // not inside onSample?.(...): that skips it when unset
        onSample?.(s);
        next += interval * 1000;
    }
}

// ---- the run ----------------------------------------------------------------------------------

for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
        console.error(`soak: ${signal}: stopping; the samples so far are in ${csvPath}`);
        process.exit(signal === 'SIGINT' ? 130 : 143);
    });
}
// See bench/mcp-federation.mjs: undici's listener warnings on the transport's AbortSignal.
process.removeAllListeners('warning');
process.on('warning', (w) => {
    if (w.name !== 'MaxListenersExceededWarning') console.error(`(node:${process.pid}) ${w.name}: ${w.message}`);
});

const totalOf = (field) => kinds.reduce((sum, k) => sum + stats[k][field], 0);
let trafficSeconds = 0;
let lastReport = 0;
/** `seconds` of traffic from every lane, sampled as `phase`; a progress line every minute. */
async function traffic(lanes, phase, seconds) {
    const start = Date.now();
    const end = start + seconds * 1000;
    const running = Promise.all(lanes.map((lane) => runLane(lane, end)));
    await sampleUntil(phase, end, (s) => {
        if (Date.now() - lastReport >= 60_000) {
            lastReport = Date.now();
            console.log(`soak: ${((Date.now() - t0) / 1000).toFixed(0).padStart(5)} s ${phase.padEnd(6)}  RSS ${(s.rss / 1024).toFixed(1)} MiB`
                + `  fds ${s.fds}  threads ${s.threads}  ops ${totalOf('ops')}  errors ${totalOf('errors')}`);
        }
    });
    await running;  // every lane ends its current operation (each is bounded)
    trafficSeconds += (Date.now() - start) / 1000;
}

/** `seconds` without traffic, sampled as `phase`. The lanes keep their own MCP sessions with a
 * ping every 5 s: crankd expires a session after mcp.session_idle_timeout_ms without a request
 * even while its GET stream is open (bench/README.md, "Soak"). */
let keepAlivePings = 0;
let keepAliveErrors = 0;
async function idleFor(lanes, phase, seconds) {
    const end = Date.now() + seconds * 1000;
    const pinging = Promise.all(lanes.map(async (lane) => {
        while (Date.now() + 5000 < end) {
            await sleep(5000);
            keepAlivePings++;
            try {
                await lane.client.ping({ timeout: REQUEST_TIMEOUT });
            } catch (err) {
                if (++keepAliveErrors <= 5) console.error(`soak: lane ${lane.index}: ping: ${err.message}`);
            }
        }
    }));
    await sampleUntil(phase, end);
    await pinging;
}

// Idle before anything: three samples a second apart.
for (let i = 0; i < 3; i++) {
    await sample('before');
    await sleep(1000);
}
const lanes = [];
for (let i = 0; i < clients; i++) lanes.push(await openLane(i));
console.log(`soak: ${clients} clients, ${duration} s of ${kinds.join(', ')} (warm-up ${warmup.toFixed(0)} s, then ${settle} s`
    + ` idle, the rest, ${settle} s idle); samples every ${interval} s into ${csvPath}`);
lastReport = Date.now();
await traffic(lanes, 'warmup', warmup);
await idleFor(lanes, 'pause', settle);
const loadStart = (Date.now() - t0) / 1000;
await traffic(lanes, 'load', duration - warmup);
await idleFor(lanes, 'settle', settle);
// The lanes' own sessions closed (DELETE): nothing of the soak may be left open in crankd.
let closingErrors = 0;
for (const lane of lanes) {
    lane.closing = true;
    try {
        await lane.transport.terminateSession();
    } catch (err) {
        closingErrors++;
        console.error(`soak: lane ${lane.index}: DELETE of its session: ${err.message}`);
    }
    await lane.client.close().catch(() => {});
}
await sleep(2000);
const closed = await sample('closed');

// ---- the summary ------------------------------------------------------------------------------

const median = (xs) => {
    if (xs.length === 0) return NaN;
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Least-squares slope of ys over xs. */
function slope(xs, ys) {
    const n = xs.length;
    if (n < 3) return NaN;
    const mx = xs.reduce((a, b) => a + b, 0) / n;
    const my = ys.reduce((a, b) => a + b, 0) / n;
    let sxy = 0;
    let sxx = 0;
    for (let i = 0; i < n; i++) {
        sxy += (xs[i] - mx) * (ys[i] - my);
        sxx += (xs[i] - mx) ** 2;
    }
    return sxx ? sxy / sxx : NaN;
}

const of = (phase) => samples.filter((s) => s.phase === phase);
const load = of('load');
const busy = samples.filter((s) => s.phase === 'warmup' || s.phase === 'load');
// The values at the warm-up and at the end are medians over 5% of the run (at least three
// samples): a single sample of fds or threads says more about the calls in flight at that instant.
const windowSeconds = Math.max(0.05 * duration, 3 * interval);
const warmWindow = load.filter((s) => s.t < loadStart + windowSeconds);
const finalWindow = load.filter((s) => s.t > load.at(-1).t - windowSeconds);
const loadSpan = load.length ? load.at(-1).t - load[0].t : 0;
const judgeLoad = loadSpan >= limits.minSlopeSpan;
const lateLoad = load.filter((s) => s.t >= (load[0].t + load.at(-1).t) / 2);
const idle = (phase, key) => median(of(phase).slice(-3).map((s) => s[key]));

function figures(key) {
    return {
        warmup: median(warmWindow.map((s) => s[key])),
        final: median(finalWindow.map((s) => s[key])),
        max: Math.max(...busy.map((s) => s[key])),
        slope_per_min: slope(load.map((s) => s.t / 60), load.map((s) => s[key])),
        // The second half alone: a cache or an allocator filling up slows down, a leak does not.
        slope_2nd_half_per_min: slope(lateLoad.map((s) => s.t / 60), lateLoad.map((s) => s[key])),
        idle_before: idle('before', key),
        idle_at_warmup: idle('pause', key),
        idle_at_end: idle('settle', key),
        closed: closed[key],
    };
}
const fig = {};
/** The figures in KiB (their slopes shown in whole KiB); the rest are counts. */
const kibKeys = ['rss', 'rss_anon', 'rss_file', 'heap_in_use', 'heap_taken', 'sqlite'];
for (const key of [...kibKeys, 'fds', 'threads', 'fds_client', 'fds_upstream', 'fds_rest']) fig[key] = figures(key);

const problems = [];
const fmt = (x, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');
if (judgeLoad) {
    // A leak grows the heap in use at the same rate all along. RSS also grows while glibc's arenas
    // and SQLite's caches settle, faster at first: it is judged on the second half, where that
    // has slowed down and a leak has not. Without the gauge (a crankd without it) the heap is not
    // judged and RSS is judged over the whole load, as before.
    const { rss, heap_in_use: heap } = fig;
    const haveHeap = Number.isFinite(heap.slope_per_min) && Number.isFinite(heap.slope_2nd_half_per_min);
    if (haveHeap) {
        for (const [what, value] of [['', heap.slope_per_min], [' over the second half', heap.slope_2nd_half_per_min]]) {
            if (!(value <= limits.heapSlopeKiBPerMin)) {
                problems.push(`the heap in use grows ${fmt(value)} KiB/min${what} after the warm-up (limit ${limits.heapSlopeKiBPerMin}): a leak`);
            }
        }
    }
    const rssSlope = haveHeap ? rss.slope_2nd_half_per_min : rss.slope_per_min;
    if (!(rssSlope <= limits.rssSlopeKiBPerMin)) {
        problems.push(`RSS grows ${fmt(rssSlope)} KiB/min${haveHeap ? ' over the second half' : ''} after the warm-up (limit ${limits.rssSlopeKiBPerMin})`);
    }
    if (!(rss.final <= rss.warmup * (1 + limits.rssGrowthPct / 100))) {
        problems.push(`RSS final ${fmt(rss.final)} KiB is more than ${limits.rssGrowthPct}% above the warm-up's ${fmt(rss.warmup)} KiB`);
    }
    for (const [what, f, tolerance, slopeLimit] of [
        ['fds', fig.fds, limits.fdTolerance, limits.fdSlopePerMin],
        ['threads', fig.threads, limits.threadTolerance, limits.threadSlopePerMin],
    ]) {
        if (!(Math.abs(f.final - f.warmup) <= tolerance)) {
            problems.push(`${what} final ${fmt(f.final, 1)} differs from the warm-up's ${fmt(f.warmup, 1)} by more than ${tolerance}`);
        }
        if (!(Math.abs(f.slope_per_min) <= slopeLimit)) {
            problems.push(`${what} slope ${fmt(f.slope_per_min, 2)}/min after the warm-up (limit ±${slopeLimit})`);
        }
    }
}
for (const [what, f, tolerance] of [
    ['idle fds of clients\' connections', fig.fds_client, limits.idleFdTolerance],
    ['idle fds other than sockets', fig.fds_rest, limits.idleFdTolerance],
    ['idle threads', fig.threads, limits.idleThreadTolerance],
]) {
    if (!(f.idle_at_end - f.idle_at_warmup <= tolerance)) {
        problems.push(`${what}: ${fmt(f.idle_at_end, 1)} at the end against ${fmt(f.idle_at_warmup, 1)} at the warm-up (limit +${tolerance})`);
    }
}
if (!(fig.fds_upstream.idle_at_end <= limits.idleUpstreamMax)) {
    problems.push(`idle connections to the upstream at the end: ${fmt(fig.fds_upstream.idle_at_end, 1)} (the REST plugin keeps at most ${limits.idleUpstreamMax})`);
}
if (closed.mcp_sessions !== 0 || closed.sse_streams !== 0) {
    problems.push(`after every client closed: ${closed.mcp_sessions} MCP sessions and ${closed.sse_streams} SSE streams still open`);
}
const totals = { ops: totalOf('ops'), errors: totalOf('errors'), requests: totalOf('requests') };
for (const k of kinds) {
    const { ops, errors } = stats[k];
    if (ops === 0) problems.push(`${k}: no operation succeeded`);
    else if (errors / (ops + errors) > limits.maxErrorRate) {
        problems.push(`${k}: ${errors} errors in ${ops + errors} operations (limit ${(limits.maxErrorRate * 100).toFixed(2)}%)`);
    }
}
if (keepAliveErrors) problems.push(`${keepAliveErrors} of the lanes' pings while idle failed`);
if (closingErrors) problems.push(`${closingErrors} of the lanes' sessions could not be closed (DELETE)`);

const lines = [];
const out = (line = '') => lines.push(line);
out(`soak: ${fmt(trafficSeconds)} s of traffic, ${clients} clients (${kinds.length === Object.keys(MIX).length ? 'every kind' : kinds.join(', ')}), `
    + `samples every ${interval} s; warm-up ${fmt(warmup)} s; the warm-up and final values are medians over ${fmt(windowSeconds)} s;`
    + ` idle values: medians of the last 3 samples of ${settle} s without traffic`);
const widths = [15, 9, 9, 9, 10, 10, 8, 8, 8, 8, 7];
const row = (cells) => cells.map((c, i) => (i ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('');
out(row(['', 'warm-up', 'final', 'max', 'slope/min', '2nd half', 'final:', 'idle', 'idle at', 'idle at', 'after']));
out(row(['', '', '', '', '', 'slope/min', 'warm-up', 'before', 'warm-up', 'end', 'close']));
for (const [label, key, digits] of [['RSS KiB', 'rss', 0], ['  anonymous', 'rss_anon', 0], ['  files', 'rss_file', 0],
    ['heap in use KiB', 'heap_in_use', 0], ['heap taken KiB', 'heap_taken', 0], ['SQLite KiB', 'sqlite', 0], ['fds', 'fds', 1], ['  clients\'', 'fds_client', 1],
    ['  to upstream', 'fds_upstream', 1], ['  the rest', 'fds_rest', 1], ['threads', 'threads', 1]]) {
    const f = fig[key];
    const d = kibKeys.includes(key) ? 0 : 2;
    out(row([label, fmt(f.warmup, digits), fmt(f.final, digits), fmt(f.max), fmt(f.slope_per_min, d), fmt(f.slope_2nd_half_per_min, d),
        fmt(f.final / f.warmup, 3), fmt(f.idle_before, digits), fmt(f.idle_at_warmup, digits), fmt(f.idle_at_end, digits), fmt(f.closed)]));
}
const opsPerMin = totals.ops / (trafficSeconds / 60);
out(`RSS slope per 1000 operations: ${fmt((fig.rss.slope_per_min / opsPerMin) * 1000, 1)} KiB (${fmt(opsPerMin)} operations/min,`
    + ` ${fmt(totals.requests / trafficSeconds, 1)} MCP requests/s)`
    + (judgeLoad ? '' : `; the load figures are not judged: ${fmt(loadSpan)} s after the warm-up, under ${limits.minSlopeSpan} s`));
out(`after the clients closed: ${closed.mcp_sessions} MCP sessions, ${closed.sse_streams} SSE streams, ${closed.stream_sessions} stream sessions (closed ones answer for a minute), ${closed.jobs_live} live jobs`);
out('');
out(['kind'.padEnd(24), 'ops'.padStart(8), 'errors'.padStart(8), 'requests'.padStart(10), 'error rate'.padStart(12)].join(''));
for (const k of kinds) {
    const { ops, errors, requests } = stats[k];
    out([k.padEnd(24), String(ops).padStart(8), String(errors).padStart(8), String(requests).padStart(10),
        `${fmt((errors / Math.max(1, ops + errors)) * 100, 2)}%`.padStart(12)].join(''));
}
out(['total'.padEnd(24), String(totals.ops).padStart(8), String(totals.errors).padStart(8), String(totals.requests).padStart(10)].join(''));
out(`transport errors (the SDK's onerror, outside the operations above): ${transportErrors};`
    + ` pings of the lanes while idle: ${keepAlivePings}, failed: ${keepAliveErrors};`
    + ` cancels that came after the job had ended: ${lateCancels}`
    + (renewEvery > 0 ? `; the lanes renewed their MCP sessions ${renewals} times (every ${renewEvery} operations)` : ''));
for (const [message, count] of errorMessages) out(`  ${count} x ${message}`);
out('');
out(`thresholds (after the warm-up, judged from ${limits.minSlopeSpan} s of it): heap in use slope <= ${limits.heapSlopeKiBPerMin} KiB/min, over the whole load and its second half;`
    + ` RSS slope over the second half (the whole load without the heap gauge) <= ${limits.rssSlopeKiBPerMin} KiB/min and final <= warm-up + ${limits.rssGrowthPct}%;`
    + ` fds and threads |final - warm-up| <= ${limits.fdTolerance} and ${limits.threadTolerance}, |slope| <= ${limits.fdSlopePerMin} and ${limits.threadSlopePerMin}/min.`
    + ` Idle (always): clients' sockets, other fds and threads at the end <= at the warm-up + ${limits.idleFdTolerance}, ${limits.idleFdTolerance} and ${limits.idleThreadTolerance};`
    + ` upstream connections <= ${limits.idleUpstreamMax}; no MCP session or SSE stream after the clients closed.`
    + ` Errors <= ${(limits.maxErrorRate * 100).toFixed(2)}% of each kind's operations`);
out(problems.length ? `verdict: NOT FLAT\n${problems.map((p) => `  - ${p}`).join('\n')}` : 'verdict: flat');
const text = `${lines.join('\n')}\n`;
writeFileSync(`${resultsDir}/summary.txt`, text);
writeFileSync(`${resultsDir}/summary.json`, `${JSON.stringify({
    traffic_s: trafficSeconds, clients, interval_s: interval, warmup_s: warmup, window_s: windowSeconds, settle_s: settle,
    kinds, rss_kib: fig.rss, rss_anon_kib: fig.rss_anon, rss_file_kib: fig.rss_file,
    heap_in_use_kib: fig.heap_in_use, heap_taken_kib: fig.heap_taken, sqlite_kib: fig.sqlite, fds: fig.fds, fds_client: fig.fds_client, fds_upstream: fig.fds_upstream, fds_rest: fig.fds_rest,
    threads: fig.threads, after_close: closed, traffic: stats, totals, transport_errors: transportErrors, late_cancels: lateCancels,
    errors: Object.fromEntries(errorMessages), limits, load_judged: judgeLoad, problems, flat: problems.length === 0,
}, null, 2)}\n`);
process.stdout.write(text);
process.exit(problems.length ? 1 : 0);
