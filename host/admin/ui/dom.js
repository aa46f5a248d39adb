// Small DOM helpers shared by the UI modules (no framework).

/**
 * h('div', {class: 'x', id: 'y', 'data-testid': 'z', onclick: fn}, child, [children], 'text')
 * Props: class, text, html is never supported (everything is text, so nothing from the API is
 * interpreted as markup); on* are event listeners; value/checked/disabled/selected/readOnly are set
 * as properties; everything else is an attribute (null/undefined/false skips it).
 */
export function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
        if (value === null || value === undefined || value === false) continue;
        if (key === 'class') el.className = value;
        else if (key === 'text') el.textContent = String(value);
        else if (key.startsWith('on') && typeof value === 'function') {
            el.addEventListener(key.slice(2).toLowerCase(), value);
        } else if (['value', 'checked', 'disabled', 'selected', 'readOnly', 'multiple'].includes(key)) {
            el[key] = value;
        } else el.setAttribute(key, value === true ? '' : String(value));
    }
    append(el, children);
    return el;
}

export function append(el, ...children) {
    for (const child of children.flat(Infinity)) {
        if (child === null || child === undefined || child === false) continue;
        el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
}

export function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
    return el;
}

/** An id usable in HTML from an API path ("execution.max_items" -> "f-execution.max_items"). */
export function fieldId(path) {
    return 'f-' + String(path).replace(/[^A-Za-z0-9_.-]/g, '_');
}

/** Milliseconds since the epoch (or an RFC 3339 string) as a local date and time. */
export function formatTime(value) {
    if (value === null || value === undefined || value === '') return '—';
    const date = typeof value === 'number' ? new Date(value) : new Date(String(value));
    if (Number.isNaN(date.getTime())) return String(value);
    const pad = (n, w = 2) => String(n).padStart(w, '0');
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
        `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function json(value, indent = 2) {
    try {
        return JSON.stringify(value, null, indent);
    } catch {
        return String(value);
    }
}

/** A <pre> with pretty JSON. */
export function jsonBlock(value, props = {}) {
    return h('pre', { class: 'json', ...props }, value === undefined ? '' : json(value));
}

const MODES = ['unary', 'window', 'session', 'async_job'];

/** The mode badge shown everywhere an operation is. */
export function modeBadge(mode, props = {}) {
    const m = mode || 'unary';
    return h('span', {
        class: `badge mode mode-${MODES.includes(m) ? m : 'other'}`,
        'data-testid': 'mode-badge', 'data-mode': m, title: `execution mode: ${m}`, ...props,
    }, m);
}

export function statusBadge(status, props = {}) {
    const s = status === null || status === undefined || status === '' ? 'unknown' : String(status);
    return h('span', { class: `badge status status-${s.replace(/[^a-z_]/gi, '')}`, 'data-status': s, ...props }, s);
}

export function boolText(value) {
    if (value === true) return 'yes';
    if (value === false) return 'no';
    return '—';
}

/** Replaces the children of el (null, false and nested arrays are skipped). */
export function put(el, ...children) {
    clear(el);
    return append(el, ...children);
}
