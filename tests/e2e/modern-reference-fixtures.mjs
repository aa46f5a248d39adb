// The fixtures of modern-reference-server.mjs (see the comment at its top for the list), built on
// the TypeScript SDK v2 (@modelcontextprotocol/server). registerFixtures(server, era) puts every
// tool, resource and prompt on one McpServer; the tasks runtime (io.modelcontextprotocol/tasks,
// which the SDK has no server runtime for) and the list-change toggles live at module level, so
// they are shared by every per-request instance of one process.
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
    MissingRequiredClientCapabilityError,
    ProtocolError,
    ProtocolErrorCode,
    ResourceTemplate,
    acceptedContent,
    createRequestStateCodec,
    fromJsonSchema,
    inputRequired,
    inputResponse,
    isInputRequiredResult
} from '@modelcontextprotocol/server';
import * as z from 'zod';

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const CAPS_KEY = 'io.modelcontextprotocol/clientCapabilities';

// requestState is sealed (HMAC, 10 min) with a key of this process: a forged or altered state is
// refused by the SDK's verify seam with -32602 before any handler runs.
export const stateCodec = createRequestStateCodec({ key: randomBytes(32), ttlSeconds: 600 });

// --- fixture data --------------------------------------------------------------------------------
// 1x1 red PNG and a 1-sample 8 kHz mono 8-bit WAV.
const PNG_1X1 =
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const u32 = (n) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(n);
    return b;
};
const u16 = (n) => {
    const b = Buffer.alloc(2);
    b.writeUInt16LE(n);
    return b;
};
const WAV_TINY = Buffer.concat([
    Buffer.from('RIFF'), u32(37), Buffer.from('WAVEfmt '), u32(16), u16(1), u16(1), u32(8000),
    u32(8000), u16(1), u16(8), Buffer.from('data'), u32(1), Buffer.from([0x80])
]).toString('base64');

const JSON_SCHEMA_2020_12 = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
        address: {
            $anchor: 'addressDef',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } }
        }
    },
    properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' }
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false
};
const SEP1034_SCHEMA = {
    type: 'object',
    properties: {
        name: { type: 'string', description: 'User name', default: 'John Doe' },
        age: { type: 'integer', description: 'User age', default: 30 },
        score: { type: 'number', description: 'User score', default: 95.5 },
        status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', description: 'Verification status', default: true }
    },
    required: []
};
const titled = (prefix, names) => names.map((title, i) => ({ const: `value${i + 1}`, title: `${title} ${prefix}` }));
const SEP1330_SCHEMA = {
    type: 'object',
    properties: {
        untitledSingle: { type: 'string', description: 'Untitled single-select', enum: ['option1', 'option2', 'option3'] },
        titledSingle: { type: 'string', description: 'Titled single-select', oneOf: titled('Option', ['First', 'Second', 'Third']) },
        legacyEnum: {
            type: 'string',
            description: 'Legacy titled enum',
            enum: ['opt1', 'opt2', 'opt3'],
            enumNames: ['Option One', 'Option Two', 'Option Three']
        },
        untitledMulti: { type: 'array', description: 'Untitled multi-select', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: { type: 'array', description: 'Titled multi-select', items: { anyOf: titled('Choice', ['First', 'Second', 'Third']) } }
    },
    required: []
};

const text = (t, isError = false) => ({ content: [{ type: 'text', text: t }], ...(isError ? { isError: true } : {}) });
const noArgs = z.object({});
const formFor = (field, type = 'string') => ({ type: 'object', properties: { [field]: { type } }, required: [field] });
const elicit = (message, field, type) => inputRequired.elicit({ message, requestedSchema: formFor(field, type) });
const sample = (prompt, maxTokens) =>
    inputRequired.createMessage({ messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens });
const sampledText = (responses, key) => {
    const view = inputResponse(responses, key);
    return view.kind === 'sampling' && view.result.content?.type === 'text' ? view.result.content.text : undefined;
};
const rootUris = (responses, key) => {
    const view = inputResponse(responses, key);
    return view.kind === 'roots' ? view.roots.map((r) => r.uri).join(',') : undefined;
};
// The verified state of this round (the SDK ran stateCodec.verify on it), or undefined.
const stateOf = (ctx) => ctx.mcpReq.requestState();

async function progress(ctx, value, total, message) {
    const progressToken = ctx.mcpReq._meta?.progressToken;
    if (progressToken === undefined) return;
    await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken, progress: value, total, ...(message ? { message } : {}) }
    });
}

// The client capabilities of this request: its 2026 envelope, or what a 2025 session declared.
function declared(server, ctx, era) {
    return era === 'modern' ? (ctx.mcpReq.envelope?.[CAPS_KEY] ?? {}) : (server.server.getClientCapabilities() ?? {});
}
const declaresTasks = (server, ctx, era) => era === 'modern' && declared(server, ctx, era).extensions?.[TASKS_EXTENSION] !== undefined;

// --- list-change toggles (server-stateless): shared by every instance. A change is published to
// the open subscriptions/listen streams over HTTP (the notifier: createMcpHandler's bus), and applied
// to every instance that serves a connection (a 2025 session, a stdio connection), whose McpServer
// then sends notifications/tools|prompts/list_changed itself (serveStdio routes it to its listens).
const toggles = { tool: false, prompt: false };
let notifier = { toolsChanged() {}, promptsChanged() {} };
export function setListChangeNotifier(n) {
    notifier = n;
}
const live = new Set(); // {server, tool, prompt}: bounded by the sessions (256) and stdio (1)
const triggered = {
    tool: (server) => server.registerTool('test_triggered_tool', { description: 'Added by test_trigger_tool_change', inputSchema: z.object({}) },
        async () => text('triggered')),
    prompt: (server) => server.registerPrompt('test_triggered_prompt', { description: 'Added by test_trigger_prompt_change' }, async () => ({
        messages: [{ role: 'user', content: { type: 'text', text: 'triggered' } }]
    }))
};
function syncToggles(entry) {
    for (const kind of ['tool', 'prompt']) {
        if (toggles[kind] && !entry[kind]) entry[kind] = triggered[kind](entry.server);
        else if (!toggles[kind] && entry[kind]) {
            entry[kind].remove();
            entry[kind] = undefined;
        }
    }
}
function toggle(kind) {
    toggles[kind] = !toggles[kind];
    for (const entry of live) syncToggles(entry);
    if (kind === 'tool') notifier.toolsChanged();
    else notifier.promptsChanged();
    return text(`${kind} ${toggles[kind] ? 'added' : 'removed'}`);
}
function registerToggled(server, longLived) {
    const entry = { server };
    syncToggles(entry); // before connect: no notification
    if (!longLived) return;
    live.add(entry);
    const onclose = server.server.onclose;
    server.server.onclose = () => {
        live.delete(entry);
        onclose?.();
    };
}

// --- the tasks runtime ---------------------------------------------------------------------------
const TASK_TTL_MS = 300_000;
const TASK_POLL_MS = 200;
const TASK_INPUT_TIMEOUT_MS = 120_000;
const MAX_TASKS = 1000;
const MAX_TASK_ROUNDS = 8;
const tasks = new Map(); // taskId -> task record
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

function purgeTasks() {
    const now = Date.now();
    const drop = (t) => {
        tasks.delete(t.taskId);
        t.abort.abort(); // a task still running stops at its next pause
    };
    for (const t of tasks.values()) if (now - t.created > t.ttlMs) drop(t);
    while (tasks.size >= MAX_TASKS) drop(tasks.values().next().value);
}
const iso = (ms) => new Date(ms).toISOString();
function taskInfo(t) {
    const { taskId, status, ttlMs } = t;
    return { taskId, status, createdAt: iso(t.created), lastUpdatedAt: iso(t.updated), ttlMs, pollIntervalMs: TASK_POLL_MS };
}
function setStatus(t, status, extra = {}) {
    if (TERMINAL.has(t.status)) return;
    Object.assign(t, { status, updated: Date.now(), inputRequests: undefined, pending: undefined }, extra);
}

// Starts `step` as a task and answers its CreateTaskResult. `step(responses, signal)` is the same
// handler the synchronous path runs: it returns a tool result, or inputRequired(...) to park the
// task in input_required until tasks/update has answered every key, then runs again.
function startTask(step) {
    purgeTasks();
    const now = Date.now();
    const t = { taskId: randomUUID(), status: 'working', created: now, updated: now, ttlMs: TASK_TTL_MS, abort: new AbortController() };
    tasks.set(t.taskId, t);
    (async () => {
        let responses;
        for (let round = 0; round < MAX_TASK_ROUNDS && !TERMINAL.has(t.status); round++) {
            const result = await step(responses, t.abort.signal);
            if (!isInputRequiredResult(result)) return setStatus(t, 'completed', { result });
            responses = await new Promise((resolve, reject) => {
                setStatus(t, 'input_required', { inputRequests: { ...result.inputRequests }, pending: { answers: {}, resolve } });
                const timer = setTimeout(() => reject(new Error('no input within the time limit')), TASK_INPUT_TIMEOUT_MS);
                if (t.abort.signal.aborted) reject(new Error('cancelled'));
                t.abort.signal.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
                t.settle = () => clearTimeout(timer);
            }).finally(() => t.settle?.());
            setStatus(t, 'working');
        }
        if (!TERMINAL.has(t.status)) throw new Error('too many input rounds');
    })().catch((error) => {
        const code = error instanceof ProtocolError ? error.code : ProtocolErrorCode.InternalError;
        setStatus(t, 'failed', { error: { code, message: error.message } });
    });
    return { resultType: 'task', ...taskInfo(t) };
}

function taskFor(server, ctx, era, taskId) {
    if (!declaresTasks(server, ctx, era)) {
        throw new MissingRequiredClientCapabilityError({ requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } });
    }
    const t = typeof taskId === 'string' ? tasks.get(taskId) : undefined;
    if (!t) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown taskId: ${taskId}`);
    return t;
}

function registerTaskMethods(server, era) {
    const taskParams = z.object({ taskId: z.string() }).passthrough();
    server.server.setRequestHandler('tasks/get', { params: taskParams }, async ({ taskId }, ctx) => {
        const t = taskFor(server, ctx, era, taskId);
        return {
            ...taskInfo(t),
            ...(t.status === 'input_required' ? { inputRequests: t.inputRequests } : {}),
            ...(t.status === 'completed' ? { result: t.result } : {}),
            ...(t.status === 'failed' ? { error: t.error } : {})
        };
    });
    server.server.setRequestHandler('tasks/cancel', { params: taskParams }, async ({ taskId }, ctx) => {
        const t = taskFor(server, ctx, era, taskId);
        if (!TERMINAL.has(t.status)) {
            setStatus(t, 'cancelled');
            t.abort.abort();
        }
        return {};
    });
    // tasks/update: the SDK lifts inputResponses off the params (ctx.mcpReq.inputResponses).
    server.server.setRequestHandler('tasks/update', { params: taskParams }, async ({ taskId }, ctx) => {
        const t = taskFor(server, ctx, era, taskId);
        const answers = ctx.mcpReq.inputResponses ?? {};
        if (t.status === 'input_required' && t.pending) {
            for (const key of Object.keys(t.inputRequests)) {
                if (answers[key] === undefined) continue;
                t.pending.answers[key] = answers[key];
                delete t.inputRequests[key];
            }
            t.updated = Date.now();
            if (Object.keys(t.inputRequests).length === 0) t.pending.resolve(t.pending.answers);
        }
        return {};
    });
}

// The tools that run only as tasks: a 2026 request that does not declare the extension is refused
// with -32021 before the tool runs. McpServer turns whatever a tool callback throws into an isError
// result, so this gate wraps the tools/call handler McpServer installed (an SDK internal).
const TASK_REQUIRED = new Set(['failing_job', 'protocol_error_job', 'confirm_delete', 'multi_input', 'test_tool_with_task']);
function gateTaskRequiredTools(server, era) {
    const handlers = server.server._requestHandlers;
    const call = handlers?.get('tools/call');
    if (!call) throw new Error('modern-reference-fixtures: SDK internals changed (no tools/call handler to wrap)');
    handlers.set('tools/call', async (request, ctx) => {
        if (era === 'modern' && TASK_REQUIRED.has(request.params?.name) && !declaresTasks(server, ctx, era)) {
            throw new MissingRequiredClientCapabilityError(
                { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
                `${request.params.name} runs only as a task: declare the ${TASKS_EXTENSION} extension`
            );
        }
        return call(request, ctx);
    });
}

// A tool of the Tasks fixtures: a task when the request declares the tasks extension, else run
// synchronously (multi round trip for its input; on a 2025 session the SDK's shim asks on the
// call's stream).
function taskTool(server, era, name, description, inputSchema, run) {
    server.registerTool(name, { description, inputSchema }, async (args, ctx) => {
        const step = (responses, signal) => run(args, responses, signal);
        if (declaresTasks(server, ctx, era)) return startTask(step);
        return step(ctx.mcpReq.inputResponses, ctx.mcpReq.signal);
    });
}

function registerTaskFixtures(server, era) {
    const tool = (name, description, inputSchema, cb) => server.registerTool(name, { description, inputSchema }, cb);
    server.registerTool(
        'greet',
        { description: 'Greets by name, at once (never a task)', inputSchema: z.object({ name: z.string().optional() }) },
        async ({ name }) => text(`Hello, ${name ?? 'World'}!`)
    );
    const computeArgs = z.object({ seconds: z.number().min(0).max(600).optional(), label: z.string().optional() });
    taskTool(server, era, 'slow_compute', 'Computes for `seconds` (0 to 600), then names its label', computeArgs,
        async ({ seconds = 0, label = '' }, _responses, signal) => {
            await sleep(seconds * 1000, undefined, { signal });
            return text(`computed ${label} in ${seconds} s`);
        });
    taskTool(server, era, 'failing_job', 'Fails after a second, as a tool error (only as a task)', noArgs,
        async (_args, _responses, signal) => {
            await sleep(1000, undefined, { signal });
            return text('failing_job failed, as it always does', true);
        });
    taskTool(server, era, 'protocol_error_job', 'Ends with a JSON-RPC error (only as a task)', noArgs,
        async (_args, _responses, signal) => {
            await sleep(500, undefined, { signal });
            throw new ProtocolError(ProtocolErrorCode.InternalError, 'protocol_error_job: an internal error, as planned');
        });
    taskTool(server, era, 'confirm_delete', 'Asks to confirm, then deletes the file (only as a task)',
        z.object({ filename: z.string().optional() }), async ({ filename = '' }, responses) => {
            const answer = inputResponse(responses, 'confirm');
            if (answer.kind === 'missing') return inputRequired({ inputRequests: { confirm: elicit(`Delete '${filename}'?`, 'confirm', 'boolean') } });
            return text(answer.kind === 'elicit' && answer.action === 'accept' ? `deleted '${filename}'` : `kept '${filename}'`);
        });
    taskTool(server, era, 'multi_input', 'Asks a name and a confirmation at once (only as a task)', noArgs,
        async (_args, responses) => {
            const name = inputResponse(responses, 'name');
            const confirm = inputResponse(responses, 'confirm');
            if (name.kind === 'missing' || confirm.kind === 'missing') {
                return inputRequired({ inputRequests: { name: elicit('Your name?', 'name'), confirm: elicit('Proceed?', 'confirm', 'boolean') } });
            }
            const verdict = (v) => (v.kind === 'elicit' && v.action === 'accept' ? 'accepted' : 'declined');
            return text(`both answered: name ${verdict(name)}, confirm ${verdict(confirm)}`);
        });
    // Asks the user's name in input_required rounds of the tools/call itself, then greets as a task.
    tool('test_tool_with_task', 'Asks your name, then greets you as a task (only as a task)', noArgs,
        async (_args, ctx) => {
            const tasked = declaresTasks(server, ctx, era);
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name');
            if (!answer) return inputRequired({ inputRequests: { user_name: elicit('What is your name?', 'name') } });
            const name = typeof answer.name === 'string' ? answer.name : 'stranger';
            const greet = async (_responses, signal) => {
                await sleep(100, undefined, { signal });
                return text(`Hello, ${name}! (computed in task)`);
            };
            return tasked ? startTask(greet) : greet(undefined, ctx.mcpReq.signal);
        });
}

// --- the 2026-07-28 multi-round-trip fixtures (input-required-result-*, server-stateless) ----------
function registerMrtrFixtures(server, era, longLived) {
    const tool = (name, description, inputSchema, cb) => server.registerTool(name, { description, inputSchema }, cb);
    tool('test_input_required_result_elicitation', "Asks the user's name", noArgs,
        async (_args, ctx) => {
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name');
            if (!answer) return inputRequired({ inputRequests: { user_name: elicit('What is your name?', 'name') } });
            return text(typeof answer.name === 'string' && answer.name ? `Hello, ${answer.name}!` : 'No name given.');
        });
    tool('test_input_required_result_sampling', 'Asks the model a question', noArgs,
        async (_args, ctx) => {
            const said = sampledText(ctx.mcpReq.inputResponses, 'capital_question');
            if (said === undefined) return inputRequired({ inputRequests: { capital_question: sample('What is the capital of France?', 100) } });
            return text(`The model said: ${said}`);
        });
    tool('test_input_required_result_list_roots', "Asks the client's roots", noArgs,
        async (_args, ctx) => {
            const roots = rootUris(ctx.mcpReq.inputResponses, 'client_roots');
            if (roots === undefined) return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
            return text(`Roots: ${roots}`);
        });
    const confirming = (name, description, done) =>
        server.registerTool(name, { description, inputSchema: noArgs }, async (_args, ctx) => {
            const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
            if (answer.kind === 'elicit' && stateOf(ctx)?.step === 'awaiting-confirmation') return text(done);
            return inputRequired({
                inputRequests: { confirm: elicit('Please confirm', 'ok', 'boolean') },
                requestState: await stateCodec.mint({ step: 'awaiting-confirmation' })
            });
        });
    confirming('test_input_required_result_request_state', 'Asks a confirmation and carries a sealed state through the round',
        'state-ok: the confirmation came back with its state');
    confirming('test_input_required_result_tampered_state', 'Asks a confirmation; its state is sealed, a forged one refused', 'confirmed');
    tool('test_input_required_result_multiple_inputs', 'Asks a name, a greeting and the roots in one round', noArgs,
        async (_args, ctx) => {
            const responses = ctx.mcpReq.inputResponses;
            const name = acceptedContent(responses, 'user_name');
            const greeting = sampledText(responses, 'greeting');
            const roots = rootUris(responses, 'client_roots');
            if (!name || greeting === undefined || roots === undefined || stateOf(ctx)?.step !== 'all-three') {
                return inputRequired({
                    inputRequests: {
                        user_name: elicit('What is your name?', 'name'),
                        greeting: sample('Generate a greeting', 50),
                        client_roots: inputRequired.listRoots()
                    },
                    requestState: await stateCodec.mint({ step: 'all-three' })
                });
            }
            return text(`${greeting} ${name.name} (${roots})`);
        });
    tool('test_input_required_result_multi_round', 'Asks a name, then a colour, with a new state each round', noArgs,
        async (_args, ctx) => {
            const state = stateOf(ctx);
            const step2 = acceptedContent(ctx.mcpReq.inputResponses, 'step2');
            if (state?.step === 'step2' && step2) return text(`${state.name} likes ${step2.color}`);
            const step1 = acceptedContent(ctx.mcpReq.inputResponses, 'step1');
            if (state?.step === 'step1' && step1) {
                return inputRequired({
                    inputRequests: { step2: elicit('Step 2: What is your favorite color?', 'color') },
                    requestState: await stateCodec.mint({ step: 'step2', name: String(step1.name ?? '') })
                });
            }
            return inputRequired({
                inputRequests: { step1: elicit('Step 1: What is your name?', 'name') },
                requestState: await stateCodec.mint({ step: 'step1' })
            });
        });
    tool('test_input_required_result_capabilities', 'Asks only for what the client declared: sampling, elicitation', noArgs,
        async (_args, ctx) => {
            if (ctx.mcpReq.inputResponses && Object.keys(ctx.mcpReq.inputResponses).length > 0) return text('answered');
            const caps = declared(server, ctx, era);
            const inputRequests = {};
            if (caps.sampling) inputRequests.question = sample('Say something', 20);
            if (caps.elicitation) inputRequests.user_name = elicit('What is your name?', 'name');
            if (Object.keys(inputRequests).length === 0) return text('declare the sampling or the elicitation client capability', true);
            return inputRequired({ inputRequests });
        });
    server.registerPrompt('test_input_required_result_prompt', { description: 'Asks for the context to use' }, async (ctx) => {
        const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_context');
        if (!answer) return inputRequired({ inputRequests: { user_context: elicit('What context should the prompt use?', 'context') } });
        return { messages: [{ role: 'user', content: { type: 'text', text: `Context: ${answer.context ?? '(none)'}` } }] };
    });
    tool('test_streaming_elicitation', "Reports progress, then asks the user's name through the result", noArgs,
        async (_args, ctx) => {
            const answer = acceptedContent(ctx.mcpReq.inputResponses, 'user_name');
            if (answer) return text(`Hello, ${answer.name}!`);
            await progress(ctx, 1, 2, 'asking for a name');
            return inputRequired({ inputRequests: { user_name: elicit('What is your name?', 'name') } });
        });
    tool('test_missing_capability', 'Needs sampling: asks the client for a sampling/createMessage', noArgs,
        async (_args, ctx) => {
            const said = sampledText(ctx.mcpReq.inputResponses, 'sample');
            if (said !== undefined) return text(`sampled: ${said}`);
            return inputRequired({ inputRequests: { sample: sample('hi', 10) } });
        });
    tool('test_logging_tool', 'Sends three log messages at info, then answers', noArgs,
        async (_args, ctx) => {
            for (let i = 1; i <= 3; i++) await ctx.mcpReq.log('info', `log message ${i}`, 'fixture');
            return text('logged');
        });
    tool('test_trigger_tool_change', 'Adds or removes the tool test_triggered_tool', noArgs,
        async () => toggle('tool'));
    tool('test_trigger_prompt_change', 'Adds or removes the prompt test_triggered_prompt', noArgs,
        async () => toggle('prompt'));
    registerToggled(server, longLived);
    // SEP-2243: both arguments are mirrored in Mcp-Param-Region / Mcp-Param-Priority headers.
    server.registerTool('route_echo', {
        description: 'Returns region/priority; both arguments travel in Mcp-Param headers too',
        inputSchema: fromJsonSchema({
            type: 'object',
            properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, priority: { type: 'integer', 'x-mcp-header': 'Priority' } }
        })
    }, async ({ region = '', priority = '' }) => text(`${region}/${priority}`));
}

// --- the conformance fixtures of the 2025 scenarios (and the 2026 ones that kept them) ------------
function registerClassicFixtures(server) {
    const tool = (name, description, inputSchema, cb) => server.registerTool(name, { description, inputSchema }, cb);
    tool('echo', 'Returns its text argument unchanged', z.object({ text: z.string() }),
        async ({ text: t }) => text(t));
    tool('test_simple_text', 'Returns simple text', noArgs,
        async () => text('This is a simple text response for testing.'));
    tool('test_image_content', 'Returns an image', noArgs,
        async () => ({ content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }] }));
    tool('test_audio_content', 'Returns audio', noArgs,
        async () => ({ content: [{ type: 'audio', data: WAV_TINY, mimeType: 'audio/wav' }] }));
    tool('test_embedded_resource', 'Returns an embedded resource', noArgs, async () => ({
        content: [{ type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } }]
    }));
    tool('test_multiple_content_types', 'Returns text, image and resource', noArgs, async () => ({
        content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: PNG_1X1, mimeType: 'image/png' },
            { type: 'resource', resource: { uri: 'test://mixed-content-resource', mimeType: 'application/json', text: JSON.stringify({ test: 'data', value: 123 }) } }
        ]
    }));
    tool('test_tool_with_logging', 'Logs three messages while running', noArgs, async (_args, ctx) => {
        const signal = ctx.mcpReq.signal;
        await ctx.mcpReq.log('info', 'Tool execution started', 'reference');
        await sleep(50, undefined, { signal });
        await ctx.mcpReq.log('info', 'Tool processing data', 'reference');
        await sleep(50, undefined, { signal });
        await ctx.mcpReq.log('info', 'Tool execution completed', 'reference');
        return text('Tool with logging executed successfully');
    });
    tool('test_error_handling', 'Always fails', noArgs,
        async () => text('This tool intentionally returns an error for testing', true));
    tool('test_tool_with_progress', 'Reports progress 0, 50, 100 of 100', noArgs, async (_args, ctx) => {
        const signal = ctx.mcpReq.signal;
        await progress(ctx, 0, 100);
        await sleep(50, undefined, { signal });
        await progress(ctx, 50, 100);
        await sleep(50, undefined, { signal });
        await progress(ctx, 100, 100);
        return text('Tool with progress executed successfully');
    });
    server.registerTool('slow_progress', {
        description: 'Sends one progress notification per step, delay_ms apart, then completes',
        inputSchema: z.object({ steps: z.number().int().min(1).max(1000), delay_ms: z.number().int().min(0).max(60000) })
    }, async ({ steps, delay_ms }, ctx) => {
        for (let i = 1; i <= steps; i++) {
            await sleep(delay_ms, undefined, { signal: ctx.mcpReq.signal });
            await progress(ctx, i, steps, `step ${i}/${steps}`);
        }
        return text(`completed ${steps} steps`);
    });
    // Server-to-client requests, written once as input_required results: a 2026 client answers them
    // in a retry, a 2025 session gets them as real requests on the call's stream (the SDK's shim).
    tool('test_sampling', 'Asks the client to sample an LLM', z.object({ prompt: z.string() }),
        async ({ prompt }, ctx) => {
            const view = inputResponse(ctx.mcpReq.inputResponses, 'llm');
            if (view.kind !== 'sampling') return inputRequired({ inputRequests: { llm: sample(prompt, 100) } });
            const content = view.result.content;
            return text(`LLM response: ${content?.type === 'text' ? content.text : JSON.stringify(content)}`);
        });
    const elicitTool = (name, description, inputSchema, ask, done) =>
        server.registerTool(name, { description, inputSchema }, async (args, ctx) => {
            const view = inputResponse(ctx.mcpReq.inputResponses, 'form');
            if (view.kind !== 'elicit') return inputRequired({ inputRequests: { form: inputRequired.elicit(ask(args)) } });
            return text(`${done}: action=${view.action}, content=${JSON.stringify(view.content ?? {})}`);
        });
    elicitTool('test_elicitation', 'Asks the user for input', z.object({ message: z.string() }), ({ message }) => ({
        message,
        requestedSchema: {
            type: 'object',
            properties: {
                username: { type: 'string', description: "User's response" },
                email: { type: 'string', description: "User's email address" }
            },
            required: ['username', 'email']
        }
    }), 'User response');
    elicitTool('test_elicitation_sep1034_defaults', 'Elicitation with defaults', noArgs,
        () => ({ message: 'Please review and update the form fields with defaults', requestedSchema: SEP1034_SCHEMA }), 'Elicitation completed');
    elicitTool('test_elicitation_sep1330_enums', 'Elicitation with every enum form', noArgs,
        () => ({ message: 'Please select options from the enum fields', requestedSchema: SEP1330_SCHEMA }), 'Elicitation completed');
    tool('test_reconnection', 'Closes its SSE stream mid-call, then answers', noArgs, async (_args, ctx) => {
        await sleep(100, undefined, { signal: ctx.mcpReq.signal });
        ctx.http?.closeSSE?.(); // SEP-1699: only on a 2025 session's POST stream (there is an event store)
        await sleep(200, undefined, { signal: ctx.mcpReq.signal });
        return text('Reconnection test completed');
    });
    tool('json_schema_2020_12_tool', 'Tool with JSON Schema 2020-12 features', fromJsonSchema(JSON_SCHEMA_2020_12),
        async (args) => text(`json_schema_2020_12_tool received ${JSON.stringify(args)}`));

    server.registerResource('static-text', 'test://static-text', { description: 'A static text resource', mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] }));
    server.registerResource('static-binary', 'test://static-binary', { description: 'A static binary resource', mimeType: 'image/png' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG_1X1 }] }));
    server.registerResource('template', new ResourceTemplate('test://template/{id}/data', { list: undefined }),
        { description: 'A resource template with an id parameter', mimeType: 'application/json' },
        async (uri, { id }) => ({
            contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }) }]
        }));
    server.registerResource('watched-resource', 'test://watched-resource', { description: 'A resource that can be subscribed to', mimeType: 'text/plain' },
        async (uri) => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content' }] }));

    server.registerPrompt('test_simple_prompt', { description: 'A simple prompt without arguments' }, async () => ({
        messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }]
    }));
    server.registerPrompt('test_prompt_with_arguments', {
        description: 'A prompt with two arguments',
        argsSchema: z.object({ arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') })
    }, async ({ arg1, arg2 }) => ({
        messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }]
    }));
    server.registerPrompt('test_prompt_with_embedded_resource', {
        description: 'A prompt with an embedded resource',
        argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') })
    }, async ({ resourceUri }) => ({
        messages: [
            { role: 'user', content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } } },
            { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } }
        ]
    }));
    server.registerPrompt('test_prompt_with_image', { description: 'A prompt with an image' }, async () => ({
        messages: [
            { role: 'user', content: { type: 'image', data: PNG_1X1, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } }
        ]
    }));
    // completion/complete for any ref and argument: the values that start with what was typed.
    server.server.setRequestHandler('completion/complete', async (request) => {
        const value = request.params.argument?.value ?? '';
        const values = ['paris', 'park', 'party'].filter((v) => v.startsWith(value));
        return { completion: { values, total: values.length, hasMore: false } };
    });
}

// 2025 sessions only: resources/subscribe and resources/unsubscribe (removed in 2026-07-28, where
// subscriptions/listen carries notifications/resources/updated instead).
function registerSubscriptions(server) {
    const subscriptions = new Set();
    server.server.setRequestHandler('resources/subscribe', async (request) => {
        if (subscriptions.size < 1000) subscriptions.add(request.params.uri);
        return {};
    });
    server.server.setRequestHandler('resources/unsubscribe', async (request) => {
        subscriptions.delete(request.params.uri);
        return {};
    });
}

// longLived: the instance serves a connection (a 2025 session, stdio), not one HTTP request.
export function registerFixtures(server, era, longLived) {
    // First in a gateway's sorted list (crankd lists tools by name): http-header-validation calls
    // the first tool listed with no arguments and expects an answer, which a task-only fixture
    // (confirm_delete) would refuse.
    server.registerTool('about', { description: 'Names this server', inputSchema: z.object({}) }, async () => ({
        content: [{ type: 'text', text: 'crank modern reference server' }]
    }));
    registerClassicFixtures(server);
    registerMrtrFixtures(server, era, longLived);
    registerTaskFixtures(server, era);
    gateTaskRequiredTools(server, era);
    registerTaskMethods(server, era);
    if (era === 'legacy') registerSubscriptions(server);
}
