// The official TypeScript SDK v2 client (@modelcontextprotocol/client, pinned in
// package-lock.json) against crankd in the stateless MCP 2026-07-28 era, pinned to that revision
// and in 'auto' mode (server/discover first).
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-v2-client.test.mjs
//
// The server behind the URL is crankd-test-tools: echo {text}, slow_progress {steps, delay_ms},
// add_tool {name} (publishes a tool: the set of tools changes). Every test is bounded.

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const URL_ENV = process.env.CRANK_MCP_URL;
const TEST_TIMEOUT = 30_000;
const REQUEST_TIMEOUT = 15_000;

const clients = [];
after(async () => {
    await Promise.allSettled(clients.map(c => c.close()));
});

async function connect(mode, capabilities = {}) {
    const client = new Client({ name: 'crank-e2e-v2', version: '1.0.0' }, { versionNegotiation: { mode }, capabilities });
    clients.push(client);
    await client.connect(new StreamableHTTPClientTransport(new URL(URL_ENV)));
    return client;
}

function withTimeout(promise, ms, what) {
    let timer;
    return Promise.race([
        promise,
        new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
        }),
    ]).finally(() => clearTimeout(timer));
}

describe('SDK v2 client, MCP 2026-07-28', { skip: !URL_ENV && 'CRANK_MCP_URL is not set' }, () => {
    it('pinned to 2026-07-28: discovers, lists and calls statelessly', { timeout: TEST_TIMEOUT }, async () => {
        const client = await connect({ pin: '2026-07-28' });
        assert.equal(client.getProtocolEra(), 'modern');
        const discovered = client.getDiscoverResult();
        assert.ok(discovered?.supportedVersions.includes('2026-07-28'), JSON.stringify(discovered));
        const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
        assert.ok(tools.some(t => t.name === 'echo'), tools.map(t => t.name).join(','));
        const result = await client.callTool({ name: 'echo', arguments: { text: 'modern hello' } },
            { timeout: REQUEST_TIMEOUT });
        assert.equal(result.isError, false);
        assert.equal(result.content[0].text, 'modern hello');
    });

    it("'auto' mode picks the 2026-07-28 era", { timeout: TEST_TIMEOUT }, async () => {
        const client = await connect('auto');
        assert.equal(client.getProtocolEra(), 'modern');
        const result = await client.callTool({ name: 'echo', arguments: { text: 'auto' } }, { timeout: REQUEST_TIMEOUT });
        assert.equal(result.content[0].text, 'auto');
    });

    it('progress arrives on the call\'s own stream', { timeout: TEST_TIMEOUT }, async () => {
        const client = await connect({ pin: '2026-07-28' });
        const seen = [];
        const result = await client.callTool({ name: 'slow_progress', arguments: { steps: 4, delay_ms: 20 } }, {
            timeout: REQUEST_TIMEOUT,
            onprogress: p => seen.push(p.progress),
        });
        assert.match(result.content[0].text, /done 4/);
        assert.deepEqual(seen, [1, 2, 3, 4]);
    });

    it('runs input_required rounds through its handlers: elicitation, sampling, roots, a state per round', { timeout: TEST_TIMEOUT }, async () => {
        const client = await connect({ pin: '2026-07-28' }, { elicitation: {}, sampling: {}, roots: {} });
        const asked = [];
        client.setRequestHandler('elicitation/create', async request => {
            asked.push(request.params.message);
            return { action: 'accept', content: /color/.test(request.params.message) ? { color: 'blue' } : { name: 'Alice' } };
        });
        client.setRequestHandler('sampling/createMessage', async () => ({
            role: 'assistant', content: { type: 'text', text: 'Hi' }, model: 'test-model', stopReason: 'endTurn',
        }));
        client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));

        const rounds = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} }, { timeout: REQUEST_TIMEOUT });
        assert.equal(rounds.content[0].text, 'Alice likes blue');
        assert.deepEqual(asked, ['Step 1: What is your name?', 'Step 2: What is your favorite color?']);
        const all = await client.callTool({ name: 'test_input_required_result_multiple_inputs', arguments: {} }, { timeout: REQUEST_TIMEOUT });
        assert.equal(all.content[0].text, 'Hi Alice (file:///work)');
        const state = await client.callTool({ name: 'test_input_required_result_request_state', arguments: {} }, { timeout: REQUEST_TIMEOUT });
        assert.match(state.content[0].text, /^state-ok/);
    });

    it("bridges a federated 2025-era upstream's sampling, elicitation and roots requests through input_required rounds", { timeout: TEST_TIMEOUT }, async () => {
        const client = await connect({ pin: '2026-07-28' }, { elicitation: {}, sampling: {}, roots: {} });
        client.setRequestHandler('elicitation/create', async () => ({ action: 'accept', content: { username: 'alice', email: 'a@example.com' } }));
        client.setRequestHandler('sampling/createMessage', async request => ({
            role: 'assistant', content: { type: 'text', text: `sampled: ${request.params.messages[0].content.text}` }, model: 'test-model', stopReason: 'endTurn',
        }));
        client.setRequestHandler('roots/list', async () => ({ roots: [{ uri: 'file:///bridged', name: 'bridged' }] }));

        const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who?' } }, { timeout: REQUEST_TIMEOUT });
        assert.equal(elicited.content[0].text, 'User response: action=accept, content={"username":"alice","email":"a@example.com"}');
        const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'capital?' } }, { timeout: REQUEST_TIMEOUT });
        assert.equal(sampled.content[0].text, 'LLM response: sampled: capital?');
        const listed = await client.callTool({ name: 'test_list_roots', arguments: {} }, { timeout: REQUEST_TIMEOUT });
        assert.equal(listed.content[0].text, 'Roots: file:///bridged');
    });

    it('a listen sees tools/list_changed when the tools change', { timeout: TEST_TIMEOUT }, async () => {
        const client = await connect({ pin: '2026-07-28' });
        let changed;
        const notified = new Promise(resolve => {
            changed = resolve;
        });
        client.setNotificationHandler('notifications/tools/list_changed', () => changed());
        const subscription = await client.listen({ toolsListChanged: true }, { timeout: REQUEST_TIMEOUT });
        assert.equal(subscription.honoredFilter.toolsListChanged, true);
        const name = `fresh_${process.pid}_${Date.now()}`;
        const added = await client.callTool({ name: 'add_tool', arguments: { name } }, { timeout: REQUEST_TIMEOUT });
        assert.equal(added.content[0].text, `added ${name}`);
        await withTimeout(notified, 10_000, 'tools/list_changed on the listen');
        await subscription.close();
        assert.equal(await withTimeout(subscription.closed, 10_000, 'the listen closing'), 'local');
        const { tools } = await client.listTools(undefined, { timeout: REQUEST_TIMEOUT });
        assert.ok(tools.some(t => t.name === name));
    });
});
