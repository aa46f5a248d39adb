#!/usr/bin/env node
// A legacy HTTP+SSE MCP server (protocol 2024-11-05), built only from the official TypeScript
// SDK's SSEServerTransport, for the tests of crank's legacy transport and of the transport
// detection (tests/plugins/mcp/http_connection_test.cpp).
//
//   node fixture-legacy-sse-server.mjs PORT     (PORT 0 picks a free port)
//
// GET /sse opens the SSE stream; its first event is `endpoint`, naming /messages?sessionId=...,
// where the client POSTs its messages (answered 202); answers and notifications arrive on the
// stream. A POST to /sse is answered 404 (express's default), as a server that predates Streamable
// HTTP answers it: the signal for a client to fall back to this transport. Bound to 127.0.0.1
// only, with the SDK's Host validation. Prints exactly one line on stdout once it listens:
// "listening http://127.0.0.1:PORT/sse". Stops on SIGTERM/SIGINT.
//
// Tools:
//   echo {text}                    returns text back as one text block
//   slow_progress {steps, delay_ms}
//                                  sends notifications/progress 1..steps when the request has a
//                                  progressToken, one every delay_ms; returns "completed N steps"
//   close_stream                   ends the session's SSE stream (and never answers)

import { setTimeout as sleep } from 'node:timers/promises';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { z } from 'zod';

const HOST = '127.0.0.1';
const text = (t) => ({ content: [{ type: 'text', text: t }] });

function createServer(transports) {
    const server = new McpServer({ name: 'crank-fixture-legacy-sse', version: '1.0.0' }, { capabilities: { logging: {} } });
    server.registerTool(
        'echo',
        { description: 'Returns its text argument unchanged', inputSchema: { text: z.string() } },
        async ({ text: t }) => text(t),
    );
    server.registerTool(
        'slow_progress',
        {
            description: 'Sends one progress notification per step, delay_ms apart, then completes',
            inputSchema: { steps: z.number().int().min(1).max(1000), delay_ms: z.number().int().min(0).max(60000) },
        },
        async ({ steps, delay_ms }, extra) => {
            const progressToken = extra._meta?.progressToken;
            for (let i = 1; i <= steps; i++) {
                await sleep(delay_ms, undefined, { signal: extra.signal });
                if (progressToken !== undefined) {
                    await extra.sendNotification({
                        method: 'notifications/progress',
                        params: { progressToken, progress: i, total: steps },
                    });
                }
            }
            return text(`completed ${steps} steps`);
        },
    );
    server.registerTool('close_stream', { description: 'Ends the SSE stream of the session' }, async (extra) => {
        await transports.get(extra.sessionId)?.close();
        await sleep(60000, undefined, { signal: extra.signal }).catch(() => {});
        return text('the stream was closed');
    });
    return server;
}

function main() {
    const port = Number(process.argv[2] ?? 0);
    if (!Number.isInteger(port) || port < 0 || port > 65535) {
        console.error('usage: fixture-legacy-sse-server.mjs PORT');
        process.exit(2);
    }
    const app = createMcpExpressApp({ host: HOST });
    const transports = new Map(); // sessionId -> SSEServerTransport

    app.get('/sse', async (req, res) => {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        transport.onclose = () => transports.delete(transport.sessionId);
        await createServer(transports).connect(transport);
    });
    app.post('/messages', async (req, res) => {
        const transport = transports.get(String(req.query.sessionId ?? ''));
        if (!transport) {
            res.status(404).send('Session not found');
            return;
        }
        await transport.handlePostMessage(req, res, req.body);
    });

    const httpServer = app.listen(port, HOST, () => {
        console.log(`listening http://${HOST}:${httpServer.address().port}/sse`);
    });
    httpServer.on('error', (err) => {
        console.error(`fixture-legacy-sse-server: ${err.message}`);
        process.exit(1);
    });
    const stop = async () => {
        for (const transport of transports.values()) await transport.close().catch(() => {});
        httpServer.closeAllConnections?.();
        httpServer.close(() => process.exit(0));
        setTimeout(() => process.exit(0), 2000).unref();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
}

main();
