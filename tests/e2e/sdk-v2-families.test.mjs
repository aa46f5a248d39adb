// The SDK v2 client (@modelcontextprotocol/client, pinned in package-lock.json) in the stateless
// MCP 2026-07-28 era, pinned and in 'auto' mode, running whole tool families of crankd's own
// execution modes across independent requests: a session (_start, _poll, _stop) and an async job
// (_start, _status, _result, _cancel). The handle is the argument; nothing is kept between
// requests but what crankd stores. The SDK checks every structuredContent against the tool's
// outputSchema. crankd loads the synthetic fixture plugin (CRANK_EXTRA_CONFIG, tests/CMakeLists.txt).
//
// The same job as a task (the io.modelcontextprotocol/tasks extension) goes through the SDK v2
// client package's own transport (StreamableHTTPClientTransport, which sets the era's headers from
// each message's _meta): its Client, in 2.4.0, refuses a tools/call result whose resultType is not
// "complete", so the messages are written here. tests/integration/modern_tasks_test.cpp covers
// the extension's errors over raw HTTP.
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-v2-families.test.mjs

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const URL_ENV = process.env.CRANK_MCP_URL;
const TEST_TIMEOUT = 60_000;
const REQUEST_TIMEOUT = 15_000;

/** The CallToolResult of `name` (SDK v2: options are the second argument). */
async function callRaw(client, name, args) {
    return client.callTool({ name, arguments: args }, { timeout: REQUEST_TIMEOUT });
}

/** structuredContent of a call that must succeed. */
async function call(client, name, args) {
    const result = await callRaw(client, name, args);
    assert.equal(result.isError ?? false, false, `${name}: ${JSON.stringify(result)}`);
    assert.equal(typeof result.structuredContent, 'object', `${name}: ${JSON.stringify(result)}`);
    return result.structuredContent;
}

const clients = [];
after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
});

/** A 2026-07-28 exchange over the SDK v2 transport alone, declaring the Tasks extension. */
async function rawTransport() {
    const transport = new StreamableHTTPClientTransport(new URL(URL_ENV));
    const waiting = new Map();
    transport.onmessage = (message) => {
        const resolve = waiting.get(message.id);
        if (resolve) {
            waiting.delete(message.id);
            resolve(message);
        }
    };
    transport.onerror = () => {};
    await transport.start();
    clients.push(transport);
    const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': { extensions: { 'io.modelcontextprotocol/tasks': {} } },
        'io.modelcontextprotocol/clientInfo': { name: 'crank-e2e-v2-tasks', version: '1.0.0' },
    };
    let next = 1;
    return async (method, params) => {
        const id = next++;
        const answered = new Promise((resolve) => waiting.set(id, resolve));
        await transport.send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } });
        const timeout = sleep(REQUEST_TIMEOUT).then(() => ({ error: { message: `${method}: no answer` } }));
        const message = await Promise.race([answered, timeout]);
        assert.equal(message.error, undefined, `${method}: ${JSON.stringify(message)}`);
        return message.result;
    };
}

async function connect(mode) {
    const client = new Client({ name: 'crank-e2e-v2-families', version: '1.0.0' }, { versionNegotiation: { mode } });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_ENV)));
    assert.equal(client.getProtocolEra(), 'modern');
    return client;
}

for (const mode of [{ pin: '2026-07-28' }, 'auto']) {
    const label = typeof mode === 'string' ? mode : 'pinned';
    describe(`SDK v2 client (${label}): crankd's tool families, request by request`, { skip: !URL_ENV && 'CRANK_MCP_URL is not set' }, () => {
        it('a whole session: start, poll every item by cursor, stop', { timeout: TEST_TIMEOUT }, async () => {
            const client = await connect(mode);
            const started = await call(client, 's_pause_start', { items: 12 });
            assert.equal(started.status, 'active', JSON.stringify(started));
            const seen = [];
            let cursor = '0';
            for (let i = 0; i < 300 && seen.length < 12; i++) {
                const page = await call(client, 's_pause_poll', { session_id: started.session_id, cursor, max_items: 5 });
                seen.push(...page.items.map((item) => item.seq));
                cursor = page.cursor;
                if (page.items.length === 0) await sleep(20);
            }
            assert.deepEqual(seen, Array.from({ length: 12 }, (_, i) => i + 1));
            const stopped = await call(client, 's_pause_stop', { session_id: started.session_id });
            assert.equal(stopped.status, 'stopped', JSON.stringify(stopped));
            assert.equal(stopped.item_count, 12, JSON.stringify(stopped));
            // Any later request sees it stopped, with nothing more to read.
            const after = await call(client, 's_pause_poll', { session_id: started.session_id, cursor });
            assert.equal(after.status, 'stopped', JSON.stringify(after));
            assert.equal(after.has_more, false, JSON.stringify(after));
            assert.deepEqual(after.items, []);
        });

        it('a whole job: start, status to the end, result; and a cancel', { timeout: TEST_TIMEOUT }, async () => {
            const client = await connect(mode);
            const started = await call(client, 'j_report_start', { items: 3, delay_ms: 100 });
            assert.equal(started.status, 'queued', JSON.stringify(started));
            let status;
            for (let i = 0; i < 400; i++) {
                status = await call(client, 'j_report_status', { job_id: started.job_id });
                if (!['queued', 'running'].includes(status.status)) break;
                await sleep(50);
            }
            assert.equal(status.status, 'succeeded', JSON.stringify(status));
            const result = await call(client, 'j_report_result', { job_id: started.job_id });
            assert.equal(result.ready, true, JSON.stringify(result));
            assert.equal(result.result.items.length, 3, JSON.stringify(result));

            const long = await call(client, 'j_report_start', { items: 1, delay_ms: 30_000 });
            const cancelled = await call(client, 'j_report_cancel', { job_id: long.job_id });
            assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));
            const after = await call(client, 'j_report_status', { job_id: long.job_id });
            assert.equal(after.status, 'cancelled', JSON.stringify(after));
        });
    });
}

describe('SDK v2 transport: the same job as a task', { skip: !URL_ENV && 'CRANK_MCP_URL is not set' }, () => {
    it('a declaring _start creates a task; tasks/get follows it to its inlined result', { timeout: TEST_TIMEOUT }, async () => {
        const request = await rawTransport();
        const created = await request('tools/call', { name: 'j_report_start', arguments: { items: 3, delay_ms: 100 } });
        assert.equal(created.resultType, 'task', JSON.stringify(created));
        assert.equal(typeof created.taskId, 'string', JSON.stringify(created));
        assert.equal(created.status, 'working', JSON.stringify(created));
        let task;
        for (let i = 0; i < 400; i++) {
            task = await request('tasks/get', { taskId: created.taskId });
            if (task.status !== 'working') break;
            await sleep(50);
        }
        assert.equal(task.status, 'completed', JSON.stringify(task));
        assert.equal(task.result.isError, false, JSON.stringify(task));
        assert.equal(task.result.structuredContent.items.length, 3, JSON.stringify(task));

        const long = await request('tools/call', { name: 'j_report_start', arguments: { items: 1, delay_ms: 30_000 } });
        assert.equal(long.resultType, 'task', JSON.stringify(long));
        assert.equal((await request('tasks/cancel', { taskId: long.taskId })).resultType, 'complete');
        for (let i = 0; i < 200; i++) {
            task = await request('tasks/get', { taskId: long.taskId });
            if (task.status !== 'working') break;
            await sleep(50);
        }
        assert.equal(task.status, 'cancelled', JSON.stringify(task));
    });
});
