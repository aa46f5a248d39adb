// Forms rendered from JSON Schema (an adapter's or an aggregator's config_schema), and the field
// registry that puts validation errors (error.fields[].path) on the field for that path.
//
// Supported: objects with properties, strings, integers, numbers, booleans, enums, arrays of
// scalars (a list editor), objects with additionalProperties (a key/value editor), and type
// unions of scalars (["integer", "string"]: a text box whose value becomes a number when it
// reads as one, so that templates such as "{{ n }}" stay possible). Anything else (oneOf, anyOf,
// $ref, arrays of objects, a schema without a type) is a raw JSON textarea.

import { h, clear, fieldId, json } from './dom.js';

const SCALARS = ['string', 'integer', 'number', 'boolean'];

/** Normalizes "a[2].b" to "a.2.b". */
export function normalizePath(path) {
    return String(path ?? '').replace(/\[(\d+)\]/g, '.$1').replace(/^\$\.?/, '').replace(/^\./, '');
}

/**
 * Where errors go. register(path, {wrapper, input, errorEl, compound}): `compound` fields (JSON
 * textareas, lists, key/value editors) also take the errors of paths below theirs.
 */
export class FieldRegistry {
    constructor(summaryEl) {
        this.entries = new Map();
        this.summaryEl = summaryEl;
        this.marked = [];
    }

    register(path, entry) {
        const p = normalizePath(path);
        const list = this.entries.get(p) || [];
        list.push(entry);
        this.entries.set(p, list);
    }

    /** Forgets every field under prefix (a sub-form that is rendered again). */
    unregisterUnder(prefix) {
        const p = normalizePath(prefix);
        for (const key of [...this.entries.keys()]) {
            if (key === p || key.startsWith(`${p}.`)) this.entries.delete(key);
        }
    }

    pick(list) {
        return list.find((e) => e.wrapper && e.wrapper.isConnected && e.wrapper.offsetParent !== null) ||
            list.find((e) => e.wrapper && e.wrapper.isConnected) || null;
    }

    find(path) {
        const p = normalizePath(path);
        const exact = this.entries.get(p);
        if (exact) {
            const entry = this.pick(exact);
            if (entry) return entry;
        }
        const parts = p.split('.');
        for (let n = parts.length - 1; n > 0; n--) {
            const list = this.entries.get(parts.slice(0, n).join('.'));
            if (!list) continue;
            const entry = this.pick(list.filter((e) => e.compound));
            if (entry) return entry;
        }
        return null;
    }

    clearErrors() {
        for (const entry of this.marked) {
            entry.wrapper.classList.remove('invalid');
            if (entry.input) entry.input.removeAttribute('aria-invalid');
            if (entry.errorEl) {
                entry.errorEl.textContent = '';
                entry.errorEl.hidden = true;
            }
        }
        this.marked = [];
        if (this.summaryEl) {
            clear(this.summaryEl);
            this.summaryEl.hidden = true;
        }
    }

    /**
     * Shows fields [{path, message}] on their fields; the ones without a field go to the summary
     * box. Returns {placed, unplaced}. `intro` heads the summary box.
     */
    showErrors(fields, intro = 'The operation does not validate:') {
        this.clearErrors();
        const placed = [];
        const unplaced = [];
        for (const f of fields || []) {
            const path = normalizePath(f.path);
            const entry = this.find(path);
            if (!entry) {
                unplaced.push(f);
                continue;
            }
            placed.push(f);
            entry.wrapper.classList.add('invalid');
            if (entry.input) entry.input.setAttribute('aria-invalid', 'true');
            if (entry.errorEl) {
                const own = normalizePath(entry.path) === path;
                const text = own ? f.message : `${f.path}: ${f.message}`;
                entry.errorEl.textContent = entry.errorEl.textContent
                    ? `${entry.errorEl.textContent}; ${text}` : text;
                entry.errorEl.hidden = false;
            }
            this.marked.push(entry);
            // An error inside a collapsed <details> opens it.
            for (let el = entry.wrapper; el; el = el.parentElement) {
                if (el.tagName === 'DETAILS') el.open = true;
            }
        }
        if (this.summaryEl && (placed.length || unplaced.length)) {
            const items = [];
            for (const f of unplaced) {
                items.push(h('li', { 'data-testid': 'error-summary-item', 'data-error-path': f.path },
                    h('code', {}, f.path || '(operation)'), ': ', f.message));
            }
            for (const f of placed) {
                const entry = this.find(f.path);
                items.push(h('li', { class: 'placed', 'data-error-path': f.path },
                    h('a', {
                        href: '#', onclick: (e) => {
                            e.preventDefault();
                            entry?.input?.focus();
                        },
                    }, h('code', {}, f.path)), ': ', f.message));
            }
            this.summaryEl.append(h('strong', {}, intro), h('ul', {}, items));
            this.summaryEl.hidden = false;
        }
        // Errors without a field are only in the summary box: show it; else the first field.
        const first = this.marked[0];
        if (unplaced.length && this.summaryEl && this.summaryEl.isConnected) {
            this.summaryEl.scrollIntoView({ block: 'start' });
        } else if (first && first.wrapper.isConnected) {
            first.wrapper.scrollIntoView({ block: 'center' });
        }
        return { placed, unplaced };
    }
}

/** Client-side problems (bad JSON, not a number) found while reading a form. */
export class FormProblems {
    constructor() {
        this.fields = [];
    }

    add(path, message) {
        this.fields.push({ path, message });
    }

    get empty() {
        return this.fields.length === 0;
    }
}

function typesOf(schema) {
    if (!schema || typeof schema !== 'object') return [];
    if (Array.isArray(schema.type)) return schema.type.slice();
    if (typeof schema.type === 'string') return [schema.type];
    return [];
}

/** What kind of editor a schema gets. */
export function kindOf(schema) {
    if (!schema || typeof schema !== 'object' || Object.keys(schema).length === 0) return 'json';
    if (schema.oneOf || schema.anyOf || schema.allOf || schema.$ref || schema.not || schema.if) return 'json';
    if (Array.isArray(schema.enum)) {
        return schema.enum.every((v) => v === null || typeof v !== 'object') ? 'enum' : 'json';
    }
    if (Object.prototype.hasOwnProperty.call(schema, 'const')) return 'json';
    const types = typesOf(schema).filter((t) => t !== 'null');
    if (types.length === 0) {
        if (schema.properties) return 'object';
        return 'json';
    }
    if (types.length > 1) return types.every((t) => SCALARS.includes(t)) ? 'multi' : 'json';
    const type = types[0];
    if (type === 'object') {
        if (schema.properties && Object.keys(schema.properties).length) return 'object';
        if (schema.additionalProperties === false) return 'json';
        return 'map';
    }
    if (type === 'array') {
        const items = schema.items;
        if (Array.isArray(items) || schema.prefixItems) return 'json';
        const k = kindOf(items);
        if (k === 'enum' || k === 'string' || k === 'integer' || k === 'number' || k === 'boolean' || k === 'multi') {
            return 'list';
        }
        return 'json';
    }
    if (SCALARS.includes(type)) return type;
    return 'json';
}

function describe(schema) {
    const bits = [];
    if (schema && typeof schema === 'object') {
        if (schema.description) bits.push(schema.description);
    }
    return bits.join(' ');
}

function defaultText(schema) {
    if (!schema || typeof schema !== 'object' || !Object.prototype.hasOwnProperty.call(schema, 'default')) return '';
    return typeof schema.default === 'string' ? schema.default : json(schema.default, 0);
}

/** A text value read against a union of scalar types. */
export function coerceScalar(text, types) {
    const t = types.filter((x) => x !== 'null');
    const stringFirst = t[0] === 'string';
    const trimmed = text.trim();
    const asNumber = () => {
        if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(trimmed)) return undefined;
        const n = Number(trimmed);
        if (t.includes('integer') && Number.isInteger(n)) return n;
        if (t.includes('number')) return n;
        return undefined;
    };
    const asBool = () => (t.includes('boolean') && (trimmed === 'true' || trimmed === 'false')
        ? trimmed === 'true' : undefined);
    if (types.includes('null') && trimmed === 'null') return null;
    if (!stringFirst || !t.includes('string')) {
        const n = asNumber();
        if (n !== undefined) return n;
        const b = asBool();
        if (b !== undefined) return b;
    }
    if (t.includes('string')) return text;
    return undefined;
}

function scalarText(value) {
    if (value === undefined) return '';
    if (typeof value === 'string') return value;
    return json(value, 0);
}

/**
 * Renders the editor of `schema` for `value` at `path` (an API path such as "config" or
 * "config.timeouts"). Returns {el, get(problems) -> value or undefined (left out)}.
 * opts: {registry, label, required, topLevel, readOnly}
 */
export function schemaField(schema, value, path, opts = {}) {
    const kind = kindOf(schema);
    const builders = {
        object: objectField, map: mapField, list: listField, json: jsonField, enum: enumField,
        boolean: booleanField, integer: numberField, number: numberField, string: stringField,
        multi: multiField,
    };
    return builders[kind](schema || {}, value, path, { ...opts, kind });
}

function labelFor(path, opts) {
    if (opts.label !== undefined) return opts.label;
    const parts = String(path).split('.');
    return parts[parts.length - 1];
}

/** The common frame of one field: label, the control, description, default and error. */
function frame(path, opts, control, schema, { legend = false, extra = [] } = {}) {
    const id = fieldId(path);
    const desc = describe(schema);
    const def = defaultText(schema);
    const errorEl = h('div', {
        class: 'field-error', id: `${id}-error`, 'data-testid': `field-error-${path}`, role: 'alert', hidden: true,
    });
    const hint = (desc || def) ? h('div', { class: 'hint', id: `${id}-hint` },
        desc, def ? h('span', { class: 'default' }, `${desc ? ' ' : ''}default: ${def}`) : null) : null;
    const label = labelFor(path, opts);
    const required = opts.required ? h('span', { class: 'required', title: 'required' }, ' *') : null;
    let wrapper;
    if (legend) {
        wrapper = h('fieldset', { class: `field field-${opts.kind}`, 'data-field': path, id: `${id}-field` },
            h('legend', {}, label, required), hint, control, extra, errorEl);
    } else {
        wrapper = h('div', { class: `field field-${opts.kind}`, 'data-field': path },
            h('label', { for: id }, label, required), control, hint, extra, errorEl);
    }
    const input = legend ? control.querySelector('input,select,textarea') : control;
    if (input && !legend) {
        input.setAttribute('aria-describedby', [hint ? `${id}-hint` : null, `${id}-error`].filter(Boolean).join(' '));
    }
    return { wrapper, errorEl, input };
}

function register(opts, path, f, compound = false) {
    if (opts.registry) opts.registry.register(path, { ...f, path, compound });
}

function stringField(schema, value, path, opts) {
    const long = schema.format === 'textarea' || (typeof value === 'string' && value.includes('\n'));
    const input = long
        ? h('textarea', { id: fieldId(path), 'data-path': path, rows: 3, readOnly: opts.readOnly })
        : h('input', { type: 'text', id: fieldId(path), 'data-path': path, readOnly: opts.readOnly,
            placeholder: defaultText(schema) ? `default: ${defaultText(schema)}` : null });
    input.value = typeof value === 'string' ? value : (value === undefined ? '' : json(value, 0));
    const f = frame(path, opts, input, schema);
    register(opts, path, f);
    return {
        el: f.wrapper,
        get: () => (input.value === '' ? undefined : input.value),
    };
}

function numberField(schema, value, path, opts) {
    const input = h('input', {
        type: 'number', id: fieldId(path), 'data-path': path, readOnly: opts.readOnly,
        step: opts.kind === 'integer' ? '1' : 'any',
        placeholder: defaultText(schema) ? `default: ${defaultText(schema)}` : null,
    });
    input.value = value === undefined || value === null ? '' : String(value);
    const f = frame(path, opts, input, schema);
    register(opts, path, f);
    return {
        el: f.wrapper,
        get: (problems) => {
            if (input.value === '') {
                if (input.validity && input.validity.badInput) problems.add(path, 'not a number');
                return undefined;
            }
            const n = Number(input.value);
            if (!Number.isFinite(n)) {
                problems.add(path, 'not a number');
                return undefined;
            }
            return n;
        },
    };
}

function multiField(schema, value, path, opts) {
    const types = typesOf(schema);
    const input = h('input', {
        type: 'text', id: fieldId(path), 'data-path': path, readOnly: opts.readOnly,
        placeholder: defaultText(schema) ? `default: ${defaultText(schema)}` : types.join(' or '),
    });
    input.value = scalarText(value);
    const f = frame(path, opts, input, schema);
    register(opts, path, f);
    return {
        el: f.wrapper,
        get: (problems) => {
            if (input.value === '') return undefined;
            const v = coerceScalar(input.value, types);
            if (v === undefined) problems.add(path, `expected ${types.join(' or ')}`);
            return v;
        },
    };
}

function booleanField(schema, value, path, opts) {
    const def = defaultText(schema);
    const select = h('select', { id: fieldId(path), 'data-path': path, disabled: opts.readOnly },
        h('option', { value: '' }, def ? `(default: ${def})` : '(not set)'),
        h('option', { value: 'true' }, 'true'),
        h('option', { value: 'false' }, 'false'));
    select.value = value === true ? 'true' : value === false ? 'false' : '';
    const f = frame(path, opts, select, schema);
    register(opts, path, f);
    return {
        el: f.wrapper,
        get: () => (select.value === '' ? undefined : select.value === 'true'),
    };
}

function enumField(schema, value, path, opts) {
    const def = defaultText(schema);
    const options = schema.enum.map((v) => h('option', { value: json(v, 0) }, typeof v === 'string' ? v : json(v, 0)));
    const select = h('select', { id: fieldId(path), 'data-path': path, disabled: opts.readOnly },
        h('option', { value: '' }, def ? `(default: ${def})` : '(not set)'), options);
    select.value = value === undefined ? '' : json(value, 0);
    if (value !== undefined && select.value === '') {
        // A value outside the enum: keep it selectable so that saving does not lose it.
        select.append(h('option', { value: json(value, 0) }, `${scalarText(value)} (not in the schema)`));
        select.value = json(value, 0);
    }
    const f = frame(path, opts, select, schema);
    register(opts, path, f);
    return {
        el: f.wrapper,
        get: () => (select.value === '' ? undefined : JSON.parse(select.value)),
    };
}

function jsonField(schema, value, path, opts) {
    const textarea = h('textarea', {
        id: fieldId(path), 'data-path': path, rows: opts.rows || 4, class: 'json-input', spellcheck: 'false',
        readOnly: opts.readOnly, placeholder: opts.placeholder || 'JSON',
    });
    textarea.value = value === undefined ? '' : json(value);
    const f = frame(path, opts, textarea, schema);
    if (!opts.noRawNote && kindOf(schema) === 'json' && opts.kind === 'json') {
        f.wrapper.classList.add('raw-json');
    }
    register(opts, path, f, true);
    return {
        el: f.wrapper,
        get: (problems) => {
            const text = textarea.value.trim();
            if (text === '') return undefined;
            try {
                return JSON.parse(text);
            } catch (e) {
                problems.add(path, `not valid JSON: ${e.message}`);
                return undefined;
            }
        },
    };
}

function objectField(schema, value, path, opts) {
    if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) {
        // Not an object at all: fall back to raw JSON so that nothing is lost.
        return jsonField(schema, value, path, { ...opts, kind: 'json' });
    }
    const props = schema.properties || {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const current = value && typeof value === 'object' && !Array.isArray(value) ? value : {};
    const children = [];
    const body = h('div', { class: 'object-body' });
    for (const [key, sub] of Object.entries(props)) {
        const childPath = path ? `${path}.${key}` : key;
        const childRel = opts.rel ? `${opts.rel}.${key}` : key;
        const child = schemaField(sub, current[key], childPath, {
            registry: opts.registry, required: required.has(key), readOnly: opts.readOnly,
            rel: childRel, label: childRel,
        });
        children.push([key, child]);
        body.append(child.el);
    }
    // Members the schema does not list: kept as they are, in a JSON box of their own.
    const extraKeys = Object.keys(current).filter((k) => !(k in props));
    let extra = null;
    if (extraKeys.length || (schema.additionalProperties !== false && schema.additionalProperties !== undefined)) {
        const extraValue = {};
        for (const k of extraKeys) extraValue[k] = current[k];
        extra = jsonField({}, extraKeys.length ? extraValue : undefined, `${path}.*`, {
            registry: null, label: 'Other members (JSON object)', readOnly: opts.readOnly, rows: 3,
            placeholder: '{"member": value}', kind: 'json', noRawNote: true,
        });
        body.append(extra.el);
    }
    let wrapper;
    let errorEl;
    if (opts.topLevel) {
        errorEl = h('div', { class: 'field-error', id: `${fieldId(path)}-error`, 'data-testid': `field-error-${path}`, role: 'alert', hidden: true });
        wrapper = h('div', { class: 'object-top', 'data-field': path }, errorEl, body);
    } else {
        const f = frame(path, opts, body, schema, { legend: true });
        wrapper = f.wrapper;
        errorEl = f.errorEl;
        wrapper.classList.add('nested');
    }
    if (opts.registry) opts.registry.register(path, { wrapper, errorEl, input: body.querySelector('input,select,textarea'), path });
    return {
        el: wrapper,
        get: (problems) => {
            const out = {};
            if (extra) {
                const more = extra.get(problems);
                if (more !== undefined) {
                    if (!more || typeof more !== 'object' || Array.isArray(more)) {
                        problems.add(path, 'other members must be a JSON object');
                    } else Object.assign(out, more);
                }
            }
            for (const [key, child] of children) {
                const v = child.get(problems);
                if (v !== undefined) out[key] = v;
            }
            if (!opts.topLevel && Object.keys(out).length === 0) return undefined;
            return out;
        },
    };
}

/** A row editor for one scalar (used by lists and key/value editors). */
function scalarInput(schema, value, ariaLabel, readOnly) {
    const kind = kindOf(schema || { type: 'string' });
    if (kind === 'enum') {
        const select = h('select', { 'aria-label': ariaLabel, disabled: readOnly },
            schema.enum.map((v) => h('option', { value: json(v, 0) }, typeof v === 'string' ? v : json(v, 0))));
        if (value !== undefined) select.value = json(value, 0);
        return { el: select, get: () => JSON.parse(select.value) };
    }
    if (kind === 'boolean') {
        const select = h('select', { 'aria-label': ariaLabel, disabled: readOnly },
            h('option', { value: 'true' }, 'true'), h('option', { value: 'false' }, 'false'));
        select.value = value === false ? 'false' : 'true';
        return { el: select, get: () => select.value === 'true' };
    }
    const input = h('input', { type: 'text', 'aria-label': ariaLabel, readOnly });
    input.value = scalarText(value);
    const types = kind === 'json' ? ['json'] : (kind === 'multi' ? typesOf(schema) : [kind]);
    return {
        el: input,
        get: (problems, path) => {
            const text = input.value;
            if (types[0] === 'json') {
                const t = text.trim();
                if (/^[[{"]/.test(t) || /^-?\d/.test(t) || ['true', 'false', 'null'].includes(t)) {
                    try {
                        return JSON.parse(t);
                    } catch {
                        return text;
                    }
                }
                return text;
            }
            const nonScalar = typesOf(schema).some((t) => t === 'array' || t === 'object');
            if (nonScalar && /^[[{]/.test(text.trim())) {
                try {
                    return JSON.parse(text);
                } catch (e) {
                    problems.add(path, `not valid JSON: ${e.message}`);
                    return undefined;
                }
            }
            const v = coerceScalar(text, types);
            if (v === undefined) problems.add(path, `expected ${types.join(' or ')}`);
            return v;
        },
    };
}

function listField(schema, value, path, opts) {
    if (value !== undefined && !Array.isArray(value)) return jsonField(schema, value, path, { ...opts, kind: 'json' });
    const items = Array.isArray(value) ? value : [];
    const rows = h('div', { class: 'rows', 'data-testid': `list-${path}` });
    const entries = [];
    const label = labelFor(path, opts);
    const addRow = (v) => {
        const n = entries.length + 1;
        const input = scalarInput(schema.items, v, `${label} item ${n}`, opts.readOnly);
        const entry = { input };
        const row = h('div', { class: 'row' }, input.el, opts.readOnly ? null : h('button', {
            type: 'button', class: 'small', 'aria-label': `remove ${label} item ${n}`,
            onclick: () => {
                entries.splice(entries.indexOf(entry), 1);
                row.remove();
            },
        }, '×'));
        entry.row = row;
        entries.push(entry);
        rows.append(row);
        return input.el;
    };
    for (const v of items) addRow(v);
    const add = opts.readOnly ? null : h('button', {
        type: 'button', class: 'small add', 'data-testid': `add-${path}`,
        onclick: () => addRow(undefined).focus(),
    }, `+ add ${label} item`);
    const control = h('div', { class: 'list-editor', id: fieldId(path), 'data-path': path }, rows, add);
    const f = frame(path, opts, control, schema, { legend: true });
    register(opts, path, { ...f, input: control.querySelector('input,select') || add }, true);
    return {
        el: f.wrapper,
        get: (problems) => {
            const out = [];
            entries.forEach((e, i) => {
                if (e.input.el.tagName === 'INPUT' && e.input.el.value === '') return;
                const v = e.input.get(problems, `${path}.${i}`);
                if (v !== undefined) out.push(v);
            });
            return out.length ? out : undefined;
        },
    };
}

function mapField(schema, value, path, opts) {
    const current = value && typeof value === 'object' && !Array.isArray(value) ? value : {};
    if (value !== undefined && current !== value) return jsonField(schema, value, path, { ...opts, kind: 'json' });
    const valueSchema = schema.additionalProperties && typeof schema.additionalProperties === 'object'
        ? schema.additionalProperties : {};
    const rows = h('div', { class: 'rows' });
    const entries = [];
    const label = labelFor(path, opts);
    const addRow = (k, v) => {
        const n = entries.length + 1;
        const key = h('input', { type: 'text', class: 'map-key', 'aria-label': `${label} key ${n}`, placeholder: 'key', readOnly: opts.readOnly });
        key.value = k ?? '';
        const val = scalarInput(kindOf(valueSchema) === 'json' ? {} : valueSchema, v, `${label} value ${n}`, opts.readOnly);
        const entry = { key, val };
        const row = h('div', { class: 'row' }, key, h('span', { class: 'sep' }, ':'), val.el,
            opts.readOnly ? null : h('button', {
                type: 'button', class: 'small', 'aria-label': `remove ${label} entry ${n}`,
                onclick: () => {
                    entries.splice(entries.indexOf(entry), 1);
                    row.remove();
                },
            }, '×'));
        entries.push(entry);
        rows.append(row);
        return key;
    };
    for (const [k, v] of Object.entries(current)) addRow(k, v);
    const add = opts.readOnly ? null : h('button', {
        type: 'button', class: 'small add', 'data-testid': `add-${path}`, onclick: () => addRow('', undefined).focus(),
    }, `+ add ${label} entry`);
    const control = h('div', { class: 'map-editor', id: fieldId(path), 'data-path': path }, rows, add);
    const f = frame(path, opts, control, schema, { legend: true });
    register(opts, path, { ...f, input: control.querySelector('input') || add }, true);
    return {
        el: f.wrapper,
        get: (problems) => {
            const out = {};
            for (const e of entries) {
                const k = e.key.value;
                if (k === '') {
                    if (e.val.el.value !== '' && e.val.el.tagName === 'INPUT') problems.add(path, 'an entry has a value but no key');
                    continue;
                }
                const v = e.val.get(problems, `${path}.${k}`);
                if (v !== undefined) out[k] = v;
            }
            return Object.keys(out).length ? out : undefined;
        },
    };
}

/**
 * The form of a whole config object at `path` ("config", "execution.aggregation"). When the
 * schema is missing or not an object schema, a raw JSON textarea. Returns {el, get(problems)}
 * where get always returns an object (possibly empty) or undefined for an unreadable JSON box.
 */
export function configForm(schema, value, path, { registry, readOnly = false, label = path, rel = '' } = {}) {
    if (schema && typeof schema === 'object' && kindOf(schema) === 'object') {
        return schemaField(schema, value || {}, path, { registry, topLevel: true, readOnly, rel });
    }
    const f = jsonField(schema || {}, value, path, {
        registry, label: `${label} (JSON)`, readOnly, rows: 6, placeholder: '{}', kind: 'json',
    });
    return {
        el: f.el,
        get: (problems) => {
            const v = f.get(problems);
            return v === undefined ? {} : v;
        },
    };
}
