// The upstreams pages (#/upstreams, #/upstreams/{name}): the federated MCP servers with their
// live status, a test connection, stop, start and restart, and each one's tools as it lists them,
// with a call form rendered from a tool's input schema (docs/admin-api.md, "Upstreams").

import { h, put, jsonBlock, formatTime, statusBadge } from './dom.js';
import { api, encodeId } from './api.js';
import { FieldRegistry, FormProblems, configForm } from './schema-form.js';
import { definitionsSection } from './upstream-definitions.js';

function errorBox(e, what) {
    return h('div', { class: 'error-box', 'data-testid': 'error-box' }, `${what}: ${e.code || 'error'}: ${e.message || e}`);
}

/** Test, stop, start and restart buttons of one upstream; `done(answer, verb)` after each. */
function controls(u, ctx, done) {
    const act = (verb) => async (event) => {
        const button = event.currentTarget;
        button.disabled = true;
        try {
            const answer = await api.post(`/upstreams/${encodeId(u.name)}/${verb}`, {});
            if (verb === 'test') {
                ctx.flash(answer.test.ok ? `Test of ${u.name}: ok (open ${answer.test.open_ms} ms, ping ${answer.test.ping_ms} ms)`
                    : `Test of ${u.name} failed: ${answer.test.detail}`, answer.test.ok ? 'ok' : 'error');
            } else {
                ctx.flash(`${u.name}: ${verb} done (${answer.upstream ? answer.upstream.state : '?'})`, 'ok');
            }
            await done(answer, verb);
        } catch (e) {
            ctx.flash(`${verb} of ${u.name} failed: ${e.code}: ${e.message}`, 'error');
        } finally {
            button.disabled = false;
        }
    };
    const stopped = u.state === 'stopped';
    return h('span', { class: 'actions' },
        h('button', { type: 'button', 'data-testid': 'upstream-test', onclick: act('test') }, 'Test'), ' ',
        stopped ? h('button', { type: 'button', 'data-testid': 'upstream-start', onclick: act('start') }, 'Start')
            : h('button', { type: 'button', class: 'danger', 'data-testid': 'upstream-stop', onclick: act('stop') }, 'Stop'), ' ',
        h('button', { type: 'button', 'data-testid': 'upstream-restart', onclick: act('restart') }, 'Restart'));
}

export async function upstreamsPage(view, ctx) {
    const out = h('div', {});
    const load = async () => {
        let answer;
        try {
            answer = await api.get('/upstreams');
        } catch (e) {
            put(out, errorBox(e, 'GET /admin/api/upstreams'));
            return;
        }
        const list = Array.isArray(answer.upstreams) ? answer.upstreams : [];
        const definitions = definitionsSection(Array.isArray(answer.definitions) ? answer.definitions : [], ctx, load);
        if (!list.length) {
            put(out, h('p', { class: 'hint empty', 'data-testid': 'upstreams-empty' }, 'No upstreams run: add them under "upstreams" in the config file, or below.'), definitions);
            return;
        }
        put(out, h('div', { class: 'table-wrap' }, h('table', { class: 'data live', 'data-testid': 'upstreams-table' },
            h('thead', {}, h('tr', {}, ['name', 'workspace', 'state', 'tools', 'resources', 'prompts', 'connected since', 'last error', ''].map((t) => h('th', {}, t)))),
            h('tbody', {}, list.map((u) => h('tr', { 'data-testid': 'upstream-row', 'data-name': u.name, 'data-state': u.state },
                h('td', {}, h('a', { href: `#/upstreams/${encodeId(u.name)}` }, u.name)),
                h('td', {}, u.workspace),
                h('td', {}, statusBadge(u.state, { 'data-testid': 'upstream-state' })),
                h('td', {}, String(u.tools)),
                h('td', {}, String(u.resources)),
                h('td', {}, String(u.prompts)),
                h('td', { class: 'time' }, u.connection && u.connection.connected_since_ms ? formatTime(u.connection.connected_since_ms) : '—'),
                h('td', {}, u.last_error ? h('span', { class: 'error-text' }, u.last_error) : ''),
                h('td', {}, controls(u, ctx, load))))))), definitions);
    };
    put(view, h('div', { class: 'page', 'data-testid': 'upstreams-page' },
        h('div', { class: 'page-head' }, h('h1', {}, 'Upstreams')),
        h('p', { class: 'hint' }, 'The MCP servers this node federates. Stop, start and restart act on this node\'s connection.'),
        out));
    await load();
}

export async function upstreamPage(view, ctx, { name }) {
    const head = h('div', {});
    const tools = h('div', {});
    const callSlot = h('div', {});
    const load = async () => {
        try {
            const { upstream: u } = await api.get(`/upstreams/${encodeId(name)}`);
            put(head, h('div', { class: 'page-head' }, h('h1', {}, name, ' ', statusBadge(u.state, { 'data-testid': 'upstream-state' })),
                controls(u, ctx, load)),
            h('p', { class: 'hint' }, `workspace ${u.workspace} · ${u.source}${u.read_only ? ' (read-only)' : ''} · ${u.tools} tools, ${u.resources} resources, ${u.prompts} prompts`),
            u.last_error ? h('div', { class: 'error-box' }, 'last error: ', u.last_error) : null,
            (u.collisions && u.collisions.length) ? h('details', {}, h('summary', {}, `${u.collisions.length} names not published`), jsonBlock(u.collisions)) : null,
            h('details', { 'data-testid': 'upstream-connection' }, h('summary', {}, 'connection'), jsonBlock(u.connection)));
            const { tools: list } = await api.get(`/upstreams/${encodeId(name)}/tools?limit=1000`);
            put(tools, h('h2', {}, 'Tools'), h('div', { class: 'table-wrap' }, h('table', { class: 'data', 'data-testid': 'upstream-tools' },
                h('thead', {}, h('tr', {}, ['its name', 'published as', 'description', ''].map((t) => h('th', {}, t)))),
                h('tbody', {}, list.map((t) => h('tr', { 'data-testid': 'upstream-tool', 'data-name': t.name },
                    h('td', {}, h('code', {}, t.name)),
                    h('td', {}, t.published_as ? h('code', {}, t.published_as) : h('span', { class: 'hint' }, t.why_not || 'not published')),
                    h('td', {}, (t.definition && t.definition.description) || ''),
                    h('td', {}, h('button', { type: 'button', 'data-testid': 'tool-call-open', onclick: () => openCall(t) }, 'Call…'))))))));
        } catch (e) {
            put(head, errorBox(e, `GET /admin/api/upstreams/${name}`));
        }
    };
    // A call form from the tool's inputSchema; its result shown as the upstream answered.
    const openCall = (tool) => {
        const summary = h('div', { class: 'form-summary', hidden: true });
        const registry = new FieldRegistry(summary);
        const schema = tool.definition && tool.definition.inputSchema;
        const form = configForm(schema, {}, 'arguments', { registry, label: 'arguments' });
        const result = h('div', { 'data-testid': 'tool-call-result' });
        const run = async (event) => {
            const button = event.currentTarget;
            const problems = new FormProblems();
            const args = form.get(problems);
            if (!problems.empty) {
                put(result, h('div', { class: 'error-box' }, problems.fields.map((f) => `${f.path}: ${f.message}`).join('; ')));
                return;
            }
            button.disabled = true;
            try {
                const { call } = await api.post(`/upstreams/${encodeId(name)}/call`, { tool: tool.name, arguments: args ?? {} });
                put(result, h('p', { class: call.ok ? 'ok-text' : 'error-text', 'data-testid': 'tool-call-outcome', 'data-ok': String(call.ok) },
                    `${call.ok ? (call.result && call.result.isError ? 'the tool failed' : 'ok') : 'error'} in ${call.elapsed_ms} ms`),
                jsonBlock(call.ok ? call.result : call.error, { 'data-testid': 'tool-call-json' }));
            } catch (e) {
                put(result, errorBox(e, `POST /admin/api/upstreams/${name}/call`));
            } finally {
                button.disabled = false;
            }
        };
        put(callSlot, h('section', { class: 'card', 'data-testid': 'tool-call', 'data-tool': tool.name },
            h('h2', {}, `Call ${tool.name}`),
            h('p', { class: 'hint' }, 'Runs the tool once on the live connection, as a test run (bounded, audited).'),
            summary, form.el,
            h('button', { type: 'button', class: 'primary', 'data-testid': 'tool-call-run', onclick: run }, 'Run'),
            result));
        callSlot.scrollIntoView({ block: 'nearest' });
    };
    put(view, h('div', { class: 'page', 'data-testid': 'upstream-page', 'data-name': name },
        h('p', {}, h('a', { href: '#/upstreams' }, '← Upstreams')), head, callSlot, tools));
    await load();
}
