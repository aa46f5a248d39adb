// Session tools (_start, _poll, _stop) through the official TypeScript SDK client: crankd loads the
// synthetic-stream fixture plugin (CRANK_EXTRA_CONFIG, see tests/CMakeLists.txt) and publishes
// session operations. The SDK client checks every structuredContent against the tool's
// outputSchema, so a result that does not match what crankd declares fails here.
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-sessions.test.mjs

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { REQUEST_TIMEOUT, call } from './tool-calls.mjs';
const URL_ENV = process.env.CRANK_MCP_URL;

async function connect(name) {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_ENV)));
    return client;
}

describe('session tools through the TypeScript SDK client', { timeout: 90_000 }, () => {
    let client;
    before(async () => {
        assert.ok(URL_ENV, 'CRANK_MCP_URL must be set');
        client = await connect('crank-e2e-sessions');
    });
    after(async () => {
        await client?.close();
    });

    it('publishes _start, _poll and _stop with object outputSchemas', async () => {
        const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
        for (const suffix of ['start', 'poll', 'stop']) {
            const tool = tools.find((t) => t.name === `s_pause_${suffix}`);
            assert.ok(tool, `s_pause_${suffix} is listed`);
            assert.equal(tool.outputSchema?.type, 'object');
        }
        const poll = tools.find((t) => t.name === 's_pause_poll');
        assert.deepEqual(poll.inputSchema.required, ['session_id']);
    });

    it('pages by cursor, repeats a page for the same cursor, loses nothing under pause', async () => {
        const started = await call(client, 's_pause_start', { items: 40 });
        assert.equal(started.status, 'active');
        assert.equal(started.limits.overflow_policy, 'pause');
        assert.ok(!Number.isNaN(Date.parse(started.expires_at)));
        const seen = [];
        let cursor = '0';
        for (let i = 0; i < 200 && seen.length < 40; i++) {
            const page = await call(client, 's_pause_poll', { session_id: started.session_id, cursor, max_items: 7 });
            const again = await call(client, 's_pause_poll', { session_id: started.session_id, cursor, max_items: 7 });
            // The same cursor gives the same items (and, on a page that was not full, maybe newer
            // ones after them).
            assert.deepEqual(again.items.slice(0, page.items.length), page.items);
            seen.push(...page.items.map((item) => item.seq));
            cursor = page.cursor;
            if (page.items.length === 0) await sleep(20);
        }
        assert.deepEqual(seen, Array.from({ length: 40 }, (_, i) => i + 1));
        const stopped = await call(client, 's_pause_stop', { session_id: started.session_id });
        assert.equal(stopped.status, 'stopped');
        assert.equal(stopped.item_count, 40);
        assert.equal(stopped.dropped_count, 0);
    });

    it('drop_oldest keeps the newest items and counts the dropped ones', async () => {
        const started = await call(client, 's_drop_start', { items: 30 });
        let page;
        for (let i = 0; i < 100; i++) {
            page = await call(client, 's_drop_poll', { session_id: started.session_id, cursor: '0', max_items: 1 });
            if (page.status === 'completed') break;
            await sleep(20);
        }
        const all = await call(client, 's_drop_poll', { session_id: started.session_id });
        assert.deepEqual(all.items.map((item) => item.seq), Array.from({ length: 10 }, (_, i) => i + 21));
        assert.equal(all.dropped_count, 20);
    });

    it('a session outlives the client that started it, and expires when nobody polls', async () => {
        const other = await connect('crank-e2e-sessions-other');
        const started = await call(other, 's_short_start', { items: -1, rate: 20 });
        await other.close();
        const alive = await call(client, 's_short_poll', { session_id: started.session_id });
        assert.equal(alive.status, 'active', 'a client that disconnects does not stop its session');
        await sleep(1_200);  // idle_timeout_ms is 500
        const gone = await call(client, 's_short_poll', { session_id: started.session_id });
        assert.equal(gone.status, 'expired');
    });

    it('a REST session reads the REST fixture\'s SSE stream in the background, in order', async () => {
        const started = await call(client, 'r_sse_start', { count: 30, rate: 200 });
        assert.equal(started.status, 'active');
        const seen = [];
        let cursor = '0';
        let status = 'active';
        for (let i = 0; i < 300 && (seen.length < 30 || status === 'active'); i++) {
            const page = await call(client, 'r_sse_poll', { session_id: started.session_id, cursor, max_items: 8 });
            seen.push(...page.items.map((item) => item.seq));
            cursor = page.cursor;
            status = page.status;
            if (page.items.length === 0) await sleep(20);
        }
        assert.deepEqual(seen, Array.from({ length: 30 }, (_, i) => i + 1));
        assert.equal(status, 'completed', 'the upstream ended its stream');
    });

    it('an unknown session is a tool error that says so', async () => {
        const result = await client.callTool(
            { name: 's_pause_poll', arguments: { session_id: 'ses_nope' } }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(result.isError, true);
        assert.match(result.content[0].text, /no session/);
    });
});
