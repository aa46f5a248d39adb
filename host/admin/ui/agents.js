// The agents pages (#/agents, #/agents/{id}): who may call crankd's MCP endpoint. The config
// file's agents are shown read-only; the admin API's are created here (the key shown once),
// given more keys and revoked ones, their limits edited, and deleted (docs/admin-api.md,
// "Agents and workspaces").

import { h, put, jsonBlock, formatTime, statusBadge } from './dom.js';
import { api, encodeId } from './api.js';

function errorBox(e, what) {
    const fields = e.fields && e.fields.length
        ? h('ul', {}, e.fields.map((f) => h('li', { 'data-testid': 'error-field', 'data-path': f.path }, `${f.path}: ${f.message}`)))
        : null;
    return h('div', { class: 'error-box', 'data-testid': 'error-box' }, `${what}: ${e.code || 'error'}: ${e.message || e}`, fields);
}

/** A key just made: shown this once, with a warning that it cannot be shown again. */
function secretBox(key) {
    return h('div', { class: 'card secret', 'data-testid': 'agent-key-new', 'data-key': key.id },
        h('p', {}, h('strong', {}, 'Copy this key now: '), 'crankd keeps only its digest and will not show it again.'),
        h('code', { 'data-testid': 'agent-key-secret' }, key.secret));
}

function parseLimits(text) {
    const trimmed = text.trim();
    if (!trimmed) return undefined;
    return JSON.parse(trimmed);
}

export async function agentsPage(view, ctx) {
    const out = h('div', {});
    const created = h('div', {});
    const load = async () => {
        let answer;
        try {
            answer = await api.get('/agents');
        } catch (e) {
            put(out, errorBox(e, 'GET /admin/api/agents'));
            return;
        }
        const list = Array.isArray(answer.agents) ? answer.agents : [];
        put(out, h('div', { class: 'table-wrap' }, h('table', { class: 'data live', 'data-testid': 'agents-table' },
            h('thead', {}, h('tr', {}, ['id', 'workspace', 'source', 'live keys', 'concurrent calls', 'rate', 'created'].map((t) => h('th', {}, t)))),
            h('tbody', {}, list.map((a) => h('tr', { 'data-testid': 'agent-row', 'data-id': a.id, 'data-source': a.source },
                h('td', {}, h('a', { href: `#/agents/${encodeId(a.id)}` }, a.id)),
                h('td', {}, a.workspace),
                h('td', {}, a.read_only ? 'config file (read-only)' : 'admin API'),
                h('td', {}, a.read_only ? '—' : String(a.keys)),
                h('td', {}, a.limits && a.limits.max_concurrent_calls !== undefined ? String(a.limits.max_concurrent_calls) : 'default'),
                h('td', {}, a.limits && a.limits.rate ? `${a.limits.rate.calls_per_second}/s, burst ${a.limits.rate.burst}` : '—'),
                h('td', { class: 'time' }, a.created_at ? formatTime(a.created_at) : '—')))))));
    };
    // The create form: id, workspace, limits (an agent's `limits` object, optional).
    let workspaces = [];
    try {
        workspaces = (await api.get('/workspaces')).workspaces || [];
    } catch {
        workspaces = [{ id: 'default' }];
    }
    const id = h('input', { type: 'text', id: 'agent-id', 'data-testid': 'agent-id', placeholder: 'e.g. billing-bot', autocomplete: 'off' });
    const workspace = h('select', { id: 'agent-workspace', 'data-testid': 'agent-workspace' },
        workspaces.map((w) => h('option', { value: w.id }, w.id)));
    const limits = h('textarea', { id: 'agent-limits', 'data-testid': 'agent-limits', rows: 3,
        placeholder: '{"max_concurrent_calls": 4, "rate": {"calls_per_second": 5, "burst": 5}}' });
    const problems = h('div', {});
    const create = async (event) => {
        event.preventDefault();
        let body;
        try {
            body = { id: id.value.trim(), workspace: workspace.value, limits: parseLimits(limits.value) };
        } catch (e) {
            put(problems, h('div', { class: 'error-box' }, `limits: not JSON: ${e.message}`));
            return;
        }
        try {
            const answer = await api.post('/agents', body);
            put(problems);
            put(created, secretBox(answer.key));
            ctx.flash(`Agent ${answer.agent.id} created`, 'ok');
            id.value = '';
            limits.value = '';
            await load();
        } catch (e) {
            put(problems, errorBox(e, 'POST /admin/api/agents'));
        }
    };
    put(view, h('div', { class: 'page', 'data-testid': 'agents-page' },
        h('div', { class: 'page-head' }, h('h1', {}, 'Agents')),
        h('p', { class: 'hint' }, 'Who may call the MCP endpoint. The config file\'s agents change with the file; these are kept in the store and admitted by every node.'),
        out,
        h('form', { class: 'card', 'data-testid': 'agent-create', onsubmit: create },
            h('h2', {}, 'New agent'),
            h('label', { for: 'agent-id' }, 'id'), id,
            h('label', { for: 'agent-workspace' }, 'workspace'), workspace,
            h('label', { for: 'agent-limits' }, 'limits (JSON, optional)'), limits,
            problems,
            h('button', { type: 'submit', class: 'primary', 'data-testid': 'agent-create-submit' }, 'Create and show its key')),
        created));
    await load();
}

export async function agentPage(view, ctx, { id }) {
    const head = h('div', {});
    const keys = h('div', {});
    const fresh = h('div', {});
    const editor = h('div', {});
    const load = async () => {
        let answer;
        try {
            answer = await api.get(`/agents/${encodeId(id)}`);
        } catch (e) {
            put(head, errorBox(e, `GET /admin/api/agents/${id}`));
            return;
        }
        const a = answer.agent;
        const deleted = a.deleted_at !== null && a.deleted_at !== undefined;
        put(head, h('div', { class: 'page-head' }, h('h1', {}, id, ' ', statusBadge(a.read_only ? 'config' : deleted ? 'deleted' : 'active', { 'data-testid': 'agent-state' })),
            a.read_only || deleted ? null : h('span', { class: 'actions' },
                h('button', { type: 'button', 'data-testid': 'agent-key-add', onclick: addKey }, 'New key'), ' ',
                h('button', { type: 'button', class: 'danger', 'data-testid': 'agent-delete', onclick: remove }, 'Delete agent'))),
        h('p', { class: 'hint' }, `workspace ${a.workspace} · ${a.read_only ? 'config file (read-only)' : 'admin API'}`),
        h('details', { open: true }, h('summary', {}, 'limits'), jsonBlock(a.limits, { 'data-testid': 'agent-limits-now' })));
        if (a.read_only) {
            put(keys);
            put(editor);
            return;
        }
        put(keys, h('h2', {}, 'Keys'), h('div', { class: 'table-wrap' }, h('table', { class: 'data', 'data-testid': 'agent-keys' },
            h('thead', {}, h('tr', {}, ['key', 'starts with', 'created', 'revoked', ''].map((t) => h('th', {}, t)))),
            h('tbody', {}, (answer.keys || []).map((k) => h('tr', { 'data-testid': 'agent-key', 'data-key': k.id, 'data-revoked': String(k.revoked_at !== null) },
                h('td', {}, h('code', {}, k.id)),
                h('td', {}, h('code', {}, `${k.prefix}…`)),
                h('td', { class: 'time' }, formatTime(k.created_at)),
                h('td', { class: 'time' }, k.revoked_at ? formatTime(k.revoked_at) : '—'),
                h('td', {}, k.revoked_at || deleted ? '' : h('button', { type: 'button', class: 'danger', 'data-testid': 'agent-key-revoke', onclick: () => revoke(k.id) }, 'Revoke'))))))));
        if (deleted) {
            put(editor);
            return;
        }
        const text = h('textarea', { id: 'agent-limits-edit', 'data-testid': 'agent-limits-edit', rows: 4 }, JSON.stringify(a.limits ?? {}, null, 2));
        const problems = h('div', {});
        const save = async () => {
            let limits;
            try {
                limits = JSON.parse(text.value);
            } catch (e) {
                put(problems, h('div', { class: 'error-box' }, `limits: not JSON: ${e.message}`));
                return;
            }
            try {
                await api.put(`/agents/${encodeId(id)}/limits`, { limits });
                put(problems);
                ctx.flash(`Limits of ${id} saved`, 'ok');
                await load();
            } catch (e) {
                put(problems, errorBox(e, `PUT /admin/api/agents/${id}/limits`));
            }
        };
        put(editor, h('section', { class: 'card' }, h('h2', {}, 'Limits'),
            h('p', { class: 'hint' }, 'They bound the agent\'s next call, session and job; what runs now is kept.'),
            text, problems, h('button', { type: 'button', class: 'primary', 'data-testid': 'agent-limits-save', onclick: save }, 'Save limits')));
    };
    const addKey = async () => {
        try {
            const answer = await api.post(`/agents/${encodeId(id)}/keys`, {});
            put(fresh, secretBox(answer.key));
            ctx.flash(`A new key for ${id}`, 'ok');
            await load();
        } catch (e) {
            ctx.flash(`New key for ${id} failed: ${e.code}: ${e.message}`, 'error');
        }
    };
    const revoke = async (keyId) => {
        try {
            await api.del(`/agents/${encodeId(id)}/keys/${encodeId(keyId)}`);
            ctx.flash(`Key ${keyId} revoked`, 'ok');
            await load();
        } catch (e) {
            ctx.flash(`Revoke of ${keyId} failed: ${e.code}: ${e.message}`, 'error');
        }
    };
    const remove = async () => {
        if (!window.confirm(`Delete agent ${id}? Every key it holds is refused from now on.`)) return;
        try {
            await api.del(`/agents/${encodeId(id)}`);
            ctx.flash(`Agent ${id} deleted`, 'ok');
            put(fresh);
            await load();
        } catch (e) {
            ctx.flash(`Delete of ${id} failed: ${e.code}: ${e.message}`, 'error');
        }
    };
    put(view, h('div', { class: 'page', 'data-testid': 'agent-page', 'data-id': id },
        h('p', {}, h('a', { href: '#/agents' }, '← Agents')), head, fresh, keys, editor));
    await load();
}
