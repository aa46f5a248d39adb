// The admin API's own upstreams on the upstreams page (docs/admin-api.md, "Upstreams managed
// through the API"): their definitions (drafts too) with publish and delete, and a form that
// creates one from an upstream object (an entry of the config file's `upstreams`).

import { h, put } from './dom.js';
import { api, encodeId } from './api.js';

const TEMPLATE = `{
  "name": "my-server",
  "workspace": "default",
  "config": {"command": "/usr/bin/my-mcp-server", "args": []}
}`;

function errorBox(e, what) {
    const fields = e.fields && e.fields.length
        ? h('ul', {}, e.fields.map((f) => h('li', { 'data-testid': 'error-field', 'data-path': f.path }, `${f.path}: ${f.message}`)))
        : null;
    return h('div', { class: 'error-box', 'data-testid': 'error-box' }, `${what}: ${e.code || 'error'}: ${e.message || e}`, fields);
}

/** The definitions table and the create form; `changed()` after each change. */
export function definitionsSection(definitions, ctx, changed) {
    const act = (d, what) => async (event) => {
        const button = event.currentTarget;
        button.disabled = true;
        try {
            if (what === 'publish') {
                await api.post(`/upstreams/${encodeId(d.name)}/publish`, { version: d.latest_version, expected_published: d.published_version });
                ctx.flash(`${d.name}: version ${d.latest_version} published`, 'ok');
            } else {
                if (!window.confirm(`Delete upstream ${d.name}? Its calls in flight get the shutdown grace, then end.`)) return;
                await api.del(`/upstreams/${encodeId(d.name)}`);
                ctx.flash(`${d.name} deleted`, 'ok');
            }
            await changed();
        } catch (e) {
            ctx.flash(`${what} of ${d.name} failed: ${e.code}: ${e.message}`, 'error');
        } finally {
            button.disabled = false;
        }
    };
    const table = definitions.length
        ? h('div', { class: 'table-wrap' }, h('table', { class: 'data live', 'data-testid': 'definitions-table' },
            h('thead', {}, h('tr', {}, ['name', 'workspace', 'status', 'published', 'latest', 'runs here', ''].map((t) => h('th', {}, t)))),
            h('tbody', {}, definitions.map((d) => h('tr', { 'data-testid': 'definition-row', 'data-name': d.name, 'data-status': d.status },
                h('td', {}, d.name),
                h('td', {}, d.workspace),
                h('td', {}, d.error ? h('span', { class: 'error-text', title: d.error }, d.status) : d.status),
                h('td', {}, d.published_version ?? '—'),
                h('td', {}, d.latest_version ?? '—'),
                h('td', {}, d.served_version ?? '—'),
                h('td', {}, h('span', { class: 'actions' },
                    d.latest_version !== d.published_version
                        ? h('button', { type: 'button', class: 'primary', 'data-testid': 'definition-publish', onclick: act(d, 'publish') }, `Publish v${d.latest_version}`) : null, ' ',
                    h('button', { type: 'button', class: 'danger', 'data-testid': 'definition-delete', onclick: act(d, 'delete') }, 'Delete'))))))))
        : h('p', { class: 'hint', 'data-testid': 'definitions-empty' }, 'None yet.');
    const text = h('textarea', { id: 'upstream-new', 'data-testid': 'upstream-new', rows: 7 }, TEMPLATE);
    const problems = h('div', {});
    const create = async (event) => {
        event.preventDefault();
        let config;
        try {
            config = JSON.parse(text.value);
        } catch (e) {
            put(problems, h('div', { class: 'error-box' }, `not JSON: ${e.message}`));
            return;
        }
        try {
            const answer = await api.post('/upstreams', { config });
            put(problems);
            ctx.flash(`Upstream ${answer.upstream.name} saved as a draft (version 1): publish it to run it`, 'ok');
            await changed();
        } catch (e) {
            put(problems, errorBox(e, 'POST /admin/api/upstreams'));
        }
    };
    return h('section', { 'data-testid': 'definitions' },
        h('h2', {}, 'Added through the admin API'),
        h('p', { class: 'hint' }, 'Kept in the store with versions; every node runs the published one.'),
        table,
        h('form', { class: 'card', 'data-testid': 'upstream-create', onsubmit: create },
            h('h2', {}, 'New upstream'),
            h('label', { for: 'upstream-new' }, 'an entry of the config file\'s "upstreams" (JSON)'), text,
            problems,
            h('button', { type: 'submit', class: 'primary', 'data-testid': 'upstream-create-submit' }, 'Save as a draft')));
}
