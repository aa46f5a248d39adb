// Federation through the official TypeScript SDK client: crankd (CRANK_EXTRA_CONFIG, see
// tests/CMakeLists.txt) fronts two stdio upstreams,
//   - "everything": @modelcontextprotocol/server-everything, naming prefix "everything" + "_",
//   - "fixture": reference-server.mjs --stdio, naming keep,
// and this file checks that what they offer reaches an MCP client of crankd unchanged (modulo the
// prefix): tools, calls and everything a call carries (progress, cancellation, logs, sampling,
// elicitation, roots), resources (with templates and subscriptions), prompts, completions and
// Tasks. Where it can, a test compares crankd's answer with the upstream's own answer, read directly
// over stdio with the SDK's StdioClientTransport (everything-stdio.mjs).
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-federation.test.mjs

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
    CallToolResultSchema,
    CreateMessageRequestSchema,
    CreateTaskResultSchema,
    ElicitRequestSchema,
    ListRootsRequestSchema,
    LoggingMessageNotificationSchema,
    McpError,
    RELATED_TASK_META_KEY,
    ResourceUpdatedNotificationSchema,
    TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';

import { allPages, connectEverything, connectFixture, wireLog } from './everything-stdio.mjs';

const URL_ENV = process.env.CRANK_MCP_URL;
const TIMEOUT = 20_000;
const OPTS = { timeout: TIMEOUT };
const EV = 'everything_';

const clients = [];

/** A downstream client of crankd that records what crankd sends it. */
async function connect(name, { roots = [], elicit, sample } = {}) {
    const client = new Client({ name, version: '1.0.0' }, {
        capabilities: { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } },
    });
    const seen = { sampling: [], elicitation: [], roots: [], logs: [], updated: [], taskStatus: [], errors: [] };
    client.onerror = (error) => { seen.errors.push(`${new Date().toISOString()} ${error?.message ?? error}`); };
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
        seen.sampling.push(request.params);
        if (!sample) throw new McpError(-32603, `${name} was not expecting sampling/createMessage`);
        return sample(request.params);
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
        seen.elicitation.push(request.params);
        if (!elicit) return { action: 'decline' };
        return elicit(request.params);
    });
    client.setRequestHandler(ListRootsRequestSchema, async (request) => {
        seen.roots.push(request.params ?? {});
        return { roots };
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => { seen.logs.push(n.params); });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { seen.updated.push(n.params); });
    client.setNotificationHandler(TaskStatusNotificationSchema, (n) => { seen.taskStatus.push(n.params); });
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_ENV)), OPTS);
    clients.push(client);
    return { client, seen, wire: wireLog(client) };
}

/** Waits (bounded) until `predicate()` is truthy and returns it. */
async function waitFor(what, predicate, { timeoutMs = 10_000, stepMs = 25 } = {}) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
        const value = predicate();
        if (value) return value;
        if (Date.now() > deadline) assert.fail(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await sleep(stepMs);
    }
}

async function rejectsWithCode(promise, codes, message) {
    await assert.rejects(promise, (error) => {
        assert.ok(error instanceof McpError, `an McpError, got ${error}`);
        assert.ok([codes].flat().includes(error.code), `code ${error.code} (${error.message}), expected ${codes}`);
        if (message) assert.match(error.message, message);
        return true;
    });
}

const textOf = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const listTools = (client) => allPages(async (cursor) => {
    const r = await client.listTools(cursor ? { cursor } : undefined, OPTS);
    return { items: r.tools, nextCursor: r.nextCursor };
});
const listResources = (client) => allPages(async (cursor) => {
    const r = await client.listResources(cursor ? { cursor } : undefined, OPTS);
    return { items: r.resources, nextCursor: r.nextCursor };
});
const listTemplates = (client) => allPages(async (cursor) => {
    const r = await client.listResourceTemplates(cursor ? { cursor } : undefined, OPTS);
    return { items: r.resourceTemplates, nextCursor: r.nextCursor };
});
const listPrompts = (client) => allPages(async (cursor) => {
    const r = await client.listPrompts(cursor ? { cursor } : undefined, OPTS);
    return { items: r.prompts, nextCursor: r.nextCursor };
});

/** A resource's contents without the parts server-everything stamps with the time of day. */
function untimed(result) {
    return JSON.parse(JSON.stringify(result), (key, value) =>
        (key === 'text' || key === 'blob') && typeof value === 'string' && /created at|^UmVzb3VyY2Ug/.test(value)
            ? '<timestamped>' : value);
}

const SAMPLING_ANSWER = {
    model: 'crank-e2e-model', role: 'assistant', stopReason: 'endTurn',
    content: { type: 'text', text: 'pong from the e2e client' },
};
const CLIENT_ROOTS = [{ uri: 'file:///tmp/crank-e2e-root', name: 'crank e2e root' }];

after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
});

describe('federation: server-everything (everything_*) and the fixture (kept names) behind crankd',
    { timeout: 240_000 }, () => {
    let crank; let bystander; let everything; let fixture;

    before(async () => {
        assert.ok(URL_ENV, 'CRANK_MCP_URL must be set');
        // crankd answers /readyz 200 once every upstream's lists were fetched.
        const readyz = new URL('/readyz', URL_ENV);
        let last = 'no answer';
        const deadline = Date.now() + 30_000;
        for (;;) {
            try {
                const response = await fetch(readyz, { signal: AbortSignal.timeout(2_000) });
                last = `${response.status} ${await response.text()}`;
                if (response.status === 200) break;
            } catch (error) {
                last = String(error);
            }
            if (Date.now() > deadline) assert.fail(`${readyz} did not answer 200 within 30 s: ${last}`);
            await sleep(100);
        }
        [everything, fixture] = await Promise.all([connectEverything(), connectFixture()]);
        clients.push(everything, fixture);
        crank = await connect('crank-e2e-federation', {
            roots: CLIENT_ROOTS,
            sample: async () => SAMPLING_ANSWER,
            elicit: async (params) => {
                if (params.mode === 'url') return { action: 'accept' };
                if (params.requestedSchema?.properties?.interpretation) {
                    return { action: 'accept', content: { interpretation: 'programming' } };
                }
                if (params.requestedSchema?.properties?.username) {
                    return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
                }
                return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com', integer: 7 } };
            },
        });
        // Another client of the same crankd: it must never see what belongs to crank's calls.
        bystander = await connect('crank-e2e-federation-bystander', { roots: [{ uri: 'file:///nope', name: 'wrong' }] });
    });

    // --- tools ----------------------------------------------------------------------------------------

    it('tools/list: everything\'s tools as everything_<name>, the fixture\'s as they are, nothing else', async () => {
        const tools = await listTools(crank.client);
        const everythingTools = (await everything.listTools(undefined, OPTS)).tools;
        const fixtureTools = (await fixture.listTools(undefined, OPTS)).tools;
        assert.equal(everythingTools.length, 17, everythingTools.map((t) => t.name).join(' '));
        const expected = [...everythingTools.map((t) => EV + t.name), ...fixtureTools.map((t) => t.name)].sort();
        assert.deepEqual(tools.map((t) => t.name).sort(), expected);
        const byName = new Map(tools.map((t) => [t.name, t]));
        const essentials = ({ description, inputSchema, outputSchema }) => ({ description, inputSchema, outputSchema });
        for (const t of everythingTools) {
            assert.deepEqual(essentials(byName.get(EV + t.name)), essentials(t), `${EV}${t.name}`);
        }
        for (const t of fixtureTools) assert.deepEqual(essentials(byName.get(t.name)), essentials(t), t.name);
        assert.ok(byName.get(`${EV}get-structured-content`).outputSchema, 'an outputSchema is listed');
        assert.equal(byName.get(`${EV}simulate-research-query`).execution?.taskSupport, 'required');
    });

    it('tools/list: title, annotations and execution pass through unchanged too', async () => {
        const byName = new Map((await listTools(crank.client)).map((t) => [t.name, t]));
        for (const t of (await everything.listTools(undefined, OPTS)).tools) {
            assert.deepEqual({ ...byName.get(EV + t.name), name: t.name }, t, `${EV}${t.name}`);
        }
        for (const t of (await fixture.listTools(undefined, OPTS)).tools) assert.deepEqual(byName.get(t.name), t, t.name);
    });

    it('echo (fixture) and everything_echo are both there and each answers as its own server', async () => {
        const fromFixture = await crank.client.callTool({ name: 'echo', arguments: { text: 'héllo\n"fed"' } }, undefined, OPTS);
        assert.deepEqual(fromFixture, await fixture.callTool({ name: 'echo', arguments: { text: 'héllo\n"fed"' } }, undefined, OPTS));
        assert.deepEqual(fromFixture.content, [{ type: 'text', text: 'héllo\n"fed"' }]);
        const fromEverything = await crank.client.callTool({ name: `${EV}echo`, arguments: { message: 'héllo' } }, undefined, OPTS);
        assert.deepEqual(fromEverything, await everything.callTool({ name: 'echo', arguments: { message: 'héllo' } }, undefined, OPTS));
        assert.deepEqual(fromEverything.content, [{ type: 'text', text: 'Echo: héllo' }]);
        // Each upstream validates its own arguments: the fixture's echo has no `message`.
        const wrong = await crank.client.callTool({ name: 'echo', arguments: { message: 'x' } }, undefined, OPTS);
        assert.equal(wrong.isError, true, JSON.stringify(wrong));
    });

    it('tools/call: text, structured content, images, annotations, resource links and embedded resources unchanged', async () => {
        await listTools(crank.client); // the SDK then checks structuredContent against the outputSchema
        const calls = [
            ['get-sum', { a: 2, b: 3 }],
            ['get-structured-content', { location: 'Chicago' }],
            ['get-tiny-image', {}],
            ['get-annotated-message', { messageType: 'error', includeImage: true }],
            ['get-resource-links', { count: 4 }],
            ['get-resource-reference', { resourceType: 'Blob', resourceId: 3 }],
            ['get-resource-reference', { resourceType: 'Text', resourceId: 2 }],
        ];
        for (const [name, args] of calls) {
            const viaCrank = await crank.client.callTool({ name: EV + name, arguments: args }, undefined, OPTS);
            const direct = await everything.callTool({ name, arguments: args }, undefined, OPTS);
            assert.deepEqual(untimed(viaCrank), untimed(direct), `${name} ${JSON.stringify(args)}`);
            assert.equal(viaCrank.isError ?? false, false, name);
        }
        const sum = await crank.client.callTool({ name: `${EV}get-sum`, arguments: { a: 2, b: 3 } }, undefined, OPTS);
        assert.equal(textOf(sum), 'The sum of 2 and 3 is 5.');
        const weather = await crank.client.callTool({ name: `${EV}get-structured-content`, arguments: { location: 'Chicago' } }, undefined, OPTS);
        assert.deepEqual(Object.keys(weather.structuredContent).sort(), ['conditions', 'humidity', 'temperature']);
        assert.deepEqual(JSON.parse(weather.content[0].text), weather.structuredContent);
        const image = await crank.client.callTool({ name: `${EV}get-tiny-image`, arguments: {} }, undefined, OPTS);
        assert.deepEqual(image.content.map((c) => c.type), ['text', 'image', 'text']);
        assert.equal(image.content[1].mimeType, 'image/png');
        assert.ok(Buffer.from(image.content[1].data, 'base64').subarray(1, 4).equals(Buffer.from('PNG')));
        const links = await crank.client.callTool({ name: `${EV}get-resource-links`, arguments: { count: 4 } }, undefined, OPTS);
        assert.deepEqual(links.content.filter((c) => c.type === 'resource_link').map((c) => c.uri), [
            'demo://resource/dynamic/blob/1', 'demo://resource/dynamic/text/2',
            'demo://resource/dynamic/blob/3', 'demo://resource/dynamic/text/4',
        ]);
        const embedded = await crank.client.callTool({ name: `${EV}get-resource-reference`, arguments: { resourceType: 'Blob', resourceId: 3 } }, undefined, OPTS);
        const resource = embedded.content.find((c) => c.type === 'resource')?.resource;
        assert.equal(resource?.uri, 'demo://resource/dynamic/blob/3', JSON.stringify(embedded));
        assert.match(Buffer.from(resource.blob, 'base64').toString(), /^Resource 3: This is a base64 blob created at /);
        // The fixture's content blocks too.
        for (const name of ['test_image_content', 'test_audio_content', 'test_embedded_resource', 'test_multiple_content_types']) {
            assert.deepEqual(await crank.client.callTool({ name, arguments: {} }, undefined, OPTS),
                await fixture.callTool({ name, arguments: {} }, undefined, OPTS), name);
        }
    });

    it('tools/call: a tool error (isError) passes through unchanged', async () => {
        const viaCrank = await crank.client.callTool({ name: `${EV}get-sum`, arguments: { a: 'two', b: 3 } }, undefined, OPTS);
        assert.equal(viaCrank.isError, true, JSON.stringify(viaCrank));
        assert.deepEqual(viaCrank, await everything.callTool({ name: 'get-sum', arguments: { a: 'two', b: 3 } }, undefined, OPTS));
        assert.match(textOf(viaCrank), /Input validation error/);
        const fixtureError = await crank.client.callTool({ name: 'test_error_handling', arguments: {} }, undefined, OPTS);
        assert.deepEqual(fixtureError, {
            isError: true, content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
        });
    });

    it('progress: increasing notifications/progress for the client\'s token arrive before the result', async () => {
        const start = crank.wire.length;
        const seen = [];
        const result = await crank.client.callTool(
            { name: `${EV}trigger-long-running-operation`, arguments: { duration: 1.5, steps: 3 } }, undefined,
            { ...OPTS, onprogress: (p) => seen.push(p) });
        assert.equal(textOf(result), 'Long running operation completed. Duration: 1.5 seconds, Steps: 3.');
        const wire = crank.wire.slice(start);
        const request = wire.find((e) => e.dir === 'out' && e.message.method === 'tools/call');
        const token = request.message.params._meta?.progressToken;
        assert.notEqual(token, undefined, 'the SDK sent a progressToken');
        const answered = wire.findIndex((e) => e.dir === 'in' && e.message.id === request.message.id);
        const progress = wire.map((e, i) => ({ ...e, i }))
            .filter((e) => e.dir === 'in' && e.message.method === 'notifications/progress');
        assert.deepEqual(progress.map((e) => e.message.params), [1, 2, 3].map((p) => ({ progressToken: token, progress: p, total: 3 })),
            JSON.stringify(progress.map((e) => e.message)));
        assert.ok(progress.every((e) => e.i < answered), 'every progress notification came before the result');
        // The SDK's onprogress may miss the last one (a race in the SDK, see everything-findings.md).
        assert.ok(seen.length >= 2, JSON.stringify(seen));
        for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress, JSON.stringify(seen));
        // The fixture's slow_progress through the same gateway.
        const steps = [];
        const slow = await crank.client.callTool({ name: 'slow_progress', arguments: { steps: 4, delay_ms: 50 } }, undefined,
            { ...OPTS, onprogress: (p) => steps.push(p.progress) });
        assert.equal(textOf(slow), 'completed 4 steps');
        assert.ok(steps.length >= 3 && steps.every((p, i) => i === 0 || p > steps[i - 1]), JSON.stringify(steps));
    });

    it('cancellation: an aborted call sends notifications/cancelled, gets nothing more, and later calls work', async () => {
        for (const [name, args] of [
            [`${EV}trigger-long-running-operation`, { duration: 10, steps: 20 }],
            ['slow_progress', { steps: 100, delay_ms: 200 }],
        ]) {
            const start = crank.wire.length;
            const controller = new AbortController();
            let progressed;
            const firstProgress = new Promise((resolve) => { progressed = resolve; });
            const call = crank.client.callTool({ name, arguments: args }, undefined,
                { ...OPTS, signal: controller.signal, onprogress: () => progressed() });
            call.catch(() => {});
            await Promise.race([firstProgress, sleep(5_000).then(() => assert.fail(`${name}: no progress within 5 s`))]);
            controller.abort('crank e2e abort');
            await assert.rejects(call, /abort/i);
            const request = crank.wire.slice(start).find((e) => e.dir === 'out' && e.message.method === 'tools/call');
            const id = request.message.id;
            const token = request.message.params._meta.progressToken;
            const cancelledAt = crank.wire.length;
            const cancelled = await waitFor('notifications/cancelled to be sent', () => crank.wire.slice(start).find(
                (e) => e.dir === 'out' && e.message.method === 'notifications/cancelled'));
            assert.equal(cancelled.message.params.requestId, id);
            await sleep(1_500); // everything would have sent 3 more progress notifications by now
            const late = crank.wire.slice(cancelledAt).filter((e) => e.dir === 'in' &&
                (e.message.id === id || e.message.params?.progressToken === token));
            assert.deepEqual(late.map((e) => e.message), [], `${name}: nothing for the cancelled request after the cancel`);
        }
        const echo = await crank.client.callTool({ name: `${EV}echo`, arguments: { message: 'still here' } }, undefined, OPTS);
        assert.equal(textOf(echo), 'Echo: still here');
        const steps = [];
        const again = await crank.client.callTool(
            { name: `${EV}trigger-long-running-operation`, arguments: { duration: 0.4, steps: 2 } }, undefined,
            { ...OPTS, onprogress: (p) => steps.push(p.progress) });
        assert.match(textOf(again), /Long running operation completed/);
        assert.ok(steps.length >= 1, 'progress still flows');
        assert.equal(textOf(await crank.client.callTool({ name: 'echo', arguments: { text: 'ok' } }, undefined, OPTS)), 'ok');
    });

    // --- server-to-client requests ------------------------------------------------------------------

    it('sampling: sampling/createMessage reaches the calling client only, and its answer reaches the result', async () => {
        const before = crank.seen.sampling.length;
        const result = await crank.client.callTool(
            { name: `${EV}trigger-sampling-request`, arguments: { prompt: 'ping from e2e', maxTokens: 42 } }, undefined, OPTS);
        assert.equal(result.isError ?? false, false, JSON.stringify(result));
        const requests = crank.seen.sampling.slice(before);
        assert.equal(requests.length, 1, JSON.stringify(requests));
        assert.deepEqual(requests[0].messages, [
            { role: 'user', content: { type: 'text', text: 'Resource trigger-sampling-request context: ping from e2e' } },
        ]);
        assert.equal(requests[0].systemPrompt, 'You are a helpful test server.');
        assert.equal(requests[0].maxTokens, 42);
        assert.equal(requests[0].temperature, 0.7);
        const text = textOf(result);
        assert.ok(text.startsWith('LLM sampling result: \n'), text);
        assert.deepEqual(JSON.parse(text.slice(text.indexOf('\n') + 1)), SAMPLING_ANSWER);
        const viaFixture = await crank.client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello fixture' } }, undefined, OPTS);
        assert.equal(textOf(viaFixture), 'LLM response: pong from the e2e client');
        assert.deepEqual(crank.seen.sampling.at(-1).messages, [{ role: 'user', content: { type: 'text', text: 'hello fixture' } }]);
        assert.deepEqual(bystander.seen.sampling, [], 'the other client was not asked');
    });

    it('elicitation (form): elicitation/create reaches the caller, its answer reaches the result', async () => {
        const before = crank.seen.elicitation.length;
        const result = await crank.client.callTool({ name: `${EV}trigger-elicitation-request`, arguments: {} }, undefined, OPTS);
        const requests = crank.seen.elicitation.slice(before);
        assert.equal(requests.length, 1, JSON.stringify(requests));
        assert.ok(requests[0].mode === undefined || requests[0].mode === 'form', requests[0].mode);
        assert.equal(requests[0].message, 'Please provide inputs for the following fields:');
        assert.deepEqual(requests[0].requestedSchema.required, ['name']);
        assert.deepEqual(requests[0].requestedSchema.properties.legacyTitledEnum.enumNames,
            ['Cats', 'Dogs', 'Birds', 'Fish', 'Reptiles']);
        assert.equal(Object.keys(requests[0].requestedSchema.properties).length, 13);
        const text = textOf(result);
        for (const line of ['✅ User provided the requested information!', '- Name: Ada Lovelace', '- Agreed to terms: true',
            '- Email: ada@example.com', '- Favorite Integer: 7']) {
            assert.ok(text.includes(line), `${line} in ${text}`);
        }
        const viaFixture = await crank.client.callTool({ name: 'test_elicitation', arguments: { message: 'who are you?' } }, undefined, OPTS);
        assert.equal(textOf(viaFixture), 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}');
        assert.equal(crank.seen.elicitation.at(-1).message, 'who are you?');
        assert.deepEqual(bystander.seen.elicitation, [], 'the other client was not asked');
    });

    it('elicitation (url): the request path, and the -32042 error path then a retry', async () => {
        const before = crank.seen.elicitation.length;
        const result = await crank.client.callTool({
            name: `${EV}trigger-url-elicitation`,
            arguments: { url: 'https://example.com/crank-e2e', elicitationId: 'crank-e2e-elicitation-1' },
        }, undefined, OPTS);
        const requests = crank.seen.elicitation.slice(before);
        assert.deepEqual(requests, [{
            mode: 'url', url: 'https://example.com/crank-e2e', elicitationId: 'crank-e2e-elicitation-1',
            message: 'Please open the link to complete this action.',
        }]);
        assert.match(textOf(result), /User completed the URL elicitation flow\.\nElicitation ID: crank-e2e-elicitation-1\nURL: https:\/\/example\.com\/crank-e2e/);
        const args = { url: 'https://example.com/crank-e2e-error-path', errorPath: true };
        await assert.rejects(crank.client.callTool({ name: `${EV}trigger-url-elicitation`, arguments: args }, undefined, OPTS),
            (error) => {
                assert.ok(error instanceof McpError, String(error));
                assert.equal(error.code, -32042, error.message);
                assert.equal(error.data?.elicitations?.[0]?.mode, 'url', JSON.stringify(error.data));
                assert.equal(error.data.elicitations[0].url, 'https://modelcontextprotocol.io');
                return true;
            });
        const retried = await crank.client.callTool({ name: `${EV}trigger-url-elicitation`, arguments: args }, undefined, OPTS);
        assert.match(textOf(retried), /User completed the URL elicitation flow/);
        assert.equal(crank.seen.elicitation.at(-1).url, 'https://example.com/crank-e2e-error-path');
        assert.deepEqual(bystander.seen.elicitation, []);
    });

    it('roots: get-roots-list reports the calling client\'s roots', async () => {
        const result = await crank.client.callTool({ name: `${EV}get-roots-list`, arguments: {} }, undefined, OPTS);
        const text = textOf(result);
        const asked = `roots/list requests the caller got: ${crank.seen.roots.length}`;
        assert.match(text, /Current MCP Roots \(1 total\)/, `${asked}; the tool said: ${text}`);
        assert.ok(text.includes('1. crank e2e root\n   URI: file:///tmp/crank-e2e-root'), text);
        assert.ok(crank.seen.roots.length >= 1, 'crankd asked the caller for its roots');
        assert.deepEqual(bystander.seen.roots, [], 'the other client was not asked');
    });

    // --- logging ------------------------------------------------------------------------------------

    it('logging: after logging/setLevel, a tool\'s logs arrive as notifications/message during the call', async () => {
        await crank.client.setLoggingLevel('debug', OPTS);
        await bystander.client.setLoggingLevel('debug', OPTS);
        const start = crank.wire.length;
        const before = crank.seen.logs.length;
        const result = await crank.client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, OPTS);
        assert.equal(textOf(result), 'Tool with logging executed successfully');
        const wire = crank.wire.slice(start);
        const answered = wire.findIndex((e) => e.dir === 'in' && 'result' in e.message);
        const logs = wire.map((e, i) => ({ ...e, i }))
            .filter((e) => e.dir === 'in' && e.message.method === 'notifications/message' && e.message.params.logger === 'reference');
        assert.deepEqual(logs.map((e) => e.message.params), ['Tool execution started', 'Tool processing data', 'Tool execution completed']
            .map((data) => ({ level: 'info', logger: 'reference', data })));
        assert.ok(logs.every((e) => e.i < answered), 'the logs came before the result');
        assert.ok(crank.seen.logs.length - before >= 3);
        assert.deepEqual(bystander.seen.logs.filter((l) => l.logger === 'reference'), [],
            'the logs of crank\'s call did not reach the other client');
        // server-everything: toggle-simulated-logging logs once at once (a random level), then every 5 s.
        const everythingBefore = crank.seen.logs.length;
        const on = await crank.client.callTool({ name: `${EV}toggle-simulated-logging`, arguments: {} }, undefined, OPTS);
        try {
            assert.match(textOf(on), /^Started simulated, random-leveled logging/);
            const log = await waitFor('a simulated log message', () =>
                crank.seen.logs.slice(everythingBefore).find((l) => /-level message|level-message/.test(String(l.data))), { timeoutMs: 4_000 });
            assert.ok(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'].includes(log.level));
        } finally {
            const off = await crank.client.callTool({ name: `${EV}toggle-simulated-logging`, arguments: {} }, undefined, OPTS);
            assert.match(textOf(off), /^Stopped simulated logging/);
        }
    });

    it('logging: each client\'s level holds for it alone', async () => {
        const quiet = await connect('crank-e2e-federation-quiet');
        await quiet.client.setLoggingLevel('error', OPTS);
        await crank.client.setLoggingLevel('debug', OPTS);
        const result = await quiet.client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, OPTS);
        assert.equal(textOf(result), 'Tool with logging executed successfully');
        await sleep(200);
        assert.deepEqual(quiet.seen.logs.filter((l) => l.level === 'info'), [], 'no info log for a client at level error');
        // The quiet client's level did not silence the one at debug.
        const start = crank.seen.logs.length;
        await crank.client.callTool({ name: 'test_tool_with_logging', arguments: {} }, undefined, OPTS);
        await sleep(100);
        assert.equal(crank.seen.logs.slice(start).filter((l) => l.logger === 'reference').length, 3,
            JSON.stringify(crank.seen.logs.slice(start)));
        await quiet.client.close();
    });

    // --- resources ----------------------------------------------------------------------------------

    it('resources/list: paginated to the end, both upstreams\' resources, unchanged', async () => {
        const resources = await listResources(crank.client);
        const direct = [...(await listResources(everything)), ...(await listResources(fixture))];
        assert.ok(direct.length >= 10, JSON.stringify(direct.map((r) => r.uri)));
        const byUri = new Map(resources.map((r) => [r.uri, r]));
        assert.equal(byUri.size, resources.length, 'no resource twice');
        assert.deepEqual([...byUri.keys()].sort(), direct.map((r) => r.uri).sort());
        for (const r of direct) assert.deepEqual(byUri.get(r.uri), r, r.uri);
        assert.ok(byUri.has('demo://resource/static/document/features.md'));
        assert.ok(byUri.has('test://static-text'));
    });

    it('resources/read: a text and a blob resource, and an unknown URI is an error', async () => {
        for (const [client, uri] of [[everything, 'demo://resource/static/document/features.md'], [fixture, 'test://static-text'],
            [fixture, 'test://static-binary']]) {
            assert.deepEqual(await crank.client.readResource({ uri }, OPTS), await client.readResource({ uri }, OPTS), uri);
        }
        const doc = await crank.client.readResource({ uri: 'demo://resource/static/document/features.md' }, OPTS);
        assert.equal(doc.contents[0].mimeType, 'text/markdown');
        assert.ok(doc.contents[0].text.length > 100);
        const png = await crank.client.readResource({ uri: 'test://static-binary' }, OPTS);
        assert.ok(Buffer.from(png.contents[0].blob, 'base64').subarray(1, 4).equals(Buffer.from('PNG')));
        const blob = await crank.client.readResource({ uri: 'demo://resource/dynamic/blob/5' }, OPTS);
        assert.equal(blob.contents[0].uri, 'demo://resource/dynamic/blob/5');
        assert.match(Buffer.from(blob.contents[0].blob, 'base64').toString(), /^Resource 5: This is a base64 blob created at /);
        await rejectsWithCode(crank.client.readResource({ uri: 'test://nope' }, OPTS), [-32602, -32002]);
    });

    it('resource templates: listed unchanged, read through a template URI; a bad id is an error', async () => {
        const templates = await listTemplates(crank.client);
        const direct = [...(await listTemplates(everything)), ...(await listTemplates(fixture))];
        assert.equal(direct.length, 4);  // everything 2, the fixture test://template and test://slow
        assert.deepEqual([...templates].sort((a, b) => a.uriTemplate.localeCompare(b.uriTemplate)),
            [...direct].sort((a, b) => a.uriTemplate.localeCompare(b.uriTemplate)));
        const text = await crank.client.readResource({ uri: 'demo://resource/dynamic/text/7' }, OPTS);
        assert.deepEqual(untimed(text), untimed(await everything.readResource({ uri: 'demo://resource/dynamic/text/7' }, OPTS)));
        assert.match(text.contents[0].text, /^Resource 7: This is a plaintext resource created at /);
        const data = await crank.client.readResource({ uri: 'test://template/42/data' }, OPTS);
        assert.deepEqual(JSON.parse(data.contents[0].text), { id: '42', templateTest: true, data: 'Data for ID: 42' });
        await rejectsWithCode(crank.client.readResource({ uri: 'demo://resource/dynamic/text/zero' }, OPTS), -32603, /Unknown resource/);
    });

    it('resources/subscribe: updates reach the subscriber (not the caller of the toggle); none after unsubscribe', async () => {
        const uri = 'demo://resource/static/document/features.md';
        const toggle = async () => textOf(await bystander.client.callTool(
            { name: `${EV}toggle-subscriber-updates`, arguments: {} }, undefined, OPTS));
        assert.deepEqual(await crank.client.subscribeResource({ uri }, OPTS), {});
        assert.deepEqual(await crank.client.subscribeResource({ uri: 'test://watched-resource' }, OPTS), {});
        let on = false;
        try {
            const before = crank.seen.updated.length;
            assert.match(await toggle(), /Started|updates/i);
            on = true;
            await waitFor(`notifications/resources/updated for ${uri}`, () =>
                crank.seen.updated.slice(before).find((u) => u.uri === uri), { timeoutMs: 4_000 });
            assert.deepEqual(bystander.seen.updated, [], 'the client that did not subscribe got no update');
            assert.match(await toggle(), /Stopped|updates/i);
            on = false;

            assert.deepEqual(await crank.client.unsubscribeResource({ uri }, OPTS), {});
            assert.deepEqual(await crank.client.unsubscribeResource({ uri: 'test://watched-resource' }, OPTS), {});
            const after = crank.seen.updated.length;
            await toggle(); // would send an update at once to every subscriber
            on = true;
            await sleep(1_500);
            assert.deepEqual(crank.seen.updated.slice(after), [], 'no update after unsubscribe');
            assert.deepEqual(bystander.seen.updated, []);
        } finally {
            if (on) await toggle();
        }
    });

    /** gzip-file-as-resource registers demo://resource/session/<name> and returns a link to it. */
    async function registerAtRuntime(name, payload) {
        const result = await crank.client.callTool({
            name: `${EV}gzip-file-as-resource`,
            arguments: { name, data: `data:text/plain;base64,${Buffer.from(payload).toString('base64')}`, outputType: 'resourceLink' },
        }, undefined, OPTS);
        const link = result.content.find((c) => c.type === 'resource_link');
        assert.equal(link?.uri, `demo://resource/session/${name}`, JSON.stringify(result));
        return link.uri;
    }

    it('a resource registered at runtime (gzip-file-as-resource) is listed, then readable', async () => {
        const payload = 'hello federation '.repeat(20);
        const uri = await registerAtRuntime('crank-e2e-listed.txt', payload);
        // Listed once crankd has followed notifications/resources/list_changed.
        const deadline = Date.now() + 5_000;
        let uris = [];
        while (Date.now() < deadline) {
            uris = (await listResources(crank.client)).map((r) => r.uri);
            if (uris.includes(uri)) break;
            await sleep(100);
        }
        assert.ok(uris.includes(uri), JSON.stringify(uris));
        const read = await crank.client.readResource({ uri }, OPTS);
        assert.equal(gunzipSync(Buffer.from(read.contents[0].blob, 'base64')).toString(), payload);
    });

    it('the resource_link a tool just returned can be read at once', async () => {
        // What a client does with a resource_link: read it, right after the result. Several
        // times, because crankd learns of the new URI asynchronously (list_changed, then a refresh).
        for (let i = 0; i < 5; i++) {
            const payload = `read me at once ${i}`;
            const uri = await registerAtRuntime(`crank-e2e-at-once-${i}.txt`, payload);
            const read = await crank.client.readResource({ uri }, OPTS).catch((error) => {
                throw new Error(`attempt ${i}: resources/read ${uri} right after the tool result: ${error.message}`);
            });
            assert.equal(gunzipSync(Buffer.from(read.contents[0].blob, 'base64')).toString(), payload);
        }
    });

    // --- prompts and completions --------------------------------------------------------------------

    it('prompts/list: everything\'s prompts as everything_<name>, the fixture\'s as they are, unchanged', async () => {
        const prompts = await listPrompts(crank.client);
        const everythingPrompts = await listPrompts(everything);
        const fixturePrompts = await listPrompts(fixture);
        assert.deepEqual(prompts.map((p) => p.name).sort(),
            [...everythingPrompts.map((p) => EV + p.name), ...fixturePrompts.map((p) => p.name)].sort());
        const byName = new Map(prompts.map((p) => [p.name, p]));
        for (const p of everythingPrompts) assert.deepEqual({ ...byName.get(EV + p.name), name: p.name }, p, p.name);
        for (const p of fixturePrompts) assert.deepEqual(byName.get(p.name), p, p.name);
        assert.ok(byName.has(`${EV}simple-prompt`) && byName.has(`${EV}completable-prompt`));
    });

    it('prompts/get: simple, with arguments, with an embedded resource', async () => {
        for (const [name, args] of [['simple-prompt', undefined], ['args-prompt', { city: 'Paris', state: 'Texas' }],
            ['completable-prompt', { department: 'Sales', name: 'Bob' }]]) {
            assert.deepEqual(await crank.client.getPrompt({ name: EV + name, arguments: args }, OPTS),
                await everything.getPrompt({ name, arguments: args }, OPTS), name);
        }
        const args = await crank.client.getPrompt({ name: `${EV}args-prompt`, arguments: { city: 'Paris' } }, OPTS);
        assert.match(args.messages[0].content.text, /Paris/);
        const withResource = await crank.client.getPrompt(
            { name: `${EV}resource-prompt`, arguments: { resourceType: 'Text', resourceId: '2' } }, OPTS);
        assert.deepEqual(withResource.messages.map((m) => m.content.type), ['text', 'resource']);
        assert.equal(withResource.messages[1].content.resource.uri, 'demo://resource/dynamic/text/2');
        assert.match(withResource.messages[1].content.resource.text, /^Resource 2: This is a plaintext resource/);
        const fixturePrompt = await crank.client.getPrompt(
            { name: 'test_prompt_with_arguments', arguments: { arg1: 'one', arg2: 'two' } }, OPTS);
        assert.equal(fixturePrompt.messages[0].content.text, "Prompt with arguments: arg1='one', arg2='two'");
        await rejectsWithCode(crank.client.getPrompt({ name: 'everything_nope' }, OPTS), [-32602, -32601]);
    });

    it('completion/complete: a prompt argument and a resource template argument, by their published names', async () => {
        const department = await crank.client.complete({
            ref: { type: 'ref/prompt', name: `${EV}completable-prompt` }, argument: { name: 'department', value: 'S' },
        }, OPTS);
        assert.deepEqual(department.completion.values, ['Sales', 'Support']);
        const names = await crank.client.complete({
            ref: { type: 'ref/prompt', name: `${EV}completable-prompt` }, argument: { name: 'name', value: '' },
            context: { arguments: { department: 'Engineering' } },
        }, OPTS);
        assert.deepEqual(names.completion.values, ['Alice', 'Bob', 'Charlie']);
        const resourceType = await crank.client.complete({
            ref: { type: 'ref/prompt', name: `${EV}resource-prompt` }, argument: { name: 'resourceType', value: 'B' },
        }, OPTS);
        assert.deepEqual(resourceType.completion.values, ['Blob']);
        const resourceId = await crank.client.complete({
            ref: { type: 'ref/resource', uri: 'demo://resource/dynamic/text/{resourceId}' }, argument: { name: 'resourceId', value: '12' },
        }, OPTS);
        assert.deepEqual(resourceId.completion.values, ['12']);
        const fixtureCompletion = await crank.client.complete({
            ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' },
        }, OPTS);
        assert.deepEqual(fixtureCompletion.completion.values, ['paris', 'park', 'party']);
    });

    // --- Tasks --------------------------------------------------------------------------------------

    const RESEARCH = `${EV}simulate-research-query`;

    it('tasks: tools/call with task gives a CreateTaskResult; tasks/get until completed; tasks/result has the report', async () => {
        const created = await crank.client.request(
            { method: 'tools/call', params: { name: RESEARCH, arguments: { topic: 'federated gateways' }, task: { ttl: 60_000 } } },
            CreateTaskResultSchema, OPTS);
        const { task } = created;
        assert.equal(task.status, 'working', JSON.stringify(created));
        assert.equal(typeof task.taskId, 'string');
        const statuses = [];
        const deadline = Date.now() + 20_000;
        let got;
        for (;;) {
            got = await crank.client.experimental.tasks.getTask(task.taskId, OPTS);
            assert.equal(got.taskId, task.taskId);
            statuses.push(got.status);
            if (got.status === 'completed' || Date.now() > deadline) break;
            await sleep(250);
        }
        assert.equal(got.status, 'completed', JSON.stringify(statuses));
        assert.ok(statuses.every((s) => s === 'working' || s === 'completed'), JSON.stringify(statuses));
        const result = await crank.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, OPTS);
        assert.equal(result.isError ?? false, false, JSON.stringify(result));
        assert.match(result.content[0].text, /^# Research Report: federated gateways\n/);
        assert.match(result.content[0].text, /Stage 4: Generating report ✓/);
        assert.equal(result._meta?.[RELATED_TASK_META_KEY]?.taskId, task.taskId, 'related-task names the task the client knows');
        // Terminal: cancelling it is -32602.
        await rejectsWithCode(crank.client.experimental.tasks.cancelTask(task.taskId, OPTS), -32602, /terminal|completed/);
    });

    it('tasks: the SDK\'s callToolStream goes from taskCreated to the result', async () => {
        await listTools(crank.client);
        assert.equal(crank.client.isToolTask(RESEARCH), true, 'crankd declares tasks and the tool requires them');
        const messages = [];
        const stream = crank.client.experimental.tasks.callToolStream(
            { name: RESEARCH, arguments: { topic: 'streams' } }, CallToolResultSchema, { ...OPTS, task: { ttl: 60_000 } });
        for await (const message of stream) messages.push(message);
        assert.equal(messages[0]?.type, 'taskCreated', JSON.stringify(messages));
        const last = messages.at(-1);
        assert.equal(last.type, 'result', `${last.type}: ${last.error?.message}`);
        assert.match(last.result.content[0].text, /^# Research Report: streams\n/);
        const statuses = messages.filter((m) => m.type === 'taskStatus').map((m) => m.task.status);
        assert.equal(statuses.at(-1), 'completed', JSON.stringify(statuses));
    });

    it('tasks: notifications/tasks/status reach the client with the task id it knows', async () => {
        const { task } = await crank.client.request(
            { method: 'tools/call', params: { name: RESEARCH, arguments: { topic: 'notifications' }, task: {} } },
            CreateTaskResultSchema, OPTS);
        const final = await waitFor(`a completed notifications/tasks/status for ${task.taskId}`, () =>
            crank.seen.taskStatus.find((n) => n.taskId === task.taskId && n.status === 'completed'), { timeoutMs: 15_000 })
            .catch((error) => {
                const onWire = crank.wire.filter((e) => e.dir === 'in' && e.message.method === 'notifications/tasks/status');
                throw new Error(`${error.message}; the handler got ${JSON.stringify(crank.seen.taskStatus)}; ` +
                    `${onWire.length} notifications/tasks/status on the wire; client errors: ${JSON.stringify(crank.seen.errors)}`);
            });
        assert.ok(!Number.isNaN(Date.parse(final.lastUpdatedAt)));
        const mine = crank.seen.taskStatus.filter((n) => n.taskId === task.taskId);
        assert.ok(mine.some((n) => n.status === 'working'), JSON.stringify(mine));
        assert.deepEqual(bystander.seen.taskStatus.filter((n) => n.taskId === task.taskId), []);
    });

    it('tasks: an ambiguous query asks the client (input_required, elicitation via tasks/result); the report uses the answer', async () => {
        const before = crank.seen.elicitation.length;
        const { task } = await crank.client.request(
            { method: 'tools/call', params: { name: RESEARCH, arguments: { topic: 'python', ambiguous: true }, task: {} } },
            CreateTaskResultSchema, OPTS);
        // server-everything queues the elicitation/create and sends it only while a tasks/result waits.
        const result = await crank.client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: 15_000 });
        const asked = crank.seen.elicitation.slice(before);
        assert.equal(asked.length, 1, JSON.stringify(asked));
        assert.deepEqual(asked[0].requestedSchema.required, ['interpretation']);
        assert.match(result.content[0].text, /^# Research Report: python \(programming\)\n/);
        assert.deepEqual(bystander.seen.elicitation, []);
        const done = await crank.client.experimental.tasks.getTask(task.taskId, OPTS);
        assert.equal(done.status, 'completed', JSON.stringify(done));
        // The elicitation names its task (related-task) with the id the client knows, not the upstream's.
        assert.equal(asked[0]._meta?.[RELATED_TASK_META_KEY]?.taskId, task.taskId,
            `elicitation/create _meta: ${JSON.stringify(asked[0]._meta)}`);
    });

    it('tasks: tasks/cancel of a working task cancels it', async () => {
        const { task } = await crank.client.request(
            { method: 'tools/call', params: { name: RESEARCH, arguments: { topic: 'cancelled' }, task: {} } },
            CreateTaskResultSchema, OPTS);
        const cancelled = await crank.client.experimental.tasks.cancelTask(task.taskId, OPTS);
        assert.equal(cancelled.taskId, task.taskId);
        assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));
        const got = await crank.client.experimental.tasks.getTask(task.taskId, OPTS);
        assert.equal(got.status, 'cancelled', JSON.stringify(got));
    });

    it('tasks: unknown task ids are -32602', async () => {
        await rejectsWithCode(crank.client.experimental.tasks.getTask('no-such-task', OPTS), -32602);
        await rejectsWithCode(crank.client.experimental.tasks.getTaskResult('no-such-task', CallToolResultSchema, OPTS), -32602);
        await rejectsWithCode(crank.client.experimental.tasks.cancelTask('no-such-task', OPTS), -32602);
    });

    it('tasks: a 2026 client that declares the extension follows the 2025 upstream\'s own task', async () => {
        // Raw 2026-07-28 requests over the SDK v2 transport, the Tasks extension declared.
        const transport = new TransportV2(new URL(URL_ENV));
        const waiting = new Map();
        transport.onmessage = (message) => {
            waiting.get(message.id)?.(message);
            waiting.delete(message.id);
        };
        transport.onerror = () => {};
        await transport.start();
        clients.push(transport);
        const meta = {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
            'io.modelcontextprotocol/clientInfo': { name: 'crank-e2e-federation-2026', version: '1.0.0' },
        };
        let next = 1;
        const request = async (method, params) => {
            const id = next++;
            const answered = new Promise((resolve) => waiting.set(id, resolve));
            await transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
            const message = await Promise.race([answered,
                sleep(TIMEOUT).then(() => ({ error: { message: `${method}: no answer` } }))]);
            assert.equal(message.error, undefined, `${method}: ${JSON.stringify(message)}`);
            return message.result;
        };
        const created = await request('tools/call', { name: RESEARCH, arguments: { topic: 'modern clients' } });
        assert.equal(created.resultType, 'task', JSON.stringify(created));
        assert.match(created.taskId, /^up-/);
        assert.equal(created.task, undefined, 'flat, no 2025 `task` member');
        assert.ok(created.ttlMs === null || Number.isInteger(created.ttlMs), JSON.stringify(created));
        let got;
        const deadline = Date.now() + 20_000;
        for (;;) {
            got = await request('tasks/get', { taskId: created.taskId });
            if (got.status !== 'working' || Date.now() > deadline) break;
            await sleep(250);
        }
        assert.equal(got.status, 'completed', JSON.stringify(got));
        assert.match(got.result.content[0].text, /^# Research Report: modern clients\n/);
        assert.equal(got.result._meta?.[RELATED_TASK_META_KEY], undefined, 'no related-task inlined');
        assert.deepEqual((await request('tasks/cancel', { taskId: created.taskId })).resultType, 'complete');
        // A live one: cancelled upstream, acknowledged.
        const live = await request('tools/call', { name: RESEARCH, arguments: { topic: 'cancel me' } });
        await request('tasks/cancel', { taskId: live.taskId });
        assert.equal((await request('tasks/get', { taskId: live.taskId })).status, 'cancelled');
    });

    it('tasks: calling the task-only tool without a task is a JSON-RPC error', async () => {
        // Raw: the SDK's callTool refuses it client-side.
        await rejectsWithCode(crank.client.request(
            { method: 'tools/call', params: { name: RESEARCH, arguments: { topic: 'no task' } } }, CallToolResultSchema, OPTS),
        [-32600, -32601], /task/);
    });
});
