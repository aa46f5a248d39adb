// A 2026-07-28 upstream's tasks (the Tasks extension) followed by a 2025-11-25 client through
// crankd (issue 26): crankd (CRANK_EXTRA_CONFIG, see tests/CMakeLists.txt) fronts
// modern-reference-server.mjs twice, over stdio ("ts", tools ts_*) and over Streamable HTTP
// ("th", tools th_*). The SDK v1 client asks for tasks the 2025 way (`task` in tools/call,
// tasks/get, tasks/result, tasks/cancel); crankd creates them upstream with the extension
// declared and shows them as 2025 Tasks under ids of its own: tasks/result follows the task with
// tasks/get, asks its questions on the call's stream and answers them with tasks/update; a tool
// the upstream answers at once (greet) becomes a completed task of crankd's. (2026 clients: the
// suite's tasks-* scenarios, e2e.conformance_federated_modern_2026_*.)
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-federated-tasks.test.mjs

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
    CallToolResultSchema,
    CreateTaskResultSchema,
    ElicitRequestSchema,
    McpError,
    RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';

const URL_ENV = process.env.CRANK_MCP_URL;
const TEST_TIMEOUT = 60_000;
const OPTS = { timeout: 20_000 };
const UPSTREAMS = ['ts', 'th'];

const clients = [];
after(async () => {
    await Promise.allSettled(clients.map(c => c.close()));
});

/** A 2025-11-25 client (SDK v1, a session) that answers elicitation/create with `answer`. */
async function legacyClient(asked, answer = { action: 'accept', content: { confirm: true } }) {
    const client = new Client({ name: 'crank-e2e-federated-tasks', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async request => {
        asked.push(request.params);
        return answer;
    });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_ENV)));
    return client;
}

async function createTask(client, name, args) {
    const created = await client.request(
        { method: 'tools/call', params: { name, arguments: args, task: { ttl: 60_000 } } },
        CreateTaskResultSchema, OPTS);
    assert.equal(typeof created.task.taskId, 'string', JSON.stringify(created));
    assert.match(created.task.taskId, /^up-/, 'crankd\'s id, never the upstream\'s');
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

const textOf = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');

describe('a 2026 upstream\'s tasks through crankd, for a 2025 client', { skip: !URL_ENV && 'CRANK_MCP_URL is not set' }, () => {
    it('shows the upstream\'s tools as taskSupport optional', { timeout: TEST_TIMEOUT }, async () => {
        const client = await legacyClient([]);
        const { tools } = await client.listTools(undefined, OPTS);
        for (const u of UPSTREAMS) {
            const compute = tools.find(t => t.name === `${u}_slow_compute`);
            assert.ok(compute, tools.map(t => t.name).join(','));
            assert.equal(compute.execution?.taskSupport, 'optional', JSON.stringify(compute));
        }
    });

    for (const u of UPSTREAMS) {
        it(`${u}: a task created upstream is a 2025 Task; tasks/get follows it, tasks/result gives its result`, { timeout: TEST_TIMEOUT }, async () => {
            const client = await legacyClient([]);
            const task = await createTask(client, `${u}_slow_compute`, { seconds: 1, label: 'federated' });
            assert.equal(task.status, 'working');
            assert.equal(typeof task.ttl, 'number', JSON.stringify(task));  // 2025's names
            assert.equal(typeof task.pollInterval, 'number', JSON.stringify(task));
            assert.equal(task.ttlMs, undefined, 'no 2026 member');
            assert.equal(task.pollIntervalMs, undefined, 'no 2026 member');
            const got = await client.experimental.tasks.getTask(task.taskId, OPTS);
            assert.equal(got.taskId, task.taskId);
            assert.ok(['working', 'completed'].includes(got.status), JSON.stringify(got));
            assert.equal(got.result, undefined, 'a 2025 Task inlines no result');
            const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, OPTS);
            assert.equal(textOf(result), 'computed federated in 1 s');
            assert.equal(result._meta?.[RELATED_TASK_META_KEY]?.taskId, task.taskId);
            const done = await client.experimental.tasks.getTask(task.taskId, OPTS);
            assert.equal(done.status, 'completed');
            // 2025: a task that ended cannot be cancelled.
            await rejectsWithCode(client.experimental.tasks.cancelTask(task.taskId, OPTS), -32602, /completed/);
        });

        it(`${u}: a task's question is asked on tasks/result's stream and answered upstream with tasks/update`, { timeout: TEST_TIMEOUT }, async () => {
            const asked = [];
            const client = await legacyClient(asked);
            const task = await createTask(client, `${u}_confirm_delete`, { filename: 'notes.txt' });
            const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, OPTS);
            assert.equal(textOf(result), "deleted 'notes.txt'");
            assert.equal(asked.length, 1, JSON.stringify(asked));
            assert.match(asked[0].message, /Delete 'notes.txt'\?/);
            assert.equal(asked[0]._meta?.[RELATED_TASK_META_KEY]?.taskId, task.taskId);
        });

        it(`${u}: a tool error completes the task with isError; a JSON-RPC error fails it`, { timeout: TEST_TIMEOUT }, async () => {
            const client = await legacyClient([]);
            const failing = await createTask(client, `${u}_failing_job`, {});
            const result = await client.experimental.tasks.getTaskResult(failing.taskId, CallToolResultSchema, OPTS);
            assert.equal(result.isError, true);
            assert.match(textOf(result), /failing_job failed/);
            const broken = await createTask(client, `${u}_protocol_error_job`, {});
            await rejectsWithCode(
                client.experimental.tasks.getTaskResult(broken.taskId, CallToolResultSchema, OPTS),
                -32603, /an internal error, as planned/);
            assert.equal((await client.experimental.tasks.getTask(broken.taskId, OPTS)).status, 'failed');
        });

        it(`${u}: tasks/cancel stops the upstream's task and answers the cancelled Task`, { timeout: TEST_TIMEOUT }, async () => {
            const client = await legacyClient([]);
            const task = await createTask(client, `${u}_slow_compute`, { seconds: 60 });
            const cancelled = await client.experimental.tasks.cancelTask(task.taskId, OPTS);
            assert.equal(cancelled.taskId, task.taskId);
            assert.equal(cancelled.status, 'cancelled');
            await rejectsWithCode(
                client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, OPTS), -32603, /cancelled/);
        });

        it(`${u}: a tool the upstream answers at once is a completed task of crankd's`, { timeout: TEST_TIMEOUT }, async () => {
            const client = await legacyClient([]);
            const task = await createTask(client, `${u}_greet`, { name: 'Ada' });
            assert.equal(task.status, 'completed');
            const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema, OPTS);
            assert.equal(textOf(result), 'Hello, Ada!');
            assert.equal(result._meta?.[RELATED_TASK_META_KEY]?.taskId, task.taskId);
            await rejectsWithCode(client.experimental.tasks.cancelTask(task.taskId, OPTS), -32602, /completed/);
        });
    }

    it('an unknown id is -32602; a task is its agent\'s, followed from another session too', { timeout: TEST_TIMEOUT }, async () => {
        const client = await legacyClient([]);
        await rejectsWithCode(client.experimental.tasks.getTask('up-0000000000000000deadbeefdeadbeef', OPTS), -32602, /unknown task/);
        const task = await createTask(client, 'ts_slow_compute', { seconds: 0 });
        // Tasks are the agent's (auth none: one anonymous agent), not the session's.
        const other = await legacyClient([]);
        await sleep(200);
        assert.equal((await other.experimental.tasks.getTask(task.taskId, OPTS)).taskId, task.taskId);
    });
});
