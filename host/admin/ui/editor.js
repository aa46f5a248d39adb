// The operation editor: the operation's own fields, the execution blocks (mode, collection
// limits, aggregation, safety, tool family names) with their defaults shown, the protocol block
// rendered from the adapter's config schema, and the input schema. getConfig() reads it back as the
// operation object of docs/configuration.md; members it does not manage are kept as they were.

import { h, put, append, clear, fieldId, modeBadge } from './dom.js';
import { FieldRegistry, FormProblems, configForm, schemaField } from './schema-form.js';

export const MODES = ['unary', 'window', 'session', 'async_job'];

/** The documented defaults (docs/configuration.md); GET /admin/api/meta's execution_defaults win. */
export const FALLBACK_DEFAULTS = {
    mode: 'unary',
    transport_behavior: 'request_response',
    window_duration_ms: 10000,
    poll_interval_ms: 1000,
    upstream_timeout_ms: 30000,
    idle_timeout_ms: 300000,
    max_session_lifetime_ms: 3600000,
    max_items: 100,
    max_bytes: 262144,
    max_result_bytes: 262144,
    result_ttl_ms: 86400000,
    overflow_policy: 'pause',
    aggregation_mode: 'raw_items',
    truncate_item_fields: false,
    max_field_length: 2048,
    redacted_paths: [],
    drop_duplicates: false,
    sampling_rate: 1.0,
};

const ALL = MODES;

// key, kind, what it means, the modes it applies to
const LIMITS = [
    ['window_duration_ms', 'integer', 'how long a window collects', ['window', 'async_job']],
    ['poll_interval_ms', 'integer', 'pause between long-poll requests', ['window', 'session', 'async_job']],
    ['upstream_timeout_ms', 'integer', 'the longest wait for the upstream', ALL],
    ['idle_timeout_ms', 'integer', 'a session without polls expires after this', ['session']],
    ['max_session_lifetime_ms', 'integer', "a session's hard end", ['session']],
    ['max_items', 'integer', 'items a window reads before it stops; a session buffer holds', ['window', 'session', 'async_job']],
    ['max_bytes', 'integer', 'bytes of items a window reads; unary: the largest response', ALL],
    ['max_result_bytes', 'integer', 'the largest result (structuredContent)', ALL],
    ['result_ttl_ms', 'integer', 'async_job: how long a finished job is kept', ['async_job']],
    ['overflow_policy', ['pause', 'drop_oldest'], 'session: when the buffer is full', ['session']],
];

const PATHS = [
    ['items_path', 'the items in an upstream response'],
    ['summary_path', 'a summary in an upstream response'],
    ['cursor_path', 'the next cursor in an upstream response'],
    ['status_path', 'a status in an upstream response'],
    ['done_path', 'true when the upstream is done'],
];

const SAFETY = [
    ['truncate_item_fields', 'checkbox', 'cut long string fields to max_field_length'],
    ['max_field_length', 'integer', 'longest string field kept (with truncate_item_fields)'],
    ['redacted_paths', 'list', 'fields replaced by "[redacted]" before anything reaches the model'],
    ['drop_duplicates', 'checkbox', 'drop items equal to one already collected'],
    ['sampling_rate', 'number', 'keep this fraction of items, in (0, 1]'],
    ['sampling_seed', 'integer', 'seeds the sampling decisions (tests)'],
];

const TOOL_NAMES = [
    ['start_tool_name', '_start', ['session', 'async_job']],
    ['poll_tool_name', '_poll', ['session']],
    ['stop_tool_name', '_stop', ['session']],
    ['status_tool_name', '_status', ['async_job']],
    ['result_tool_name', '_result', ['async_job']],
    ['cancel_tool_name', '_cancel', ['async_job']],
];

const MANAGED_EXECUTION = new Set([
    'mode', 'transport_behavior', 'aggregation_mode', 'aggregation',
    ...LIMITS.map((l) => l[0]), ...PATHS.map((p) => p[0]), ...SAFETY.map((s) => s[0]),
    ...TOOL_NAMES.map((t) => t[0]),
]);
const MANAGED_TOP = new Set(['name', 'workspace', 'title', 'description', 'protocol', 'config',
    'auth_profile', 'input_schema', 'execution']);

function names(list) {
    return (Array.isArray(list) ? list : []).map((x) => (typeof x === 'string' ? x : x && (x.name || x.id)))
        .filter(Boolean);
}

function defaultText(value) {
    if (value === undefined) return '';
    return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Protocols with their modes and config schemas, from meta, else from the plugins list. */
export function protocolsOf(meta, plugins) {
    const out = new Map();
    for (const p of (meta && Array.isArray(meta.protocols)) ? meta.protocols : []) {
        if (typeof p === 'string') out.set(p, { name: p });
        else if (p && p.name) out.set(p.name, p);
    }
    for (const plugin of (plugins && plugins.plugins) || []) {
        if (plugin.status && plugin.status !== 'loaded') continue;
        for (const a of plugin.adapters || []) {
            const known = out.get(a.name) || {};
            out.set(a.name, { ...a, ...known, config_schema: known.config_schema || a.config_schema, modes: known.modes || a.modes });
        }
    }
    return out;
}

export function aggregatorsOf(meta, plugins) {
    const out = new Map();
    for (const plugin of (plugins && plugins.plugins) || []) {
        if (plugin.status && plugin.status !== 'loaded') continue;
        for (const a of plugin.aggregators || []) out.set(a.name, a);
    }
    for (const a of (meta && Array.isArray(meta.aggregation_modes)) ? meta.aggregation_modes : []) {
        const name = typeof a === 'string' ? a : a && a.name;
        if (name && !out.has(name)) out.set(name, typeof a === 'object' ? a : { name });
    }
    return out;
}

/**
 * new OperationForm({meta, plugins, config, isNew, readOnly, onModeChange, onDirty})
 * .el: the form; .registry: where API errors go; .getConfig() -> {config, problems}
 */
export class OperationForm {
    constructor({ meta, plugins, config, isNew, readOnly = false, onModeChange = () => {}, onDirty = () => {} }) {
        this.meta = meta || {};
        this.plugins = plugins || {};
        this.initial = config && typeof config === 'object' ? structuredClone(config) : {};
        this.isNew = isNew;
        this.readOnly = readOnly;
        this.onModeChange = onModeChange;
        this.defaults = { ...FALLBACK_DEFAULTS, ...((this.meta && this.meta.execution_defaults) || {}) };
        this.protocols = protocolsOf(this.meta, this.plugins);
        this.aggregators = aggregatorsOf(this.meta, this.plugins);
        this.summary = h('div', { class: 'error-summary', 'data-testid': 'error-summary', role: 'alert', hidden: true, tabindex: '-1' });
        this.registry = new FieldRegistry(this.summary);
        this.fields = {};
        this.configCache = new Map();
        this.build();
        this.el.addEventListener('input', () => onDirty());
        this.el.addEventListener('change', () => onDirty());
    }

    // --- building ---------------------------------------------------------------------------

    frame(path, labelText, control, hintText, { defaultValue, modes, testid } = {}) {
        const id = fieldId(path);
        const errorEl = h('div', { class: 'field-error', id: `${id}-error`, 'data-testid': `field-error-${path}`, role: 'alert', hidden: true });
        const def = defaultValue !== undefined
            ? h('span', { class: 'default', 'data-testid': `default-${path}` }, `default: ${defaultText(defaultValue)}`) : null;
        const hint = (hintText || def) ? h('div', { class: 'hint', id: `${id}-hint` }, hintText || '', hintText && def ? ' · ' : '', def) : null;
        const isBox = control.tagName === 'INPUT' && control.type === 'checkbox';
        const label = h('label', { for: id }, labelText);
        const wrapper = isBox
            ? h('div', { class: 'field field-checkbox', 'data-field': path, 'data-testid': testid || null }, h('div', { class: 'check' }, control, label), hint, errorEl)
            : h('div', { class: 'field', 'data-field': path, 'data-testid': testid || null }, label, control, hint, errorEl);
        if (control.matches && control.matches('input,select,textarea')) {
            control.id = id;
            control.setAttribute('data-path', path);
            control.setAttribute('aria-describedby', [hint ? `${id}-hint` : null, `${id}-error`].filter(Boolean).join(' '));
        }
        if (modes) wrapper.dataset.modes = modes.join(' ');
        this.registry.register(path, { wrapper, input: control, errorEl, path });
        return wrapper;
    }

    input(kind, value, extra = {}) {
        if (kind === 'integer' || kind === 'number') {
            const el = h('input', { type: 'number', step: kind === 'integer' ? '1' : 'any', readOnly: this.readOnly, ...extra });
            el.value = value === undefined || value === null ? '' : String(value);
            return el;
        }
        if (kind === 'checkbox') {
            return h('input', { type: 'checkbox', checked: value === true, disabled: this.readOnly, ...extra });
        }
        if (kind === 'textarea') {
            const el = h('textarea', { rows: 3, readOnly: this.readOnly, ...extra });
            el.value = value ?? '';
            return el;
        }
        const el = h('input', { type: 'text', readOnly: this.readOnly, ...extra });
        el.value = value === undefined || value === null ? '' : String(value);
        return el;
    }

    select(options, value, { emptyLabel, extra = {} } = {}) {
        const el = h('select', { disabled: this.readOnly, ...extra },
            emptyLabel !== undefined ? h('option', { value: '' }, emptyLabel) : null,
            options.map((o) => (Array.isArray(o) ? h('option', { value: o[0] }, o[1]) : h('option', { value: o }, o))));
        const v = value === undefined || value === null ? '' : String(value);
        if (v !== '' && ![...el.options].some((o) => o.value === v)) el.append(h('option', { value: v }, `${v} (unknown here)`));
        el.value = v;
        return el;
    }

    block(title, testid, ...children) {
        return h('fieldset', { class: 'block', 'data-testid': testid }, h('legend', {}, title), children);
    }

    build() {
        const c = this.initial;
        const ex = c.execution && typeof c.execution === 'object' ? c.execution : {};
        const d = this.defaults;
        const f = this.fields;

        // --- the operation itself ---
        f.name = this.input('text', c.name, { readOnly: this.readOnly || !this.isNew, autocomplete: 'off', spellcheck: 'false' });
        const workspaces = names(this.meta.workspaces);
        if (!workspaces.includes('default')) workspaces.unshift('default');
        if (this.isNew && !this.readOnly) {
            f.workspace = this.select(workspaces, c.workspace || 'default');
        } else {
            f.workspace = this.input('text', c.workspace || 'default', { readOnly: true });
        }
        f.title = this.input('text', c.title);
        f.description = this.input('textarea', c.description);
        const protocolNames = [...this.protocols.keys()];
        f.protocol = this.select(protocolNames, c.protocol, { emptyLabel: '(choose a protocol)' });
        f.auth_profile = this.select(names(this.meta.auth_profiles), c.auth_profile, { emptyLabel: '(none)' });
        this.protocolHint = h('div', { class: 'hint protocol-modes', 'data-testid': 'protocol-modes' });

        const opBlock = this.block('Operation', 'block-operation',
            h('div', { class: 'grid2' },
                this.frame('name', 'name', f.name, this.isNew ? 'the tool name: 1..128 of A-Z a-z 0-9 _ - .' : 'cannot change'),
                this.frame('workspace', 'workspace', f.workspace, this.isNew ? 'whose MCP endpoint publishes it' : 'cannot change', { defaultValue: 'default' }),
                this.frame('title', 'title', f.title, 'human-readable title'),
                this.frame('auth_profile', 'auth_profile', f.auth_profile, 'how Crank authenticates to the upstream')),
            this.frame('description', 'description', f.description, 'what the tool does, for the model'),
            this.frame('protocol', 'protocol', f.protocol, 'the protocol adapter that runs it'),
            this.protocolHint);

        // --- execution mode ---
        f.mode = this.select(MODES, ex.mode || 'unary');
        f.transport_behavior = this.select(['request_response', 'server_stream'], ex.transport_behavior,
            { emptyLabel: `(default: ${d.transport_behavior}, or what the protocol says)` });
        this.modeBadgeSlot = h('span', { class: 'mode-badge-slot' });
        const modeBlock = this.block('Execution mode', 'block-mode',
            h('div', { class: 'grid2' },
                this.frame('execution.mode', 'mode', f.mode, 'unary, window, session or async_job', { defaultValue: d.mode }),
                this.frame('execution.transport_behavior', 'transport_behavior', f.transport_behavior,
                    'request_response or server_stream (not with unary)')),
            h('div', { class: 'mode-line' }, 'This operation runs as ', this.modeBadgeSlot, h('span', { class: 'mode-explain', 'data-testid': 'mode-explain' })));

        // --- limits ---
        const limitFields = LIMITS.map(([key, kind, hint, modes]) => {
            let control;
            if (Array.isArray(kind)) control = this.select(kind, ex[key], { emptyLabel: `(default: ${defaultText(d[key])})` });
            else control = this.input(kind, ex[key], { placeholder: d[key] !== undefined ? String(d[key]) : null });
            f[key] = control;
            return this.frame(`execution.${key}`, key, control, hint, { defaultValue: d[key], modes });
        });
        const limitsBlock = this.block('Collection limits', 'block-limits', h('div', { class: 'grid3' }, limitFields));

        // --- aggregation ---
        const aggNames = [...this.aggregators.keys()];
        f.aggregation_mode = this.select(aggNames, ex.aggregation_mode, { emptyLabel: `(default: ${d.aggregation_mode})` });
        this.aggregationSlot = h('div', { class: 'aggregation-config' });
        this.aggregationValue = ex.aggregation;
        this.aggregationFor = ex.aggregation_mode || d.aggregation_mode;
        const pathFields = PATHS.map(([key, hint]) => {
            f[key] = this.input('text', ex[key], { placeholder: 'e.g. data.items', spellcheck: 'false' });
            return this.frame(`execution.${key}`, key, f[key], hint, { modes: ['unary', 'window', 'session', 'async_job'] });
        });
        const aggBlock = this.block('Aggregation', 'block-aggregation',
            this.frame('execution.aggregation_mode', 'aggregation_mode', f.aggregation_mode, 'the aggregator of a window', { defaultValue: d.aggregation_mode }),
            this.aggregationSlot,
            h('div', { class: 'grid3' }, pathFields));

        // --- safety ---
        const safetyFields = SAFETY.map(([key, kind, hint]) => {
            if (kind === 'list') {
                const list = schemaField({ type: 'array', items: { type: 'string' } }, ex[key], `execution.${key}`,
                    { registry: this.registry, label: key, readOnly: this.readOnly });
                f[key] = list;
                const hintEl = h('div', { class: 'hint' }, hint, ' · ', h('span', { class: 'default', 'data-testid': `default-execution.${key}` }, `default: ${defaultText(d[key] ?? [])}`));
                list.el.querySelector('legend').after(hintEl);
                return list.el;
            }
            const control = this.input(kind, ex[key], { placeholder: d[key] !== undefined ? String(d[key]) : null });
            f[key] = control;
            return this.frame(`execution.${key}`, key, control, hint, { defaultValue: d[key] ?? (key === 'sampling_seed' ? 'random' : undefined) });
        });
        const safetyBlock = this.block('Safety', 'block-safety', h('div', { class: 'grid3' }, safetyFields));

        // --- tool family names ---
        this.toolNote = h('p', { class: 'hint', 'data-testid': 'tool-names-note' });
        const toolFields = TOOL_NAMES.map(([key, suffix, modes]) => {
            f[key] = this.input('text', ex[key], { spellcheck: 'false' });
            const w = this.frame(`execution.${key}`, key, f[key], '', { modes });
            w.dataset.suffix = suffix;
            w.classList.add('tool-name');
            return w;
        });
        const toolsBlock = this.block('Tool family names', 'block-tools', this.toolNote, h('div', { class: 'grid3' }, toolFields));

        // --- protocol block ---
        this.configSlot = h('div', { class: 'config-form', 'data-testid': 'config-form' });
        const configBlock = this.block('Protocol block (config)', 'block-config',
            h('p', { class: 'hint' }, "The adapter's own settings, rendered from its config schema. String values may hold input templates such as {{ id | url }}."),
            this.configSlot);

        // --- input schema ---
        f.input_schema = this.input('textarea', c.input_schema === undefined ? '' : JSON.stringify(c.input_schema, null, 2),
            { rows: 6, class: 'json-input', spellcheck: 'false', placeholder: '{"type": "object"}' });
        const inputBlock = this.block('Input schema', 'block-input',
            this.frame('input_schema', 'input_schema (JSON Schema)', f.input_schema, 'the tool input; its root must have "type": "object"', { defaultValue: { type: 'object' } }));
        this.registry.entries.get('input_schema')[0].compound = true;

        this.el = h('form', { class: 'op-form', 'data-testid': 'op-form', novalidate: true, onsubmit: (e) => e.preventDefault() },
            this.summary, opBlock, modeBlock, limitsBlock, aggBlock, safetyBlock, toolsBlock, configBlock, inputBlock);

        f.mode.addEventListener('change', () => this.modeChanged());
        f.name.addEventListener('input', () => this.updateToolPlaceholders());
        f.protocol.addEventListener('change', () => this.protocolChanged());
        f.aggregation_mode.addEventListener('change', () => this.renderAggregation());

        this.currentProtocol = c.protocol || '';
        this.renderConfig(c.config);
        this.renderAggregation();
        this.modeChanged(true);
    }

    renderConfig(value) {
        this.registry.unregisterUnder('config');
        clear(this.configSlot);
        const protocol = this.fields.protocol.value;
        const p = this.protocols.get(protocol);
        const schema = p && p.config_schema && typeof p.config_schema === 'object' ? p.config_schema : null;
        if (!protocol) {
            this.configForm = configForm(null, value, 'config', { registry: this.registry, readOnly: this.readOnly, label: 'config' });
            this.configSlot.append(h('p', { class: 'hint' }, 'Choose a protocol to get its form; meanwhile the config is raw JSON.'), this.configForm.el);
        } else {
            this.configForm = configForm(schema, value, 'config', { registry: this.registry, readOnly: this.readOnly, label: 'config' });
            if (!schema) this.configSlot.append(h('p', { class: 'hint' }, `${protocol} publishes no config schema: raw JSON.`));
            this.configSlot.append(this.configForm.el);
        }
        this.configSlot.dataset.protocol = protocol;
        this.updateProtocolHint();
    }

    protocolChanged() {
        const problems = new FormProblems();
        this.configCache.set(this.currentProtocol, this.configForm.get(problems));
        this.currentProtocol = this.fields.protocol.value;
        this.renderConfig(this.configCache.get(this.currentProtocol));
    }

    renderAggregation() {
        const mode = this.fields.aggregation_mode.value || this.defaults.aggregation_mode;
        let value;
        if (this.aggregationForm) {
            const problems = new FormProblems();
            const v = this.aggregationForm.get(problems);
            if (this.aggregationFor === mode) value = v;
        } else if (this.aggregationFor === mode) {
            value = this.aggregationValue;
        }
        this.aggregationFor = mode;
        this.registry.unregisterUnder('execution.aggregation');
        clear(this.aggregationSlot);
        const agg = this.aggregators.get(mode);
        const schema = agg && agg.config_schema;
        const title = h('div', { class: 'sub-legend' }, `aggregation: the config of ${mode}`,
            agg && agg.description ? h('span', { class: 'hint' }, ` — ${agg.description}`) : null);
        this.aggregationForm = configForm(schema, value, 'execution.aggregation', { registry: this.registry, readOnly: this.readOnly, label: 'aggregation', rel: 'aggregation' });
        const details = h('details', { class: 'sub', 'data-testid': 'aggregation-config' }, h('summary', {}, title), this.aggregationForm.el);
        if (value && Object.keys(value).length) details.open = true;
        this.aggregationSlot.append(details);
    }

    updateProtocolHint() {
        const p = this.protocols.get(this.fields.protocol.value);
        const mode = this.fields.mode.value;
        clear(this.protocolHint);
        if (!p) return;
        const modes = Array.isArray(p.modes) ? p.modes : null;
        this.protocolHint.append(p.description ? `${p.description}. ` : '', modes ? `Modes: ${modes.join(', ')}.` : '');
        if (modes && !modes.includes(mode)) {
            this.protocolHint.append(h('span', { class: 'warn-text' }, ` ${this.fields.protocol.value} does not run ${mode}.`));
        }
    }

    mode() {
        return this.fields.mode.value || 'unary';
    }

    modeChanged(initial = false) {
        const mode = this.mode();
        put(this.modeBadgeSlot, modeBadge(mode, { 'data-testid': 'form-mode-badge' }));
        const explain = {
            unary: ' one request, one answer: one tool.',
            window: ' collects for a bounded window, then answers once: one tool.',
            session: ' a live upstream read in the background: tools _start, _poll, _stop.',
            async_job: ' runs in the background: tools _start, _status, _result, _cancel.',
        };
        this.el.querySelector('[data-testid="mode-explain"]').textContent = explain[mode] || '';
        for (const w of this.el.querySelectorAll('[data-modes]')) {
            const applies = w.dataset.modes.split(' ').includes(mode);
            if (w.classList.contains('tool-name')) w.hidden = !applies;
            else w.classList.toggle('not-applicable', !applies);
            w.title = applies ? '' : `not used in ${mode} mode`;
        }
        this.toolNote.textContent = mode === 'session' || mode === 'async_job'
            ? `A ${mode} publishes a family of tools; empty fields keep the default names.`
            : `A ${mode} operation publishes one tool, named after the operation.`;
        this.updateToolPlaceholders();
        this.updateProtocolHint();
        if (!initial) this.onModeChange(mode);
    }

    updateToolPlaceholders() {
        const name = this.fields.name.value || '{name}';
        for (const [key, suffix] of TOOL_NAMES) {
            this.fields[key].placeholder = `${name}${suffix}`;
            const w = this.fields[key].closest('.field');
            const hint = w.querySelector('.hint');
            const text = `default: ${name}${suffix}`;
            if (hint) hint.textContent = text;
            else w.querySelector('.field-error').before(h('div', { class: 'hint' }, h('span', { class: 'default' }, text)));
        }
    }

    // --- reading -----------------------------------------------------------------------------

    /** {config, problems}: problems.fields are client-side errors (bad JSON, not a number). */
    getConfig() {
        const problems = new FormProblems();
        const f = this.fields;
        const out = {};
        for (const [k, v] of Object.entries(this.initial)) if (!MANAGED_TOP.has(k)) out[k] = v;
        const text = (el) => (el.value.trim() === '' ? undefined : el.value);
        const num = (el, path) => {
            if (el.value === '') {
                if (el.validity && el.validity.badInput) problems.add(path, 'not a number');
                return undefined;
            }
            const n = Number(el.value);
            if (!Number.isFinite(n)) {
                problems.add(path, 'not a number');
                return undefined;
            }
            return n;
        };
        const set = (obj, key, value) => {
            if (value !== undefined) obj[key] = value;
        };
        set(out, 'name', f.name.value.trim() === '' ? undefined : f.name.value.trim());
        set(out, 'workspace', text(f.workspace));
        set(out, 'title', text(f.title));
        set(out, 'description', text(f.description));
        set(out, 'protocol', text(f.protocol));
        set(out, 'auth_profile', text(f.auth_profile));
        const config = this.configForm.get(problems);
        out.config = config === undefined ? {} : config;
        const schemaText = f.input_schema.value.trim();
        if (schemaText) {
            try {
                out.input_schema = JSON.parse(schemaText);
            } catch (e) {
                problems.add('input_schema', `not valid JSON: ${e.message}`);
            }
        }
        const ex = {};
        const initialEx = this.initial.execution && typeof this.initial.execution === 'object' ? this.initial.execution : {};
        for (const [k, v] of Object.entries(initialEx)) if (!MANAGED_EXECUTION.has(k)) ex[k] = v;
        const mode = this.mode();
        ex.mode = mode;
        set(ex, 'transport_behavior', text(f.transport_behavior));
        for (const [key, kind] of LIMITS) {
            set(ex, key, Array.isArray(kind) ? text(f[key]) : num(f[key], `execution.${key}`));
        }
        set(ex, 'aggregation_mode', text(f.aggregation_mode));
        const agg = this.aggregationForm.get(problems);
        if (agg && Object.keys(agg).length) ex.aggregation = agg;
        for (const [key] of PATHS) set(ex, key, text(f[key]));
        for (const [key, kind] of SAFETY) {
            if (kind === 'checkbox') {
                if (f[key].checked) ex[key] = true;
            } else if (kind === 'list') {
                set(ex, key, f[key].get(problems));
            } else {
                set(ex, key, num(f[key], `execution.${key}`));
            }
        }
        for (const [key, , modes] of TOOL_NAMES) {
            if (modes.includes(mode)) set(ex, key, text(f[key]));
        }
        out.execution = ex;
        return { config: out, problems };
    }
}
