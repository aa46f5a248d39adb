#!/usr/bin/env node
// Reference MCP server for validating the e2e harness (run-conformance.sh, sdk-client.test.mjs)
// before crankd's /mcp endpoint exists, and a candidate upstream fixture for crankd later.
//
// Built only from the official TypeScript SDK. createServer() builds one McpServer with every
// fixture; two transports share it:
//
//   node reference-server.mjs PORT      Streamable HTTP (PORT 0 picks a free port)
//   node reference-server.mjs --stdio   stdio: one McpServer on stdin/stdout
//
// HTTP: StreamableHTTPServerTransport, stateful sessions (one McpServer per session), resumable SSE
// streams (an in-memory event store), Host and Origin validation (DNS rebinding), bound to
// 127.0.0.1 only. Prints exactly one line on stdout once it listens:
// "listening http://127.0.0.1:PORT/mcp". Stops on SIGTERM/SIGINT.
//
// stdio: StdioServerTransport. stdout carries nothing but JSON-RPC (console.log is sent to stderr);
// diagnostics go to stderr, and "fixture ready" is printed there once connected. Stops when stdin
// ends, and on SIGTERM/SIGINT. The fixtures behave as over HTTP, except where HTTP is needed:
//   - test_reconnection has no SSE stream to close (extra.closeSSEStream is undefined), so it just
//     answers "Reconnection test completed" after the same 300 ms. A gateway in front that wants
//     SEP-1699 close-and-resume must do it on its own downstream stream.
//   - logs, progress and server-to-client requests (sampling, elicitation) made during a call are
//     written to stdout in order, interleaved with other traffic: relatedRequestId, which picks the
//     POST SSE stream over HTTP, has no effect. logging/setLevel filters as over HTTP.
//   - resources/subscribe records the URI and sends no notifications/resources/updated (as over
//     HTTP; no conformance scenario waits for one).
//
// Tools:
//   echo {text}                   returns text back as one text block
//   echo_header {name}            returns "NAME: VALUE" of the HTTP request header NAME that
//                                 carried the call (over stdio: "NAME: "), as an upstream that
//                                 echoes what it received would
//   slow_progress {steps, delay_ms}
//                                 sends notifications/progress 1..steps (total=steps), one every
//                                 delay_ms, when the request carries a progressToken; stops when
//                                 cancelled; returns "completed N steps"
//   subscribed_resources          returns the URIs subscribed to (resources/subscribe) as JSON
//   touch_resource {uri}          sends notifications/resources/updated for uri when it is
//                                 subscribed to; returns "touched" or "not subscribed"
// plus the fixtures the conformance suite's server scenarios call (tests/e2e/README.md lists them).

import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const HOST = '127.0.0.1';
const LOCAL_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

// --- in-memory event store: event ids encode their stream, so a GET with Last-Event-ID resumes
// exactly that stream and never replays another stream's messages ----------------------------------
class MemoryEventStore {
    #events = new Map(); // eventId -> {streamId, message}
    #seq = 0;
    async storeEvent(streamId, message) {
        const eventId = `${streamId}_${String(++this.#seq).padStart(10, '0')}`;
        this.#events.set(eventId, { streamId, message });
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
            if (eventId === lastEventId) {
                after = true;
                continue;
            }
            // Priming events are stored as {} and are not replayed.
            if (after && streamId === entry.streamId && Object.keys(message).length > 0) {
                await send(eventId, message);
            }
        }
        return entry.streamId;
    }
}

// --- fixture data ------------------------------------------------------------------------------
// 1x1 red PNG and a 1-sample 8 kHz mono 8-bit WAV.
const PNG_1X1 =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV_TINY = Buffer.concat([
    Buffer.from('RIFF'), u32(37), Buffer.from('WAVEfmt '), u32(16), u16(1), u16(1), u32(8000),
    u32(8000), u16(1), u16(8), Buffer.from('data'), u32(1), Buffer.from([0x80]),
]).toString('base64');
function u32(n) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
}
function u16(n) {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(n);
    return b;
}

const JSON_SCHEMA_2020_12_TOOL = 'json_schema_2020_12_tool';
const JSON_SCHEMA_2020_12 = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
        address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
    },
    properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false,
};

const text = (t) => ({ content: [{ type: 'text', text: t }] });

// Sleeps ms, rejecting early when the request is cancelled.
async function pause(ms, signal) {
    await sleep(ms, undefined, { signal });
}

async function progress(extra, progress, total, message) {
    const progressToken = extra._meta?.progressToken;
    if (progressToken === undefined) return;
    await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken, progress, total, ...(message ? { message } : {}) },
    });
}

// A log notification tied to the request, so it travels on the request's POST SSE stream, filtered
// by the level the client set with logging/setLevel.
async function log(server, extra, level, data) {
    if (server.server.isMessageIgnored?.(level, extra.sessionId)) return;
    await extra.sendNotification({ method: 'notifications/message', params: { level, logger: 'reference', data } });
}

function createServer() {
    const server = new McpServer(
        { name: 'crank-e2e-reference', version: '1.0.0' },
        {
            capabilities: {
                logging: {},
                completions: {},
                resources: { subscribe: true, listChanged: true },
                prompts: { listChanged: true },
                tools: { listChanged: true },
            },
        },
    );

    // --- the tools the SDK e2e tests use -----------------------------------------------------------
    server.registerTool(
        'echo',
        { description: 'Returns its text argument unchanged', inputSchema: { text: z.string() } },
        async ({ text: t }) => text(t),
    );
    server.registerTool(
        'echo_header',
        { description: 'Returns one HTTP request header of the call', inputSchema: { name: z.string() } },
        async ({ name }, extra) => text(`${name}: ${extra.requestInfo?.headers?.[name.toLowerCase()] ?? ''}`),
    );
    server.registerTool(
        'echo_trace',
        { description: "Returns the W3C trace context of the call's _meta" },
        async (extra) => text(`traceparent: ${extra._meta?.traceparent ?? ''}; tracestate: ${extra._meta?.tracestate ?? ''}`),
    );
    server.registerTool(
        'slow_progress',
        {
            description: 'Sends one progress notification per step, delay_ms apart, then completes',
            inputSchema: { steps: z.number().int().min(1).max(1000), delay_ms: z.number().int().min(0).max(60000) },
        },
        async ({ steps, delay_ms }, extra) => {
            for (let i = 1; i <= steps; i++) {
                try {
                    await pause(delay_ms, extra.signal);
                } catch (err) {
                    console.error(`slow_progress: cancelled after ${i - 1}/${steps} steps`);
                    throw err;
                }
                await progress(extra, i, steps, `step ${i}/${steps}`);
            }
            return text(`completed ${steps} steps`);
        },
    );

    // A 2025-era upstream whose result carries the members a 2026-07-28 server sets itself
    // (crankd must not pass them on: issue 45).
    server.registerTool('leaky_result_members', { description: 'Returns 2026 result members' }, async () => ({
        ...text('leaky'),
        resultType: 'input_required',
        inputRequests: { q: { method: 'sampling/createMessage', params: {} } },
        ttlMs: 86400000,
        cacheScope: 'public',
    }));

    // --- conformance fixtures: tools -----------------------------------------------------------------
    server.registerTool('test_simple_text', { description: 'Returns simple text' }, async () =>
        text('This is a simple text response for testing.'),
    );
    server.registerTool('test_image_content', { description: 'Returns an image' }, async () => ({
        content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }],
    }));
    server.registerTool('test_audio_content', { description: 'Returns audio' }, async () => ({
        content: [{ type: 'audio', data: WAV_TINY, mimeType: 'audio/wav' }],
    }));
    server.registerTool('test_embedded_resource', { description: 'Returns an embedded resource' }, async () => ({
        content: [
            {
                type: 'resource',
                resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
            },
        ],
    }));
    server.registerTool('test_multiple_content_types', { description: 'Returns text, image and resource' }, async () => ({
        content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
            {
                type: 'resource',
                resource: {
                    uri: 'test://mixed-content-resource',
                    mimeType: 'application/json',
                    text: JSON.stringify({ test: 'data', value: 123 }),
                },
            },
        ],
    }));
    server.registerTool('test_tool_with_logging', { description: 'Logs three messages while running' }, async (extra) => {
        await log(server, extra, 'info', 'Tool execution started');
        await pause(50, extra.signal);
        await log(server, extra, 'info', 'Tool processing data');
        await pause(50, extra.signal);
        await log(server, extra, 'info', 'Tool execution completed');
        return text('Tool with logging executed successfully');
    });
    server.registerTool('test_error_handling', { description: 'Always fails' }, async () => ({
        isError: true,
        content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
    }));
    server.registerTool('test_tool_with_progress', { description: 'Reports progress 0, 50, 100 of 100' }, async (extra) => {
        await progress(extra, 0, 100);
        await pause(50, extra.signal);
        await progress(extra, 50, 100);
        await pause(50, extra.signal);
        await progress(extra, 100, 100);
        return text('Tool with progress executed successfully');
    });
    server.registerTool(
        'test_sampling',
        { description: 'Asks the client to sample an LLM', inputSchema: { prompt: z.string() } },
        async ({ prompt }, extra) => {
            const result = await server.server.createMessage(
                { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 },
                { relatedRequestId: extra.requestId },
            );
            const answer = result.content?.type === 'text' ? result.content.text : JSON.stringify(result.content);
            return text(`LLM response: ${answer}`);
        },
    );
    server.registerTool(
        'test_elicitation',
        { description: 'Asks the user for input', inputSchema: { message: z.string() } },
        async ({ message }, extra) => {
            const result = await server.server.elicitInput(
                {
                    message,
                    requestedSchema: {
                        type: 'object',
                        properties: {
                            username: { type: 'string', description: "User's response" },
                            email: { type: 'string', description: "User's email address" },
                        },
                        required: ['username', 'email'],
                    },
                },
                { relatedRequestId: extra.requestId },
            );
            return text(`User response: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
        },
    );
    server.registerTool('test_list_roots', { description: "Asks the client for its roots" }, async (extra) => {
        const result = await server.server.listRoots(undefined, { relatedRequestId: extra.requestId });
        return text(`Roots: ${result.roots.map((r) => r.uri).join(',')}`);
    });
    server.registerTool('test_elicitation_sep1034_defaults', { description: 'Elicitation with defaults' }, async (extra) => {
        const result = await server.server.elicitInput(
            {
                message: 'Please review and update the form fields with defaults',
                requestedSchema: {
                    type: 'object',
                    properties: {
                        name: { type: 'string', description: 'User name', default: 'John Doe' },
                        age: { type: 'integer', description: 'User age', default: 30 },
                        score: { type: 'number', description: 'User score', default: 95.5 },
                        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
                        verified: { type: 'boolean', description: 'Verification status', default: true },
                    },
                    required: [],
                },
            },
            { relatedRequestId: extra.requestId },
        );
        return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    });
    server.registerTool('test_elicitation_sep1330_enums', { description: 'Elicitation with every enum form' }, async (extra) => {
        const result = await server.server.elicitInput(
            {
                message: 'Please select options from the enum fields',
                requestedSchema: {
                    type: 'object',
                    properties: {
                        untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
                        titledSingle: {
                            type: 'string',
                            description: 'Titled single-select',
                            oneOf: [
                                { const: 'value1', title: 'First Option' },
                                { const: 'value2', title: 'Second Option' },
                                { const: 'value3', title: 'Third Option' },
                            ],
                        },
                        legacyEnum: {
                            type: 'string',
                            description: 'Legacy titled enum',
                            enum: ['opt1', 'opt2', 'opt3'],
                            enumNames: ['Option One', 'Option Two', 'Option Three'],
                        },
                        untitledMulti: {
                            type: 'array',
                            description: 'Untitled multi-select',
                            items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
                        },
                        titledMulti: {
                            type: 'array',
                            description: 'Titled multi-select',
                            items: {
                                anyOf: [
                                    { const: 'value1', title: 'First Choice' },
                                    { const: 'value2', title: 'Second Choice' },
                                    { const: 'value3', title: 'Third Choice' },
                                ],
                            },
                        },
                    },
                    required: [],
                },
            },
            { relatedRequestId: extra.requestId },
        );
        return text(`Elicitation completed: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
    });
    server.registerTool('test_reconnection', { description: 'Closes its SSE stream mid-call, then answers' }, async (extra) => {
        await pause(100, extra.signal);
        // SEP-1699: over HTTP the client must reconnect with GET + Last-Event-ID. Over stdio there is
        // no stream to close (closeSSEStream is undefined), and the call just answers.
        extra.closeSSEStream?.();
        await pause(200, extra.signal);
        return text('Reconnection test completed');
    });
    // Registered with an empty zod shape; tools/list below substitutes the raw 2020-12 schema,
    // which zod cannot express ($anchor, if/then/else) and McpServer would otherwise regenerate.
    server.registerTool(
        JSON_SCHEMA_2020_12_TOOL,
        { description: 'Tool with JSON Schema 2020-12 features', inputSchema: z.object({}).passthrough() },
        async (args) => text(`json_schema_2020_12_tool received ${JSON.stringify(args)}`),
    );
    const handlers = server.server._requestHandlers;
    const listTools = handlers?.get('tools/list');
    if (!listTools) throw new Error('reference-server: SDK internals changed (no tools/list handler to wrap)');
    handlers.set('tools/list', async (request, extra) => {
        const result = await listTools(request, extra);
        for (const tool of result.tools) {
            if (tool.name === JSON_SCHEMA_2020_12_TOOL) tool.inputSchema = JSON_SCHEMA_2020_12;
        }
        return result;
    });

    // --- conformance fixtures: resources -----------------------------------------------------------
    server.registerResource(
        'static-text',
        'test://static-text',
        { description: 'A static text resource', mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] }),
    );
    server.registerResource(
        'static-binary',
        'test://static-binary',
        { description: 'A static binary resource', mimeType: 'image/png' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG_1X1 }] }),
    );
    server.registerResource(
        'template',
        new ResourceTemplate('test://template/{id}/data', { list: undefined }),
        { description: 'A resource template with an id parameter', mimeType: 'application/json' },
        async (uri, { id }) => ({
            contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }],
        }),
    );
    // A read that takes {ms} milliseconds (at most 60000; ends early when cancelled): the slow
    // upstream of the bounds on catalog requests (tests/integration/federation_test.cpp).
    server.registerResource(
        'slow',
        new ResourceTemplate('test://slow/{ms}', { list: undefined }),
        { description: 'A resource whose read takes ms milliseconds', mimeType: 'text/plain' },
        async (uri, { ms }, extra) => {
            const wait = Math.min(Number.parseInt(ms, 10) || 0, 60000);
            await pause(wait, extra.signal);
            return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `read after ${wait} ms` }] };
        },
    );
    server.registerResource(
        'watched-resource',
        'test://watched-resource',
        { description: 'A resource that can be subscribed to', mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content' }] }),
    );
    const subscriptions = new Set();
    server.server.setRequestHandler(
        z.object({ method: z.literal('resources/subscribe'), params: z.object({ uri: z.string() }).passthrough() }),
        async (request) => {
            subscriptions.add(request.params.uri);
            return {};
        },
    );
    server.server.setRequestHandler(
        z.object({ method: z.literal('resources/unsubscribe'), params: z.object({ uri: z.string() }).passthrough() }),
        async (request) => {
            subscriptions.delete(request.params.uri);
            return {};
        },
    );
    server.registerTool('subscribed_resources', { description: 'The URIs subscribed to, as JSON' }, async () =>
        text(JSON.stringify([...subscriptions].sort())),
    );
    server.registerTool(
        'touch_resource',
        { description: 'Sends resources/updated for a subscribed URI', inputSchema: { uri: z.string() } },
        async ({ uri }) => {
            if (!subscriptions.has(uri)) return text('not subscribed');
            await server.server.sendResourceUpdated({ uri });
            return text('touched');
        },
    );

    // --- conformance fixtures: prompts ---------------------------------------------------------------
    server.registerPrompt('test_simple_prompt', { description: 'A simple prompt without arguments' }, async () => ({
        messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }],
    }));
    server.registerPrompt(
        'test_prompt_with_arguments',
        { description: 'A prompt with two arguments', argsSchema: { arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') } },
        async ({ arg1, arg2 }) => ({
            messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }],
        }),
    );
    server.registerPrompt(
        'test_prompt_with_embedded_resource',
        { description: 'A prompt with an embedded resource', argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') } },
        async ({ resourceUri }) => ({
            messages: [
                { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
                { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
            ],
        }),
    );
    server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, async () => ({
        messages: [
            { role: 'user', content: { type: 'image', data: PNG_1X1, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
        ],
    }));

    // input-required-result-non-tool-request (2026-07-28): a prompt that asks the user while it is
    // got; through crankd a 2026 client answers it in an input_required round (the MRTR bridge).
    server.registerPrompt('test_input_required_result_prompt', { description: 'Asks for the context to use' }, async (extra) => {
        const result = await server.server.elicitInput(
            {
                message: 'What context should the prompt use?',
                requestedSchema: { type: 'object', properties: { context: { type: 'string' } }, required: ['context'] },
            },
            { relatedRequestId: extra.requestId },
        );
        return { messages: [{ role: 'user', content: { type: 'text', text: `Context: ${result.content?.context ?? '(none)'}` } }] };
    });

    // server-stateless (2026-07-28): a hook that changes the prompt list, so that a listen through
    // crankd sees notifications/prompts/list_changed. It adds a prompt, then removes it, in turn.
    let triggeredPrompt = null;
    server.registerTool(
        'test_trigger_prompt_change',
        { description: 'Adds or removes the prompt test_triggered_prompt (prompts/list_changed)' },
        async () => {
            if (triggeredPrompt) {
                triggeredPrompt.remove();
                triggeredPrompt = null;
            } else {
                triggeredPrompt = server.registerPrompt('test_triggered_prompt', { description: 'Added by test_trigger_prompt_change' }, async () => ({
                    messages: [{ role: 'user', content: { type: 'text', text: 'triggered' } }],
                }));
            }
            return { content: [{ type: 'text', text: triggeredPrompt ? 'prompt added' : 'prompt removed' }] };
        },
    );

    // completion/complete: McpServer answers it for prompts registered with completable() args;
    // a plain handler keeps this fixture independent of that API.
    server.server.setRequestHandler(
        z.object({ method: z.literal('completion/complete'), params: z.object({}).passthrough() }),
        async (request) => {
            const value = request.params.argument?.value ?? '';
            const values = ['paris', 'park', 'party'].filter((v) => v.startsWith(value));
            return { completion: { values, total: values.length, hasMore: false } };
        },
    );

    return server;
}

// --- HTTP ----------------------------------------------------------------------------------------
function originAllowed(origin) {
    if (origin === undefined) return true;
    try {
        return LOCAL_HOSTNAMES.has(new URL(origin).hostname);
    } catch {
        return false;
    }
}

function jsonError(res, status, code, message) {
    res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

function serveHttp(port) {

    // createMcpExpressApp validates Host (localhost, 127.0.0.1, [::1]) when bound to 127.0.0.1.
    const app = createMcpExpressApp({ host: HOST });
    app.use((req, res, next) => {
        if (!originAllowed(req.headers.origin)) return jsonError(res, 403, -32000, `Invalid Origin: ${req.headers.origin}`);
        next();
    });

    const sessions = new Map(); // sessionId -> transport

    app.post('/mcp', async (req, res) => {
        const sessionId = req.headers['mcp-session-id'];
        let transport = sessionId === undefined ? undefined : sessions.get(sessionId);
        if (sessionId !== undefined && !transport) return jsonError(res, 404, -32001, 'Session not found');
        if (!transport) {
            if (!isInitializeRequest(req.body)) return jsonError(res, 400, -32000, 'Bad Request: No valid session ID provided');
            transport = new StreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                eventStore: new MemoryEventStore(),
                retryInterval: 1000,
                onsessioninitialized: (id) => sessions.set(id, transport),
                onsessionclosed: (id) => sessions.delete(id),
            });
            transport.onclose = () => {
                if (transport.sessionId) sessions.delete(transport.sessionId);
            };
            await createServer().connect(transport);
        }
        await transport.handleRequest(req, res, req.body);
    });

    const getOrDelete = async (req, res) => {
        const sessionId = req.headers['mcp-session-id'];
        if (sessionId === undefined) return jsonError(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
        const transport = sessions.get(sessionId);
        if (!transport) return jsonError(res, 404, -32001, 'Session not found');
        await transport.handleRequest(req, res);
    };
    app.get('/mcp', getOrDelete);
    app.delete('/mcp', getOrDelete);

    const httpServer = app.listen(port, HOST, () => {
        console.log(`listening http://${HOST}:${httpServer.address().port}/mcp`);
    });
    httpServer.on('error', (err) => {
        console.error(`reference-server: ${err.message}`);
        process.exit(1);
    });

    const stop = async () => {
        for (const transport of sessions.values()) await transport.close().catch(() => {});
        httpServer.closeAllConnections?.();
        httpServer.close(() => process.exit(0));
        setTimeout(() => process.exit(0), 2000).unref();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
}

// --- stdio ---------------------------------------------------------------------------------------
async function serveStdio() {
    // stdout is the JSON-RPC channel: nothing else may be written to it.
    console.log = console.error;
    console.info = console.error;

    const server = createServer();
    const transport = new StdioServerTransport();
    let stopping = false;
    const stop = async (why) => {
        if (stopping) return;
        stopping = true;
        console.error(`reference-server: stopping (${why})`);
        await server.close().catch(() => {});
        process.exit(0);
    };
    transport.onerror = (err) => console.error(`reference-server: ${err.message}`);
    process.stdin.on('end', () => stop('stdin closed'));
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));

    await server.connect(transport);
    console.error('fixture ready');
}

function main() {
    if (process.argv[2] === '--stdio') {
        serveStdio().catch((err) => {
            console.error(`reference-server: ${err.message}`);
            process.exit(1);
        });
        return;
    }
    const port = Number(process.argv[2] ?? 0);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
        console.error('usage: reference-server.mjs PORT | reference-server.mjs --stdio');
        process.exit(2);
    }
    serveHttp(port);
}

main();
