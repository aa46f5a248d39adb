/*
 * Crank plugin ABI, version 1 (minor 4).
 *
 * This header is the whole contract between crankd (the host) and a plugin library. It is pure C
 * and includes only <stddef.h> and <stdint.h>, so a plugin can be written in any language that can
 * export a C function. The C++ layer in <crank/sdk.hpp> is a convenience over this header, not a
 * second contract.
 *
 * Compatibility rules (the plugin author's guide, sdk/README.md, explains them):
 *  - CRANK_ABI_MAJOR changes only when something here changes incompatibly. The host refuses a
 *    plugin of another major.
 *  - CRANK_ABI_MINOR grows when something is appended. The host accepts a plugin built against
 *    the same or an older minor, and refuses a newer one (it would rely on things the host lacks).
 *  - Every struct begins with `struct_size`, set by whoever fills the struct to `sizeof` the
 *    struct as that side knows it. Members are only ever appended. The reader of a struct reads
 *    only the members that fit in `struct_size`, and treats the rest as zero.
 *  - Only C scalars, (ptr, len) UTF-8 views, opaque handles and function pointers cross. JSON
 *    crosses as UTF-8 text. A view is valid only for the duration of the call that passes it:
 *    the receiver copies what it keeps. Neither side ever frees memory of the other side.
 *  - No C++ exception may cross this boundary in either direction.
 *
 * Lifetimes, in order: the host loads the library, calls crank_plugin_entry(), checks the ABI
 * version, then calls descriptor->init() once. init() registers adapters and aggregators. The
 * registered descriptors (and every view in them) must stay valid until descriptor->shutdown()
 * returns. The host calls shutdown() once, after every call, stream and aggregate has ended and
 * been destroyed, and then unloads the library.
 */
#ifndef CRANK_PLUGIN_H
#define CRANK_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* C names (snake_case types) are the contract; C++ style checks do not apply here. */
/* NOLINTBEGIN(readability-identifier-naming,modernize-use-using,cppcoreguidelines-macro-usage) */

#define CRANK_ABI_MAJOR 1
#define CRANK_ABI_MINOR 4

/* The one symbol every plugin exports (see crank_plugin_entry_fn). */
#define CRANK_PLUGIN_ENTRY_SYMBOL "crank_plugin_entry"

#if defined(_WIN32)
#define CRANK_PLUGIN_EXPORT __declspec(dllexport)
#else
#define CRANK_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------------------------
 * Basic types
 * ------------------------------------------------------------------------------------------- */

/* A UTF-8 view: `len` bytes at `ptr`, not NUL-terminated. {NULL, 0} is the empty view. */
typedef struct crank_str {
    const char* ptr;
    size_t len;
} crank_str;

/* Outcome of a call across the boundary. */
typedef enum crank_status {
    CRANK_OK = 0,
    CRANK_ERROR = 1,     /* failed; the details were given with set_error() */
    CRANK_CANCELLED = 2, /* stopped because the host asked (is_cancelled, stream_cancel, emit) */
} crank_status;

/* What kind of failure set_error() reports. The host maps these onto MCP results. */
typedef enum crank_error_code {
    CRANK_ERR_INVALID_ARGUMENT = 1,   /* the operation config or the request is wrong */
    CRANK_ERR_UNAVAILABLE = 2,        /* the upstream cannot be reached (connect, DNS, TLS) */
    CRANK_ERR_UPSTREAM = 3,           /* the upstream answered with an error (HTTP 5xx, gRPC...) */
    CRANK_ERR_PROTOCOL = 4,           /* the upstream sent something malformed */
    CRANK_ERR_TIMEOUT = 5,            /* the upstream did not answer in time */
    CRANK_ERR_RESOURCE_EXHAUSTED = 6, /* a limit of the plugin or upstream was hit */
    CRANK_ERR_UNSUPPORTED = 7,        /* the plugin cannot do what was asked */
    CRANK_ERR_INTERNAL = 8,           /* a bug in the plugin */
} crank_error_code;

typedef enum crank_log_level {
    CRANK_LOG_TRACE = 0,
    CRANK_LOG_DEBUG = 1,
    CRANK_LOG_INFO = 2,
    CRANK_LOG_WARN = 3,
    CRANK_LOG_ERROR = 4,
} crank_log_level;

/* Why the host wants a call to stop (cancel_reason(), ABI 1.1). */
typedef enum crank_cancel_reason {
    CRANK_CANCEL_NONE = 0,      /* not cancelled */
    CRANK_CANCEL_REQUESTED = 1, /* the client or an operator cancelled it, or a limit ended it */
    CRANK_CANCEL_DEADLINE = 2,  /* its time bound passed */
    /* The host is stopping and means to follow the work again later from the call's cursor:
     * do not undo upstream work (no unsubscribe, no job cancel request). */
    CRANK_CANCEL_SHUTDOWN = 3,
} crank_cancel_reason;

/* The host's answer to emit() and emit_batch(). */
typedef enum crank_emit_result {
    /* Taken. Go on. */
    CRANK_EMIT_ACCEPTED = 0,
    /* Taken, but the host's buffer is nearly full: emit nothing more until stream_resume(). */
    CRANK_EMIT_ACCEPTED_PAUSE = 1,
    /* Not taken: the buffer is full. Keep the item, emit it again after stream_resume(). */
    CRANK_EMIT_REJECTED_FULL = 2,
    /* Not taken, and the call is over (a limit was reached, the client cancelled, a deadline
     * passed). Stop reading the upstream and call complete(call, CRANK_CANCELLED). */
    CRANK_EMIT_CANCELLED = 3,
} crank_emit_result;

/* Capabilities of a protocol adapter (bit set). */
#define CRANK_CAP_UNARY 0x1u         /* implements unary_call */
#define CRANK_CAP_SERVER_STREAM 0x2u /* implements stream_open / resume / cancel / destroy */
/* ABI 1.2: implements upstream_open / upstream_request / upstream_close: the adapter connects to
 * upstreams that speak MCP themselves (or are made to), whose tools, resources and prompts the
 * host federates (`upstreams` in crankd's config). */
#define CRANK_CAP_FEDERATION 0x4u

/* Execution modes an adapter supports (bit set). The host refuses an operation whose mode the
 * adapter does not list, with the adapter's name. */
#define CRANK_MODE_UNARY 0x1u
#define CRANK_MODE_WINDOW 0x2u
#define CRANK_MODE_SESSION 0x4u
#define CRANK_MODE_ASYNC_JOB 0x8u

/* Opaque handles. The host owns crank_host, crank_registrar, crank_call and crank_writer; the
 * plugin owns crank_stream and crank_aggregate. */
typedef struct crank_host crank_host;           /* the host, as seen by one plugin library */
typedef struct crank_registrar crank_registrar; /* valid only during init() */
typedef struct crank_call crank_call;           /* one running call (or one validation) */
typedef struct crank_writer crank_writer;       /* a host-owned output buffer */
typedef struct crank_stream crank_stream;       /* a plugin's open upstream stream */
typedef struct crank_aggregate crank_aggregate; /* a plugin's aggregation state for one call */
typedef struct crank_upstream crank_upstream;   /* a plugin's open federated upstream (1.2) */
typedef struct crank_peer crank_peer;           /* the host's side of one upstream (1.2) */

struct crank_adapter;
struct crank_aggregator;

/* ---------------------------------------------------------------------------------------------
 * The host's callback table, handed to init(). Valid until shutdown() returns.
 *
 * THREADING: every function may be called from any thread, concurrently, except where noted.
 * ------------------------------------------------------------------------------------------- */
typedef struct crank_host_api {
    size_t struct_size;
    uint32_t abi_major; /* the host's CRANK_ABI_MAJOR */
    uint32_t abi_minor; /* the host's CRANK_ABI_MINOR */

    /* Logging through the host's log (never to stdout/stderr directly). `call` may be NULL;
     * when given, the line names the call's operation. log_enabled() lets a plugin skip building
     * a message that would be dropped; it returns non-zero when `level` would be written. */
    int (*log_enabled)(crank_host* host, crank_log_level level);
    void (*log)(crank_host* host, crank_call* call, crank_log_level level, crank_str message);

    /* Registration, only inside init(). The host copies the descriptor (up to its struct_size
     * and its own) and keeps the plugin's views: they must live until shutdown(). Returns
     * CRANK_ERROR (and the host records why) for a duplicate name, a missing name or a missing
     * function that the declared capabilities need. */
    crank_status (*register_adapter)(crank_registrar* registrar,
                                     const struct crank_adapter* adapter);
    crank_status (*register_aggregator)(crank_registrar* registrar,
                                        const struct crank_aggregator* aggregator);
    /* Why init() fails, in words the operator can act on. Only inside init(). */
    void (*set_init_error)(crank_registrar* registrar, crank_str message);

    /* Reports the failure of `call`. The last report wins. `details_json` is a JSON object or
     * empty; for validation, {"path": "<where in the config>"} names the offending member. */
    void (*set_error)(crank_call* call, crank_error_code code, crank_str message,
                      crank_str details_json);

    /* Hands one item (a JSON value as text) to the host, which copies it. Never blocks for long:
     * the host answers at once (see crank_emit_result). Malformed JSON is counted and dropped by
     * the host, never passed on. Calls for one call must not overlap (one producer at a time). */
    crank_emit_result (*emit)(crank_call* call, crank_str item_json);
    /* Hands `count` items; `*accepted` (never NULL) receives how many were taken, from the
     * front. The result is that of the last item looked at, as for emit(). */
    crank_emit_result (*emit_batch)(crank_call* call, const crank_str* items, size_t count,
                                    size_t* accepted);

    /* Progress of the call (for notifications/progress). `total` < 0 means unknown. */
    void (*progress)(crank_call* call, double progress, double total, crank_str message);

    /* Non-zero once the host wants the call to stop (client cancel, limit, deadline, shutdown).
     * Long-running work checks it between steps. */
    int (*is_cancelled)(const crank_call* call);

    /* Ends a stream, exactly once per stream_open() that returned a stream, from any thread:
     * CRANK_OK when the upstream ended normally, CRANK_ERROR after set_error(), CRANK_CANCELLED
     * after the host cancelled. Nothing may be emitted for the call afterwards. */
    void (*complete)(crank_call* call, crank_status status);

    /* The position to resume from later (an SSE event id, an offset...). The last one wins. */
    void (*set_cursor)(crank_call* call, crank_str cursor);

    /* Appends UTF-8 text to a host-owned writer. Returns CRANK_ERROR when the writer's bound is
     * reached; the writer then refuses everything after. */
    crank_status (*writer_append)(crank_writer* writer, crank_str text);

    /* ABI 1.1. Why is_cancelled() is non-zero (CRANK_CANCEL_NONE while it is zero). A plugin
     * undoes upstream work (an unsubscribe, a job's cancel request) only for
     * CRANK_CANCEL_REQUESTED and CRANK_CANCEL_DEADLINE. */
    crank_cancel_reason (*cancel_reason)(const crank_call* call);

    /* ABI 1.2, federation (CRANK_CAP_FEDERATION). Every method name and params are MCP's; params
     * are a JSON object's text (or empty).
     *
     * A notification from upstream `peer` that no call owns: notifications/tools/list_changed,
     * .../resources/list_changed, .../prompts/list_changed (the host fetches the lists again;
     * send them too after every new connection, whose lists may differ),
     * notifications/resources/updated (to the clients that subscribed to the URI), and
     * notifications/message (a log line, to the clients whose level lets it through). The host
     * drops the others. Any thread, until upstream_close() returns. */
    void (*peer_notify)(crank_peer* peer, crank_str method, crank_str params_json);
    /* A notification that belongs to `call` (a request handed to upstream_request):
     * notifications/message goes to the client that made the call. Progress goes through
     * progress(). */
    void (*call_notify)(crank_call* call, crank_str method, crank_str params_json);
    /* A request from the upstream to the client that made `call` (sampling/createMessage,
     * elicitation/create, roots/list). Blocks until the client answers, the call is cancelled or
     * `timeout_ms` passes, then calls `answer(context, json)` once before returning (the view is
     * valid during that callback only). CRANK_OK: `json` is the response's `result`.
     * CRANK_ERROR: `json` is a JSON-RPC `error` object ({"code":..,"message":..}), which the
     * plugin passes back to its upstream. */
    crank_status (*call_request)(crank_call* call, crank_str method, crank_str params_json,
                                 int64_t timeout_ms, void (*answer)(void* context, crank_str json),
                                 void* context);
} crank_host_api;

/* ---------------------------------------------------------------------------------------------
 * A request the host hands to an adapter.
 * ------------------------------------------------------------------------------------------- */
typedef struct crank_request {
    size_t struct_size;
    crank_str operation_name;
    /* The operation's protocol config as the operator wrote it (already validated against the
     * adapter's config schema and by validate()). */
    crank_str config_json;
    /* The same config with every template rendered over the tool's input: what to send. */
    crank_str request_json;
    /* The tool's input (validated against the operation's input schema), a JSON object. */
    crank_str input_json;
    /* The resolved auth profile as a JSON object (secrets in clear: never log it), or empty. */
    crank_str auth_json;
    /* Where to resume from (a cursor given earlier with set_cursor), or empty. */
    crank_str cursor;
    /* The upstream must answer within this many milliseconds (0: no limit of the host's). */
    int64_t timeout_ms;
    /* No single item may be longer than this many bytes (0: no limit of the host's). */
    int64_t max_item_bytes;
    /* ABI 1.4. The W3C trace context of the client's request
     * (https://www.w3.org/TR/trace-context/), checked by the host, or empty: an adapter passes both
     * on to its upstream unchanged, as HTTP headers `traceparent` and `tracestate` (gRPC metadata,
     * WebSocket handshake headers). `tracestate` is empty whenever `traceparent` is. */
    crank_str traceparent;
    crank_str tracestate;
} crank_request;

/* ---------------------------------------------------------------------------------------------
 * A protocol adapter: how to talk to one kind of upstream (REST, gRPC, ...).
 * ------------------------------------------------------------------------------------------- */
typedef struct crank_adapter {
    size_t struct_size;
    crank_str name;        /* the `protocol` operations name, e.g. "rest": [a-z0-9_]{1,64} */
    crank_str version;     /* the adapter's own version, e.g. "1.2.0" */
    crank_str description; /* one line for `crankd plugins` and the admin UI */
    uint32_t capabilities; /* CRANK_CAP_* */
    uint32_t modes;        /* CRANK_MODE_* */
    /* JSON Schema (draft 2020-12 subset, see docs/plugins.md) of the operation config. */
    crank_str config_schema_json;
    /* Passed back as the first argument of every function below. */
    void* state;

    /* Optional: semantic checks beyond the schema, at config load. Report each problem with
     * set_error(diagnostics, CRANK_ERR_INVALID_ARGUMENT, message, {"path": ...}) and return
     * CRANK_ERROR. Any thread, concurrently. */
    crank_status (*validate)(void* state, crank_str config_json, crank_call* diagnostics);

    /* CRANK_CAP_UNARY: one request, one response. Runs on a host worker thread and may block up
     * to request->timeout_ms; checks is_cancelled() when it can. Hands the response to the host
     * with emit() (one JSON value; several for a paged upstream) and returns CRANK_OK, or calls
     * set_error() and returns CRANK_ERROR. Concurrently for different calls. */
    crank_status (*unary_call)(void* state, crank_call* call, const crank_request* request);

    /* CRANK_CAP_SERVER_STREAM: opens an upstream stream and returns at once; the plugin reads on
     * its own thread(s) and pushes items with emit(), honouring pause and cancel, and ends with
     * complete(). Returns NULL after set_error() when the stream cannot even start (complete()
     * is then not called). */
    crank_stream* (*stream_open)(void* state, crank_call* call, const crank_request* request);
    /* After CRANK_EMIT_ACCEPTED_PAUSE or CRANK_EMIT_REJECTED_FULL: the host has room again. */
    void (*stream_resume)(crank_stream* stream);
    /* The host wants the stream to stop: stop reading soon, then complete(call, CANCELLED).
     * May be called more than once, and after complete(). Must not block for long. */
    void (*stream_cancel)(crank_stream* stream);
    /* Called once, after complete() has been called (the host waits for it, cancelling first).
     * Frees everything and joins the plugin's threads for this stream. No callback for this
     * call may happen after it returns. */
    void (*stream_destroy)(crank_stream* stream);
    /* The host never calls resume, cancel and destroy of one stream concurrently. */

    /* ABI 1.2, CRANK_CAP_FEDERATION. Opens the upstream named `name` (the operator's name for
     * it) with `config_json` (an upstream's `config`, valid against config_schema_json and
     * validate()). Returns at once: the plugin connects in the background or on first use, and
     * tells `peer` about its lists with peer_notify() once it has them. NULL after
     * set_error(diagnostics, ...). Operations of this adapter may name an open upstream. */
    crank_upstream* (*upstream_open)(void* state, crank_peer* peer, crank_str name,
                                     crank_str config_json, crank_call* diagnostics);
    /* One MCP request to the upstream: `method` ("tools/list", "tools/call", "resources/read",
     * "prompts/get", "completion/complete", ...) and `params_json` as the client sent it, with
     * names already turned into the upstream's own. Blocks on a host worker thread; honours
     * is_cancelled() (telling the upstream) and `call`'s deadline. Writes the JSON text of the
     * result object into `result` and returns CRANK_OK; or set_error() and CRANK_ERROR. An
     * error the upstream answered is reported as CRANK_ERR_UPSTREAM with details
     * {"jsonrpc_error":{"code":..,"message":..,"data":..}}, which the host passes on as it is.
     * Concurrently for different calls.
     * The 2026-07-28 era (MRTR): the host puts the capabilities of the client that made the call
     * in params._meta["io.modelcontextprotocol/clientCapabilities"], and the level it takes log
     * notifications at in params._meta["io.modelcontextprotocol/logLevel"] (a plugin removes both
     * before a 2025-era upstream sees them). A result with "resultType":"input_required" is
     * written as it is: the host asks the client its `inputRequests` and sends the request
     * again, as a new request, with `inputResponses` and the `requestState` byte for byte in
     * its params. */
    crank_status (*upstream_request)(crank_upstream* upstream, crank_call* call, crank_str method,
                                     crank_str params_json, crank_writer* result);
    /* Optional. A notification from the clients to the upstream that no call owns
     * (notifications/roots/list_changed). Must not block for long. */
    void (*upstream_notify)(crank_upstream* upstream, crank_str method, crank_str params_json);
    /* Optional. The upstream's state for operators, one JSON object ({"connected":..,
     * "last_error":.., ...}), written into `status`. */
    crank_status (*upstream_status)(crank_upstream* upstream, crank_writer* status);
    /* Closes the upstream: ends its connection, joins its threads. No request is running, and
     * no callback on its peer may happen after it returns. */
    void (*upstream_close)(crank_upstream* upstream);

    /* ABI 1.3. Optional. What an operation's config tells the adapter about the tool it
     * publishes, that only the adapter can know (a gRPC method's request message and whether the
     * method streams). Called at config load after validate() passed; any thread, concurrently;
     * may block briefly (a gRPC adapter asks the upstream's reflection service). Writes one JSON
     * object into `out`, every member optional:
     *   "input_schema": a JSON Schema of the tool input ("type":"object"), used when the
     *                   operation gives no input_schema of its own;
     *   "transport_behavior": "request_response" or "server_stream", what the upstream does;
     *                   used when the operation gives none, a config error when it gives the other;
     *   "description": one line, used when the operation gives no description.
     * CRANK_ERROR after set_error(diagnostics, CRANK_ERR_..., message, {"path": ...}) fails the
     * operation's config with that message. */
    crank_status (*describe)(void* state, crank_str config_json, crank_writer* out,
                             crank_call* diagnostics);
} crank_adapter;

/* ---------------------------------------------------------------------------------------------
 * An aggregator: turns the items of one call into a bounded result.
 * The host never calls the functions of one aggregate concurrently.
 * ------------------------------------------------------------------------------------------- */
typedef struct crank_aggregator {
    size_t struct_size;
    crank_str name; /* the `aggregation_mode` operations name, e.g. "stats": [a-z0-9_]{1,64} */
    crank_str version;
    crank_str description;
    /* JSON Schema of the aggregator's config (`execution.aggregation` of an operation). */
    crank_str config_schema_json;
    /* JSON Schema of what snapshot() writes: an object whose members join the tool result. */
    crank_str output_schema_json;
    void* state;

    /* Optional: semantic checks of the config at config load, as crank_adapter.validate. */
    crank_status (*validate)(void* state, crank_str config_json, crank_call* diagnostics);
    /* A fresh aggregate for one call, or NULL after set_error(call, ...). `config_json` has been
     * validated. Memory used by the aggregate must stay bounded whatever the item count. */
    crank_aggregate* (*create)(void* state, crank_str config_json, crank_call* call);
    /* One item (a JSON value as text, already through the host's safety stage). CRANK_ERROR
     * after set_error() fails the call. */
    crank_status (*accept)(crank_aggregate* aggregate, crank_str item_json);
    /* Writes the current result, one JSON object, into `writer` with writer_append(). May be
     * called more than once; does not reset the aggregate. */
    crank_status (*snapshot)(crank_aggregate* aggregate, crank_writer* writer);
    void (*destroy)(crank_aggregate* aggregate);
} crank_aggregator;

/* ---------------------------------------------------------------------------------------------
 * The plugin library's descriptor, returned by its entry symbol.
 * ------------------------------------------------------------------------------------------- */
typedef struct crank_plugin_descriptor {
    size_t struct_size;
    uint32_t abi_major;    /* CRANK_ABI_MAJOR the plugin was built against */
    uint32_t abi_minor;    /* CRANK_ABI_MINOR the plugin was built against */
    crank_str name;        /* the library's name, used by plugins.enabled: [a-z0-9_]{1,64} */
    crank_str version;     /* e.g. "1.0.0" */
    crank_str description; /* one line */
    /* Registers the library's adapters and aggregators. Returns CRANK_ERROR (after
     * set_init_error) to refuse loading; the host then unloads it without calling shutdown(). */
    crank_status (*init)(const crank_host_api* api, crank_host* host, crank_registrar* registrar);
    /* Optional. Last call into the library before it is unloaded. */
    void (*shutdown)(void);
} crank_plugin_descriptor;

/* The entry symbol: `CRANK_PLUGIN_EXPORT const crank_plugin_descriptor* crank_plugin_entry(void)`.
 * It must not do any work: it returns a pointer to a static descriptor. */
typedef const crank_plugin_descriptor* (*crank_plugin_entry_fn)(void);

/* NOLINTEND(readability-identifier-naming,modernize-use-using,cppcoreguidelines-macro-usage) */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CRANK_PLUGIN_H */
