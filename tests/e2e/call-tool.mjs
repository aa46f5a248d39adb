// A tools/call through the official MCP TypeScript SDK client, for the README's demo and by hand:
//   .tools/node/bin/node tests/e2e/call-tool.mjs [--url URL] TOOL ['{"arg": 1}']
// Lists the tools when no TOOL is given. Prints the result's structuredContent (or its text).
// Lives beside the e2e tests because it uses their installed SDK (scripts/e2e-setup.sh).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const args = process.argv.slice(2);
let url = 'http://127.0.0.1:8080/mcp';
if (args[0] === '--url') {
    url = args[1];
    args.splice(0, 2);
}
const [tool, input = '{}'] = args;

const client = new Client({ name: 'crank-call-tool', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
try {
    if (!tool) {
        const { tools } = await client.listTools();
        for (const t of tools) {
            console.log(`${t.name}: ${t.description}`);
        }
    } else {
        const result = await client.callTool({ name: tool, arguments: JSON.parse(input) });
        if (result.isError) {
            console.error(result.content.map((c) => c.text).join('\n'));
            process.exitCode = 1;
        } else {
            console.log(JSON.stringify(result.structuredContent ?? result.content, null, 2));
        }
    }
} finally {
    await client.close();
}
