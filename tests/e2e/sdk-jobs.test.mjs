// Async jobs (`execution.mode: async_job`) and MCP Tasks through the official TypeScript SDK
// client: crankd loads the synthetic fixture plugin (CRANK_EXTRA_CONFIG, see tests/CMakeLists.txt)
// and publishes the job operation `j_report` as j_report_start / _status / _result / _cancel. The
// SDK client checks every structuredContent against the tool's outputSchema; the Tasks part uses
// the SDK's experimental task API (client.experimental.tasks) and its zod result schemas.
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-jobs.test.mjs

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
    CallToolResultSchema,
    CreateTaskResultSchema,
    McpError,
    RELATED_TASK_META_KEY,
    TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

import { REQUEST_TIMEOUT, call, callRaw, failure } from './tool-calls.mjs';
const URL_ENV = process.env.CRANK_MCP_URL;
const OP = 'j_report';
const TERMINAL_JOB = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

const clients = [];

async function connect(name, { listTools = true, onTaskStatus } = {}) {
    const client = new Client({ name, version: '1.0.0' });
    if (onTaskStatus) client.setNotificationHandler(TaskStatusNotificationSchema, onTaskStatus);
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_ENV)));
    clients.push(client);
    // listTools caches the tools' outputSchemas (validated by callTool) and which tools take tasks.
    if (listTools) await client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
    return client;
}

async function start(client, args) {
    const started = await call(client, `${OP}_start`, args);
    assert.match(started.job_id, /^job_/);
    return started;
}

/** Polls _status until the job is terminal (bounded), honouring poll_interval_ms loosely. */
async function waitTerminal(client, jobId, { deadlineMs = 20_000 } = {}) {
    const deadline = Date.now() + deadlineMs;
    let status;
    while (Date.now() < deadline) {
        status = await call(client, `${OP}_status`, { job_id: jobId });
        if (TERMINAL_JOB.has(status.status)) return status;
        await sleep(Math.min(status.poll_interval_ms ?? 1_000, 200));
    }
    assert.fail(`job ${jobId} did not end within ${deadlineMs} ms: ${JSON.stringify(status)}`);
}

/** Polls _status until the job left `queued` (the worker picked it up), bounded. */
async function waitRunning(client, jobId) {
    const deadline = Date.now() + 10_000;
    let status;
    while (Date.now() < deadline) {
        status = await call(client, `${OP}_status`, { job_id: jobId });
        if (status.status !== 'queued') return status;
        await sleep(20);
    }
    assert.fail(`job ${jobId} stayed queued: ${JSON.stringify(status)}`);
}

function assertItems(value, n) {
    assert.ok(Array.isArray(value?.items), `items in ${JSON.stringify(value)}`);
    assert.deepEqual(value.items.map((item) => item.seq), Array.from({ length: n }, (_, i) => i + 1));
}

async function createTask(client, args, task = {}) {
    const created = await client.request(
        { method: 'tools/call', params: { name: `${OP}_start`, arguments: args, task } },
        CreateTaskResultSchema, { timeout: REQUEST_TIMEOUT });
    assert.equal(created.task.status, 'working', JSON.stringify(created));
    assert.match(created.task.taskId, /^job_/);
    return created.task;
}

async function rejectsWithCode(promise, code, message) {
    await assert.rejects(promise, (error) => {
        assert.ok(error instanceof McpError, `an McpError, got ${error}`);
        assert.equal(error.code, code, error.message);
        if (message) assert.match(error.message, message);
        return true;
    });
}

after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
});

describe('job tools through the TypeScript SDK client', { timeout: 120_000 }, () => {
    let client;
    before(async () => {
        assert.ok(URL_ENV, 'CRANK_MCP_URL must be set');
        client = await connect('crank-e2e-jobs');
    });

    it('publishes _start, _status, _result and _cancel; only _start takes tasks', async () => {
        const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
        for (const suffix of ['start', 'status', 'result', 'cancel']) {
            const tool = tools.find((t) => t.name === `${OP}_${suffix}`);
            assert.ok(tool, `${OP}_${suffix} is listed`);
            assert.equal(tool.outputSchema?.type, 'object', `${tool.name} outputSchema`);
            assert.equal(tool.inputSchema.type, 'object');
            if (suffix === 'start') {
                assert.equal(tool.execution?.taskSupport, 'optional');
                assert.deepEqual(Object.keys(tool.inputSchema.properties).sort(),
                    ['delay_ms', 'fail_after', 'items']);
            } else {
                assert.ok(!tool.execution?.taskSupport || tool.execution.taskSupport === 'forbidden',
                    `${tool.name} does not take tasks: ${JSON.stringify(tool.execution)}`);
                assert.deepEqual(tool.inputSchema.required, ['job_id']);
            }
        }
    });

    it('start returns at once; status reaches succeeded; result has the items', async () => {
        const started = await start(client, { items: 3, delay_ms: 500 });
        assert.equal(started.status, 'queued');
        assert.equal(started.status_tool, `${OP}_status`);
        assert.equal(started.result_tool, `${OP}_result`);
        assert.equal(started.cancel_tool, `${OP}_cancel`);
        assert.ok(!Number.isNaN(Date.parse(started.created_at)));
        assert.ok(Date.parse(started.expires_at) > Date.parse(started.created_at));
        assert.ok(Number.isInteger(started.poll_interval_ms) && started.poll_interval_ms > 0);

        // Not finished yet: the result says so, and that is not an error.
        const early = await call(client, `${OP}_result`, { job_id: started.job_id });
        assert.equal(early.ready, false, JSON.stringify(early));
        assert.equal(early.job_id, started.job_id);

        const status = await waitTerminal(client, started.job_id);
        assert.equal(status.status, 'succeeded', JSON.stringify(status));
        assert.equal(status.result_ready, true);
        assert.ok(!Number.isNaN(Date.parse(status.finished_at)));
        assert.equal(status.error ?? null, null);

        const result = await call(client, `${OP}_result`, { job_id: started.job_id });
        assert.equal(result.ready, true, JSON.stringify(result));
        assert.equal(result.status, 'succeeded');
        assertItems(result.result, 3);
        // Asking again gives the same result.
        assert.deepEqual(await call(client, `${OP}_result`, { job_id: started.job_id }), result);
    });

    it('a failed job says why in _status, and _result is a tool error with the reason', async () => {
        const started = await start(client, { items: 3, fail_after: 1 });
        const status = await waitTerminal(client, started.job_id);
        assert.equal(status.status, 'failed', JSON.stringify(status));
        assert.match(status.error, /synthetic upstream failure/);
        assert.equal(status.result_ready, false, JSON.stringify(status));
        const result = await callRaw(client, `${OP}_result`, { job_id: started.job_id });
        assert.equal(result.isError, true, JSON.stringify(result));
        assert.match(result.content[0].text, /synthetic upstream failure after 1 items/);
        assert.equal(result.structuredContent?.ready, false, JSON.stringify(result));
        assert.equal(result.structuredContent?.status, 'failed');
    });

    it('cancel stops a long job at once and is idempotent', async () => {
        const started = await start(client, { items: 1, delay_ms: 30_000 });
        await waitRunning(client, started.job_id);
        const t0 = Date.now();
        const cancelled = await call(client, `${OP}_cancel`, { job_id: started.job_id });
        assert.equal(cancelled.cancelled, true, JSON.stringify(cancelled));
        assert.equal(cancelled.status, 'cancelled');
        assert.equal(cancelled.job_id, started.job_id);
        // Cancelled as soon as the cancel answered.
        const status = await call(client, `${OP}_status`, { job_id: started.job_id });
        assert.equal(status.status, 'cancelled', JSON.stringify(status));
        const again = await call(client, `${OP}_cancel`, { job_id: started.job_id });
        assert.equal(again.cancelled, true, JSON.stringify(again));
        assert.equal(again.status, 'cancelled');
        assert.match(await failure(client, `${OP}_result`, { job_id: started.job_id }), /cancelled/);
        assert.ok(Date.now() - t0 < 10_000, 'a cancelled 30 s job ends well before its delay');
    });

    it('cancelling a finished job changes nothing', async () => {
        const started = await start(client, { items: 1 });
        assert.equal((await waitTerminal(client, started.job_id)).status, 'succeeded');
        const r = await call(client, `${OP}_cancel`, { job_id: started.job_id });
        assert.equal(r.cancelled, false, JSON.stringify(r));
        assert.equal(r.status, 'succeeded');
        const result = await call(client, `${OP}_result`, { job_id: started.job_id });
        assert.equal(result.ready, true);
        assertItems(result.result, 1);
    });

    it('a job outlives the MCP session that started it', async () => {
        const first = await connect('crank-e2e-jobs-first');
        const started = await start(first, { items: 4, delay_ms: 700 });
        await first.close();
        // A new connection (a new MCP session, the same anonymous agent) follows it to the end.
        const second = await connect('crank-e2e-jobs-second');
        const status = await waitTerminal(second, started.job_id);
        assert.equal(status.status, 'succeeded', JSON.stringify(status));
        const result = await call(second, `${OP}_result`, { job_id: started.job_id });
        assert.equal(result.ready, true);
        assertItems(result.result, 4);
    });

    it('a REST job against the REST fixture: progress grows, the result is fetched', async () => {
        const started = await call(client, 'r_job_start', { duration_ms: 800, tag: 'e2e' });
        const seen = [];
        let status;
        const deadline = Date.now() + 20_000;
        while (Date.now() < deadline) {
            status = await call(client, 'r_job_status', { job_id: started.job_id });
            if (status.progress) seen.push(status.progress.progress);
            if (TERMINAL_JOB.has(status.status)) break;
            await sleep(50);
        }
        assert.equal(status.status, 'succeeded', JSON.stringify(status));
        for (let i = 1; i < seen.length; i++) assert.ok(seen[i] >= seen[i - 1], `progress ${seen}`);
        const result = await call(client, 'r_job_result', { job_id: started.job_id });
        assert.equal(result.ready, true);
        assert.deepEqual(result.result.result, { tag: 'e2e' }, JSON.stringify(result));
    });

    it('a REST job as an MCP task: tasks/result is the fetched result', async () => {
        const created = await client.request(
            { method: 'tools/call', params: { name: 'r_job_start', arguments: { duration_ms: 400, tag: 't' }, task: {} } },
            CreateTaskResultSchema, { timeout: REQUEST_TIMEOUT });
        const result = await client.experimental.tasks.getTaskResult(
            created.task.taskId, CallToolResultSchema, { timeout: REQUEST_TIMEOUT });
        assert.equal(result.isError ?? false, false, JSON.stringify(result));
        assert.deepEqual(result.structuredContent.result, { tag: 't' });
    });

    it('bad input and unknown jobs are tool errors that say so', async () => {
        assert.match(await failure(client, `${OP}_start`, { items: 'many' }), /input\.items/);
        for (const suffix of ['status', 'result', 'cancel']) {
            assert.match(await failure(client, `${OP}_${suffix}`, { job_id: 'job_nope' }), /no job/,
                `${OP}_${suffix}`);
        }
    });
});

describe('MCP Tasks through the TypeScript SDK client', { timeout: 120_000 }, () => {
    let client;
    const notifications = [];
    before(async () => {
        assert.ok(URL_ENV, 'CRANK_MCP_URL must be set');
        client = await connect('crank-e2e-tasks', {
            onTaskStatus: (notification) => notifications.push(notification.params),
        });
    });

    it('initialize (2025-11-25) declares tasks: cancel and tools/call, no list without auth', async () => {
        const caps = client.getServerCapabilities();
        assert.ok(caps.tasks, JSON.stringify(caps));
        assert.ok(caps.tasks.requests?.tools?.call, JSON.stringify(caps.tasks));
        assert.ok(caps.tasks.cancel, JSON.stringify(caps.tasks));
        // with-crankd.sh runs without auth: task ids are the only protection, so no tasks/list.
        assert.equal(caps.tasks.list, undefined, JSON.stringify(caps.tasks));
        assert.equal(client.isToolTask(`${OP}_start`), true);
        assert.equal(client.isToolTask(`${OP}_status`), false);
    });

    it('callToolStream (no cached outputSchema): taskCreated, taskStatus, then the items', async () => {
        // A client that never listed the tools: callToolStream needs `task` explicitly and does
        // not check the result against j_report_start's outputSchema (see the next test).
        const plain = await connect('crank-e2e-tasks-stream', { listTools: false });
        const messages = [];
        const stream = plain.experimental.tasks.callToolStream(
            { name: `${OP}_start`, arguments: { items: 3, delay_ms: 300 } }, CallToolResultSchema,
            { timeout: REQUEST_TIMEOUT, task: { ttl: 120_000 } });
        for await (const message of stream) messages.push(message);
        const types = messages.map((m) => m.type);
        assert.equal(types[0], 'taskCreated', JSON.stringify(messages));
        assert.equal(types.at(-1), 'result', JSON.stringify(messages));
        const { task } = messages[0];
        assert.equal(task.status, 'working');
        assert.equal(task.ttl, 120_000);
        assert.ok(!Number.isNaN(Date.parse(task.createdAt)));
        assert.ok(Number.isInteger(task.pollInterval));
        const statuses = messages.filter((m) => m.type === 'taskStatus').map((m) => m.task.status);
        assert.equal(statuses.at(-1), 'completed', JSON.stringify(messages));
        const { result } = messages.at(-1);
        assert.equal(result.isError ?? false, false, JSON.stringify(result));
        assertItems(result.structuredContent, 3);
        assert.equal(result._meta?.[RELATED_TASK_META_KEY]?.taskId, task.taskId);
        // The task is the job: the job tools see it, from any session of the agent.
        const status = await call(client, `${OP}_status`, { job_id: task.taskId });
        assert.equal(status.status, 'succeeded');
    });

    it('callToolStream after tools/list: the task result passes the SDK outputSchema check', async () => {
        const messages = [];
        const stream = client.experimental.tasks.callToolStream(
            { name: `${OP}_start`, arguments: { items: 2, delay_ms: 200 } }, CallToolResultSchema,
            { timeout: REQUEST_TIMEOUT });
        for await (const message of stream) messages.push(message);
        assert.equal(messages[0]?.type, 'taskCreated', JSON.stringify(messages));
        const last = messages.at(-1);
        assert.equal(last.type, 'result', `${last.type}: ${last.error?.message}`);
        assertItems(last.result.structuredContent, 2);
    });

    it('tasks/result blocks until the end and returns the CallToolResult with related-task', async () => {
        const task = await createTask(client, { items: 2, delay_ms: 600 });
        const got = await client.experimental.tasks.getTask(task.taskId, { timeout: REQUEST_TIMEOUT });
        assert.equal(got.taskId, task.taskId);
        assert.ok(['working', 'completed'].includes(got.status), JSON.stringify(got));
        const t0 = Date.now();
        const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema,
            { timeout: REQUEST_TIMEOUT });
        assert.ok(Date.now() - t0 < 15_000);
        assert.equal(result.isError ?? false, false, JSON.stringify(result));
        assertItems(result.structuredContent, 2);
        assert.deepEqual(JSON.parse(result.content[0].text), result.structuredContent);
        assert.equal(result._meta?.[RELATED_TASK_META_KEY]?.taskId, task.taskId);
        const done = await client.experimental.tasks.getTask(task.taskId, { timeout: REQUEST_TIMEOUT });
        assert.equal(done.status, 'completed', JSON.stringify(done));
        // Terminal: cancelling it is -32602.
        await rejectsWithCode(client.experimental.tasks.cancelTask(task.taskId, { timeout: REQUEST_TIMEOUT }),
            -32602, /terminal/);
    });

    it('a failing task ends failed; tasks/result is the tool error with the reason', async () => {
        const plain = await connect('crank-e2e-tasks-fail', { listTools: false });
        const messages = [];
        const stream = plain.experimental.tasks.callToolStream(
            { name: `${OP}_start`, arguments: { items: 3, fail_after: 1 } }, CallToolResultSchema,
            { timeout: REQUEST_TIMEOUT, task: {} });
        for await (const message of stream) messages.push(message);
        const created = messages.find((m) => m.type === 'taskCreated');
        assert.ok(created, JSON.stringify(messages));
        const statuses = messages.filter((m) => m.type === 'taskStatus').map((m) => m.task);
        assert.equal(statuses.at(-1)?.status, 'failed', JSON.stringify(messages));
        assert.match(statuses.at(-1).statusMessage ?? '', /synthetic upstream failure/);
        assert.equal(messages.at(-1).type, 'error');
        const result = await plain.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema,
            { timeout: REQUEST_TIMEOUT });
        assert.equal(result.isError, true, JSON.stringify(result));
        assert.match(result.content[0].text, /synthetic upstream failure after 1 items/);
        assert.equal(result._meta?.[RELATED_TASK_META_KEY]?.taskId, created.task.taskId);
    });

    it('tasks/cancel moves a live task to cancelled before it answers; a waiting tasks/result ends', async () => {
        const task = await createTask(client, { items: 1, delay_ms: 30_000 });
        const waiting = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema,
            { timeout: REQUEST_TIMEOUT });
        await sleep(200);
        const t0 = Date.now();
        const cancelled = await client.experimental.tasks.cancelTask(task.taskId, { timeout: REQUEST_TIMEOUT });
        assert.equal(cancelled.taskId, task.taskId);
        assert.equal(cancelled.status, 'cancelled', JSON.stringify(cancelled));
        const got = await client.experimental.tasks.getTask(task.taskId, { timeout: REQUEST_TIMEOUT });
        assert.equal(got.status, 'cancelled', JSON.stringify(got));
        const result = await waiting;
        assert.ok(Date.now() - t0 < 10_000, 'the blocked tasks/result answered soon after the cancel');
        assert.equal(result.isError, true, JSON.stringify(result));
        assert.match(result.content[0].text, /cancelled/);
        assert.equal(result._meta?.[RELATED_TASK_META_KEY]?.taskId, task.taskId);
        // The job tools agree; a second tasks/cancel is -32602 (terminal status).
        assert.equal((await call(client, `${OP}_status`, { job_id: task.taskId })).status, 'cancelled');
        await rejectsWithCode(client.experimental.tasks.cancelTask(task.taskId, { timeout: REQUEST_TIMEOUT }),
            -32602, /terminal/);
    });

    it('a task outlives its session: another connection gets it and its result', async () => {
        const first = await connect('crank-e2e-tasks-first', { listTools: false });
        const task = await createTask(first, { items: 2, delay_ms: 500 });
        await first.close();
        const second = await connect('crank-e2e-tasks-second', { listTools: false });
        const result = await second.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema,
            { timeout: REQUEST_TIMEOUT });
        assertItems(result.structuredContent, 2);
        const got = await second.experimental.tasks.getTask(task.taskId, { timeout: REQUEST_TIMEOUT });
        assert.equal(got.status, 'completed');
    });

    it('unknown task ids are -32602; a task on a tool without taskSupport is -32601', async () => {
        await rejectsWithCode(client.experimental.tasks.getTask('job_nope', { timeout: REQUEST_TIMEOUT }), -32602);
        await rejectsWithCode(client.experimental.tasks.getTaskResult('job_nope', CallToolResultSchema,
            { timeout: REQUEST_TIMEOUT }), -32602);
        await rejectsWithCode(client.experimental.tasks.cancelTask('job_nope', { timeout: REQUEST_TIMEOUT }), -32602);
        await rejectsWithCode(client.request(
            { method: 'tools/call', params: { name: `${OP}_status`, arguments: { job_id: 'x' }, task: {} } },
            CreateTaskResultSchema, { timeout: REQUEST_TIMEOUT }), -32601);
    });

    it('notifications/tasks/status reach the creating session\'s GET stream', async () => {
        // The SDK opens its GET stream right after initialize; the job takes long enough to end
        // after that.
        const task = await createTask(client, { items: 1, delay_ms: 1_000 });
        const deadline = Date.now() + 15_000;
        let final;
        while (Date.now() < deadline && !final) {
            final = notifications.find((n) => n.taskId === task.taskId && n.status === 'completed');
            if (!final) await sleep(50);
        }
        const mine = notifications.filter((n) => n.taskId === task.taskId);
        assert.ok(final, `a completed notification for ${task.taskId}: ${JSON.stringify(mine)}`);
        assert.ok(!Number.isNaN(Date.parse(final.lastUpdatedAt)));
        assert.equal(final._meta?.[RELATED_TASK_META_KEY], undefined, 'no related-task _meta');
    });
});
