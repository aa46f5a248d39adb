// A 2026-07-28-only upstream federated through crankd, as both eras of downstream client see it:
// crankd (CRANK_EXTRA_CONFIG, see tests/CMakeLists.txt) fronts modern-server.mjs --modern-only
// twice, over stdio ("ms", tools ms_*) and over Streamable HTTP ("mh", tools mh_*). Its ask_name
// tool answers input_required (MRTR) with an elicitation and a requestState; crankd relays it
// (issue 26): to a 2026 client (the SDK v2 Client) as input_required with the upstream's state
// sealed in crankd's own, to a 2025 client (the SDK v1 Client) as elicitation/create on the call's
// stream; the answers go back upstream as inputResponses with the state byte for byte. Its tool
// changes reach crankd through the subscriptions/listen crankd holds open upstream.
//
//   CRANK_MCP_URL=http://127.0.0.1:8080/mcp node --test tests/e2e/sdk-modern-upstream.test.mjs

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const URL_ENV = process.env.CRANK_MCP_URL;
const TEST_TIMEOUT = 30_000;
const OPTS = { timeout: 15_000 };
const UPSTREAMS = ['ms', 'mh'];

const clients = [];
after(async () => {
    await Promise.allSettled(clients.map(c => c.close()));
});

/** A 2026-07-28 client (SDK v2, pinned); `asked` records the elicitation messages it answers. */
async function modernClient(capabilities, asked) {
    const client = new ClientV2({ name: 'crank-e2e-modern-upstream', version: '1.0.0' },
        { versionNegotiation: { mode: { pin: '2026-07-28' } }, capabilities });
    if (capabilities.elicitation) {
        client.setRequestHandler('elicitation/create', async request => {
            asked.push(request.params.message);
            return { action: 'accept', content: { name: 'Ada' } };
        });
    }
    clients.push(client);
    await client.connect(new TransportV2(new URL(URL_ENV)));
    return client;
}

/** A 2025-11-25 client (SDK v1, a session) that answers elicitation/create on the call's stream. */
async function legacyClient(asked) {
    const client = new ClientV1({ name: 'crank-e2e-legacy', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    client.setRequestHandler(ElicitRequestSchema, async request => {
        asked.push(request.params.message);
        return { action: 'accept', content: { name: 'Grace' } };
    });
    clients.push(client);
    await client.connect(new TransportV1(new URL(URL_ENV)));
    return client;
}

function withTimeout(promise, ms, what) {
    let timer;
    return Promise.race([
        promise,
        new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`${what}: none in ${ms} ms`)), ms);
        }),
    ]).finally(() => clearTimeout(timer));
}

/** tools/call with either SDK (v1 takes a result schema before the options). */
function call(client, name, args) {
    const params = { name, arguments: args };
    return client instanceof ClientV1 ? client.callTool(params, undefined, OPTS) : client.callTool(params, OPTS);
}

describe('a modern-only upstream through crankd', { skip: !URL_ENV && 'CRANK_MCP_URL is not set' }, () => {
    it('is published over stdio and HTTP, and its plain tools answer both eras', { timeout: TEST_TIMEOUT }, async () => {
        const modern = await modernClient({}, []);
        const legacy = await legacyClient([]);
        for (const client of [modern, legacy]) {
            const { tools } = await client.listTools(undefined, OPTS);
            const names = tools.map(t => t.name);
            for (const u of UPSTREAMS) {
                assert.ok(names.includes(`${u}_echo`) && names.includes(`${u}_ask_name`), names.join(','));
                const r = await call(client, `${u}_echo`, { text: `via ${u}` });
                assert.equal(r.content[0].text, `via ${u}`);
            }
        }
    });

    it("relays the upstream's input_required to a 2026 client as input_required, and its answers back", { timeout: TEST_TIMEOUT }, async () => {
        const asked = [];
        const client = await modernClient({ elicitation: {} }, asked);
        for (const u of UPSTREAMS) {
            const r = await call(client, `${u}_ask_name`, {});
            assert.equal(r.isError ?? false, false, JSON.stringify(r));
            assert.equal(r.content[0].text, 'hello Ada');
        }
        assert.deepEqual(asked, ['Your name?', 'Your name?']);
    });

    it("asks a 2025 client the upstream's question on the call's stream", { timeout: TEST_TIMEOUT }, async () => {
        const asked = [];
        const client = await legacyClient(asked);
        for (const u of UPSTREAMS) {
            const r = await call(client, `${u}_ask_name`, {});
            assert.equal(r.isError ?? false, false, JSON.stringify(r));
            assert.equal(r.content[0].text, 'hello Grace');
        }
        assert.deepEqual(asked, ['Your name?', 'Your name?']);
    });

    it("hears the upstream's tool changes through subscriptions/listen and tells its own listens", { timeout: TEST_TIMEOUT }, async () => {
        const client = await modernClient({}, []);
        let changed = () => {};
        client.setNotificationHandler('notifications/tools/list_changed', () => changed());
        const subscription = await client.listen({ toolsListChanged: true }, OPTS);
        for (const u of UPSTREAMS) {
            const name = `t${process.pid}_${u}`;
            const notified = new Promise(resolve => { changed = resolve; });
            const r = await call(client, `${u}_add_tool`, { name });
            assert.equal(r.content[0].text, `added ${name}`);
            // Nothing but the upstream's listen tells crankd: it reads the list again and tells
            // the listens of its own clients.
            await withTimeout(notified, 10_000, `tools/list_changed after ${u}_add_tool`);
            const fresh = await modernClient({}, []);  // no cached list
            const names = (await fresh.listTools(undefined, OPTS)).tools.map(t => t.name);
            assert.ok(names.includes(`${u}_${name}`), `${u}_${name} not in ${names.join(',')}`);
            const called = await call(fresh, `${u}_${name}`, {});
            assert.equal(called.content[0].text, `I am ${name}`);
        }
        await subscription.close();
    });

    it('a 2026 client that cannot be asked gets an error naming the capability, not a question', { timeout: TEST_TIMEOUT }, async () => {
        const asked = [];
        const client = await modernClient({}, asked);
        for (const u of UPSTREAMS) {
            await assert.rejects(call(client, `${u}_ask_name`, {}), e => {
                assert.match(String(e?.message), /elicitation/i, String(e));
                return true;
            });
        }
        assert.deepEqual(asked, []);
    });
});
