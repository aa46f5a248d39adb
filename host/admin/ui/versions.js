// Versions of an admin operation: history, the diff of two versions, publish and rollback.

import { h, put, append, clear, json, jsonBlock, formatTime, statusBadge } from './dom.js';
import { api, encodeId } from './api.js';

/** opts: {operationId, getSummary() -> the operation summary, onChanged(answer), flash} */
export function versionsPanel(opts) {
    const list = h('div', { 'data-testid': 'versions-list' });
    const diffOut = h('div', { class: 'diff-out', 'data-testid': 'diff-output' });
    const viewOut = h('div', { class: 'version-view', 'data-testid': 'version-view' });
    const from = h('select', { id: 'diff-from' });
    const to = h('select', { id: 'diff-to' });
    const diffButton = h('button', { type: 'button', 'data-testid': 'diff-button', id: 'diff-button' }, 'Show diff');
    let versions = [];

    async function load() {
        put(list, h('p', { class: 'hint' }, 'Loading versions…'));
        try {
            const answer = await api.get(`/operations/${encodeId(opts.operationId)}/versions?limit=200`);
            versions = Array.isArray(answer.versions) ? answer.versions : [];
        } catch (e) {
            put(list, h('div', { class: 'error-box' }, `${e.code}: ${e.message}`));
            return;
        }
        render();
    }

    function render() {
        const summary = opts.getSummary() || {};
        clear(list);
        if (!versions.length) {
            list.append(h('p', { class: 'hint' }, 'No versions.'));
            return;
        }
        const rows = versions.map((v) => {
            const isPublished = v.version === summary.published_version || v.state === 'published';
            const actions = [];
            actions.push(h('button', { type: 'button', class: 'small', 'data-testid': `version-view-${v.version}`, onclick: () => show(v) }, 'View'));
            if (!isPublished && !summary.read_only) {
                actions.push(h('button', {
                    type: 'button', class: 'small primary', 'data-testid': `version-publish-${v.version}`,
                    onclick: (e) => publish(v.version, e.currentTarget),
                }, 'Publish'));
            }
            if (v.state === 'archived' && !summary.read_only) {
                actions.push(h('button', {
                    type: 'button', class: 'small', 'data-testid': `version-rollback-${v.version}`,
                    onclick: (e) => rollback(v.version, e.currentTarget),
                }, 'Roll back to this'));
            }
            return h('tr', { 'data-testid': 'version-row', 'data-version': v.version, 'data-state': v.state },
                h('td', {}, h('strong', {}, `v${v.version}`)),
                h('td', {}, statusBadge(v.state)),
                h('td', { class: 'time' }, formatTime(v.created_at)),
                h('td', {}, v.created_by || ''),
                h('td', {}, v.comment || ''),
                h('td', { class: 'actions-cell' }, actions));
        });
        list.append(h('table', { class: 'data', 'data-testid': 'versions-table' },
            h('thead', {}, h('tr', {}, ['version', 'state', 'created', 'by', 'comment', ''].map((t) => h('th', {}, t)))),
            h('tbody', {}, rows)));
        for (const sel of [from, to]) {
            const previous = sel.value;
            put(sel, versions.map((v) => h('option', { value: String(v.version) }, `v${v.version} (${v.state})`)));
            if (previous && versions.some((v) => String(v.version) === previous)) sel.value = previous;
        }
        if (!from.dataset.touched) from.value = String(versions[Math.min(1, versions.length - 1)].version);
        if (!to.dataset.touched) to.value = String(versions[0].version);
        const rollbackPrev = summary.read_only ? null : h('button', {
            type: 'button', 'data-testid': 'rollback-previous', onclick: (e) => rollback(undefined, e.currentTarget),
            disabled: !versions.some((v) => v.state === 'archived'),
        }, 'Roll back to the previously published version');
        list.append(h('div', { class: 'actions' }, rollbackPrev));
    }

    function show(v) {
        put(viewOut, h('h3', {}, `Version ${v.version}`, ' ', statusBadge(v.state)), jsonBlock(v.config));
    }

    async function publish(version, button) {
        const summary = opts.getSummary() || {};
        if (button) button.disabled = true;
        try {
            const answer = await api.post(`/operations/${encodeId(opts.operationId)}/publish`,
                { version, expected_published: summary.published_version ?? null });
            opts.flash(`Published version ${version}: tools ${(answer.tools || []).join(', ') || '(none)'}.`, 'ok');
            await opts.onChanged(answer);
            await load();
        } catch (e) {
            opts.flash(`Publish failed: ${e.code}: ${e.message}${e.fields.length ? ` (${e.fields.map((f) => `${f.path}: ${f.message}`).join('; ')})` : ''}`, 'error');
            if (button) button.disabled = false;
        }
    }

    async function rollback(version, button) {
        if (button) button.disabled = true;
        try {
            const answer = await api.post(`/operations/${encodeId(opts.operationId)}/rollback`, version === undefined ? {} : { version });
            opts.flash(`Rolled back: version ${answer.operation ? answer.operation.published_version : version} is published.`, 'ok');
            await opts.onChanged(answer);
            await load();
        } catch (e) {
            opts.flash(`Rollback failed: ${e.code}: ${e.message}`, 'error');
            if (button) button.disabled = false;
        }
    }

    from.addEventListener('change', () => { from.dataset.touched = '1'; });
    to.addEventListener('change', () => { to.dataset.touched = '1'; });
    diffButton.addEventListener('click', async () => {
        put(diffOut, h('p', { class: 'hint' }, 'Comparing…'));
        try {
            const d = await api.get(`/operations/${encodeId(opts.operationId)}/diff?from=${encodeURIComponent(from.value)}&to=${encodeURIComponent(to.value)}`);
            const changes = Array.isArray(d.changes) ? d.changes : [];
            put(diffOut, h('h3', {}, `v${d.from ?? from.value} → v${d.to ?? to.value}: `, changes.length === 1 ? '1 change' : `${changes.length} changes`),
                changes.length ? h('table', { class: 'data diff', 'data-testid': 'diff-table' },
                    h('thead', {}, h('tr', {}, ['path', 'change', `v${d.from ?? from.value}`, `v${d.to ?? to.value}`].map((t) => h('th', {}, t)))),
                    h('tbody', {}, changes.map((c) => h('tr', { class: `change-${c.change}`, 'data-testid': 'diff-row', 'data-path': c.path },
                        h('td', {}, h('code', {}, c.path)), h('td', {}, c.change),
                        h('td', { class: 'old' }, c.from === undefined ? '' : h('code', {}, json(c.from, 0))),
                        h('td', { class: 'new' }, c.to === undefined ? '' : h('code', {}, json(c.to, 0)))))))
                    : h('p', { class: 'hint' }, 'The two versions are the same.'));
        } catch (e) {
            put(diffOut, h('div', { class: 'error-box' }, `${e.code}: ${e.message}`));
        }
    });

    const el = h('div', { class: 'versions-panel', 'data-testid': 'versions-panel' },
        h('h3', {}, 'History'), list,
        h('fieldset', { class: 'block' }, h('legend', {}, 'Diff'),
            h('div', { class: 'inline-fields' },
                h('label', { for: 'diff-from' }, 'from'), from, h('label', { for: 'diff-to' }, 'to'), to, diffButton)),
        diffOut, viewOut);
    return { el, load, render };
}
