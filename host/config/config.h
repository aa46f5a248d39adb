#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/listen_address.h"
#include "config/operation_config.h"
#include "config/rate_limit.h"
#include "config/secret.h"

namespace crank::config {

/// `server`: the HTTP listener and its bounds.
struct ServerConfig {
    ListenAddress listen{"127.0.0.1", 8080};
    int threads = 16;  ///< worker threads serving connections
    /// tools/call in progress on this node, every workspace together; each holds a worker thread
    /// until its tool returns, so it must stay below `threads`. 0: threads - max(2, threads / 4)
    /// (at least 1), which keeps workers free for /healthz, tools/list and polls while upstreams
    /// hang (effectiveMaxConcurrentCalls()).
    int max_concurrent_calls = 0;

    int effectiveMaxConcurrentCalls() const {
        if (max_concurrent_calls > 0) {
            return max_concurrent_calls;
        }
        const int reserve = threads / 4 > 2 ? threads / 4 : 2;
        return threads - reserve > 1 ? threads - reserve : 1;
    }
    /// tools/call in progress to one upstream (mcp/upstream_slots.h). 0: three quarters of
    /// effectiveMaxConcurrentCalls() (at least 1), so that an upstream that hangs leaves a
    /// quarter of the call slots to the others.
    int max_calls_per_upstream = 0;

    int effectiveMaxCallsPerUpstream() const {
        if (max_calls_per_upstream > 0) {
            return max_calls_per_upstream;
        }
        const int share = effectiveMaxConcurrentCalls() * 3 / 4;
        return share > 1 ? share : 1;
    }
    int queue = 64;    ///< accepted connections waiting for a worker
    int backlog = 64;  ///< kernel listen backlog
    std::int64_t max_request_body_bytes = 1024LL * 1024;  ///< larger bodies get 413
    std::int64_t shutdown_grace_ms = 10'000;  ///< SIGTERM: time given to in-flight requests
    std::int64_t idle_connection_timeout_ms = 30'000;  ///< keep-alive and read timeout
    /// From a request's first byte to the end of its head; a slower head gets 408.
    std::int64_t request_head_timeout_ms = 10'000;
    std::int64_t max_request_head_bytes = 32LL * 1024;  ///< a larger head gets 431
    /// From the end of a request's head to the end of its body; a slower body is cut off.
    std::int64_t request_body_timeout_ms = 30'000;
    /// A body must arrive at least this fast on average after its first second (bytes/s); 0: any.
    std::int64_t min_request_body_rate = 1024;
    /// Bodies up to this size (with a Content-Length) are read before a worker is given.
    std::int64_t read_ahead_body_bytes = 64LL * 1024;
    /// After a response, how long its worker waits for the connection's next request before the
    /// connection goes back to the gate (microseconds; 0: at once). A next request that arrives
    /// whole within it is served by the same worker (http/next_request.h).
    std::int64_t keep_alive_wait_us = 2'000;
    std::int64_t max_connections = 4096;             ///< open client connections in all
    std::int64_t max_connections_per_address = 256;  ///< open client connections per IP address
    /// Requests answered 401 per client address within auth_failure_window_ms before that
    /// address gets 429 until the window ends; 0: no bound.
    std::int64_t max_auth_failures = 20;
    std::int64_t auth_failure_window_ms = 60'000;
    /// GET /metrics requires `Authorization: Bearer` this token (kept as its digest); none: open.
    std::optional<Secret> metrics_token;
    /// Free heap handed back to the system this often (util::MemoryTrimmer); 0: never.
    std::int64_t memory_trim_interval_ms = 60'000;
    std::vector<std::string> allowed_origins;  ///< Origin values accepted besides loopback ones
    std::vector<std::string> allowed_hosts;    ///< Host values accepted besides loopback ones
    /// This crankd's name among the nodes sharing one store: live sessions and jobs name their
    /// owner node. Empty: the host name.
    std::string node_id;
};

/// `store`: where sessions, jobs, operations and audit events live.
struct StoreConfig {
    std::string backend = "sqlite";
    std::string path = "./crank.db";  ///< relative to the working directory; ":memory:" for tests
    std::int64_t busy_timeout_ms = 5'000;
    int pool_size = 4;
    std::int64_t cache_kib = 2'000;  ///< SQLite page cache per connection
};

/// `audit`: how long the store's audit log keeps events, and which reads it samples
/// (docs/configuration.md, "audit"). A bound of 0 turns that bound off.
struct AuditConfig {
    std::int64_t max_age_days = 30;           ///< events older than this are deleted
    std::int64_t max_events = 2'000'000;      ///< beyond this many, the oldest events are deleted
    std::int64_t clean_interval_ms = 60'000;  ///< how often the cleaner runs
    /// 1 in this many successful reads (`session.poll`, `job.status`) of one agent is recorded;
    /// 1 records every one.
    std::int64_t sample_reads = 1;
    /// Events waiting to be written behind the calls; a caller waits when it is full.
    std::int64_t queue_max = 16'384;
    /// Most events written in one transaction.
    std::int64_t write_batch = 500;
    /// How long the writer gathers events once woken before it writes them.
    std::int64_t write_delay_ms = 10;
};

/// `mcp`: the MCP Streamable HTTP endpoint, its sessions and streams.
struct McpConfig {
    std::string path = "/mcp";                         ///< the one MCP endpoint
    std::int64_t max_sessions = 10'000;                ///< initialize beyond this gets 503
    std::int64_t session_idle_timeout_ms = 1'800'000;  ///< a session unused this long expires
    std::int64_t heartbeat_interval_ms = 15'000;       ///< SSE comment on idle streams
    std::int64_t max_streams = 10'000;                 ///< open SSE streams, all sessions
    std::int64_t max_streams_per_session = 16;         ///< open SSE streams of one session
    std::int64_t stream_buffer_bytes =
        4LL * 1024 * 1024;  ///< unsent bytes per stream (slow reader)
    std::int64_t stream_stall_timeout_ms =
        60'000;                                 ///< a stream whose client takes nothing this long
    std::int64_t replay_events = 256;           ///< events kept per stream for resumption
    std::int64_t replay_bytes = 1024LL * 1024;  ///< bytes kept per session for resumption
    /// bytes kept for resumption by every session together; the oldest are dropped first
    std::int64_t replay_budget_bytes = 256LL * 1024 * 1024;
    std::int64_t replay_streams = 64;    ///< ended streams kept per session for resumption
    std::int64_t tools_page_size = 100;  ///< tools/list page size
    std::int64_t sse_retry_ms = 1'000;   ///< `retry:` on priming events
    /// `ttlMs` of 2026-07-28 server/discover and list results: how long a client may reuse them
    /// (a list_changed notification ends it sooner).
    std::int64_t list_ttl_ms = 30'000;
    /// `ttlMs` of 2026-07-28 resources/read results (an upstream's resource may change at any
    /// time).
    std::int64_t read_ttl_ms = 0;
    /// The secret the `requestState` of 2026-07-28 input_required results is sealed with
    /// (AES-256-GCM under a key derived from it): the same on every node of a deployment. None:
    /// a random key of this process, and a restart voids the states in flight.
    std::optional<Secret> request_state_key;
    /// How long a client has to answer an input_required result (its requestState then expires).
    std::int64_t request_state_ttl_ms = 600'000;
    /// Rounds of input one tools/call may ask for before it is ended with an isError result.
    std::int64_t max_input_rounds = 16;
    /// A 2025-era session's client is asked a tool's questions on the call's stream: each answer
    /// is awaited this long.
    std::int64_t input_wait_ms = 300'000;
    /// 2026-07-28 calls of tools that ask the client while they run (federated upstreams' sampling,
    /// elicitation, roots), held on this node while the client answers, in all and per agent.
    std::int64_t max_held_calls = 256;
    std::int64_t max_held_calls_per_agent = 16;
    /// Request states opened and not yet expired (the register that makes each open once, in
    /// the store), per agent and per workspace: no caller fills the register for the others.
    std::int64_t max_request_states_per_agent = 1'000;
    std::int64_t max_request_states_per_workspace = 10'000;
    /// Request states one agent may open a minute on this node (in bursts of as many).
    std::int64_t max_input_rounds_per_minute = 120;
    /// Host tools run as tasks (mcp::ToolTasks, node-local): kept on the node (ended ones
    /// included), per agent, running or waiting for input at once (a thread each), and how long
    /// each is kept from its creation. A task's questions wait input_wait_ms, at most
    /// max_input_rounds rounds.
    std::int64_t max_tool_tasks = 1'000;
    std::int64_t max_tool_tasks_per_agent = 100;
    std::int64_t max_running_tool_tasks = 64;
    std::int64_t tool_task_ttl_ms = 3'600'000;
};

/// `jobs`: the worker pool of async_job operations and the ownership of running jobs.
struct JobsConfig {
    int workers = 16;                 ///< jobs running at once on this node
    std::int64_t max_queued = 1'000;  ///< jobs waiting for a worker; more are refused
    /// How often this node renews its claim on its live jobs in the store.
    std::int64_t heartbeat_interval_ms = 5'000;
    /// A live job whose owner has not renewed it for this long is taken over by another node
    /// (and by this one at start-up, whatever its age, when it owned it).
    std::int64_t lease_ms = 60'000;
    std::int64_t poll_interval_ms = 1'000;  ///< the polling pace suggested to clients
};

/// `plugins`: where plugin libraries are looked for and which ones are turned on.
struct PluginsConfig {
    /// Searched in order. Empty: `<directory of crankd>/../lib/crank/plugins`.
    std::vector<std::string> directories;
    /// Names of plugins to load. Empty: every plugin found.
    std::vector<std::string> enabled;
};

/// Concurrency and population limits of a workspace or an agent.
struct Limits {
    std::int64_t max_concurrent_calls = 32;
    std::int64_t max_sessions = 100;
    std::int64_t max_jobs = 100;
    std::int64_t max_mcp_sessions = 1000;  ///< 2025-era MCP sessions open on this node
    std::int64_t max_streams = 2000;       ///< SSE streams open on this node
    /// Workspaces only: call slots of server.max_concurrent_calls that no other workspace may
    /// take. -1: chosen by isolation_check.h (an equal share when there are several workspaces).
    std::int64_t reserved_calls = -1;
    /// `tools/call` requests a second (a token bucket, per node); nullopt: no bound.
    std::optional<RateLimit> rate;
};

struct Workspace {
    std::string id;
    std::string description;
    Limits limits;
};

struct Agent {
    std::string id;
    std::string workspace;
    std::optional<Secret> api_key;  ///< a clear key (env or file) or a sha256 digest of one
    Limits limits{8, 20, 20, 32, 64, 0, std::nullopt};
    /// The keys of an agent of the admin API, as lower-case hex SHA-256 digests (it may hold
    /// several at once while a key is rotated); empty for the config file's agents.
    std::vector<std::string> key_digests;
};

/// `auth`: who may call, in which workspace.
struct AuthConfig {
    enum class Mode { none, api_key };
    Mode mode = Mode::none;
    std::vector<Workspace> workspaces;  ///< always holds at least "default"
    std::vector<Agent> agents;
};

/// One entry of `auth_profiles`: how Crank authenticates to an upstream.
struct AuthProfile {
    enum class Type { none, bearer, basic, api_key };
    enum class Placement { header, query };
    std::string name;
    Type type = Type::none;
    std::optional<Secret> token;                 ///< bearer
    std::string username;                        ///< basic
    std::optional<Secret> password;              ///< basic
    Placement placement = Placement::header;     ///< api_key: where the key goes
    std::string key_name;                        ///< api_key: header or query parameter name
    std::optional<Secret> key;                   ///< api_key
    std::map<std::string, std::string> headers;  ///< extra static headers, not secret
};

/// One entry of `upstreams`: a server speaking MCP (or made to, by its adapter) whose tools,
/// resources, resource templates, prompts and completions a workspace republishes.
struct UpstreamConfig {
    std::string name;              ///< unique; letters, digits, '_', '-', '.', at most 64
    std::string protocol = "mcp";  ///< the adapter (CRANK_CAP_FEDERATION) that connects to it
    std::string workspace = "default";
    /// How names are published: "prefix" (`{prefix}{separator}{name}`) or "keep" (as the
    /// upstream names them). Resource URIs are always kept.
    enum class Naming { prefix, keep };
    Naming naming = Naming::prefix;
    std::string prefix;              ///< default: the upstream's name
    std::string separator = "_";     ///< one of "_", "__", ".", "-" (MCP tool names allow them)
    std::string config_json = "{}";  ///< the adapter's own config (`config`), validated by it
    /// Each request to the upstream (tools/call, resources/read, ...) waits at most this long.
    std::int64_t request_timeout_ms = 300'000;
    /// A request of the upstream to the client (sampling, elicitation) waits at most this long.
    std::int64_t client_request_timeout_ms = 300'000;
    std::int64_t max_list_items = 10'000;  ///< tools (and resources, ...) taken from one list
    /// A 2026-era list that says how long it may be kept (`ttlMs`) is fetched again once that
    /// has passed, but never sooner than this after it was fetched.
    std::int64_t min_list_refresh_ms = 60'000;
    /// Resources of this upstream one client (a 2025 session, a 2026 listen) may follow, and
    /// all the clients of one agent together.
    std::int64_t max_subscriptions_per_client = 256;
    std::int64_t max_subscriptions_per_agent = 1'024;
    /// Which of the upstream's tools are published, and as what (`tools`), by the upstream's own
    /// names: a tool is published when `allow` is empty or one of its glob patterns (`*` any
    /// run, `?` any one character) matches, and no `deny` pattern does; `rename` gives a tool
    /// its published name outright (no prefix).
    struct ToolPolicy {
        std::vector<std::string> allow;
        std::vector<std::string> deny;
        std::map<std::string, std::string> rename;
        bool operator==(const ToolPolicy&) const = default;
    };
    ToolPolicy tools;
    /// Calls a second of each of its published tools, every caller of the workspace together
    /// (per node, as an operation's `rate`); nullopt: no bound of their own.
    std::optional<RateLimit> rate;

    /// Why the upstream's tool `upstream_name` is not published, for the status and the log;
    /// "" when it is published (tool_policy.cpp).
    std::string toolFiltered(const std::string& upstream_name) const;
    /// The published name of the upstream's tool `upstream_name`: its `rename`, else
    /// publishedName().
    std::string publishedToolName(const std::string& upstream_name) const;

    /// The published name of the upstream's `name`.
    std::string publishedName(const std::string& upstream_name) const {
        return naming == Naming::keep ? upstream_name : prefix + separator + upstream_name;
    }

    /// Member by member: a reload reconnects an upstream only when its config changed.
    bool operator==(const UpstreamConfig&) const = default;
};

/// `admin`: the admin API (`/admin/api/`) and the web UI (`/ui/`), docs/admin-api.md.
struct AdminConfig {
    /// The admin API's bearer token (env, file, or the sha256 digest of one). None: the admin
    /// API is off (404 admin_disabled).
    std::optional<Secret> token;
    bool ui = true;                             ///< serve the web UI at /ui/
    std::string ui_directory;                   ///< empty: <crankd's directory>/../share/crank/ui
    std::int64_t test_run_timeout_ms = 60'000;  ///< a test run's whole time, all its steps
    int max_test_runs = 4;                      ///< test runs at once; more get 429
    std::int64_t sync_interval_ms = 5'000;      ///< other nodes' publishes picked up this often
    /// Glob patterns of the commands the admin API's stdio upstreams may run (`config.command`);
    /// nullopt: any command; empty: none.
    std::optional<std::vector<std::string>> upstream_commands;
};

/// The whole configuration file, validated.
struct Config {
    std::string source;  ///< the file it was read from, for messages
    /// Each top-level member of the file as written (minified JSON text), by name: what a reload
    /// compares to tell the sections that changed.
    std::map<std::string, std::string> sections;
    ServerConfig server;
    StoreConfig store;
    McpConfig mcp;
    PluginsConfig plugins;
    AuthConfig auth;
    JobsConfig jobs;
    AdminConfig admin;
    AuditConfig audit;
    /// `log.level`: "trace" ... "off"; empty when the file sets none (--log-level, else info).
    /// A reload applies it, unless --log-level was given.
    std::string log_level;
    std::map<std::string, AuthProfile> auth_profiles;
    std::vector<OperationConfig> operations;
    std::vector<UpstreamConfig> upstreams;
};

}  // namespace crank::config
