// A 2026-07-28 MCP server written with the official TypeScript SDK v2 (@modelcontextprotocol/server),
// for the tests of crank's MCP client (plugins/mcp): the same tools served over Streamable HTTP
// (createMcpHandler behind node:http) or stdio (serveStdio), dual-era by default, 2026 only with
// --modern-only (2025 traffic is refused with -32022).
//
//   node modern-server.mjs http [PORT] [--modern-only]   "listening http://127.0.0.1:PORT/mcp" on
//                                                        stderr and stdout
//   node modern-server.mjs stdio [--modern-only]
//
// Tools: echo {text} (the text back), ask_name {} (a multi-round-trip tool: an input_required
// result with a form elicitation for `name` and a requestState, then "hello NAME" once the retry
// carries the answer and the state), add_tool {name} (publishes one more tool NAME, which answers
// "I am NAME", and tells every open subscriptions/listen that asked for tool changes).
import http from 'node:http';
import { McpServer, acceptedContent, createMcpHandler, inputRequired } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const args = process.argv.slice(2);
const mode = args[0] ?? 'http';
const modernOnly = args.includes('--modern-only');

// Tools added by add_tool, in every instance the factory makes from now on (HTTP makes one per
// request); `toolsChanged` tells the open listens (HTTP: the handler's bus; stdio: the pinned
// instance announces its own new tool).
const added = new Set();
const MAX_ADDED = 100;
let toolsChanged = () => {};

function registerAdded(server, name) {
    server.registerTool(name, { description: `Added by add_tool`, inputSchema: z.object({}) }, async () => ({
        content: [{ type: 'text', text: `I am ${name}` }]
    }));
}

function factory() {
    const server = new McpServer(
        { name: 'crank-modern-fixture', version: '1.0.0' },
        { capabilities: { tools: { listChanged: true } }, instructions: 'a modern fixture' }
    );
    for (const name of added) registerAdded(server, name);
    server.registerTool(
        'add_tool',
        { description: 'Publishes one more tool', inputSchema: z.object({ name: z.string().regex(/^[a-z0-9_]{1,40}$/) }) },
        async ({ name }) => {
            if (!added.has(name)) {
                if (added.size >= MAX_ADDED) return { content: [{ type: 'text', text: 'too many tools' }], isError: true };
                added.add(name);
                if (mode === 'stdio') registerAdded(server, name);
                toolsChanged();
            }
            return { content: [{ type: 'text', text: `added ${name}` }] };
        }
    );
    server.registerTool(
        'echo',
        { description: 'Echoes the text', inputSchema: z.object({ text: z.string() }) },
        async ({ text }) => ({ content: [{ type: 'text', text }] })
    );
    server.registerTool(
        'ask_name',
        { description: 'Asks the caller for a name, then greets it', inputSchema: z.object({}) },
        async (_args, ctx) => {
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'name');
            const state =
                typeof ctx.mcpReq.requestState === 'function' ? ctx.mcpReq.requestState() : ctx.mcpReq.requestState;
            if (!answer || state !== 'asked-once') {
                return inputRequired({
                    inputRequests: {
                        name: inputRequired.elicit({
                            message: 'Your name?',
                            requestedSchema: z.object({ name: z.string().default('probe') })
                        })
                    },
                    requestState: 'asked-once'
                });
            }
            return { content: [{ type: 'text', text: `hello ${answer.name}` }] };
        }
    );
    return server;
}

if (mode === 'stdio') {
    serveStdio(factory, { legacy: modernOnly ? 'reject' : 'serve' });
} else {
    const port = Number(args[1] && !args[1].startsWith('--') ? args[1] : 0);
    const handler = createMcpHandler(factory, { legacy: modernOnly ? 'reject' : 'stateless' });
    toolsChanged = () => handler.notify.toolsChanged();
    const server = http.createServer(async (req, res) => {
        try {
            const chunks = [];
            for await (const chunk of req) chunks.push(chunk);
            const headers = new Headers();
            for (const [name, value] of Object.entries(req.headers)) {
                for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
            }
            const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
            const request = new Request(`http://${req.headers.host}${req.url}`, {
                method: req.method,
                headers,
                body: hasBody ? Buffer.concat(chunks) : undefined
            });
            const response = await handler.fetch(request);
            res.writeHead(response.status, Object.fromEntries(response.headers));
            if (response.body) {
                for await (const chunk of response.body) res.write(chunk);
            }
            res.end();
        } catch (error) {
            console.error('modern-server:', error);
            if (!res.headersSent) res.writeHead(500);
            res.end();
        }
    });
    server.listen(port, '127.0.0.1', () => {
        const line = `listening http://127.0.0.1:${server.address().port}/mcp`;
        console.error(line);
        console.log(line); // tests/e2e/with-crankd.sh reads stdout
    });
}
