// Window tools through the official TypeScript SDK client: crankd loads the aggregators plugin and
// the synthetic-stream fixture plugin (CRANK_EXTRA_CONFIG, see tests/CMakeLists.txt) and publishes
// one window per aggregation mode. The SDK client checks every structuredContent against the
// tool's outputSchema (it compiles the schemas from tools/list), so a result that does not match
// the contract that crankd declares fails here.
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-windows.test.mjs

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const URL_ENV = process.env.CRANK_MCP_URL;
const REQUEST_TIMEOUT = 20_000;

describe('window tools through the TypeScript SDK client', { timeout: 90_000 }, () => {
    let client;
    before(async () => {
        assert.ok(URL_ENV, 'CRANK_MCP_URL must be set');
        client = new Client({ name: 'crank-e2e-windows', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(URL_ENV)));
    });
    after(async () => {
        await client?.close();
    });

    it('lists every window with an object outputSchema', async () => {
        const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
        for (const mode of ['raw_items', 'summary_only', 'summary_plus_samples', 'stats', 'latest_state']) {
            const tool = tools.find((t) => t.name === `w_${mode}`);
            assert.ok(tool, `w_${mode} is listed`);
            assert.equal(tool.outputSchema?.type, 'object');
            assert.ok(tool.outputSchema.properties.stop_reason);
        }
    });

    for (const mode of ['raw_items', 'summary_only', 'summary_plus_samples', 'stats', 'latest_state']) {
        it(`${mode}: the result matches the declared outputSchema`, async () => {
            const result = await client.callTool(
                { name: `w_${mode}`, arguments: { items: 25 } }, undefined, { timeout: REQUEST_TIMEOUT });
            assert.equal(result.isError ?? false, false, JSON.stringify(result));
            const r = result.structuredContent;
            assert.equal(r.stop_reason, 'upstream_end');
            assert.equal(r.item_count, 25);
            assert.equal(r.window_complete, true);
            assert.equal(r.has_more, false);
            assert.deepEqual(JSON.parse(result.content[0].text), r, 'the text block repeats the result');
        });
    }

    it('a limit-cut window reports it, and progress arrives while collecting', async () => {
        const progress = [];
        const result = await client.callTool(
            { name: 'w_raw_items', arguments: { items: -1, rate: 200 } }, undefined,
            { timeout: REQUEST_TIMEOUT, onprogress: (p) => progress.push(p.progress) });
        const r = result.structuredContent;
        assert.equal(r.stop_reason, 'max_items');
        assert.equal(r.truncated, true);
        assert.equal(r.item_count, 60);
        assert.ok(progress.length >= 1, 'at least one progress notification');
        for (let i = 1; i < progress.length; i++) {
            assert.ok(progress[i] > progress[i - 1], 'progress grows');
        }
    });

    it('invalid input is a tool error naming the path', async () => {
        const result = await client.callTool(
            { name: 'w_stats', arguments: { items: 'lots' } }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(result.isError, true);
        assert.match(result.content[0].text, /input\.items/);
    });
});
