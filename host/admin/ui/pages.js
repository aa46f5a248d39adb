// The list pages: operations, plugins, sessions, jobs, audit log.

import { h, put, append, clear, json, jsonBlock, formatTime, modeBadge, statusBadge } from './dom.js';
import { api, encodeId, loadMeta, query } from './api.js';

function errorBox(e, what) {
    return h('div', { class: 'error-box', 'data-testid': 'page-error' }, `${what}: ${e.code}: ${e.message}`);
}

function table(testid, headers, rows, empty, cls = 'data') {
    if (!rows.length) return h('p', { class: 'hint empty', 'data-testid': `${testid}-empty` }, empty);
    return h('div', { class: 'table-wrap' }, h('table', { class: cls, 'data-testid': testid },
        h('thead', {}, h('tr', {}, headers.map((t) => h('th', {}, t)))), h('tbody', {}, rows)));
}

function textFilter(id, label, value, placeholder) {
    const input = h('input', { type: 'text', id, name: id, placeholder: placeholder || '' });
    input.value = value || '';
    return { input, el: h('div', { class: 'filter' }, h('label', { for: id }, label), input) };
}

function shortJson(value, max = 120) {
    if (value === null || value === undefined) return '';
    const t = typeof value === 'string' ? value : json(value, 0);
    return t.length > max ? `${t.slice(0, max)}…` : t;
}

/** Re-runs fn every `ms` after the previous run ended; returns the stop function. */
function repeat(fn, ms) {
    let stopped = false;
    let timer = null;
    const loop = async () => {
        if (stopped) return;
        try {
            await fn();
        } finally {
            if (!stopped) timer = setTimeout(loop, ms);
        }
    };
    loop();
    return () => {
        stopped = true;
        clearTimeout(timer);
    };
}

// --- operations --------------------------------------------------------------------------------

export async function operationsPage(view, ctx, { params }) {
    const workspace = textFilter('ops-workspace', 'workspace', params.get('workspace'));
    const source = h('select', { id: 'ops-source' }, h('option', { value: '' }, 'all'), h('option', { value: 'admin' }, 'admin'), h('option', { value: 'config' }, 'config'));
    source.value = params.get('source') || '';
    const deleted = h('input', { type: 'checkbox', id: 'ops-deleted', checked: params.get('include_deleted') === 'true' });
    const out = h('div', { 'data-testid': 'operations-out' });
    const load = async () => {
        put(out, h('p', { class: 'hint' }, 'Loading…'));
        let answer;
        try {
            answer = await api.get(`/operations${query({ workspace: workspace.input.value.trim(), source: source.value, include_deleted: deleted.checked ? 'true' : '' })}`);
        } catch (e) {
            put(out, errorBox(e, 'GET /admin/api/operations'));
            return;
        }
        const ops = Array.isArray(answer.operations) ? answer.operations : [];
        const rows = ops.map((op) => h('tr', { 'data-testid': 'operation-row', 'data-name': op.name, 'data-id': op.id, 'data-mode': op.mode, class: op.status === 'deleted' ? 'deleted' : '' },
            h('td', {}, h('a', { href: `#/operations/${encodeURIComponent(op.id)}`, 'data-testid': 'operation-link' }, op.name),
                op.description ? h('div', { class: 'hint' }, shortJson(op.description, 90)) : null),
            h('td', {}, modeBadge(op.mode)),
            h('td', {}, op.workspace),
            h('td', {}, op.protocol || ''),
            h('td', {}, h('span', { class: `badge source source-${op.source}` }, op.source), op.read_only ? h('span', { class: 'hint' }, ' read-only') : null),
            h('td', {}, statusBadge(op.status, { 'data-testid': 'operation-status' }), op.error ? h('div', { class: 'error-text' }, op.error) : null),
            h('td', {}, op.source === 'config' ? '—' : `${op.published_version ? `v${op.published_version}` : '—'} / ${op.latest_version ? `v${op.latest_version}` : '—'}`),
            h('td', { class: 'tools' }, (op.tools || []).map((t) => h('code', {}, t)))));
        put(out, h('p', { class: 'hint' }, `${ops.length} operation${ops.length === 1 ? '' : 's'}`),
            table('operations-table', ['name', 'mode', 'workspace', 'protocol', 'source', 'status', 'published / latest', 'tools'], rows,
                'No operations yet: create one with “New operation”.'));
    };
    const apply = (e) => {
        e.preventDefault();
        load();
    };
    put(view, h('div', { class: 'page', 'data-testid': 'operations-page' },
        h('div', { class: 'page-head' }, h('h1', {}, 'Operations'),
            h('a', { class: 'button primary', href: '#/new', 'data-testid': 'new-operation' }, '+ New operation')),
        h('form', { class: 'filters', onsubmit: apply },
            workspace.el,
            h('div', { class: 'filter' }, h('label', { for: 'ops-source' }, 'source'), source),
            h('div', { class: 'filter check' }, deleted, h('label', { for: 'ops-deleted' }, 'include deleted')),
            h('button', { type: 'submit' }, 'Apply')),
        out));
    await load();
}

// --- plugins -----------------------------------------------------------------------------------

export async function pluginsPage(view, ctx) {
    put(view, h('p', { class: 'hint' }, 'Loading…'));
    let answer;
    try {
        answer = await api.get('/plugins');
    } catch (e) {
        put(view, errorBox(e, 'GET /admin/api/plugins'));
        return;
    }
    const plugins = Array.isArray(answer.plugins) ? answer.plugins : [];
    const cards = plugins.map((p) => h('article', { class: `card plugin plugin-${p.status}`, 'data-testid': 'plugin-card', 'data-name': p.name, 'data-status': p.status },
        h('header', {}, h('h2', {}, p.name), ' ', statusBadge(p.status, { 'data-testid': 'plugin-status' }),
            h('span', { class: 'meta-text' }, ` ${p.version ? `v${p.version}` : ''} ${p.abi ? `· ABI ${p.abi}` : ''}`)),
        p.description ? h('p', {}, p.description) : null,
        p.reason ? h('div', { class: p.status === 'loaded' ? 'info-box' : 'error-box', 'data-testid': 'plugin-reason' }, 'reason: ', p.reason) : null,
        p.path ? h('p', { class: 'hint' }, h('code', {}, p.path)) : null,
        (p.adapters && p.adapters.length) ? h('section', {}, h('h3', {}, 'Protocol adapters'),
            p.adapters.map((a) => h('div', { class: 'adapter', 'data-testid': 'adapter', 'data-name': a.name },
                h('div', {}, h('strong', {}, a.name), ' ', a.version ? h('span', { class: 'hint' }, `v${a.version}`) : null, ' ',
                    (a.modes || []).map((m) => modeBadge(m, { 'data-testid': 'adapter-mode' }))),
                a.description ? h('div', { class: 'hint' }, a.description) : null,
                a.capabilities ? h('div', { class: 'hint' }, 'capabilities: ', a.capabilities.join(', ')) : null,
                h('details', { 'data-testid': 'adapter-schema' }, h('summary', {}, 'config schema'), jsonBlock(a.config_schema))))) : null,
        (p.aggregators && p.aggregators.length) ? h('section', {}, h('h3', {}, 'Aggregators'),
            p.aggregators.map((a) => h('div', { class: 'adapter', 'data-testid': 'aggregator', 'data-name': a.name },
                h('div', {}, h('strong', {}, a.name), ' ', a.version ? h('span', { class: 'hint' }, `v${a.version}`) : null),
                a.description ? h('div', { class: 'hint' }, a.description) : null,
                h('details', {}, h('summary', {}, 'config schema'), jsonBlock(a.config_schema)),
                h('details', {}, h('summary', {}, 'output schema'), jsonBlock(a.output_schema))))) : null));
    put(view, h('div', { class: 'page', 'data-testid': 'plugins-page' },
        h('div', { class: 'page-head' }, h('h1', {}, 'Plugins'),
            h('span', { class: `badge ${answer.all_loaded ? 'status-loaded' : 'status-rejected'}`, 'data-testid': 'plugins-all-loaded' },
                answer.all_loaded ? 'all loaded' : 'some plugins are not loaded')),
        cards.length ? h('div', { class: 'cards' }, cards) : h('p', { class: 'hint' }, 'No plugin libraries found.')));
}

// --- sessions and jobs: live, refreshed every 2 s -----------------------------------------------

function livePage(view, ctx, spec, params) {
    const filters = {};
    const filterEls = spec.filters.map(([key, label, placeholder]) => {
        const f = textFilter(`${spec.name}-${key}`, label, params.get(key) ?? spec.defaults[key] ?? '', placeholder);
        filters[key] = f.input;
        return f.el;
    });
    const autoBox = h('input', { type: 'checkbox', id: `${spec.name}-auto`, checked: true });
    const updated = h('span', { class: 'hint', 'data-testid': `${spec.name}-updated` });
    const out = h('div', { 'data-testid': `${spec.name}-out` });
    const detail = h('div', { class: 'detail', 'data-testid': `${spec.name}-detail` });
    let busy = false;
    const load = async () => {
        if (busy) return;
        busy = true;
        const q = {};
        for (const [key, input] of Object.entries(filters)) q[key] = input.value.trim();
        try {
            const answer = await api.get(`/${spec.name}${query({ ...q, limit: 100 })}`);
            const list = Array.isArray(answer[spec.name]) ? answer[spec.name] : [];
            // Fixed columns that wrap: eleven of them fit a 1280 px window without scrolling.
            put(out, table(`${spec.name}-table`, spec.headers, list.map((x) => spec.row(x, { act, show })), spec.empty,
                'data live'));
            updated.textContent = `${list.length} shown · updated ${formatTime(Date.now())}`;
            updated.dataset.count = String(list.length);
        } catch (e) {
            put(out, errorBox(e, `GET /admin/api/${spec.name}`));
        } finally {
            busy = false;
        }
    };
    async function act(path, button, what) {
        button.disabled = true;
        try {
            const answer = await api.post(path, {});
            ctx.flash(`${what}: ${spec.describe(answer)}`, 'ok');
        } catch (e) {
            ctx.flash(`${what} failed: ${e.code}: ${e.message}`, 'error');
        }
        await load();
    }
    async function show(id) {
        try {
            const answer = await api.get(`/${spec.name}/${encodeId(id)}`);
            put(detail, h('h3', {}, `${spec.single} ${id}`), jsonBlock(answer[spec.single]));
        } catch (e) {
            put(detail, errorBox(e, `GET /admin/api/${spec.name}/${id}`));
        }
    }
    let stop = null;
    const startAuto = () => {
        if (stop) stop();
        stop = autoBox.checked ? repeat(load, 2000) : null;
        if (!stop) load();
    };
    autoBox.addEventListener('change', startAuto);
    put(view, h('div', { class: 'page', 'data-testid': `${spec.name}-page` },
        h('div', { class: 'page-head' }, h('h1', {}, spec.title),
            h('span', { class: 'auto' }, autoBox, h('label', { for: `${spec.name}-auto` }, ' auto-refresh every 2 s'), ' ', updated)),
        h('form', { class: 'filters', onsubmit: (e) => { e.preventDefault(); load(); } }, filterEls, h('button', { type: 'submit' }, 'Apply')),
        out, detail));
    startAuto();
    return () => { if (stop) stop(); };
}

const LIVE_SESSION = ['active', 'paused'];
const LIVE_JOB = ['queued', 'running'];

export function sessionsPage(view, ctx, { params }) {
    return livePage(view, ctx, {
        name: 'sessions', single: 'session', title: 'Sessions',
        filters: [['workspace', 'workspace'], ['agent', 'agent'], ['operation', 'operation'], ['status', 'status', 'active,paused (empty: all)']],
        defaults: {},
        headers: ['id', 'operation', 'mode', 'status', 'workspace / agent', 'created', 'last poll', 'expires', 'cursor', 'node', ''],
        empty: 'No sessions.',
        describe: (a) => (a.session ? `session ${a.session.id} is ${a.session.status}` : 'done'),
        row: (s, { act, show }) => h('tr', { 'data-testid': 'session-row', 'data-id': s.id, 'data-status': s.status, 'data-operation': s.operation_id },
            h('td', {}, h('a', { href: '#', onclick: (e) => { e.preventDefault(); show(s.id); } }, h('code', {}, s.id))),
            h('td', {}, s.operation_id),
            h('td', {}, s.mode ? modeBadge(s.mode) : ''),
            h('td', {}, statusBadge(s.status)),
            h('td', {}, `${s.workspace_id ?? ''} / ${s.agent_id ?? ''}`),
            h('td', { class: 'time' }, formatTime(s.created_at)),
            h('td', { class: 'time' }, formatTime(s.last_poll_at)),
            h('td', { class: 'time' }, s.closed_at ? `closed ${formatTime(s.closed_at)}` : formatTime(s.expires_at)),
            h('td', {}, h('code', {}, shortJson(s.cursor, 30))),
            h('td', {}, s.owner_node || ''),
            h('td', {}, LIVE_SESSION.includes(s.status) ? h('button', {
                type: 'button', class: 'small danger', 'data-testid': 'session-stop', 'data-id': s.id,
                onclick: (e) => act(`/sessions/${encodeId(s.id)}/stop`, e.currentTarget, `Stop session ${s.id}`),
            }, 'Stop') : null)),
    }, params);
}

export function jobsPage(view, ctx, { params }) {
    return livePage(view, ctx, {
        name: 'jobs', single: 'job', title: 'Jobs',
        filters: [['workspace', 'workspace'], ['agent', 'agent'], ['operation', 'operation'], ['status', 'status', 'queued,running (empty: all)']],
        defaults: {},
        headers: ['id', 'operation', 'status', 'progress', 'workspace / agent', 'created', 'updated', 'finished', 'result / error', 'node', ''],
        empty: 'No jobs.',
        describe: (a) => (a.job ? `job ${a.job.id} is ${a.job.status}` : 'done'),
        row: (j, { act, show }) => h('tr', { 'data-testid': 'job-row', 'data-id': j.id, 'data-status': j.status, 'data-operation': j.operation_id },
            h('td', {}, h('a', { href: '#', onclick: (e) => { e.preventDefault(); show(j.id); } }, h('code', {}, j.id))),
            h('td', {}, j.operation_id),
            h('td', {}, statusBadge(j.status)),
            h('td', {}, progressText(j.progress)),
            h('td', {}, `${j.workspace_id ?? ''} / ${j.agent_id ?? ''}`),
            h('td', { class: 'time' }, formatTime(j.created_at)),
            h('td', { class: 'time' }, formatTime(j.updated_at)),
            h('td', { class: 'time' }, formatTime(j.finished_at)),
            h('td', {}, j.error ? h('span', { class: 'error-text' }, shortJson(j.error, 80)) : h('code', {}, shortJson(j.result, 80))),
            h('td', {}, j.owner_node || ''),
            h('td', {}, LIVE_JOB.includes(j.status) ? h('button', {
                type: 'button', class: 'small danger', 'data-testid': 'job-cancel', 'data-id': j.id,
                onclick: (e) => act(`/jobs/${encodeId(j.id)}/cancel`, e.currentTarget, `Cancel job ${j.id}`),
            }, 'Cancel') : null)),
    }, params);
}

function progressText(p) {
    if (p === null || p === undefined) return '—';
    if (typeof p !== 'object') return String(p);
    const parts = [];
    if (p.progress !== undefined) parts.push(p.total !== undefined && p.total >= 0 ? `${p.progress} / ${p.total}` : String(p.progress));
    if (p.message) parts.push(p.message);
    return parts.join(' · ') || shortJson(p, 60);
}

// --- audit log ---------------------------------------------------------------------------------

function toLocalInput(ms) {
    if (!ms) return '';
    const d = new Date(Number(ms));
    if (Number.isNaN(d.getTime())) return '';
    const pad = (n) => String(n).padStart(2, '0');
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

export async function auditPage(view, ctx, { params }) {
    const filters = {};
    const els = [['workspace', 'workspace'], ['agent', 'agent'], ['operation', 'operation'], ['action', 'action', 'e.g. operation.publish']].map(([key, label, ph]) => {
        const f = textFilter(`audit-${key}`, label, params.get(key), ph);
        filters[key] = f.input;
        return f.el;
    });
    const from = h('input', { type: 'datetime-local', id: 'audit-from', value: toLocalInput(params.get('from')) });
    const to = h('input', { type: 'datetime-local', id: 'audit-to', value: toLocalInput(params.get('to')) });
    const order = h('select', { id: 'audit-order' }, h('option', { value: 'newest_first' }, 'newest first'), h('option', { value: 'oldest_first' }, 'oldest first'));
    const limit = h('input', { type: 'number', id: 'audit-limit', min: '1', max: '1000', value: params.get('limit') || '100' });
    const out = h('div', { 'data-testid': 'audit-out' });
    let actions = [];
    const actionList = h('datalist', { id: 'audit-actions' });
    filters.action.setAttribute('list', 'audit-actions');
    const load = async () => {
        const q = {};
        for (const [key, input] of Object.entries(filters)) q[key] = input.value.trim();
        if (from.value) q.from = new Date(from.value).getTime();
        if (to.value) q.to = new Date(to.value).getTime();
        q.order = order.value;
        q.limit = limit.value || 100;
        put(out, h('p', { class: 'hint' }, 'Loading…'));
        let answer;
        try {
            answer = await api.get(`/audit${query(q)}`);
        } catch (e) {
            put(out, errorBox(e, 'GET /admin/api/audit'));
            return;
        }
        const events = Array.isArray(answer.events) ? answer.events : [];
        for (const ev of events) if (ev.action && !actions.includes(ev.action)) actions.push(ev.action);
        actions = actions.sort();
        put(actionList, actions.map((a) => h('option', { value: a })));
        const rows = events.map((ev) => h('tr', { 'data-testid': 'audit-row', 'data-action': ev.action, 'data-outcome': ev.outcome },
            h('td', { class: 'time' }, formatTime(ev.ts)),
            h('td', {}, ev.workspace_id ?? ''),
            h('td', {}, ev.agent_id ?? ''),
            h('td', {}, ev.operation_id ?? ''),
            h('td', {}, h('code', {}, ev.action)),
            h('td', {}, statusBadge(ev.outcome)),
            h('td', { class: 'detail-cell' }, h('code', { title: shortJson(ev.detail, 2000) }, shortJson(ev.detail, 140)))));
        put(out, h('p', { class: 'hint', 'data-testid': 'audit-count' }, `${events.length} event${events.length === 1 ? '' : 's'}`),
            table('audit-table', ['time', 'workspace', 'agent', 'operation', 'action', 'outcome', 'detail'], rows, 'No events match.'));
    };
    put(view, h('div', { class: 'page', 'data-testid': 'audit-page' },
        h('div', { class: 'page-head' }, h('h1', {}, 'Audit log')),
        h('form', { class: 'filters', 'data-testid': 'audit-filters', onsubmit: (e) => { e.preventDefault(); load(); } },
            els, actionList,
            h('div', { class: 'filter' }, h('label', { for: 'audit-from' }, 'from'), from),
            h('div', { class: 'filter' }, h('label', { for: 'audit-to' }, 'to'), to),
            h('div', { class: 'filter' }, h('label', { for: 'audit-order' }, 'order'), order),
            h('div', { class: 'filter narrow' }, h('label', { for: 'audit-limit' }, 'limit'), limit),
            h('button', { type: 'submit', 'data-testid': 'audit-apply' }, 'Apply')),
        out));
    await load();
}

export { loadMeta };
