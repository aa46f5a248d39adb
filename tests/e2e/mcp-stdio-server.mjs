// A fixture upstream MCP server over stdio, written with the official TypeScript SDK, for the
// tests of plugins/mcp (tests/plugins/mcp). It lives beside the SDK's node_modules.
//
//   node mcp-stdio-server.mjs [--ignore-stdin-close] [--ignore-sigterm]
//
// Tools: echo {text}; log_then_echo {text} (a notifications/message first); sleep {ms};
// exit {code} (exits at once, mid-request); garbage (writes a line that is not JSON-RPC, then
// answers); big {bytes} (answers a text of that many bytes). Prints "fixture ready" on stderr.

import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const args = new Set(process.argv.slice(2));
if (args.has('--ignore-sigterm')) process.on('SIGTERM', () => {});
// Keeps the process alive after stdin closes (a server that does not exit on EOF).
if (args.has('--ignore-stdin-close')) setInterval(() => {}, 1_000);

const server = new McpServer({ name: 'crank-fixture-stdio', version: '1.0.0' },
    { capabilities: { logging: {} } });
const text = (t) => ({ content: [{ type: 'text', text: t }] });

server.registerTool('echo', { description: 'Returns its text', inputSchema: { text: z.string() } },
    async ({ text: t }) => ({ ...text(t), structuredContent: { text: t } }));
server.registerTool('log_then_echo', { description: 'Logs, then returns its text', inputSchema: { text: z.string() } },
    async ({ text: t }) => {
        await server.server.sendLoggingMessage({ level: 'info', logger: 'fixture', data: `about to echo ${t}` });
        return text(t);
    });
server.registerTool('sleep', { description: 'Answers after ms', inputSchema: { ms: z.number().int().min(0) } },
    async ({ ms }) => {
        await sleep(ms);
        return text(`slept ${ms}`);
    });
server.registerTool('exit', { description: 'Exits at once', inputSchema: { code: z.number().int() } },
    async ({ code }) => process.exit(code));
server.registerTool('garbage', { description: 'Writes a non-JSON line, then answers' },
    async () => {
        process.stdout.write('this is not json-rpc\n');
        return text('after garbage');
    });
server.registerTool('big', { description: 'Answers bytes of text', inputSchema: { bytes: z.number().int().min(0) } },
    async ({ bytes }) => text('x'.repeat(bytes)));

await server.connect(new StdioServerTransport());
console.error('fixture ready');
