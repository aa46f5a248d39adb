// The modern reference server: every fixture the official conformance suite's server scenarios
// call, on the official TypeScript SDK v2 (@modelcontextprotocol/server), so that the suite passes
// against it called directly and, later, through crankd in front of it.
//
//   node modern-reference-server.mjs http [PORT] [--modern-only]
//        Streamable HTTP on 127.0.0.1 only (PORT 0 or none: a free port). Prints exactly one line
//        on stdout once it listens: "listening http://127.0.0.1:PORT/mcp". Stops on SIGTERM/SIGINT.
//   node modern-reference-server.mjs stdio [--modern-only]
//        serveStdio: stdout carries only JSON-RPC, diagnostics go to stderr. Stops when stdin
//        ends, and on SIGTERM/SIGINT.
//
// Eras. 2026-07-28 requests are served by createMcpHandler (one McpServer per request from one
// factory; subscriptions/listen streams get the list changes). 2025-era traffic (initialize, a
// session id, GET/DELETE) is routed with the SDK's isLegacyRequest to a sessionful
// WebStandardStreamableHTTPServerTransport per session (in-memory event store, resumable POST and
// GET streams, DELETE; at most 256 sessions), built from the same factory: createMcpHandler's own
// 2025 fallback is stateless (no session, no GET stream, 405 on GET/DELETE, no server-to-client
// request), which server-session-lifecycle, server-sse-polling, resources-subscribe and the
// sampling/elicitation scenarios need. --modern-only refuses 2025 traffic (-32022; serveStdio's
// legacy: 'reject'). Every HTTP request is checked first: Host and Origin must name localhost,
// 127.0.0.1 or [::1] (the SDK's hostHeaderValidationResponse / originValidationResponse), else 403.
//
// Fixtures (modern-reference-fixtures.mjs):
//   about {}: names the server; first in a gateway's list sorted by name (crankd's), where
//     http-header-validation calls the first tool listed with no arguments.
//   2025 and 2026 scenarios: tools test_simple_text, test_image_content, test_audio_content,
//     test_embedded_resource, test_multiple_content_types, test_tool_with_logging (3 logs; at
//     2026 only when the request sets a logLevel), test_error_handling, test_tool_with_progress,
//     test_sampling {prompt}, test_elicitation {message}, test_elicitation_sep1034_defaults,
//     test_elicitation_sep1330_enums, test_reconnection, json_schema_2020_12_tool, echo {text},
//     slow_progress {steps, delay_ms}; resources test://static-text, test://static-binary, the
//     template test://template/{id}/data, test://watched-resource (resources/subscribe and
//     unsubscribe on 2025 sessions); prompts test_simple_prompt, test_prompt_with_arguments,
//     test_prompt_with_embedded_resource, test_prompt_with_image; completion/complete.
//     Sampling and elicitation are input_required results: a 2026 client answers them in a retry,
//     a 2025 session gets real server-to-client requests from the SDK's legacy shim.
//   2026 multi round trip (input-required-result-*): tools test_input_required_result_elicitation,
//     _sampling, _list_roots, _request_state, _multiple_inputs, _multi_round, _tampered_state,
//     _capabilities, and the prompt test_input_required_result_prompt. Every requestState is
//     sealed with the SDK's createRequestStateCodec (HMAC, a per-process key) and checked by its
//     requestState.verify seam, so a forged one is refused with -32602.
//   server-stateless: test_missing_capability (-32021 without sampling), test_logging_tool,
//     test_streaming_elicitation, test_trigger_tool_change / test_trigger_prompt_change (toggle
//     test_triggered_tool / test_triggered_prompt); route_echo {region, priority} declares
//     x-mcp-header (Mcp-Param-Region, Mcp-Param-Priority), for http-custom-header-*.
//   Tasks extension (io.modelcontextprotocol/tasks, advertised under capabilities.extensions):
//     greet {name}, slow_compute {seconds, label} (a task only if the request declares the
//     extension), failing_job, protocol_error_job, confirm_delete {filename}, multi_input,
//     test_tool_with_task (tasks only: -32021 without the extension), tasks/get, tasks/update,
//     tasks/cancel. A 2025-era request runs every one of them synchronously.
//
// What it cannot do, and the SDK v2 limitations it works around:
//   - The SDK has no server runtime for tasks ("task methods are 2025-11-25 wire vocabulary with
//     no SDK runtime"): the one here is in memory, on the SDK's custom request handlers; it sends
//     no task status notifications (the listen bus carries only the four list/resource events).
//   - McpServer turns anything a tool callback throws into an isError result, so the -32021 gate of
//     the task-only tools wraps the tools/call handler McpServer installed (an SDK internal).
//   - stdio has no SSE stream, so test_reconnection only waits there (server-sse-polling is an
//     HTTP scenario).
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import {
    McpServer,
    WebStandardStreamableHTTPServerTransport,
    createMcpHandler,
    hostHeaderValidationResponse,
    isLegacyRequest,
    localhostAllowedHostnames,
    localhostAllowedOrigins,
    originValidationResponse
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { TASKS_EXTENSION, registerFixtures, setListChangeNotifier, stateCodec } from './modern-reference-fixtures.mjs';

const args = process.argv.slice(2);
const mode = args[0] ?? 'http';
const modernOnly = args.includes('--modern-only');
const HOST = '127.0.0.1';
const MAX_SESSIONS = 256;
const SESSION_IDLE_MS = 10 * 60_000;
const MAX_BODY = 4 * 1024 * 1024;

function factory(ctx = {}) {
    const era = ctx.era === 'legacy' ? 'legacy' : 'modern';
    const server = new McpServer(
        { name: 'crank-modern-reference', version: '1.0.0' },
        {
            capabilities: {
                logging: {},
                completions: {},
                resources: { subscribe: true, listChanged: true },
                prompts: { listChanged: true },
                tools: { listChanged: true },
                extensions: { [TASKS_EXTENSION]: {} }
            },
            instructions: 'The conformance fixtures, on the TypeScript SDK v2',
            requestState: { verify: (state, c) => stateCodec.verify(state, c) },
            inputRequired: { maxRounds: 8, roundTimeoutMs: 120_000 } // the 2025 shim's server-to-client requests
        }
    );
    server.server.onerror = (error) => console.error(`modern-reference-server: ${error.message}`);
    registerFixtures(server, era, era === 'legacy' || ctx.requestInfo === undefined);
    return server;
}

// --- 2025 sessions ---------------------------------------------------------------------------------
class MemoryEventStore {
    #events = new Map(); // eventId -> {streamId, message}
    #seq = 0;
    async storeEvent(streamId, message) {
        const eventId = `${streamId}_${String(++this.#seq).padStart(10, '0')}`;
        this.#events.set(eventId, { streamId, message });
        if (this.#events.size > 10_000) this.#events.delete(this.#events.keys().next().value);
        return eventId;
    }
    async getStreamIdForEventId(eventId) {
        return this.#events.get(eventId)?.streamId;
    }
    async replayEventsAfter(lastEventId, { send }) {
        const entry = this.#events.get(lastEventId);
        if (!entry) return '';
        let after = false;
        for (const [eventId, { streamId, message }] of this.#events) {
            if (eventId === lastEventId) after = true;
            else if (after && streamId === entry.streamId && Object.keys(message).length > 0) await send(eventId, message);
        }
        return entry.streamId;
    }
}

const sessions = new Map(); // sessionId -> {transport, server, used}

function jsonError(status, code, message) {
    return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
        status,
        headers: { 'content-type': 'application/json' }
    });
}

async function closeSession(id) {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.server.close().catch(() => {});
}

async function serveLegacy(request) {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
        const session = sessions.get(sessionId);
        if (!session) return jsonError(404, -32001, 'Session not found');
        session.used = Date.now();
        return session.transport.handleRequest(request);
    }
    if (request.method !== 'POST') return jsonError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    let body;
    try {
        body = await request.clone().json();
    } catch {
        return jsonError(400, -32700, 'Parse error');
    }
    if (body?.method !== 'initialize') return jsonError(400, -32000, 'Bad Request: No valid session ID provided');
    for (const [id, s] of sessions) if (Date.now() - s.used > SESSION_IDLE_MS) await closeSession(id);
    while (sessions.size >= MAX_SESSIONS) await closeSession(sessions.keys().next().value);
    const server = factory({ era: 'legacy' });
    const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new MemoryEventStore(),
        retryInterval: 1000,
        onsessioninitialized: (id) => sessions.set(id, { transport, server, used: Date.now() }),
        onsessionclosed: (id) => void closeSession(id)
    });
    await server.connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
}

// --- HTTP ------------------------------------------------------------------------------------------
function serveHttp(port) {
    const modern = createMcpHandler(factory, {
        legacy: 'reject',
        onerror: (error) => console.error(`modern-reference-server: ${error.message}`)
    });
    setListChangeNotifier(modern.notify);
    const allowedHosts = localhostAllowedHostnames();
    const allowedOrigins = localhostAllowedOrigins();

    const httpServer = http.createServer(async (req, res) => {
        const abort = new AbortController();
        res.on('close', () => abort.abort());
        try {
            const chunks = [];
            let size = 0;
            for await (const chunk of req) {
                size += chunk.length;
                if (size > MAX_BODY) return void res.writeHead(413).end();
                chunks.push(chunk);
            }
            if (!req.url.startsWith('/')) return void res.writeHead(400).end();
            const headers = new Headers();
            for (const [name, value] of Object.entries(req.headers)) {
                for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
            }
            const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
            const request = new Request(`http://${HOST}${req.url}`, {
                method: req.method,
                headers,
                body: hasBody ? Buffer.concat(chunks) : undefined,
                signal: abort.signal
            });
            let response =
                hostHeaderValidationResponse(request, allowedHosts) ?? originValidationResponse(request, allowedOrigins);
            if (!response && new URL(request.url).pathname !== '/mcp') response = new Response('Not Found', { status: 404 });
            if (!response) {
                const legacy = !modernOnly && (await isLegacyRequest(request));
                response = legacy ? await serveLegacy(request) : await modern.fetch(request);
            }
            res.writeHead(response.status, Object.fromEntries(response.headers));
            res.flushHeaders();
            if (response.body) {
                const reader = response.body.getReader();
                abort.signal.addEventListener('abort', () => reader.cancel().catch(() => {}), { once: true });
                for (;;) {
                    const { value, done } = await reader.read();
                    if (done) break;
                    res.write(value);
                }
            }
            res.end();
        } catch (error) {
            if (!abort.signal.aborted) console.error(`modern-reference-server: ${error.message}`);
            if (!res.headersSent) res.writeHead(500);
            res.end();
        }
    });
    httpServer.on('error', (error) => {
        console.error(`modern-reference-server: ${error.message}`);
        process.exit(1);
    });
    httpServer.listen(port, HOST, () => {
        console.log(`listening http://${HOST}:${httpServer.address().port}/mcp`);
    });

    let stopping = false;
    const stop = async () => {
        if (stopping) return;
        stopping = true;
        setTimeout(() => process.exit(0), 2000).unref();
        httpServer.close(() => process.exit(0));
        httpServer.closeAllConnections();
        for (const id of [...sessions.keys()]) await closeSession(id);
        await modern.close().catch(() => {});
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
}

// --- stdio -----------------------------------------------------------------------------------------
function serveOnStdio() {
    console.log = console.error; // stdout is the JSON-RPC channel
    console.info = console.error;
    const handle = serveStdio(factory, {
        legacy: modernOnly ? 'reject' : 'serve',
        onerror: (error) => console.error(`modern-reference-server: ${error.message}`)
    });
    let stopping = false;
    const stop = async (why) => {
        if (stopping) return;
        stopping = true;
        console.error(`modern-reference-server: stopping (${why})`);
        setTimeout(() => process.exit(0), 2000).unref();
        await handle.close().catch(() => {});
        process.exit(0);
    };
    process.stdin.on('end', () => stop('stdin closed'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
}

if (mode === 'stdio') {
    serveOnStdio();
} else if (mode === 'http') {
    const port = Number(args[1] && !args[1].startsWith('--') ? args[1] : 0);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
        console.error('usage: modern-reference-server.mjs http [PORT] [--modern-only] | stdio [--modern-only]');
        process.exit(2);
    }
    serveHttp(port);
} else {
    console.error('usage: modern-reference-server.mjs http [PORT] [--modern-only] | stdio [--modern-only]');
    process.exit(2);
}
