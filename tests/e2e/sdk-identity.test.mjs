// Identity, isolation and limits through the official TypeScript SDK client: crankd runs with
// auth.mode "api_key" (CRANK_EXTRA_CONFIG and the agents' keys, see tests/CMakeLists.txt); each
// client sends its agent's key as `Authorization: Bearer`. Sessions, jobs and tasks of one agent
// are "not found" for another; per-agent limits are named; a poll/stop race loses nothing; a
// workspace's operations are on its own endpoint.
//
//   CRANK_MCP_URL=... KEY_ALICE=... KEY_BOB=... KEY_CAROL=... node --test sdk-identity.test.mjs

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

import { REQUEST_TIMEOUT, call, callRaw, failure } from './tool-calls.mjs';
const URL_ENV = process.env.CRANK_MCP_URL;
const KEYS = { alice: process.env.KEY_ALICE, bob: process.env.KEY_BOB, carol: process.env.KEY_CAROL };

const clients = [];

async function connect(agent, path = '/mcp') {
    const url = new URL(URL_ENV);
    url.pathname = path;
    const client = new Client({ name: `crank-e2e-${agent}`, version: '1.0.0' });
    const headers = KEYS[agent] ? { Authorization: `Bearer ${KEYS[agent]}` } : {};
    await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers } }));
    clients.push(client);
    await client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
    return client;
}

after(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
});

describe('identity, isolation and limits through the TypeScript SDK client', { timeout: 120_000 }, () => {
    it('a client without an agent key is refused', async () => {
        const client = new Client({ name: 'crank-e2e-nobody', version: '1.0.0' });
        await assert.rejects(client.connect(new StreamableHTTPClientTransport(new URL(URL_ENV))));
    });

    it('another agent\'s sessions, jobs and tasks are not found, and stay untouched', async () => {
        const alice = await connect('alice');
        const bob = await connect('bob');
        const session = await call(alice, 'feed_start', { items: -1, rate: 50 });
        const job = await call(alice, 'job_start', { delay_ms: 30_000 });
        const created = await alice.request(
            { method: 'tools/call', params: { name: 'job_start', arguments: { delay_ms: 30_000 }, task: {} } },
            CreateTaskResultSchema, { timeout: REQUEST_TIMEOUT });
        const taskId = created.task.taskId;

        for (const tool of ['feed_poll', 'feed_stop']) {
            assert.match(await failure(bob, tool, { session_id: session.session_id }), /no session/);
        }
        for (const tool of ['job_status', 'job_result', 'job_cancel']) {
            assert.match(await failure(bob, tool, { job_id: job.job_id }), /no job/);
        }
        await assert.rejects(bob.experimental.tasks.getTask(taskId, { timeout: REQUEST_TIMEOUT }),
            (error) => error instanceof McpError && error.code === -32602);
        await assert.rejects(bob.experimental.tasks.cancelTask(taskId, { timeout: REQUEST_TIMEOUT }),
            (error) => error instanceof McpError && error.code === -32602);
        const bobs = await bob.experimental.tasks.listTasks(undefined, { timeout: REQUEST_TIMEOUT });
        assert.ok(!bobs.tasks.some((t) => t.taskId === taskId), 'tasks/list shows only the caller\'s tasks');
        const alices = await alice.experimental.tasks.listTasks(undefined, { timeout: REQUEST_TIMEOUT });
        assert.ok(alices.tasks.some((t) => t.taskId === taskId));

        // Alice's things went on untouched.
        assert.equal((await call(alice, 'feed_poll', { session_id: session.session_id })).status, 'active');
        assert.ok(['queued', 'running'].includes((await call(alice, 'job_status', { job_id: job.job_id })).status));
        assert.equal((await alice.experimental.tasks.getTask(taskId, { timeout: REQUEST_TIMEOUT })).status, 'working');
        await call(alice, 'feed_stop', { session_id: session.session_id });
        await call(alice, 'job_cancel', { job_id: job.job_id });
        await alice.experimental.tasks.cancelTask(taskId, { timeout: REQUEST_TIMEOUT });
    });

    it('per-agent limits on sessions and jobs are enforced and named', async () => {
        const bob = await connect('bob');  // limits: 2 sessions, 2 jobs
        const sessions = [];
        for (let i = 0; i < 2; i++) sessions.push(await call(bob, 'feed_start', { items: -1, rate: 5 }));
        assert.match(await failure(bob, 'feed_start', { items: -1, rate: 5 }),
            /agent "bob" has 2 open sessions, its limit \(auth\.agents\[\]\.limits\.max_sessions\)/);
        const jobs = [];
        for (let i = 0; i < 2; i++) jobs.push(await call(bob, 'job_start', { delay_ms: 30_000 }));
        assert.match(await failure(bob, 'job_start', { delay_ms: 30_000 }), /auth\.agents\[\]\.limits\.max_jobs/);
        // Stopping and cancelling free the places.
        await call(bob, 'feed_stop', { session_id: sessions[0].session_id });
        await call(bob, 'job_cancel', { job_id: jobs[0].job_id });
        const again = await call(bob, 'feed_start', { items: -1, rate: 5 });
        const jobAgain = await call(bob, 'job_start', { delay_ms: 30_000 });
        for (const s of [sessions[1], again]) await call(bob, 'feed_stop', { session_id: s.session_id });
        for (const j of [jobs[1], jobAgain]) await call(bob, 'job_cancel', { job_id: j.job_id });
    });

    it('polls racing a stop all end with the stopped status, each reading forward', async () => {
        const alice = await connect('alice');
        const started = await call(alice, 'feed_start', { items: -1, rate: 400 });
        let total = 0;
        const poller = async () => {
            let cursor = '0';
            let lastSeq = 0;
            let last;
            for (let i = 0; i < 400; i++) {
                last = await call(alice, 'feed_poll', { session_id: started.session_id, cursor, max_items: 20 });
                for (const item of last.items) {
                    // Another poller may have acknowledged past this one's cursor: it skips ahead,
                    // never back.
                    assert.ok(item.seq > lastSeq, `seq ${item.seq} after ${lastSeq}`);
                    lastSeq = item.seq;
                    total += 1;
                }
                cursor = last.cursor;
                if (last.status !== 'active') return last.status;
                await sleep(5);
            }
            return last?.status;
        };
        const pollers = [poller(), poller(), poller(), poller()];
        await sleep(300);
        const stopped = await call(alice, 'feed_stop', { session_id: started.session_id });
        assert.equal(stopped.status, 'stopped');
        const statuses = await Promise.all(pollers);
        assert.deepEqual(statuses, ['stopped', 'stopped', 'stopped', 'stopped']);
        assert.ok(total > 0);
        // A second stop answers the same final state.
        assert.equal((await call(alice, 'feed_stop', { session_id: started.session_id })).status, 'stopped');
    });

    it('a workspace\'s operations are on its own endpoint, for its own agents', async () => {
        const carol = await connect('carol', '/w/team/mcp');
        const { tools } = await carol.listTools(undefined, { timeout: REQUEST_TIMEOUT });
        assert.ok(tools.some((t) => t.name === 'team_job_start'));
        assert.ok(!tools.some((t) => t.name === 'job_start'));
        const job = await call(carol, 'team_job_start', { delay_ms: 0 });
        for (let i = 0; i < 200; i++) {
            const status = await call(carol, 'team_job_status', { job_id: job.job_id });
            if (status.status === 'succeeded') break;
            await sleep(20);
        }
        assert.equal((await call(carol, 'team_job_result', { job_id: job.job_id })).ready, true);
        await assert.rejects(connect('alice', '/w/team/mcp'));
    });
});
