// The operation page (#/new and #/operations/<id>): a header with the mode badge, status and
// versions, then three tabs: Edit (the form), Test run, Versions.

import { h, put, append, clear, modeBadge, statusBadge } from './dom.js';
import { api, encodeId, loadMeta, loadPlugins } from './api.js';
import { OperationForm } from './editor.js';
import { testRunPanel } from './testrun.js';
import { versionsPanel } from './versions.js';

const TABS = ['edit', 'test', 'versions'];

/** A template for a new operation: #/new?mode=window&protocol=synthetic prefill the form. */
function newTemplate(params) {
    const mode = params.get('mode') || 'unary';
    const config = { workspace: params.get('workspace') || 'default', execution: { mode } };
    if (params.get('protocol')) config.protocol = params.get('protocol');
    return config;
}

export async function operationPage(view, ctx, { id, tab, params }) {
    const isNew = !id;
    put(view, h('p', { class: 'hint' }, 'Loading…'));
    let meta = {};
    let plugins = {};
    try {
        meta = await loadMeta();
    } catch (e) {
        ctx.flash(`GET /admin/api/meta failed: ${e.code}: ${e.message}; the form uses the documented defaults.`, 'error');
    }
    try {
        plugins = await loadPlugins();
    } catch (e) {
        ctx.flash(`GET /admin/api/plugins failed: ${e.code}: ${e.message}`, 'error');
    }
    let detail = null;
    if (!isNew) {
        try {
            detail = await api.get(`/operations/${encodeId(id)}`);
        } catch (e) {
            put(view, h('div', { class: 'error-box', 'data-testid': 'page-error' }, `Cannot load operation ${id}: ${e.code}: ${e.message}`));
            return;
        }
    }
    if (ctx.isStale()) return;

    let summary = detail ? detail.operation : null;
    let latest = detail ? detail.latest : null;
    const readOnly = !!(summary && (summary.read_only || summary.source === 'config'));
    const initial = isNew ? newTemplate(params) : ((latest && latest.config) || {});
    let dirty = false;

    // --- header ---
    const header = h('header', { class: 'op-header', 'data-testid': 'op-header' });
    const headerBadge = h('span', { class: 'header-badge' });
    const publishButton = h('button', { type: 'button', class: 'primary', 'data-testid': 'op-publish', id: 'op-publish' }, 'Publish');
    const deleteButton = h('button', { type: 'button', class: 'danger', 'data-testid': 'op-delete' }, 'Delete');
    const deleteConfirm = h('span', { class: 'confirm', hidden: true },
        'Withdraw its tools and delete it? ',
        h('button', { type: 'button', class: 'danger small', 'data-testid': 'op-delete-confirm', onclick: () => doDelete() }, 'Yes, delete'),
        h('button', { type: 'button', class: 'small', onclick: () => { deleteConfirm.hidden = true; } }, 'No'));
    deleteButton.addEventListener('click', () => { deleteConfirm.hidden = false; });

    function renderHeader(mode) {
        put(headerBadge, modeBadge(mode, { 'data-testid': 'editor-mode-badge' }));
        clear(header);
        const title = isNew ? 'New operation' : summary.name;
        const facts = [];
        if (!isNew) {
            facts.push(statusBadge(summary.status, { 'data-testid': 'op-status' }));
            facts.push(h('span', { class: 'badge source' }, summary.source || 'admin'));
            if (readOnly) facts.push(h('span', { class: 'badge readonly' }, 'read-only (config file)'));
            facts.push(h('span', { class: 'meta-text', 'data-testid': 'op-versions' }, summary.source === 'config'
                ? `workspace ${summary.workspace} · served from the config file`
                : `workspace ${summary.workspace} · published ${summary.published_version ? `v${summary.published_version}` : '—'} · latest ${summary.latest_version ? `v${summary.latest_version}` : '—'}`));
            if (Array.isArray(summary.tools) && summary.tools.length) {
                facts.push(h('span', { class: 'meta-text', 'data-testid': 'op-tools' }, 'tools: ', summary.tools.map((t) => h('code', {}, t)).reduce((a, b) => [a, ', ', b])));
            }
            if (summary.error) facts.push(h('div', { class: 'error-box', 'data-testid': 'op-error' }, summary.error));
        }
        append(header, h('div', { class: 'title-line' }, h('h1', { 'data-testid': 'op-title' }, title), headerBadge),
            h('div', { class: 'facts-line' }, facts),
            isNew || readOnly ? null : h('div', { class: 'actions' }, publishButton, deleteButton, deleteConfirm));
        if (!isNew && !readOnly) {
            const v = summary.latest_version;
            publishButton.textContent = v ? `Publish v${v}` : 'Publish';
            publishButton.disabled = !v || v === summary.published_version;
            publishButton.title = publishButton.disabled ? 'the latest version is published' : 'publish the latest saved version';
        }
    }

    // --- the form ---
    const form = new OperationForm({
        meta, plugins, config: initial, isNew, readOnly,
        onModeChange: (mode) => {
            put(headerBadge, modeBadge(mode, { 'data-testid': 'editor-mode-badge' }));
            tester.updateMode(mode);
        },
        onDirty: () => { dirty = true; },
    });
    renderHeader(form.mode());

    const comment = h('input', { type: 'text', id: 'op-comment', placeholder: isNew ? 'first version' : 'what changed' });
    const saveButton = h('button', { type: 'button', class: 'primary', 'data-testid': 'op-save', id: 'op-save' }, isNew ? 'Create' : 'Save new version');
    const validateButton = h('button', { type: 'button', 'data-testid': 'op-validate', id: 'op-validate' }, 'Validate');
    const formResult = h('div', { class: 'form-result', 'data-testid': 'form-result', 'aria-live': 'polite' });

    function readForm() {
        const { config, problems } = form.getConfig();
        if (!problems.empty) {
            form.registry.showErrors(problems.fields, 'Fix these first:');
            return null;
        }
        return config;
    }

    function showApiError(e, what) {
        if (e.fields && e.fields.length) {
            const { unplaced } = form.registry.showErrors(e.fields, `${what}: ${e.message}`);
            put(formResult, h('div', { class: 'error-box', 'data-testid': 'form-error' },
                `${what}: ${e.code}: ${e.message} (${e.fields.length} field${e.fields.length === 1 ? '' : 's'}${unplaced.length ? `, ${unplaced.length} shown at the top` : ''})`));
            setTab('edit');
            return;
        }
        form.registry.clearErrors();
        const extra = [];
        if (e.status === 409 && e.body && e.body.error) {
            const err = e.body.error;
            if (err.latest_version !== undefined) extra.push(` Latest version is now v${err.latest_version}: reload to edit it.`);
            if (err.published_version !== undefined) extra.push(` Published version is now v${err.published_version}.`);
        }
        put(formResult, h('div', { class: 'error-box', 'data-testid': 'form-error' }, `${what}: ${e.code}: ${e.message}`, extra,
            e.status === 409 && !isNew ? h('button', { type: 'button', class: 'small', onclick: () => ctx.rerender() }, 'Reload') : null));
    }

    validateButton.addEventListener('click', async () => {
        const config = readForm();
        if (!config) return;
        validateButton.disabled = true;
        try {
            const answer = await api.post('/operations/validate', isNew ? { config } : { config, id });
            form.registry.clearErrors();
            const tools = Array.isArray(answer.tools) ? answer.tools : [];
            put(formResult, h('div', { class: 'ok-box', 'data-testid': 'validate-ok' }, '✓ Valid. Tools: ',
                tools.map((t) => h('code', { title: t.description || '' }, t.name)).reduce((a, b) => [a, ', ', b], [])));
        } catch (e) {
            showApiError(e, 'Does not validate');
        } finally {
            validateButton.disabled = false;
        }
    });

    saveButton.addEventListener('click', async () => {
        const config = readForm();
        if (!config) return;
        saveButton.disabled = true;
        try {
            if (isNew) {
                const answer = await api.post('/operations', { config, comment: comment.value || undefined });
                form.registry.clearErrors();
                ctx.flash(`Created ${answer.operation.name} (${answer.operation.mode}): version ${answer.version ? answer.version.version : 1} is a draft. Test it, then publish it.`, 'ok');
                ctx.navigate(`#/operations/${encodeURIComponent(answer.operation.id)}`);
                return;
            }
            const answer = await api.put(`/operations/${encodeId(id)}`, {
                config, base_version: latest ? latest.version : summary.latest_version, comment: comment.value || undefined,
            });
            form.registry.clearErrors();
            summary = answer.operation;
            latest = answer.version;
            dirty = false;
            comment.value = '';
            renderHeader(form.mode());
            put(formResult, h('div', { class: 'ok-box', 'data-testid': 'save-ok' }, `Saved version ${answer.version.version} (draft).`));
            if (versions) versions.load();
        } catch (e) {
            showApiError(e, isNew ? 'Cannot create' : 'Cannot save');
        } finally {
            saveButton.disabled = false;
        }
    });

    publishButton.addEventListener('click', async () => {
        publishButton.disabled = true;
        try {
            const answer = await api.post(`/operations/${encodeId(id)}/publish`, {
                version: summary.latest_version, expected_published: summary.published_version ?? null,
            });
            summary = answer.operation || summary;
            renderHeader(form.mode());
            put(formResult, h('div', { class: 'ok-box', 'data-testid': 'publish-ok' },
                `Published v${summary.published_version ?? ''}. Tools: `, (answer.tools || []).map((t) => h('code', {}, t)).reduce((a, b) => [a, ', ', b], []),
                dirty ? h('span', { class: 'warn-text' }, ' (unsaved changes in the form are not published)') : null));
            if (versions) versions.load();
        } catch (e) {
            showApiError(e, 'Cannot publish');
            renderHeader(form.mode());
        }
    });

    async function doDelete() {
        try {
            await api.del(`/operations/${encodeId(id)}`);
            ctx.flash(`Deleted ${summary.name}: its tools are withdrawn.`, 'ok');
            ctx.navigate('#/operations');
        } catch (e) {
            ctx.flash(`Cannot delete: ${e.code}: ${e.message}`, 'error');
        }
    }

    const editPanel = h('section', { class: 'panel', id: 'panel-edit', role: 'tabpanel', 'data-testid': 'panel-edit' },
        readOnly ? h('div', { class: 'info-box' }, 'This operation comes from the config file: it changes when the file does.') : null,
        form.el,
        readOnly ? null : h('div', { class: 'save-bar' },
            h('label', { for: 'op-comment' }, 'comment'), comment, validateButton, saveButton),
        formResult);

    const tester = testRunPanel({
        form, operationId: isNew ? null : id, flash: ctx.flash,
        showFormErrors: (fields) => form.registry.showErrors(fields),
    });
    const testPanel = h('section', { class: 'panel', id: 'panel-test', role: 'tabpanel', 'data-testid': 'panel-test', hidden: true }, tester.el);

    let versions = null;
    let versionsPanelEl = null;
    if (!isNew && summary.source !== 'config') {
        versions = versionsPanel({
            operationId: id, getSummary: () => summary, flash: ctx.flash,
            onChanged: async (answer) => {
                if (answer && answer.operation) summary = answer.operation;
                renderHeader(form.mode());
            },
        });
        versionsPanelEl = h('section', { class: 'panel', id: 'panel-versions', role: 'tabpanel', 'data-testid': 'panel-versions', hidden: true }, versions.el);
    }

    const tabButtons = {};
    const panels = { edit: editPanel, test: testPanel, versions: versionsPanelEl };
    const tabLabels = { edit: 'Edit', test: 'Test run', versions: 'Versions' };
    let versionsLoaded = false;
    function setTab(name) {
        if (!panels[name]) name = 'edit';
        for (const t of TABS) {
            if (!panels[t]) continue;
            panels[t].hidden = t !== name;
            tabButtons[t].setAttribute('aria-selected', String(t === name));
            tabButtons[t].classList.toggle('active', t === name);
        }
        if (name === 'versions' && versions && !versionsLoaded) {
            versionsLoaded = true;
            versions.load();
        }
    }
    const tabBar = h('div', { class: 'tabs', role: 'tablist' }, TABS.filter((t) => panels[t]).map((t) => {
        tabButtons[t] = h('button', {
            type: 'button', role: 'tab', id: `tab-${t}`, 'data-testid': `tab-${t}`, 'aria-controls': `panel-${t}`,
            onclick: () => setTab(t),
        }, tabLabels[t]);
        return tabButtons[t];
    }));

    put(view, h('div', { class: 'op-page', 'data-testid': isNew ? 'new-operation-page' : 'operation-page', 'data-operation-id': id || '' },
        header, tabBar, editPanel, testPanel, versionsPanelEl));
    setTab(tab || 'edit');
}
