// The test-run screen: runs an operation (the form as it is, or a saved version) through
// POST /admin/api/test-runs and shows what its result says: truncated, window_complete, has_more
// and status up front, then the warnings (cut by a limit, a timeout, ...), the items, the
// aggregate (summary / stats / state) and the steps of a session or job run.

import { h, put, append, clear, json, jsonBlock, modeBadge, boolText } from './dom.js';
import { api } from './api.js';

const CONTRACT_FACTS = ['truncated', 'window_complete', 'has_more', 'status'];

function fact(name, value, { alarm = false } = {}) {
    const text = typeof value === 'boolean' ? String(value) : (value === undefined || value === null ? '—' : String(value));
    return h('div', {
        class: `fact${alarm ? ' alarm' : ''}${typeof value === 'boolean' ? ` bool-${value}` : ''}`,
        'data-testid': `fact-${name}`, 'data-value': text,
    }, h('div', { class: 'fact-name' }, name), h('div', { class: 'fact-value' }, text));
}

/** The warnings to show: the API's, plus what the contract says when the API did not say it. */
export function warningsOf(run) {
    const list = Array.isArray(run.warnings) ? run.warnings.slice() : [];
    const contract = run.contract || {};
    const has = (code) => list.some((w) => w.code === code);
    if (contract.truncated === true && !has('truncated')) {
        list.push({ code: 'truncated', message: `the result was truncated${contract.stop_reason ? ` (stop_reason: ${contract.stop_reason})` : ''}`, derived: true });
    }
    if ((contract.stop_reason === 'upstream_timeout' || run.outcome === 'timeout') && !has('timeout')) {
        list.push({ code: 'timeout', message: run.outcome === 'timeout' ? 'the test run hit its time bound' : 'the upstream sent nothing for upstream_timeout_ms', derived: true });
    }
    if (run.outcome === 'error' && !has('upstream_error')) {
        list.push({ code: 'upstream_error', message: 'the run ended with an error: see the result', derived: true });
    }
    return list;
}

function itemsTable(items) {
    if (!Array.isArray(items)) return null;
    if (items.length === 0) return h('p', { class: 'hint' }, 'No items.');
    const objects = items.every((i) => i && typeof i === 'object' && !Array.isArray(i));
    if (!objects) {
        return h('ol', { class: 'items-list' }, items.map((i) => h('li', {}, h('code', {}, json(i, 0)))));
    }
    const cols = [];
    for (const item of items.slice(0, 50)) {
        for (const k of Object.keys(item)) if (!cols.includes(k) && cols.length < 8) cols.push(k);
    }
    const cell = (v) => {
        const t = v === undefined ? '' : (typeof v === 'string' ? v : json(v, 0));
        return h('td', { title: t.length > 80 ? t : null }, t.length > 80 ? `${t.slice(0, 80)}…` : t);
    };
    return h('div', { class: 'table-wrap' }, h('table', { class: 'items', 'data-testid': 'testrun-items-table' },
        h('thead', {}, h('tr', {}, h('th', {}, '#'), cols.map((c) => h('th', {}, c)))),
        h('tbody', {}, items.map((item, i) => h('tr', { 'data-testid': 'testrun-item' }, h('td', {}, String(i + 1)), cols.map((c) => cell(item[c])))))));
}

/** The result of one test run (the API's answer). */
export function renderTestRun(run) {
    const contract = run.contract || {};
    const result = run.result && typeof run.result === 'object' ? run.result : {};
    const warnings = warningsOf(run);
    const facts = h('div', { class: 'facts', 'data-testid': 'testrun-contract' },
        CONTRACT_FACTS.map((k) => fact(k, contract[k] ?? (k === 'status' ? result.status : result[k]), {
            alarm: (k === 'truncated' && contract[k] === true) || (k === 'window_complete' && contract[k] === false),
        })),
        fact('outcome', run.outcome, { alarm: run.outcome && run.outcome !== 'ok' }),
        fact('stop_reason', contract.stop_reason ?? result.stop_reason),
        fact('is_error', run.is_error, { alarm: run.is_error === true }),
        fact('elapsed_ms', run.elapsed_ms));
    const warningBox = warnings.length
        ? h('div', { class: 'warnings', 'data-testid': 'testrun-warnings', role: 'alert' },
            h('h3', {}, `⚠ ${warnings.length === 1 ? '1 warning' : `${warnings.length} warnings`}`),
            warnings.map((w) => h('div', { class: `warning warning-${w.code}`, 'data-testid': 'testrun-warning', 'data-code': w.code },
                h('strong', {}, w.code), ': ', w.message, w.derived ? h('span', { class: 'hint' }, ' (from the result contract)') : null)))
        : h('div', { class: 'no-warnings', 'data-testid': 'testrun-no-warnings' }, '✓ No warnings: nothing was cut by a limit or a timeout.');

    // An async job's answer is its _result: {job_id, status, ready, result: <the operation's result>}.
    const payload = run.mode === 'async_job' && result.result && typeof result.result === 'object' && !Array.isArray(result.result)
        ? result.result : result;
    const items = Array.isArray(payload.items) ? payload.items : null;
    const countKeys = ['item_count', 'dropped_count', 'bytes', 'cursor', 'error', 'job_id', 'session_id', 'ready', 'undelivered'];
    const counts = [];
    for (const source of payload === result ? [result] : [result, payload]) {
        for (const k of countKeys) {
            if (source[k] === undefined || counts.some((c) => c.dataset.key === k)) continue;
            counts.push(h('span', { class: 'count', 'data-testid': `result-${k}`, 'data-key': k }, h('span', { class: 'k' }, k), ' ',
                typeof source[k] === 'object' ? json(source[k], 0) : String(source[k])));
        }
    }

    const aggregate = ['summary', 'stats', 'state'].filter((k) => payload[k] !== undefined)
        .map((k) => h('div', { class: 'aggregate', 'data-testid': `testrun-aggregate-${k}` }, h('h4', {}, k), jsonBlock(payload[k])));
    if (!items && !aggregate.length && payload !== result && Object.keys(payload).length) {
        aggregate.push(h('div', { class: 'aggregate', 'data-testid': 'testrun-aggregate-result' }, h('h4', {}, 'result'), jsonBlock(payload)));
    }

    const steps = Array.isArray(run.steps) && run.steps.length
        ? h('section', { class: 'steps', 'data-testid': 'testrun-steps' }, h('h3', {}, `Steps (${run.steps.length})`),
            h('ol', {}, run.steps.map((s, i) => h('li', { class: `step${s.is_error ? ' step-error' : ''}`, 'data-testid': 'testrun-step', 'data-tool': s.tool },
                h('div', { class: 'step-head' }, h('code', {}, s.tool || `step ${i + 1}`), ' ',
                    s.arguments !== undefined ? h('code', { class: 'args' }, json(s.arguments, 0)) : null, ' ',
                    s.is_error ? h('span', { class: 'badge status status-error' }, 'error') : h('span', { class: 'badge status status-ok' }, 'ok'),
                    s.elapsed_ms !== undefined ? h('span', { class: 'hint' }, ` ${s.elapsed_ms} ms`) : null),
                summarizeStep(s),
                h('details', {}, h('summary', {}, 'result'), s.result !== undefined ? jsonBlock(s.result) : h('pre', {}, s.text || '')))))) : null;

    return h('div', { class: `testrun-result outcome-${run.outcome || 'unknown'}`, 'data-testid': 'testrun-result', 'data-outcome': run.outcome || '' },
        h('div', { class: 'testrun-head' }, h('h3', {}, 'Result of ', h('code', {}, run.operation || ''), ' '), modeBadge(run.mode)),
        facts, warningBox,
        counts.length ? h('div', { class: 'counts' }, counts) : null,
        items ? h('section', { 'data-testid': 'testrun-items' }, h('h3', {}, `Items (${items.length})`), itemsTable(items)) : null,
        aggregate.length ? h('section', { 'data-testid': 'testrun-aggregate' }, h('h3', {}, 'Aggregate'), aggregate) : null,
        !items && !aggregate.length && run.result !== undefined
            ? h('section', { 'data-testid': 'testrun-result-json' }, h('h3', {}, 'Result'), jsonBlock(run.result)) : null,
        steps,
        run.text ? h('details', {}, h('summary', {}, 'Text content'), h('pre', { class: 'json' }, run.text)) : null,
        h('details', {}, h('summary', {}, 'Raw answer'), jsonBlock(run)));
}

function summarizeStep(s) {
    const r = s.result;
    if (!r || typeof r !== 'object') return null;
    const bits = [];
    for (const k of ['status', 'item_count', 'has_more', 'truncated', 'ready', 'session_id', 'job_id', 'cancelled', 'undelivered']) {
        if (r[k] !== undefined && typeof r[k] !== 'object') bits.push(`${k}: ${r[k]}`);
    }
    if (Array.isArray(r.items)) bits.push(`items: ${r.items.length}`);
    return bits.length ? h('div', { class: 'step-summary' }, bits.join(' · ')) : null;
}

/**
 * The test-run panel. opts: {form (an OperationForm), operationId, latestVersion(), flash,
 * showFormErrors(fields)}.
 */
export function testRunPanel(opts) {
    const out = h('div', { class: 'testrun-out', 'data-testid': 'testrun-output', 'aria-live': 'polite' });
    const args = h('textarea', { id: 'tr-arguments', rows: 3, class: 'json-input', spellcheck: 'false', placeholder: '{}' });
    args.value = '{}';
    const polls = h('input', { id: 'tr-polls', type: 'number', min: '1', max: '20', placeholder: '3' });
    const interval = h('input', { id: 'tr-poll-interval', type: 'number', min: '1', max: '10000', placeholder: "the operation's poll_interval_ms" });
    const sourceForm = h('input', { type: 'radio', name: 'tr-source', id: 'tr-source-form', value: 'form', checked: true });
    const sourceSaved = h('input', { type: 'radio', name: 'tr-source', id: 'tr-source-saved', value: 'saved', disabled: !opts.operationId });
    const version = h('input', { id: 'tr-version', type: 'number', min: '1', placeholder: 'latest' });
    const argsError = h('div', { class: 'field-error', hidden: true, id: 'tr-arguments-error' });
    const run = h('button', { type: 'button', class: 'primary', 'data-testid': 'testrun-run', id: 'testrun-run' }, 'Run test');
    const sessionOnly = h('div', { class: 'grid2 session-only' },
        h('div', { class: 'field' }, h('label', { for: 'tr-polls' }, 'polls (session: polls before the stop, 1 to 20)'), polls),
        h('div', { class: 'field' }, h('label', { for: 'tr-poll-interval' }, 'poll_interval_ms (session and async_job)'), interval));

    const updateMode = (mode) => {
        polls.closest('.field').hidden = mode !== 'session';
        interval.closest('.field').hidden = mode !== 'session' && mode !== 'async_job';
    };
    updateMode(opts.form.mode());

    run.addEventListener('click', async () => {
        argsError.hidden = true;
        let argumentsValue = {};
        if (args.value.trim()) {
            try {
                argumentsValue = JSON.parse(args.value);
            } catch (e) {
                argsError.textContent = `not valid JSON: ${e.message}`;
                argsError.hidden = false;
                args.setAttribute('aria-invalid', 'true');
                return;
            }
        }
        args.removeAttribute('aria-invalid');
        const body = { arguments: argumentsValue };
        const mode = opts.form.mode();
        if (sourceSaved.checked && opts.operationId) {
            body.operation_id = opts.operationId;
            if (version.value) body.version = Number(version.value);
        } else {
            const { config, problems } = opts.form.getConfig();
            if (!problems.empty) {
                opts.showFormErrors(problems.fields);
                put(out, h('div', { class: 'error-box', 'data-testid': 'testrun-error' }, 'Fix the form first: ', problems.fields.map((f) => `${f.path}: ${f.message}`).join('; ')));
                return;
            }
            body.config = config;
        }
        if (mode === 'session' && polls.value) body.polls = Number(polls.value);
        if ((mode === 'session' || mode === 'async_job') && interval.value) body.poll_interval_ms = Number(interval.value);
        run.disabled = true;
        const started = Date.now();
        put(out, h('div', { class: 'running', 'data-testid': 'testrun-running' }, h('span', { class: 'spinner' }), ` Running ${mode} test…`));
        const tick = setInterval(() => {
            const r = out.querySelector('[data-testid="testrun-running"]');
            if (r) r.lastChild.textContent = ` Running ${mode} test… ${Math.round((Date.now() - started) / 1000)} s`;
        }, 500);
        try {
            const result = await api.post('/test-runs', body, { timeoutMs: 180000 });
            put(out, renderTestRun(result));
        } catch (e) {
            const box = h('div', { class: 'error-box', 'data-testid': 'testrun-error' }, h('strong', {}, `${e.code}: `), e.message);
            if (e.fields && e.fields.length) {
                opts.showFormErrors(e.fields);
                box.append(h('ul', {}, e.fields.map((f) => h('li', {}, h('code', {}, f.path), ': ', f.message))),
                    h('p', { class: 'hint' }, 'The fields are marked in the Edit tab.'));
            }
            put(out, box);
        } finally {
            clearInterval(tick);
            run.disabled = false;
        }
    });

    const el = h('div', { class: 'testrun-panel', 'data-testid': 'testrun-panel' },
        h('p', { class: 'hint' }, 'Runs the operation in its mode without publishing it, through the same runtime as a tools/call (limits, safety stage, aggregator, result contract). A session is stopped and a live job cancelled at the end.'),
        h('fieldset', { class: 'block' }, h('legend', {}, 'What to run'),
            h('div', { class: 'radio-line' }, sourceForm, h('label', { for: 'tr-source-form' }, 'the form as it is (unsaved changes included)')),
            h('div', { class: 'radio-line' }, sourceSaved, h('label', { for: 'tr-source-saved' }, 'a saved version'),
                h('label', { for: 'tr-version', class: 'inline' }, ' version '), version)),
        h('div', { class: 'field' }, h('label', { for: 'tr-arguments' }, 'arguments (the tool input, JSON)'), args, argsError),
        sessionOnly,
        h('div', { class: 'actions' }, run),
        out);
    return { el, updateMode };
}
