// Opens N MCP sessions on crankd, each with an idle GET stream, then measures crankd's memory per
// session and whether requests are still answered (ping latency before and with the streams).
//   node bench/idle-streams.mjs URL PID [N]
import http from 'node:http';
import { readFileSync } from 'node:fs';

const [url, pidText, nText] = process.argv.slice(2);
const n = Number(nText ?? 10000);
const target = new URL(url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function rssKiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

function post(body, session) {
  return new Promise((resolve, reject) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    if (session) headers['Mcp-Session-Id'] = session;
    const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers, agent }, (res) => {
      let data = '';
      res.on('data', (c) => { data += c; });
      res.on('end', () => resolve({ status: res.statusCode, session: res.headers['mcp-session-id'], body: data }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

let retries = 0;
function openStreamOnce(session) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'GET',
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': session }, agent: false }, (res) => {
      if (res.statusCode === 503) { res.resume(); resolve(null); return; }  // busy: retry later
      if (res.statusCode !== 200) { reject(new Error(`GET stream: HTTP ${res.statusCode}`)); return; }
      res.once('data', () => resolve(req));  // the priming event
    });
    req.on('error', reject);
    req.end();
  });
}

async function openStream(session) {
  for (let attempt = 0; attempt < 50; attempt++) {
    const req = await openStreamOnce(session);
    if (req) return req;
    retries++;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('GET stream: still 503 after 50 attempts');
}

async function pingLatencies(session, count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const t0 = process.hrtime.bigint();
    const r = await post({ jsonrpc: '2.0', id: i, method: 'ping' }, session);
    if (r.status !== 200) throw new Error(`ping: HTTP ${r.status}`);
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  out.sort((a, b) => a - b);
  return { p50: out[Math.floor(count * 0.5)], p99: out[Math.floor(count * 0.99)] };
}

const init = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } };
let phase = "probe";
process.on("uncaughtException", (e) => { console.error(`failed during ${phase}: ${e.message}`); process.exit(1); });
const probe = (await post(init)).session;
const before = await pingLatencies(probe, 200);
const rssBefore = rssKiB(pidText);

phase = "initialize";
const sessions = [];
for (let i = 0; i < n; i += 100) {
  const batch = await Promise.all(Array.from({ length: Math.min(100, n - i) }, () => post(init)));
  for (const r of batch) {
    if (r.status !== 200) throw new Error(`initialize: HTTP ${r.status} ${r.body}`);
    sessions.push(r.session);
  }
}
phase = "streams";
const streams = [];
for (let i = 0; i < n; i += 100) {
  streams.push(...await Promise.all(sessions.slice(i, i + 100).map(openStream)));
}
await new Promise((r) => setTimeout(r, 1000));
const rssAfter = rssKiB(pidText);
phase = "ping during";
const during = await pingLatencies(probe, 200);

console.log(`sessions with an open GET stream: ${streams.length} (${retries} openings answered 503 and retried)`);
console.log(`crankd RSS: ${(rssBefore / 1024).toFixed(1)} MiB before, ${(rssAfter / 1024).toFixed(1)} MiB with the streams`);
console.log(`memory per session with its stream: ${((rssAfter - rssBefore) * 1024 / n).toFixed(0)} bytes`);
console.log(`ping p50/p99: ${before.p50.toFixed(2)}/${before.p99.toFixed(2)} ms before, ${during.p50.toFixed(2)}/${during.p99.toFixed(2)} ms with the streams open (ratio p50 ${(during.p50 / before.p50).toFixed(2)})`);
for (const s of streams) s.destroy();
agent.destroy();
