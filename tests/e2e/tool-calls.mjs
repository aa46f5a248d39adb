// Helpers shared by the SDK-client tests (sdk-jobs, sdk-sessions, sdk-identity): tools/call
// through the official TypeScript SDK client, with assertions on the CallToolResult.

import assert from 'node:assert/strict';

export const REQUEST_TIMEOUT = 20_000;

/** The CallToolResult of `name`. */
export async function callRaw(client, name, args) {
    return client.callTool({ name, arguments: args }, undefined, { timeout: REQUEST_TIMEOUT });
}

/** structuredContent of a call that must succeed. */
export async function call(client, name, args) {
    const result = await callRaw(client, name, args);
    assert.equal(result.isError ?? false, false, `${name}: ${JSON.stringify(result)}`);
    assert.equal(typeof result.structuredContent, 'object', `${name}: ${JSON.stringify(result)}`);
    return result.structuredContent;
}

/** The text of a call that must be a tool error. */
export async function failure(client, name, args) {
    const result = await callRaw(client, name, args);
    assert.equal(result.isError, true, `${name} must fail: ${JSON.stringify(result)}`);
    return result.content.map((c) => c.text ?? '').join('\n');
}
