// Helpers for sdk-federation.test.mjs: the two upstreams crankd federates there, started directly
// over stdio with the SDK's StdioClientTransport (to compare what crankd publishes with what the
// servers themselves say), and a wire log of what an SDK client sends and receives.
//
// server-everything lists some tools only for clients that declare the matching capabilities, and
// only after notifications/initialized (see /work/notes/everything-findings.md): the direct client
// declares what crankd declares upstream (roots, sampling, elicitation form+url; no tasks.requests)
// and waits for those tools.

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const EVERYTHING_ENTRY = path.join(HERE, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const FIXTURE_ENTRY = path.join(HERE, 'reference-server.mjs');

/** The client capabilities crankd declares to its upstreams. */
export const UPSTREAM_CLIENT_CAPABILITIES = { roots: { listChanged: true }, sampling: {}, elicitation: { form: {}, url: {} } };

/** server-everything's tools that exist only for a client with those capabilities. */
export const EVERYTHING_CONDITIONAL_TOOLS = [
    'get-roots-list', 'trigger-elicitation-request', 'trigger-url-elicitation', 'trigger-sampling-request',
    'simulate-research-query',
];

async function connectStdio(name, args, timeout) {
    const client = new Client({ name, version: '1.0.0' }, { capabilities: UPSTREAM_CLIENT_CAPABILITIES });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [] }));
    // A scrubbed environment: server-everything's get-env returns all of it.
    const transport = new StdioClientTransport({
        command: process.execPath, args, cwd: HERE, env: { PATH: path.dirname(process.execPath) }, stderr: 'ignore',
    });
    await client.connect(transport, { timeout });
    return client;
}

/** server-everything over stdio, once its conditional tools are registered (bounded). */
export async function connectEverything({ timeout = 20_000 } = {}) {
    const client = await connectStdio('crank-e2e-everything-direct', [EVERYTHING_ENTRY, 'stdio'], timeout);
    const deadline = Date.now() + timeout;
    for (;;) {
        const { tools } = await client.listTools(undefined, { timeout });
        const names = new Set(tools.map((t) => t.name));
        if (EVERYTHING_CONDITIONAL_TOOLS.every((n) => names.has(n))) return client;
        if (Date.now() > deadline) {
            await client.close();
            throw new Error(`server-everything did not register ${EVERYTHING_CONDITIONAL_TOOLS}: ${[...names]}`);
        }
        await sleep(100);
    }
}

/** reference-server.mjs --stdio. */
export async function connectFixture({ timeout = 20_000 } = {}) {
    return connectStdio('crank-e2e-fixture-direct', [FIXTURE_ENTRY, '--stdio'], timeout);
}

/** Every page of a paginated list (bounded): `list(cursor)` returns {items, nextCursor}. */
export async function allPages(list, { maxPages = 100 } = {}) {
    const items = [];
    let cursor;
    for (let page = 0; page < maxPages; page++) {
        const result = await list(cursor);
        items.push(...result.items);
        if (!result.nextCursor) return items;
        cursor = result.nextCursor;
    }
    throw new Error(`still a nextCursor after ${maxPages} pages`);
}

/**
 * Records every JSON-RPC message a connected client's transport receives (`in`) and sends (`out`),
 * in order, so tests can check what came before what on the wire.
 */
export function wireLog(client) {
    const transport = client.transport;
    const log = [];
    const onmessage = transport.onmessage;
    transport.onmessage = (message, extra) => {
        log.push({ dir: 'in', at: Date.now(), message });
        onmessage?.call(transport, message, extra);
    };
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
        log.push({ dir: 'out', at: Date.now(), message });
        return send(message, options);
    };
    return log;
}
