// MCP federation overhead (bench/run-mcp-federation.sh runs it): tools/call of the fixture's
// `echo` tool with the official TypeScript SDK client, the same client code against each target,
// in one run:
//   direct stdio     StdioClientTransport spawning `node reference-server.mjs --stdio`
//   crankd -> stdio  StreamableHTTPClientTransport to crankd's /mcp (CRANK_MCP_URL), crankd
//                    fronting the same fixture over stdio (one long-lived connection, multiplexed)
//   crankd ping      JSON-RPC ping on that same client: crankd answers it itself, so it is the
//                    floor of HTTP + crankd + this client, without the upstream
//   direct http      StreamableHTTPClientTransport to `node reference-server.mjs 0`
//                    (FIXTURE_HTTP_URL; skipped when unset): the SDK's own server over HTTP
// For each IN_FLIGHT (comma-separated, default 1,16) and each target: WARMUP seconds of calls,
// then BENCH_SECONDS of calls with IN_FLIGHT calls outstanding. Reports calls/s, p50 and p99
// latency (process.hrtime around each call) and the ratios through crankd : direct.
// Every answer is checked (the text sent comes back, isError false); any failure exits 1.
// STDIO_PID_FILE: where the pid of the spawned stdio fixture is written (so that the script can
// stop it by pid if this process dies before closing it).
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const sdk = new URL('../tests/e2e/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Client } = await import(new URL('client/index.js', sdk));
const { StdioClientTransport } = await import(new URL('client/stdio.js', sdk));
const { StreamableHTTPClientTransport } = await import(new URL('client/streamableHttp.js', sdk));

const fixture = fileURLToPath(new URL('../tests/e2e/reference-server.mjs', import.meta.url));
const crankUrl = process.env.CRANK_MCP_URL;
const httpUrl = process.env.FIXTURE_HTTP_URL || '';
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
const warmup = Number(process.env.WARMUP ?? 1);
const inFlights = (process.env.IN_FLIGHT ?? '1,16').split(',').map(Number);
const callTimeoutMs = 10000;
if (!crankUrl) throw new Error('CRANK_MCP_URL is not set');
if (!(seconds > 0) || !(warmup >= 0) || inFlights.some((n) => !Number.isInteger(n) || n < 1)) {
    const { BENCH_SECONDS, WARMUP, IN_FLIGHT } = process.env;
    throw new Error(`bad BENCH_SECONDS (${BENCH_SECONDS}), WARMUP (${WARMUP}) or IN_FLIGHT (${IN_FLIGHT})`);
}

const targets = [];
let stdioTransport = null;
let stdioErr = '';

const echo = (client) => async (text) => {
    const r = await client.callTool({ name: 'echo', arguments: { text } }, undefined, { timeout: callTimeoutMs });
    if (r.isError || r.content?.[0]?.text !== text) {
        throw new Error(`unexpected result ${JSON.stringify(r).slice(0, 300)}`);
    }
};
const ping = (client) => async () => {
    await client.ping({ timeout: callTimeoutMs });
};

async function connect(name, transport) {
    const client = new Client({ name: 'crank-bench-federation', version: '1' });
    await client.connect(transport, { timeout: callTimeoutMs });
    const { tools } = await client.listTools(undefined, { timeout: callTimeoutMs });
    if (!tools.some((t) => t.name === 'echo')) throw new Error(`${name}: no echo tool in tools/list`);
    targets.push({ name, call: echo(client), client });
    return client;
}

// The HTTP transport gives all its fetches the same AbortSignal; undici removes a request's abort
// listener only once the request is garbage-collected, and raises the signal's limit back to 1500
// on every fetch, so at thousands of calls a second Node prints a MaxListenersExceededWarning per
// call past 1500. Harmless here (the listeners go with the next collections): those warnings are
// dropped, every other one is printed as Node would.
process.removeAllListeners('warning');
process.on('warning', (w) => {
    if (w.name !== 'MaxListenersExceededWarning') console.error(`(node:${process.pid}) ${w.name}: ${w.message}`);
});
const httpTransport = (url) => new StreamableHTTPClientTransport(new URL(url));

function stopStdioChild() {
    const pid = stdioTransport?.pid;
    if (!pid) return;
    try {
        process.kill(pid, 'SIGTERM');
    } catch {
        // already gone
    }
}

async function closeAll() {
    for (const { client } of targets) await client?.close().catch(() => {});
    stopStdioChild();
}
for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
        stopStdioChild();
        process.exit(signal === 'SIGINT' ? 130 : 143);
    });
}

// Makes calls with inFlight of them outstanding until `duration` seconds have passed; returns the
// latencies (ms) of the calls that succeeded, the failures, and the elapsed wall time (s).
async function drive(call, inFlight, duration) {
    const latencies = [];
    let failed = 0;
    let firstError = null;
    let seq = 0;
    const start = process.hrtime.bigint();
    const end = start + BigInt(Math.round(duration * 1e9));
    const lane = async () => {
        while (process.hrtime.bigint() < end) {
            const text = `bench ${seq++}`;
            const t0 = process.hrtime.bigint();
            let ok = false;
            try {
                await call(text);
                ok = true;
            } catch (err) {
                firstError ??= err;
            }
            const t1 = process.hrtime.bigint();
            if (ok) latencies.push(Number(t1 - t0) / 1e6);
            else failed++;
        }
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
    const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
    return { latencies, failed, firstError, elapsed };
}

function quantile(sorted, q) {
    if (sorted.length === 0) return NaN;
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const results = []; // {name, inFlight, rate, p50, p99, calls, failed}
let failures = 0;
try {
    stdioTransport = new StdioClientTransport({
        command: process.execPath, args: [fixture, '--stdio'], stderr: 'pipe',
    });
    stdioTransport.stderr.on('data', (d) => {
        stdioErr = (stdioErr + d).slice(-4000);
    });
    await connect('direct stdio', stdioTransport);
    if (process.env.STDIO_PID_FILE) writeFileSync(process.env.STDIO_PID_FILE, `${stdioTransport.pid}\n`);
    const crank = await connect('crankd -> stdio', httpTransport(crankUrl));
    targets.push({ name: 'crankd ping', call: ping(crank) });
    if (httpUrl) await connect('direct http', httpTransport(httpUrl));

    console.log(`echo (ping for "crankd ping") per target: ${warmup} s warm-up, then ${seconds} s measured`);
    const row = (...cells) => cells.map((c, i) => (i ? String(c).padStart([9, 9, 8, 8, 8][i - 1]) : c.padEnd(16)));
    console.log(row('target', 'in flight', 'calls/s', 'p50 ms', 'p99 ms', 'calls').join(' '));
    for (const inFlight of inFlights) {
        for (const { name, call } of targets) {
            if (warmup > 0) {
                const w = await drive(call, inFlight, warmup);
                if (w.failed) {
                    failures += w.failed;
                    console.error(`bench: ${name}: ${w.failed} failed calls in warm-up: ${w.firstError?.message}`);
                }
            }
            const m = await drive(call, inFlight, seconds);
            const sorted = Float64Array.from(m.latencies).sort();
            const r = {
                name, inFlight, rate: sorted.length / m.elapsed,
                p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99),
                calls: sorted.length, failed: m.failed,
            };
            results.push(r);
            console.log(row(name, inFlight, r.rate.toFixed(0), r.p50.toFixed(3), r.p99.toFixed(3), r.calls).join(' '));
            if (m.failed) {
                failures += m.failed;
                console.error(`bench: ${name}: ${m.failed} failed calls: ${m.firstError?.message}`);
            }
        }
    }

    const find = (name, inFlight) => results.find((r) => r.name === name && r.inFlight === inFlight);
    console.log('');
    for (const inFlight of inFlights) {
        const crank = find('crankd -> stdio', inFlight);
        for (const baseName of ['direct stdio', 'direct http', 'crankd ping']) {
            const base = find(baseName, inFlight);
            if (!base) continue;
            console.log(
                `${String(inFlight).padStart(2)} in flight, crankd echo : ${baseName.padEnd(12)}` +
                ` calls/s x${(crank.rate / base.rate).toFixed(2)},` +
                ` p50 x${(crank.p50 / base.p50).toFixed(2)} (${signed(crank.p50 - base.p50)} ms),` +
                ` p99 x${(crank.p99 / base.p99).toFixed(2)} (${signed(crank.p99 - base.p99)} ms)`,
            );
        }
    }
} catch (err) {
    console.error(`bench: ${err.stack ?? err}`);
    if (stdioErr) console.error(`--- stdio fixture stderr ---\n${stdioErr}`);
    failures++;
} finally {
    await closeAll();
}
process.exit(failures ? 1 : 0);

function signed(x) {
    return `${x >= 0 ? '+' : ''}${x.toFixed(3)}`;
}
