// The admin API client: the token (kept in this tab's sessionStorage), JSON requests, errors.
// Every call goes to /admin/api/... on the origin that served the UI; nothing else is fetched.

const TOKEN_KEY = 'crank-admin-token';
const unauthorizedListeners = new Set();

export class ApiError extends Error {
    constructor(status, body, fallbackMessage) {
        const error = body && typeof body === 'object' && body.error && typeof body.error === 'object'
            ? body.error : {};
        super(error.message || fallbackMessage || `HTTP ${status}`);
        this.status = status;
        this.code = error.code || (status === 0 ? 'network' : `http_${status}`);
        this.fields = Array.isArray(error.fields) ? error.fields : [];
        this.body = body;
    }
}

export function getToken() {
    try {
        return sessionStorage.getItem(TOKEN_KEY) || '';
    } catch {
        return '';
    }
}

export function setToken(token) {
    sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken() {
    sessionStorage.removeItem(TOKEN_KEY);
}

/** cb(error) runs whenever the API answers 401: the UI goes back to the login form. */
export function onUnauthorized(cb) {
    unauthorizedListeners.add(cb);
    return () => unauthorizedListeners.delete(cb);
}

/** A query string from an object, leaving out empty values. */
export function query(params) {
    const q = new URLSearchParams();
    for (const [key, value] of Object.entries(params || {})) {
        if (value === undefined || value === null || value === '' || value === false) continue;
        q.set(key, String(value));
    }
    const s = q.toString();
    return s ? `?${s}` : '';
}

/**
 * request('GET', '/operations') -> the parsed JSON answer; throws ApiError for any non-2xx answer
 * (with .status, .code, .message, .fields from the API's error object).
 */
export async function request(method, path, body, { token = getToken(), timeoutMs = 120000, quiet401 = false } = {}) {
    const headers = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    const init = { method, headers, cache: 'no-store', credentials: 'omit' };
    if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
        init.body = JSON.stringify(body);
    }
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    init.signal = controller.signal;
    let response;
    try {
        response = await fetch(`/admin/api${path}`, init);
    } catch (e) {
        throw new ApiError(0, null, e && e.name === 'AbortError'
            ? `no answer from crankd within ${Math.round(timeoutMs / 1000)} s`
            : `cannot reach crankd: ${e && e.message ? e.message : e}`);
    } finally {
        clearTimeout(timer);
    }
    const text = await response.text();
    let parsed = null;
    if (text) {
        try {
            parsed = JSON.parse(text);
        } catch {
            parsed = null;
        }
    }
    if (!response.ok) {
        const error = new ApiError(response.status, parsed,
            parsed ? undefined : `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`);
        if (response.status === 401 && !quiet401) {
            for (const cb of unauthorizedListeners) cb(error);
        }
        throw error;
    }
    if (text && parsed === null) {
        throw new ApiError(response.status, null, `the answer to ${method} ${path} is not JSON`);
    }
    return parsed ?? {};
}

export const api = {
    get: (path, opts) => request('GET', path, undefined, opts),
    post: (path, body, opts) => request('POST', path, body ?? {}, opts),
    put: (path, body, opts) => request('PUT', path, body, opts),
    del: (path, opts) => request('DELETE', path, undefined, opts),
};

// --- meta and plugins, loaded once per sign-in ---------------------------------------------------

let metaPromise = null;
let pluginsPromise = null;

export function resetCaches() {
    metaPromise = null;
    pluginsPromise = null;
}

export function loadMeta() {
    if (!metaPromise) {
        metaPromise = api.get('/meta').catch((e) => {
            metaPromise = null;
            throw e;
        });
    }
    return metaPromise;
}

export function loadPlugins() {
    if (!pluginsPromise) {
        pluginsPromise = api.get('/plugins').catch((e) => {
            pluginsPromise = null;
            throw e;
        });
    }
    return pluginsPromise;
}

export function encodeId(id) {
    return encodeURIComponent(String(id));
}
