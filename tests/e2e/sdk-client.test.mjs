// End-to-end tests of an MCP Streamable HTTP endpoint with the official TypeScript SDK client
// (Client + StreamableHTTPClientTransport), pinned in package-lock.json.
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-client.test.mjs
//
// The server behind the URL must publish two tools under these exact names:
//   echo {text}                      returns text back (first content block, type text)
//   slow_progress {steps, delay_ms}  sends `steps` increasing notifications/progress, delay_ms
//                                    apart, then returns; honours notifications/cancelled
// and keep stateful sessions (Mcp-Session-Id) with resumable SSE streams (event ids, GET with
// Last-Event-ID). tests/e2e/reference-server.mjs is such a server.
//
// Every test is bounded (node:test timeout, plus the SDK's per-request timeout).

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateMessageRequestSchema, ElicitRequestSchema, EmptyResultSchema, LATEST_PROTOCOL_VERSION, ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const URL_ENV = process.env.CRANK_MCP_URL;
const TEST_TIMEOUT = 30_000; // per test
const REQUEST_TIMEOUT = 15_000; // per SDK request

// --- helpers -------------------------------------------------------------------------------------

// A fetch that records every HTTP exchange the transport makes, and can cut the response stream
// of a chosen POST mid-flight (a dropped connection, as the network or a proxy would do it).
function recordingFetch() {
    const exchanges = [];
    const droppable = new Map(); // JSON-RPC id -> AbortController of the POST that carries it
    const fetchFn = async (url, init = {}) => {
        const headers = new Headers(init.headers);
        let body;
        try {
            body = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
        } catch {
            body = undefined;
        }
        const entry = {
            method: init.method ?? 'GET',
            rpcMethod: body?.method,
            rpcId: body?.id,
            sessionId: headers.get('mcp-session-id'),
            protocolVersion: headers.get('mcp-protocol-version'),
            lastEventId: headers.get('last-event-id'),
            status: undefined,
            contentType: undefined,
        };
        exchanges.push(entry);
        let signal = init.signal;
        if (entry.method === 'POST' && body?.method === 'tools/call' && body.id !== undefined) {
            const cut = new AbortController();
            droppable.set(body.id, cut);
            signal = init.signal ? AbortSignal.any([init.signal, cut.signal]) : cut.signal;
        }
        const response = await fetch(url, { ...init, signal });
        entry.status = response.status;
        entry.contentType = response.headers.get('content-type');
        return response;
    };
    return {
        fetch: fetchFn,
        exchanges,
        // Cuts the response stream of the latest tools/call POST.
        drop() {
            const last = exchanges.findLast((e) => e.method === 'POST' && e.rpcMethod === 'tools/call');
            assert.ok(last, 'no tools/call POST to drop');
            droppable.get(last.rpcId).abort(new Error('e2e: connection dropped on purpose'));
        },
    };
}

const openClients = new Set();

async function connect({ sessionId, protocolVersion, recorder = recordingFetch(), capabilities = {} } = {}) {
    const transport = new StreamableHTTPClientTransport(new URL(URL_ENV), {
        fetch: recorder.fetch,
        sessionId,
        reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
    });
    const client = new Client({ name: 'crank-e2e-sdk-client', version: '1.0.0' }, { capabilities });
    client.onerror = () => {}; // dropped streams report here; the tests assert on outcomes instead
    await client.connect(transport, { timeout: REQUEST_TIMEOUT });
    if (protocolVersion) transport.setProtocolVersion(protocolVersion); // resumed session: no initialize
    const handle = { client, transport, recorder };
    openClients.add(handle);
    return handle;
}

async function dispose(handle) {
    openClients.delete(handle);
    await handle.transport.terminateSession().catch(() => {});
    await handle.client.close().catch(() => {});
}

after(async () => {
    for (const handle of [...openClients]) await dispose(handle);
});

// Awaits promise; on failure, appends the HTTP exchanges the recorder saw to the error message.
async function explained(promise, recorder) {
    try {
        return await promise;
    } catch (err) {
        const lines = recorder.exchanges.map(
            (e) =>
                `${e.method} ${e.rpcMethod ?? ''}${e.rpcId !== undefined ? `#${e.rpcId}` : ''}` +
                `${e.lastEventId ? ` Last-Event-ID=${e.lastEventId}` : ''} -> ${e.status ?? 'no response'}`,
        );
        err.message += `\nHTTP exchanges:\n  ${lines.join('\n  ')}`;
        throw err;
    }
}

function firstText(result) {
    const block = result.content?.find((c) => c.type === 'text');
    return block?.text;
}

function waitFor(predicate, what, ms = 10_000) {
    return new Promise((resolve, reject) => {
        const started = Date.now();
        const tick = () => {
            if (predicate()) return resolve();
            if (Date.now() - started > ms) return reject(new Error(`timed out after ${ms} ms waiting for ${what}`));
            setTimeout(tick, 10);
        };
        tick();
    });
}

function assertIncreasing(values, what) {
    for (let i = 1; i < values.length; i++) {
        assert.ok(values[i] > values[i - 1], `${what} not strictly increasing: ${JSON.stringify(values)}`);
    }
}

// Sends slow_progress through client.request so the test owns the JSON-RPC id and the options.
function slowProgress(client, args, options = {}) {
    return client.request({ method: 'tools/call', params: { name: 'slow_progress', arguments: args } }, CallToolResultSchema, {
        timeout: REQUEST_TIMEOUT,
        ...options,
    });
}

// --- tests ---------------------------------------------------------------------------------------

const skip = URL_ENV ? false : 'CRANK_MCP_URL is not set';

it('CRANK_MCP_URL names an http(s) MCP endpoint', () => {
    assert.ok(URL_ENV, 'set CRANK_MCP_URL, e.g. CRANK_MCP_URL=http://127.0.0.1:8080/mcp');
    assert.match(URL_ENV, /^https?:\/\//);
});

describe('MCP endpoint with the official TypeScript SDK client', { skip }, () => {
    it('connects: initialize, session id, negotiated version, initialized notification', { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect();
        try {
            const { client, transport, recorder } = handle;
            assert.ok(client.getServerVersion()?.name, 'serverInfo.name missing');
            assert.ok(client.getServerCapabilities()?.tools, 'server does not declare the tools capability');
            assert.equal(transport.protocolVersion, LATEST_PROTOCOL_VERSION, 'server must answer with the version the client asked for');
            assert.match(transport.sessionId ?? '', /^[\x21-\x7E]+$/, 'Mcp-Session-Id missing or not visible ASCII');

            const init = recorder.exchanges.find((e) => e.rpcMethod === 'initialize');
            assert.equal(init.status, 200);
            const initialized = recorder.exchanges.find((e) => e.rpcMethod === 'notifications/initialized');
            assert.equal(initialized.status, 202, 'a notification is answered 202 Accepted');
            assert.equal(initialized.sessionId, transport.sessionId);
            assert.equal(initialized.protocolVersion, LATEST_PROTOCOL_VERSION);

            assert.deepEqual(await client.ping({ timeout: REQUEST_TIMEOUT }), {});
        } finally {
            await dispose(handle);
        }
    });

    it('lists tools, including echo and slow_progress with object input schemas', { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect();
        try {
            const { tools } = await handle.client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
            const byName = new Map(tools.map((t) => [t.name, t]));
            for (const name of ['echo', 'slow_progress']) {
                const tool = byName.get(name);
                assert.ok(tool, `tool ${name} not listed; got ${[...byName.keys()].join(', ')}`);
                assert.equal(tool.inputSchema?.type, 'object', `${name}.inputSchema.type`);
            }
            assert.ok('text' in (byName.get('echo').inputSchema.properties ?? {}), 'echo takes {text}');
            const sp = byName.get('slow_progress').inputSchema.properties ?? {};
            assert.ok('steps' in sp && 'delay_ms' in sp, 'slow_progress takes {steps, delay_ms}');
        } finally {
            await dispose(handle);
        }
    });

    it("answers a tool's input rounds on the call's stream (the host's MRTR tools in a 2025 session)", { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect({ capabilities: { elicitation: {}, sampling: {}, roots: {} } });
        try {
            const { client } = handle;
            const asked = [];
            client.setRequestHandler(ElicitRequestSchema, async (request) => {
                asked.push(request.params.message);
                return { action: 'accept', content: /color/.test(request.params.message) ? { color: 'blue' } : { name: 'Alice' } };
            });
            client.setRequestHandler(CreateMessageRequestSchema, async () => ({
                role: 'assistant', content: { type: 'text', text: 'Hi' }, model: 'test-model', stopReason: 'endTurn',
            }));
            client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));

            const rounds = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT });
            assert.equal(rounds.content[0].text, 'Alice likes blue');
            assert.deepEqual(asked, ['Step 1: What is your name?', 'Step 2: What is your favorite color?']);

            const all = await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT });
            assert.equal(all.content[0].text, 'Hi Alice (file:///work)');
        } finally {
            await dispose(handle);
        }
    });

    it('a tool asking for a capability the session did not declare ends with isError, naming it', { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect();
        try {
            const result = await handle.client.callTool({ name: 'test_input_required_result_elicitation', arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT });
            assert.equal(result.isError, true);
            assert.match(result.content[0].text, /user_name.*elicitation/);
        } finally {
            await dispose(handle);
        }
    });

    it('calls echo and gets the text back', { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect();
        try {
            for (const text of ['hello', 'ünïcødé ✓ "quotes" \\ back\nslash', 'x'.repeat(64 * 1024)]) {
                const result = await handle.client.callTool({ name: 'echo', arguments: { text } }, undefined, { timeout: REQUEST_TIMEOUT });
                assert.notEqual(result.isError, true, `echo failed: ${JSON.stringify(result.content)}`);
                assert.equal(firstText(result), text);
            }
        } finally {
            await dispose(handle);
        }
    });

    it('delivers slow_progress notifications in order, before the result', { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect();
        try {
            const steps = 5;
            const seen = [];
            const result = await slowProgress(handle.client, { steps, delay_ms: 50 }, { onprogress: (p) => seen.push(p) });
            assert.notEqual(result.isError, true, `slow_progress failed: ${JSON.stringify(result.content)}`);
            assert.equal(seen.length, steps, `expected ${steps} progress notifications, got ${JSON.stringify(seen)}`);
            assertIncreasing(seen.map((p) => p.progress), 'progress');
            for (const p of seen) if (p.total !== undefined) assert.equal(p.total, steps);
        } finally {
            await dispose(handle);
        }
    });

    it('cancels slow_progress with an AbortSignal; the session keeps working', { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect();
        try {
            const { client, recorder } = handle;
            const abort = new AbortController();
            const seen = [];
            const call = slowProgress(client, { steps: 100, delay_ms: 100 }, { signal: abort.signal, onprogress: (p) => seen.push(p) });
            call.catch(() => {});
            await waitFor(() => seen.length >= 1, 'the first progress notification (the call reached the tool)');
            abort.abort('e2e: user cancelled');
            const t0 = Date.now();
            await assert.rejects(call);
            assert.ok(Date.now() - t0 < 2000, 'the call must reject promptly on abort');

            await waitFor(
                () => recorder.exchanges.some((e) => e.rpcMethod === 'notifications/cancelled' && e.status !== undefined),
                'the notifications/cancelled POST',
            );
            const cancelled = recorder.exchanges.find((e) => e.rpcMethod === 'notifications/cancelled');
            assert.equal(cancelled.status, 202, 'notifications/cancelled is answered 202 Accepted');

            const echo = await client.callTool({ name: 'echo', arguments: { text: 'still alive' } }, undefined, { timeout: REQUEST_TIMEOUT });
            assert.equal(firstText(echo), 'still alive');
            const again = await slowProgress(client, { steps: 2, delay_ms: 10 });
            assert.notEqual(again.isError, true);
        } finally {
            await dispose(handle);
        }
    });

    it('resumes a dropped POST SSE stream by itself (GET with Last-Event-ID), losing no progress', { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect();
        try {
            const { client, recorder } = handle;
            const steps = 8;
            const seen = [];
            const tokens = [];
            const call = slowProgress(
                client,
                { steps, delay_ms: 150 },
                { onprogress: (p) => seen.push(p.progress), onresumptiontoken: (t) => tokens.push(t) },
            );
            call.catch(() => {});
            await waitFor(() => seen.length >= 2, 'two progress notifications before the drop');
            assert.ok(tokens.length > 0, 'the POST SSE stream carried no event ids: it cannot be resumed');
            recorder.drop();

            const result = await explained(call, recorder);
            assert.notEqual(result.isError, true, `slow_progress failed: ${JSON.stringify(result.content)}`);
            const resume = recorder.exchanges.find((e) => e.method === 'GET' && e.lastEventId);
            assert.ok(resume, 'the client did not reconnect with GET + Last-Event-ID');
            assert.equal(resume.status, 200, 'GET with Last-Event-ID must be answered 200 text/event-stream');
            assert.match(resume.contentType ?? '', /^text\/event-stream/);
            assert.ok(tokens.includes(resume.lastEventId), 'Last-Event-ID must be an event id the stream sent');
            assert.deepEqual(
                seen,
                [...new Set(seen)],
                `progress replayed twice after resuming: ${JSON.stringify(seen)}`,
            );
            assert.equal(seen.length, steps, `progress lost across the drop: ${JSON.stringify(seen)}`);
            assertIncreasing(seen, 'progress');
        } finally {
            await dispose(handle);
        }
    });

    it('resumes a request from a new client with resumptionToken after the first client died', { timeout: TEST_TIMEOUT }, async () => {
        const first = await connect();
        let second;
        try {
            const steps = 6;
            const seen = [];
            let token;
            const call = slowProgress(
                first.client,
                { steps, delay_ms: 150 },
                { onprogress: (p) => seen.push(p.progress), onresumptiontoken: (t) => (token = t) },
            );
            call.catch(() => {});
            await waitFor(() => seen.length >= 2, 'two progress notifications before the client dies');
            assert.ok(token, 'no resumption token (SSE event id) was received');
            const { sessionId, protocolVersion } = first.transport;
            openClients.delete(first); // the session lives on in the second client
            await first.client.close(); // every connection of the first client is gone
            await assert.rejects(call);
            // A restarted client comes back later than microseconds after dying. Give the server
            // time to see the old connection close: the SDK server answers 409 Conflict to a resume
            // of a stream it still holds open, and the SDK client does not retry a resumptionToken.
            await sleep(500);

            second = await connect({ sessionId, protocolVersion });
            const resumed = await explained(
                slowProgress(second.client, { steps, delay_ms: 150 }, { resumptionToken: token }),
                second.recorder,
            );
            assert.ok(firstText(resumed), 'the resumed call returned no text');
            assert.notEqual(resumed.isError, true, `slow_progress failed: ${JSON.stringify(resumed.content)}`);
            const get = second.recorder.exchanges.find((e) => e.method === 'GET' && e.lastEventId === token);
            assert.ok(get, 'the second client did not send GET with Last-Event-ID = the token');
            assert.equal(get.status, 200);
            assert.equal(get.sessionId, sessionId);
            assert.equal(
                second.recorder.exchanges.filter((e) => e.rpcMethod === 'tools/call').length,
                0,
                'resuming must not POST the request again',
            );
        } finally {
            if (second) await dispose(second);
            else await dispose(first);
        }
    });

    it('terminates the session with DELETE; the old session id then gets 404', { timeout: TEST_TIMEOUT }, async () => {
        const handle = await connect();
        const { client, transport, recorder } = handle;
        const sessionId = transport.sessionId;
        const protocolVersion = transport.protocolVersion;
        assert.ok(sessionId, 'no session to terminate');
        try {
            await transport.terminateSession();
            const del = recorder.exchanges.find((e) => e.method === 'DELETE');
            assert.ok(del.status >= 200 && del.status < 300, `DELETE answered ${del.status}, expected 2xx`);
            assert.equal(del.sessionId, sessionId);
        } finally {
            openClients.delete(handle);
            await client.close();
        }

        // The SDK client forgets the id after DELETE, so replay it on a fresh transport, which is
        // exactly what a client that missed the termination would do.
        const stale = await connect({ sessionId, protocolVersion });
        try {
            const err = await stale.client.request({ method: 'ping' }, EmptyResultSchema, { timeout: REQUEST_TIMEOUT }).then(
                () => assert.fail('a request on a terminated session succeeded'),
                (e) => e,
            );
            assert.ok(err instanceof StreamableHTTPError, `expected an HTTP error, got ${err}`);
            assert.equal(err.code, 404, `terminated session must get 404, got ${err.code}: ${err.message}`);
            const post = stale.recorder.exchanges.find((e) => e.rpcMethod === 'ping');
            assert.equal(post.sessionId, sessionId);
        } finally {
            openClients.delete(stale);
            await stale.client.close();
        }
    });

    it('rejects a non-initialize request without a session id with 400', { timeout: TEST_TIMEOUT }, async () => {
        const response = await fetch(URL_ENV, {
            method: 'POST',
            headers: {
                'content-type': 'application/json',
                accept: 'application/json, text/event-stream',
                'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
            },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
            signal: AbortSignal.timeout(REQUEST_TIMEOUT),
        });
        await response.body?.cancel();
        assert.equal(response.status, 400);
    });
});
