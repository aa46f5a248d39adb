// A 2025-era stdio MCP server as strict as some are (rmcp exits on a message it cannot place):
// the first message must be `initialize`, anything else makes it exit with status 3. After that
// it answers initialize, tools/list (one tool, `echo`) and tools/call, and ignores
// notifications. For the tests of crank's era probe over stdio (plugins/mcp/handshake.cpp).
import readline from 'node:readline';

const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');
let initialized = false;
readline.createInterface({ input: process.stdin }).on('line', (line) => {
    const message = JSON.parse(line);
    if (!initialized && message.method !== 'initialize') {
        process.stderr.write(`strict server: ${message.method} before initialize; exiting\n`);
        process.exit(3);
    }
    if (message.id === undefined) return;
    if (message.method === 'initialize') {
        initialized = true;
        send({
            jsonrpc: '2.0',
            id: message.id,
            result: {
                protocolVersion: message.params.protocolVersion,
                capabilities: { tools: {} },
                serverInfo: { name: 'strict', version: '1' }
            }
        });
    } else if (message.method === 'tools/list') {
        send({
            jsonrpc: '2.0',
            id: message.id,
            result: { tools: [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }] }
        });
    } else if (message.method === 'tools/call') {
        send({
            jsonrpc: '2.0',
            id: message.id,
            result: { content: [{ type: 'text', text: String(message.params.arguments?.text ?? '') }] }
        });
    } else {
        send({ jsonrpc: '2.0', id: message.id, error: { code: -32601, message: 'Method not found' } });
    }
});
