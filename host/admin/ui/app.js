// Crank admin UI: sign-in, hash routes, page switching. Plain ES modules, no build step; every
// request goes to crankd's own /admin/api (see docs/admin-api.md).
//
// Routes: #/operations, #/operations/<id>[/test|/versions], #/new[?mode=window&protocol=rest],
// #/plugins, #/upstreams[/{name}], #/agents[/{id}], #/sessions, #/jobs, #/audit.

import { h, put, clear } from './dom.js';
import { api, getToken, setToken, clearToken, onUnauthorized, resetCaches, request } from './api.js';
import { operationsPage, pluginsPage, sessionsPage, jobsPage, auditPage } from './pages.js';
import { upstreamsPage, upstreamPage } from './upstreams.js';
import { agentsPage, agentPage } from './agents.js';
import { operationPage } from './operation.js';

const view = document.getElementById('view');
const flashBox = document.getElementById('flash');
const nav = document.getElementById('nav');
const loginBox = document.getElementById('login');
let generation = 0;
let cleanup = null;
let loginReason = '';

function flash(message, kind = 'info') {
    const item = h('div', { class: `flash flash-${kind}`, 'data-testid': 'flash', 'data-kind': kind, 'data-at': String(Date.now()), role: kind === 'error' ? 'alert' : 'status' },
        h('span', {}, message),
        h('button', { type: 'button', class: 'small close', 'aria-label': 'dismiss', onclick: () => item.remove() }, '×'));
    flashBox.append(item);
    while (flashBox.children.length > 4) flashBox.firstChild.remove();
    if (kind !== 'error') setTimeout(() => item.remove(), 10000);
}

function parseHash() {
    const raw = location.hash.replace(/^#/, '') || '/operations';
    const [pathPart, queryPart = ''] = raw.split('?');
    const segments = pathPart.split('/').filter(Boolean).map((s) => decodeURIComponent(s));
    return { segments, params: new URLSearchParams(queryPart) };
}

function navigate(hash) {
    if (location.hash === hash) render();
    else location.hash = hash;
}

function showLogin(reason) {
    if (cleanup) {
        cleanup();
        cleanup = null;
    }
    generation++;
    document.body.classList.add('signed-out');
    nav.hidden = true;
    clear(view);
    loginBox.hidden = false;
    const msg = document.getElementById('login-message');
    msg.textContent = reason || '';
    msg.hidden = !reason;
    const input = document.getElementById('login-token');
    input.value = '';
    input.focus();
}

async function submitLogin(e) {
    e.preventDefault();
    const input = document.getElementById('login-token');
    const msg = document.getElementById('login-message');
    const button = document.getElementById('login-submit');
    const token = input.value.trim();
    if (!token) {
        msg.textContent = 'Enter the admin token (crankd prints it at start: CRANK_ADMIN_TOKEN).';
        msg.hidden = false;
        return;
    }
    button.disabled = true;
    try {
        // Checked with the token given, before it is kept: a 401 here is a wrong token.
        await request('GET', '/meta', undefined, { token, timeoutMs: 15000, quiet401: true });
        setToken(token);
        resetCaches();
        loginBox.hidden = true;
        loginReason = '';
        document.body.classList.remove('signed-out');
        nav.hidden = false;
        render();
    } catch (err) {
        msg.textContent = err.status === 401 ? 'This token is refused (401 unauthorized).'
            : err.code === 'admin_disabled' ? 'The admin API is turned off in this crankd (no admin.token in its config).'
                : `Cannot sign in: ${err.code}: ${err.message}`;
        msg.hidden = false;
    } finally {
        button.disabled = false;
    }
}

function logout() {
    clearToken();
    resetCaches();
    showLogin('Signed out.');
}

async function render() {
    if (cleanup) {
        try {
            cleanup();
        } catch {
            // a page's cleanup must not stop the next page
        }
        cleanup = null;
    }
    if (!getToken()) {
        showLogin(loginReason);
        return;
    }
    document.body.classList.remove('signed-out');
    loginBox.hidden = true;
    nav.hidden = false;
    const my = ++generation;
    const ctx = {
        flash, navigate, rerender: render, isStale: () => my !== generation,
    };
    const { segments, params } = parseHash();
    const [first, second, third] = segments;
    const section = first === 'new' ? 'operations' : first;
    for (const a of nav.querySelectorAll('a[data-section]')) {
        a.classList.toggle('active', a.dataset.section === section);
        if (a.dataset.section === section) a.setAttribute('aria-current', 'page');
        else a.removeAttribute('aria-current');
    }
    clear(view);
    view.scrollTop = 0;
    window.scrollTo(0, 0);
    let result;
    try {
        switch (first) {
            case undefined:
            case 'operations':
                if (second) result = await operationPage(view, ctx, { id: second, tab: third, params });
                else result = await operationsPage(view, ctx, { params });
                document.title = 'Operations · Crank admin';
                break;
            case 'new':
                result = await operationPage(view, ctx, { id: null, tab: second, params });
                document.title = 'New operation · Crank admin';
                break;
            case 'plugins':
                result = await pluginsPage(view, ctx, { params });
                document.title = 'Plugins · Crank admin';
                break;
            case 'upstreams':
                if (second) result = await upstreamPage(view, ctx, { name: second });
                else result = await upstreamsPage(view, ctx);
                document.title = 'Upstreams · Crank admin';
                break;
            case 'agents':
                if (second) result = await agentPage(view, ctx, { id: second });
                else result = await agentsPage(view, ctx);
                document.title = 'Agents · Crank admin';
                break;
            case 'sessions':
                result = sessionsPage(view, ctx, { params });
                document.title = 'Sessions · Crank admin';
                break;
            case 'jobs':
                result = jobsPage(view, ctx, { params });
                document.title = 'Jobs · Crank admin';
                break;
            case 'audit':
                result = await auditPage(view, ctx, { params });
                document.title = 'Audit log · Crank admin';
                break;
            default:
                view.append(h('div', { class: 'error-box' }, `No page ${location.hash}.`), h('a', { href: '#/operations' }, 'Operations'));
        }
    } catch (e) {
        if (my === generation) view.append(h('div', { class: 'error-box', 'data-testid': 'page-error' }, `This page failed: ${e && e.message ? e.message : e}`));
        console.error(e);
    }
    if (typeof result === 'function') {
        if (my === generation) cleanup = result;
        else result();
    }
}

onUnauthorized(() => {
    clearToken();
    resetCaches();
    loginReason = 'The admin token was refused (401): sign in again.';
    showLogin(loginReason);
});

document.getElementById('login-form').addEventListener('submit', submitLogin);
document.getElementById('logout').addEventListener('click', logout);
window.addEventListener('hashchange', () => {
    // Messages of the page left behind go; one said just before this navigation stays.
    for (const item of [...flashBox.children]) {
        if (Date.now() - Number(item.dataset.at || 0) > 1500) item.remove();
    }
    render();
});
render();

// For the console: window.crank.api.get('/meta')
window.crank = { api };
