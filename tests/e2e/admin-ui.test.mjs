// The web UI (/ui/, host/admin/ui) driven in Debian's headless Chromium through playwright-core:
// sign-in, an operation created through the forms in each mode (unary over the `rest` plugin
// against a tiny HTTP server started here; window, session and async_job over the `synthetic`
// fixture plugin), a validation error landing on its field, a test run cut by max_items with its
// truncation warning, versions (diff, publish, rollback), the published tool seen by the official
// MCP TypeScript SDK client, and the plugins, sessions, jobs and audit pages with real data.
// Screenshots of the main screens go to $CRANK_UI_SCREENSHOTS (default ./ui-screenshots).
//
// By hand (from the repository root, after a build; chromium from Debian, playwright-core from
// tests/e2e/package.json):
//
//   CRANK_ADMIN_TOKEN=ui-test-token-0123456789 \
//   CRANK_EXTRA_CONFIG='"admin": {"token": {"env": "CRANK_ADMIN_TOKEN"}, "ui_directory": "'$PWD'/host/admin/ui"},
//     "plugins": {"directories": ["build/lib/crank/plugins", "build/lib/crank/test-plugins"]},
//     "server": {"threads": 32}' \
//   tests/e2e/with-crankd.sh build/bin/crankd -- .tools/node/bin/node --test tests/e2e/admin-ui.test.mjs
//
// or against a crankd already running: CRANK_MCP_URL=http://127.0.0.1:PORT/mcp CRANK_ADMIN_TOKEN=...
// .tools/node/bin/node --test tests/e2e/admin-ui.test.mjs. CRANK_UI_CHROMIUM overrides the browser
// (default /usr/bin/chromium).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const MCP_URL = process.env.CRANK_MCP_URL;
const TOKEN = process.env.CRANK_ADMIN_TOKEN;
const BASE = MCP_URL ? MCP_URL.replace(/\/mcp\/?$/, '') : '';
const UI = `${BASE}/ui/`;
const SHOTS = process.env.CRANK_UI_SCREENSHOTS || path.join(process.cwd(), 'ui-screenshots');
const CHROMIUM = process.env.CRANK_UI_CHROMIUM || '/usr/bin/chromium';
const WAIT = 15_000; // one UI step (an API answer and a render)
const RUN_WAIT = 75_000; // one test run (bounded by admin.test_run_timeout_ms, 60 s by default)
const REQUEST_TIMEOUT = 20_000; // one MCP request
// Unique per run, so that a crankd (and its store) can be reused by hand.
const SUFFIX = Date.now().toString(36).slice(-5);
const NAMES = {
    unary: `ui_unary_${SUFFIX}`,
    window: `ui_window_${SUFFIX}`,
    session: `ui_session_${SUFFIX}`,
    job: `ui_job_${SUFFIX}`,
};

/** A JSON upstream for the unary operation: GET /items/<id> -> {"id", "name"}. */
function startUpstream() {
    const server = http.createServer((req, res) => {
        const m = /^\/items\/([^/?]+)/.exec(req.url || '');
        res.setHeader('Content-Type', 'application/json');
        if (!m) {
            res.writeHead(404);
            res.end(JSON.stringify({ error: 'not found' }));
            return;
        }
        const id = decodeURIComponent(m[1]);
        res.end(JSON.stringify({ id, name: `item ${id}`, tags: ['a', 'b'] }));
    });
    server.keepAliveTimeout = 1000;
    return new Promise((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve(server));
    });
}

describe('the admin web UI in a headless browser', { timeout: 420_000 }, () => {
    let browser;
    let page;
    let upstream;
    let upstreamAddress;
    let mcp;
    const pageErrors = [];
    const foreign = [];
    const ids = {};

    before(async () => {
        assert.ok(MCP_URL, 'CRANK_MCP_URL must be set (tests/e2e/with-crankd.sh sets it)');
        assert.ok(TOKEN, 'CRANK_ADMIN_TOKEN must be set: the admin token crankd was given');
        fs.mkdirSync(SHOTS, { recursive: true });
        upstream = await startUpstream();
        upstreamAddress = `127.0.0.1:${upstream.address().port}`;
        browser = await chromium.launch({
            executablePath: CHROMIUM,
            args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                '--disable-background-networking', '--disable-component-update', '--disable-sync'],
            timeout: 30_000,
        });
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
        context.setDefaultTimeout(WAIT);
        context.setDefaultNavigationTimeout(WAIT);
        // Nothing but crankd itself: any other request fails the test.
        await context.route('**/*', (route) => {
            const url = route.request().url();
            if (url.startsWith(`${BASE}/`) || url.startsWith('data:')) return route.continue();
            foreign.push(url);
            return route.abort();
        });
        page = await context.newPage();
        page.on('pageerror', (e) => pageErrors.push(e.message));
    });

    after(async () => {
        try {
            await mcp?.close();
        } catch {
            // closing a client whose server went away
        }
        try {
            await browser?.close();
        } finally {
            await new Promise((resolve) => (upstream ? upstream.close(resolve) : resolve()));
            upstream?.closeAllConnections?.();
        }
    });

    async function shot(name) {
        await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true, timeout: WAIT });
    }

    /** The page fits the 1280 px viewport: no horizontal scroll of the page, nor of any table. */
    async function assertFitsWidth(what) {
        const widths = await page.evaluate(() => ({
            page: document.documentElement.scrollWidth,
            viewport: window.innerWidth,
            tables: [...document.querySelectorAll('table')].map((t) => ({
                table: t.scrollWidth,
                room: (t.closest('.table-wrap') || t.parentElement).clientWidth,
            })),
        }));
        assert.ok(widths.page <= widths.viewport, `${what}: the page is ${widths.page} px wide in ${widths.viewport}`);
        for (const t of widths.tables) {
            assert.ok(t.table <= t.room, `${what}: a table is ${t.table} px wide in ${t.room} px`);
        }
    }

    async function mcpClient() {
        if (!mcp) {
            mcp = new Client({ name: 'crank-e2e-admin-ui', version: '1.0.0' });
            await mcp.connect(new StreamableHTTPClientTransport(new URL(MCP_URL)));
        }
        return mcp;
    }

    /** The tool names the MCP endpoint lists, waiting (bounded) until `name` is among them. */
    async function waitForTool(name) {
        const client = await mcpClient();
        const deadline = Date.now() + WAIT;
        let names = [];
        while (Date.now() < deadline) {
            names = [];
            let cursor;
            do {
                const page1 = await client.listTools(cursor ? { cursor } : undefined, { timeout: REQUEST_TIMEOUT });
                names.push(...page1.tools.map((t) => t.name));
                cursor = page1.nextCursor;
            } while (cursor);
            if (names.includes(name)) return names;
            await new Promise((r) => setTimeout(r, 250));
        }
        assert.fail(`tool ${name} is not listed; tools: ${names.join(', ')}`);
    }

    async function go(hash) {
        await page.goto(`${UI}${hash}`);
    }

    /** Fills the field of an API path ("execution.max_items", "config.url"). */
    async function fill(apiPath, value) {
        await page.locator(`[data-path="${apiPath}"]`).fill(String(value));
    }

    /**
     * Creates an operation through the form of #/new and returns its id (the page then shows it).
     * op: {name, description, protocol, mode, transport, config: {path: value},
     * execution: {key: value}, inputSchema}
     */
    async function createOperation(op, { expectError } = {}) {
        await go('#/operations');
        await page.getByTestId('operations-page').waitFor();
        await page.getByTestId('new-operation').click();
        await page.getByTestId('new-operation-page').waitFor();
        await page.getByLabel('name', { exact: true }).fill(op.name);
        await page.getByLabel('description', { exact: true }).fill(op.description);
        await page.getByLabel('protocol', { exact: true }).selectOption(op.protocol);
        await page.getByLabel('mode', { exact: true }).selectOption(op.mode);
        await page.getByTestId('editor-mode-badge').filter({ hasText: op.mode }).waitFor();
        if (op.transport) await page.getByLabel('transport_behavior', { exact: true }).selectOption(op.transport);
        for (const [key, value] of Object.entries(op.config || {})) await fill(`config.${key}`, value);
        for (const [key, value] of Object.entries(op.execution || {})) await fill(`execution.${key}`, value);
        if (op.inputSchema) await page.getByLabel('input_schema (JSON Schema)').fill(JSON.stringify(op.inputSchema));
        await page.getByTestId('op-save').click();
        if (expectError) return null;
        await page.getByTestId('operation-page').waitFor();
        const id = await page.getByTestId('operation-page').getAttribute('data-operation-id');
        assert.ok(id, 'the operation page names the operation');
        assert.equal(await page.getByTestId('op-title').textContent(), op.name);
        assert.equal(await page.getByTestId('editor-mode-badge').textContent(), op.mode);
        assert.equal(await page.getByTestId('op-status').textContent(), 'draft');
        return id;
    }

    /** Runs the Test run tab with `args`; returns the result element. */
    async function testRun(args, { polls, pollInterval } = {}) {
        await page.getByTestId('tab-test').click();
        await page.getByLabel('arguments (the tool input, JSON)').fill(JSON.stringify(args));
        if (polls !== undefined) await page.locator('#tr-polls').fill(String(polls));
        if (pollInterval !== undefined) await page.locator('#tr-poll-interval').fill(String(pollInterval));
        await page.getByTestId('testrun-run').click();
        const result = page.getByTestId('testrun-result').or(page.getByTestId('testrun-error'));
        await result.first().waitFor({ timeout: RUN_WAIT });
        const error = page.getByTestId('testrun-error');
        if (await error.count()) assert.fail(`the test run failed: ${await error.textContent()}`);
        return page.getByTestId('testrun-result');
    }

    async function fact(name) {
        return page.getByTestId(`fact-${name}`).getAttribute('data-value');
    }

    async function publishFromHeader() {
        await page.getByTestId('tab-edit').click();
        await page.getByTestId('op-publish').click();
        await page.getByTestId('publish-ok').waitFor();
        await page.getByTestId('op-status').filter({ hasText: 'published' }).waitFor();
    }

    it('asks for the admin token, refuses a wrong one, and signs in', async () => {
        await page.goto(UI);
        await page.getByTestId('login').waitFor();
        await page.getByLabel('Admin token').fill(`${TOKEN}-wrong`);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByTestId('login-message').filter({ hasText: '401' }).waitFor();
        await page.getByLabel('Admin token').fill(TOKEN);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByTestId('operations-page').waitFor();
        assert.equal(await page.evaluate(() => sessionStorage.getItem('crank-admin-token')), TOKEN);
    });

    it('puts a validation error on its field: max_items 0 next to the max_items input', async () => {
        await createOperation({
            name: `ui_invalid_${SUFFIX}`, description: 'never valid', protocol: 'synthetic', mode: 'window',
            transport: 'server_stream',
            config: { items: 5 }, execution: { max_items: 0 },
        }, { expectError: true });
        const error = page.getByTestId('field-error-execution.max_items');
        await error.waitFor();
        assert.match(await error.textContent(), /\S/);
        const input = page.getByLabel('max_items', { exact: true });
        assert.equal(await input.getAttribute('aria-invalid'), 'true');
        // The message sits in the max_items field itself, beside its input.
        const field = page.locator('[data-field="execution.max_items"]');
        assert.equal(await field.evaluate((el) => el.classList.contains('invalid')), true);
        assert.equal(await field.locator('[data-testid="field-error-execution.max_items"]').count(), 1);
        await shot('editor-validation-error');
        // Still on the new-operation form: nothing was created.
        assert.equal(await page.getByTestId('new-operation-page').count(), 1);
    });

    it('creates a unary operation (rest) through the form; a missing url lands on config.url', async () => {
        await createOperation({
            name: NAMES.unary, description: 'One item of the test upstream', protocol: 'rest', mode: 'unary',
            inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        }, { expectError: true });
        const urlError = page.getByTestId('field-error-config.url');
        await urlError.waitFor();
        assert.equal(await page.locator('[data-path="config.url"]').getAttribute('aria-invalid'), 'true');
        await fill('config.url', `http://${upstreamAddress}/items/{{ id | url }}`);
        await page.getByTestId('op-save').click();
        await page.getByTestId('operation-page').waitFor();
        ids.unary = await page.getByTestId('operation-page').getAttribute('data-operation-id');
        assert.equal(await page.getByTestId('editor-mode-badge').textContent(), 'unary');
        await shot('editor');

        const result = await testRun({ id: '7' });
        assert.equal(await result.getAttribute('data-outcome'), 'ok');
        assert.match(await page.getByTestId('testrun-result').textContent(), /item 7/);
        await publishFromHeader();
        await waitForTool(NAMES.unary);
        const answer = await (await mcpClient()).callTool({ name: NAMES.unary, arguments: { id: '42' } }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(answer.isError ?? false, false, JSON.stringify(answer));
        assert.equal(answer.structuredContent.name, 'item 42');
    });

    it('creates a window, and its test run cut by max_items shows the truncation warning', async () => {
        ids.window = await createOperation({
            name: NAMES.window, description: 'A bounded window over the synthetic stream', protocol: 'synthetic', mode: 'window',
            transport: 'server_stream',
            config: { items: 50, item_bytes: 80 }, execution: { max_items: 5 },
        });
        // The defaults of the limits are shown beside them.
        assert.match(await page.getByTestId('default-execution.window_duration_ms').textContent(), /10000/);
        assert.match(await page.getByTestId('default-execution.max_bytes').textContent(), /262144/);

        await testRun({});
        assert.equal(await fact('truncated'), 'true');
        assert.equal(await fact('has_more'), 'true');
        assert.equal(await fact('stop_reason'), 'max_items');
        const warning = page.locator('[data-testid="testrun-warning"][data-code="truncated"]');
        await warning.first().waitFor();
        assert.match(await warning.first().textContent(), /max_items/);
        assert.equal(await page.getByTestId('testrun-item').count(), 5);
        await shot('test-run-truncated');

        await publishFromHeader();
        await waitForTool(NAMES.window);
        const answer = await (await mcpClient()).callTool({ name: NAMES.window, arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(answer.isError ?? false, false, JSON.stringify(answer));
        assert.equal(answer.structuredContent.item_count, 5);
        assert.equal(answer.structuredContent.truncated, true);
        assert.equal(answer.structuredContent.stop_reason, 'max_items');
    });

    it('versions: a second version, its diff, publish, and a rollback', async () => {
        await go(`#/operations/${encodeURIComponent(ids.window)}`);
        await page.getByTestId('operation-page').waitFor();
        await page.getByLabel('max_items', { exact: true }).fill('8');
        await page.locator('#op-comment').fill('raise max_items');
        await page.getByTestId('op-save').click();
        await page.getByTestId('save-ok').waitFor();
        await page.getByTestId('tab-versions').click();
        await page.locator('[data-testid="version-row"][data-version="2"]').waitFor();
        await page.locator('#diff-from').selectOption('1');
        await page.locator('#diff-to').selectOption('2');
        await page.getByTestId('diff-button').click();
        const row = page.locator('[data-testid="diff-row"][data-path="execution.max_items"]');
        await row.waitFor();
        assert.match(await row.textContent(), /changed.*5.*8/s);
        await page.getByTestId('version-publish-2').click();
        await page.locator('[data-testid="version-row"][data-version="2"][data-state="published"]').waitFor();
        await page.locator('[data-testid="version-row"][data-version="1"][data-state="archived"]').waitFor();
        await shot('versions-diff');
        let answer = await (await mcpClient()).callTool({ name: NAMES.window, arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(answer.structuredContent.item_count, 8, 'version 2 serves the tool');

        await page.getByTestId('version-rollback-1').click();
        await page.locator('[data-testid="version-row"][data-version="1"][data-state="published"]').waitFor();
        await page.getByTestId('op-versions').filter({ hasText: 'published v1' }).waitFor();
        answer = await (await mcpClient()).callTool({ name: NAMES.window, arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(answer.structuredContent.item_count, 5, 'after the rollback version 1 serves the tool');
    });

    it('creates a session; its test run shows the steps; the sessions page shows a live session and stops it', async () => {
        ids.session = await createOperation({
            name: NAMES.session, description: 'A live synthetic stream', protocol: 'synthetic', mode: 'session',
            transport: 'server_stream',
            config: { items: -1, rate_per_sec: 50, item_bytes: 60 }, execution: { max_items: 1000 },
        });
        // The tool family names of a session, with their defaults.
        assert.equal(await page.locator('[data-path="execution.poll_tool_name"]').getAttribute('placeholder'), `${NAMES.session}_poll`);
        assert.equal(await page.locator('[data-field="execution.status_tool_name"]').isHidden(), true);
        await testRun({}, { polls: 2, pollInterval: 300 });
        const steps = page.getByTestId('testrun-step');
        const tools = await steps.evaluateAll((els) => els.map((e) => e.dataset.tool));
        assert.deepEqual([tools[0], tools[tools.length - 1]], [`${NAMES.session}_start`, `${NAMES.session}_stop`]);
        assert.ok(tools.filter((t) => t === `${NAMES.session}_poll`).length >= 2, tools.join(', '));
        await shot('test-run-session');

        // The session the test run started is listed (stopped by the run).
        await go('#/sessions');
        await page.getByTestId('sessions-page').waitFor();
        const ofOp = page.locator('[data-testid="session-row"]').filter({ hasText: NAMES.session })
            .or(page.locator(`[data-testid="session-row"][data-operation="${ids.session}"]`));
        await ofOp.first().waitFor();

        // A live one, started by an MCP client, appears within the 2 s refresh and is stopped here.
        await publishSession();
        const started = await (await mcpClient()).callTool({ name: `${NAMES.session}_start`, arguments: {} }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(started.isError ?? false, false, JSON.stringify(started));
        const sessionId = started.structuredContent.session_id;
        await go('#/sessions');
        const live = page.locator(`[data-testid="session-row"][data-id="${sessionId}"]`);
        await live.waitFor({ timeout: WAIT });
        assert.equal(await live.getAttribute('data-status'), 'active');
        await shot('sessions');
        await assertFitsWidth('sessions');
        await live.getByTestId('session-stop').click();
        await page.locator(`[data-testid="session-row"][data-id="${sessionId}"]:not([data-status="active"])`).waitFor();
        const polled = await (await mcpClient()).callTool({ name: `${NAMES.session}_poll`, arguments: { session_id: sessionId } }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.notEqual(polled.structuredContent?.status, 'active', JSON.stringify(polled));
    });

    async function publishSession() {
        await go(`#/operations/${encodeURIComponent(ids.session)}`);
        await page.getByTestId('operation-page').waitFor();
        await publishFromHeader();
        await waitForTool(`${NAMES.session}_start`);
    }

    it('creates an async_job; its test run finishes; the jobs page shows a running job and cancels it', async () => {
        ids.job = await createOperation({
            name: NAMES.job, description: 'A slow synthetic job', protocol: 'synthetic', mode: 'async_job',
            config: { items: 3, delay_ms: '{{ delay }}' },
            execution: { upstream_timeout_ms: 120000 },
            inputSchema: { type: 'object', properties: { delay: { type: 'integer' } } },
        });
        assert.equal(await page.locator('[data-path="execution.cancel_tool_name"]').getAttribute('placeholder'), `${NAMES.job}_cancel`);
        assert.equal(await page.locator('[data-field="execution.poll_tool_name"]').isHidden(), true);
        await testRun({}, { pollInterval: 200 });
        assert.equal(await fact('status'), 'succeeded');
        const tools = await page.getByTestId('testrun-step').evaluateAll((els) => els.map((e) => e.dataset.tool));
        assert.equal(tools[0], `${NAMES.job}_start`);
        assert.ok(tools.includes(`${NAMES.job}_result`), tools.join(', '));

        await publishFromHeader();
        await waitForTool(`${NAMES.job}_start`);
        const started = await (await mcpClient()).callTool({ name: `${NAMES.job}_start`, arguments: { delay: 60000 } }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(started.isError ?? false, false, JSON.stringify(started));
        const jobId = started.structuredContent.job_id;
        await go('#/jobs');
        await page.getByTestId('jobs-page').waitFor();
        const row = page.locator(`[data-testid="job-row"][data-id="${jobId}"]`);
        await row.waitFor();
        await page.locator(`[data-testid="job-row"][data-id="${jobId}"][data-status="running"]`).waitFor();
        await shot('jobs');
        await assertFitsWidth('jobs');
        await row.getByTestId('job-cancel').click();
        await page.locator(`[data-testid="job-row"][data-id="${jobId}"][data-status="cancelled"]`).waitFor();
        const status = await (await mcpClient()).callTool({ name: `${NAMES.job}_status`, arguments: { job_id: jobId } }, undefined, { timeout: REQUEST_TIMEOUT });
        assert.equal(status.structuredContent?.status, 'cancelled', JSON.stringify(status));
    });

    it('lists every operation with its mode badge', async () => {
        await go('#/operations');
        await page.getByTestId('operations-table').waitFor();
        for (const [mode, name] of [['unary', NAMES.unary], ['window', NAMES.window], ['session', NAMES.session], ['async_job', NAMES.job]]) {
            const row = page.locator(`[data-testid="operation-row"][data-name="${name}"]`);
            await row.waitFor();
            assert.equal(await row.getByTestId('mode-badge').textContent(), mode);
            assert.equal(await row.getByTestId('operation-status').textContent(), 'published');
        }
        await shot('operations');
    });

    it('shows the upstreams: status, a test connection, a tool called from its form, stop and start', async () => {
        await go('#/upstreams');
        await page.getByTestId('upstreams-page').waitFor();
        const row = page.locator('[data-testid="upstream-row"][data-name="ref"]');
        await page.locator('[data-testid="upstream-row"][data-name="ref"][data-state="open"]').waitFor();
        await row.getByTestId('upstream-test').click();
        await page.getByTestId('flash').filter({ hasText: 'Test of ref: ok' }).first().waitFor();
        await shot('upstreams');
        await assertFitsWidth('upstreams');

        await row.locator('a').click();
        await page.getByTestId('upstream-page').waitFor();
        const echo = page.locator('[data-testid="upstream-tool"][data-name="echo"]');
        await echo.waitFor();
        assert.equal(await echo.locator('td').nth(1).innerText(), 'ref_echo');
        await echo.getByTestId('tool-call-open').click();
        await page.getByTestId('tool-call').waitFor();
        await fill('arguments.text', 'from the form');
        await page.getByTestId('tool-call-run').click();
        const outcome = page.getByTestId('tool-call-outcome');
        await outcome.waitFor();
        assert.equal(await outcome.getAttribute('data-ok'), 'true');
        assert.match(await page.getByTestId('tool-call-json').innerText(), /from the form/);
        await shot('upstream');
        await assertFitsWidth('upstream');

        // Stopped: its tools leave the MCP endpoint; started: they are back.
        await page.getByTestId('upstream-stop').click();
        await page.locator('[data-testid="upstream-state"][data-status="stopped"]').waitFor();
        const client = await mcpClient();
        const listed = async () => (await client.listTools(undefined, { timeout: REQUEST_TIMEOUT })).tools.map((t) => t.name);
        assert.ok(!(await listed()).includes('ref_echo'));
        await page.getByTestId('upstream-start').click();
        await page.locator('[data-testid="upstream-state"][data-status="open"]').waitFor();
        await waitForTool('ref_echo');
    });

    it('adds an upstream through the form, publishes it, and deletes it', async () => {
        const name = `ui_up_${SUFFIX}`;
        const server = new URL('./reference-server.mjs', import.meta.url).pathname;
        await go('#/upstreams');
        await page.getByTestId('upstream-create').waitFor();
        await page.getByTestId('upstream-new').fill(JSON.stringify({ name: 'bad name', config: {} }));
        await page.getByTestId('upstream-create-submit').click();
        await page.locator('[data-testid="upstream-create"] [data-testid="error-field"][data-path="name"]').waitFor();
        await page.getByTestId('upstream-new').fill(JSON.stringify({
            name, config: { command: process.execPath, args: [server, '--stdio'] },
        }));
        await page.getByTestId('upstream-create-submit').click();
        const draft = page.locator(`[data-testid="definition-row"][data-name="${name}"][data-status="draft"]`);
        await draft.waitFor();
        await draft.getByTestId('definition-publish').click();
        await page.locator(`[data-testid="definition-row"][data-name="${name}"][data-status="published"]`).waitFor();
        await page.locator(`[data-testid="upstream-row"][data-name="${name}"][data-state="open"]`).waitFor();
        await waitForTool(`${name}_echo`);
        await shot('upstreams-admin');
        await assertFitsWidth('upstreams-admin');
        page.once('dialog', (dialog) => dialog.accept());
        await page.locator(`[data-testid="definition-row"][data-name="${name}"]`).getByTestId('definition-delete').click();
        await page.locator(`[data-testid="upstream-row"][data-name="${name}"]`).waitFor({ state: 'detached' });
    });

    it('manages an agent: its key shown once, a new key, a revoked one, its limits', async () => {
        const id = `ui-agent-${SUFFIX}`;
        await go('#/agents');
        await page.getByTestId('agents-page').waitFor();
        await page.getByTestId('agent-id').fill('no spaces allowed');
        await page.getByTestId('agent-create-submit').click();
        await page.locator('[data-testid="agent-create"] [data-testid="error-field"][data-path="id"]').waitFor();
        await page.getByTestId('agent-id').fill(id);
        await page.getByTestId('agent-limits').fill('{"max_concurrent_calls": 4}');
        await page.getByTestId('agent-create-submit').click();
        const first = (await page.getByTestId('agent-key-secret').innerText()).trim();
        assert.match(first, /^crank_ak_[0-9a-f]{64}$/);
        await page.locator(`[data-testid="agent-row"][data-id="${id}"]`).waitFor();
        await shot('agents');
        await assertFitsWidth('agents');

        await page.locator(`[data-testid="agent-row"][data-id="${id}"] a`).click();
        await page.getByTestId('agent-page').waitFor();
        assert.ok(!(await page.content()).includes(first), 'the key is shown once only');
        const firstKey = page.locator('[data-testid="agent-key"]').first();
        const firstId = await firstKey.getAttribute('data-key');
        await page.getByTestId('agent-key-add').click();
        const second = (await page.getByTestId('agent-key-secret').innerText()).trim();
        assert.notEqual(second, first);
        await page.locator('[data-testid="agent-key"]').nth(1).waitFor();
        await page.locator(`[data-testid="agent-key"][data-key="${firstId}"]`).getByTestId('agent-key-revoke').click();
        await page.locator(`[data-testid="agent-key"][data-key="${firstId}"][data-revoked="true"]`).waitFor();
        await page.getByTestId('agent-limits-edit').fill('{"max_concurrent_calls": 2, "rate": {"calls_per_second": 5, "burst": 5}}');
        await page.getByTestId('agent-limits-save').click();
        await page.getByTestId('agent-limits-now').filter({ hasText: '"burst": 5' }).waitFor();
        await shot('agent');
        await assertFitsWidth('agent');
    });

    it('shows the plugins with their status, adapters and schemas', async () => {
        await go('#/plugins');
        await page.getByTestId('plugins-page').waitFor();
        for (const name of ['rest', 'synthetic']) {
            const adapter = page.locator(`[data-testid="adapter"][data-name="${name}"]`);
            await adapter.waitFor();
            const card = page.locator('[data-testid="plugin-card"]').filter({ has: adapter });
            assert.equal(await card.getAttribute('data-status'), 'loaded');
            assert.ok(await adapter.getByTestId('adapter-mode').count() >= 1);
        }
        const syntheticSchema = page.locator('[data-testid="adapter"][data-name="synthetic"] [data-testid="adapter-schema"]');
        await syntheticSchema.locator('summary').click();
        assert.match(await syntheticSchema.textContent(), /rate_per_sec/);
        await page.locator('[data-testid="aggregator"][data-name="raw_items"]').waitFor();
        await shot('plugins');
    });

    it('shows the audit log with its filters: operation.publish events', async () => {
        await go('#/audit');
        await page.getByTestId('audit-page').waitFor();
        await page.getByTestId('audit-table').waitFor();
        await page.getByLabel('action').fill('operation.publish');
        await page.getByTestId('audit-apply').click();
        await page.locator('[data-testid="audit-row"][data-action="operation.publish"]').first().waitFor();
        const actions = await page.getByTestId('audit-row').evaluateAll((els) => els.map((e) => e.dataset.action));
        assert.ok(actions.length >= 4, `publishes of the four operations: ${actions}`);
        assert.ok(actions.every((a) => a === 'operation.publish'), actions.join(', '));
        await shot('audit');
        // A time range in the future holds nothing.
        await page.locator('#audit-from').fill('2999-01-01T00:00');
        await page.getByTestId('audit-apply').click();
        await page.getByTestId('audit-table-empty').waitFor();
    });

    it('goes back to the login form on a 401', async () => {
        await page.evaluate(() => sessionStorage.setItem('crank-admin-token', 'not-the-token'));
        await go('#/plugins');
        await page.getByTestId('login').waitFor();
        await page.getByTestId('login-message').filter({ hasText: '401' }).waitFor();
        assert.equal(await page.evaluate(() => sessionStorage.getItem('crank-admin-token')), null);
    });

    it('raised no error in the page and fetched nothing from anywhere but crankd', async () => {
        assert.deepEqual(pageErrors, []);
        assert.deepEqual(foreign, []);
    });
});
