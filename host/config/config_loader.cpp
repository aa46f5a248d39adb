#include "config/config_loader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/error/en.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "config/audit_config_reader.h"
#include "config/json_reader.h"
#include "config/key_policy.h"
#include "config/tool_policy.h"
#include "json/depth_limited_handler.h"
#include "json/json_text.h"
#include "json/json_value.h"
#include "util/sha256.h"

namespace crank::config {
namespace {

using detail::describe;
using detail::describeString;
using detail::indexPath;
using detail::Json;
using detail::ObjectReader;

constexpr std::size_t kMaxDescriptionLength = 8192;

constexpr std::array<std::pair<std::string_view, ExecutionMode>, 4> kModes{{
    {"unary", ExecutionMode::unary},
    {"window", ExecutionMode::window},
    {"session", ExecutionMode::session},
    {"async_job", ExecutionMode::async_job},
}};
constexpr std::array<std::pair<std::string_view, OverflowPolicy>, 2> kOverflowPolicies{{
    {"pause", OverflowPolicy::pause},
    {"drop_oldest", OverflowPolicy::drop_oldest},
}};
constexpr std::array<std::pair<std::string_view, TransportBehavior>, 2> kBehaviors{{
    {"request_response", TransportBehavior::request_response},
    {"server_stream", TransportBehavior::server_stream},
}};
constexpr std::array<std::pair<std::string_view, AuthConfig::Mode>, 2> kAuthModes{{
    {"none", AuthConfig::Mode::none},
    {"api_key", AuthConfig::Mode::api_key},
}};
constexpr std::array<std::pair<std::string_view, AuthProfile::Type>, 4> kProfileTypes{{
    {"none", AuthProfile::Type::none},
    {"bearer", AuthProfile::Type::bearer},
    {"basic", AuthProfile::Type::basic},
    {"api_key", AuthProfile::Type::api_key},
}};
constexpr std::array<std::pair<std::string_view, AuthProfile::Placement>, 2> kPlacements{{
    {"header", AuthProfile::Placement::header},
    {"query", AuthProfile::Placement::query},
}};
constexpr std::array<std::pair<std::string_view, std::string_view>, 1> kBackends{{
    {"sqlite", "sqlite"},
}};

/// Plugin, profile, workspace and agent names: letters, digits, '_', '-', '.', at most 64.
bool isName(std::string_view name) {
    return !name.empty() && name.size() <= 64 && isToolName(name);
}

/// Names that plugins register (adapters, aggregators, libraries): [a-z0-9_]{1,64}, as the ABI
/// says.
bool isPluginName(std::string_view name) {
    return !name.empty() && name.size() <= 64 && std::all_of(name.begin(), name.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

bool isHttpToken(std::string_view name) {
    static constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
               kExtra.find(c) != std::string_view::npos;
    });
}

/// "SOURCE:LINE:COLUMN" of a byte offset, both 1-based.
std::string positionOf(const std::string& source, std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    const std::size_t line =
        1 + static_cast<std::size_t>(
                std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
    const auto lineStart = text.rfind('\n', offset == 0 ? 0 : offset - 1);
    const std::size_t column =
        lineStart == std::string_view::npos || offset == 0 ? offset + 1 : offset - lineStart;
    return fmt::format("{}:{}:{}", source, line, column);
}

class Loader {
public:
    Loader(const LoadOptions& options, std::string source)
        : options_(options), source_(std::move(source)) {}

    LoadResult load(std::string_view text);
    OperationLoadResult loadOperation(const Json& value, const Config& base);

private:
    void readServer(const Json* v);
    void readStore(const Json* v);
    void readPlugins(const Json* v);
    void readJobs(const Json* v);
    void readAdmin(const Json* v);
    void readMcp(const Json* v);
    void readAuth(const Json* v);
    void readAuthProfiles(const Json* v);
    void readOperations(const Json* v);
    void readUpstreams(const Json* v);
    OperationConfig readOperation(const Json& v, const std::string& path);
    void readExecution(const Json* v, const std::string& path, OperationConfig& op);
    /// `workspace`: the limits of a workspace, which may also reserve call slots.
    Limits readLimits(const Json* v, const std::string& path, Limits defaults, bool workspace);
    /// `{"env": NAME}` or `{"file": PATH}` (or `{"sha256": HEX}` when allowed), resolved.
    std::optional<Secret> readSecret(const Json* v, const std::string& path, bool allowDigest);
    void crossCheck();

    std::optional<std::string> lookupEnv(const std::string& name) const {
        if (options_.env) {
            return options_.env(name);
        }
        const char* value = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
        return value == nullptr ? std::nullopt : std::optional<std::string>(value);
    }

    const LoadOptions& options_;
    std::string source_;
    ConfigErrors errors_;
    Config config_;
};

LoadResult Loader::load(std::string_view text) {
    config_.source = source_;
    const auto syntaxError = [&](std::size_t offset, std::string message) {
        errors_.add(positionOf(source_, text, offset), std::move(message));
        return LoadResult{std::nullopt, errors_.take()};
    };
    // The reader takes a NUL byte for the end of the text, so "{} NUL anything" would load.
    if (const auto nul = text.find('\0'); nul != std::string_view::npos) {
        return syntaxError(nul, "invalid JSON: a NUL byte is not allowed");
    }
    constexpr unsigned kFlags =
        rapidjson::kParseCommentsFlag | rapidjson::kParseTrailingCommasFlag |
        rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag;
    json::Document doc;
    rapidjson::Reader reader;
    bool tooDeep = false;
    bool tooBig = false;
    auto generator = [&](json::Document& target) {
        rapidjson::MemoryStream bytes(text.data(), text.size());
        rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(bytes);
        json::DepthLimitedHandler builder(target, kMaxConfigDepth);
        reader.Parse<kFlags>(in, builder);
        tooDeep = builder.tooDeep();
        tooBig = builder.tooBig();
        return !reader.HasParseError();
    };
    doc.Populate(generator);
    if (tooDeep) {
        // The reader stops at the bracket that opens one level too many.
        return syntaxError(reader.GetErrorOffset(),
                           fmt::format("nesting deeper than {} levels", kMaxConfigDepth));
    }
    if (tooBig) {
        // The reader stops right after the number (7e308: past the largest double).
        return syntaxError(reader.GetErrorOffset(),
                           std::string("invalid JSON: ") +
                               rapidjson::GetParseError_En(rapidjson::kParseErrorNumberTooBig));
    }
    if (reader.HasParseError()) {
        return syntaxError(reader.GetErrorOffset(),
                           std::string("invalid JSON: ") +
                               rapidjson::GetParseError_En(reader.GetParseErrorCode()));
    }
    ObjectReader root(&doc, "", errors_);
    if (!root.present()) {
        return {std::nullopt, errors_.take()};
    }
    if (doc.IsObject()) {
        // By index: comparing two rapidjson member iterators is ambiguous in C++20.
        for (rapidjson::SizeType i = 0; i < doc.MemberCount(); ++i) {
            const auto member = doc.MemberBegin() + i;
            config_
                .sections[std::string(member->name.GetString(), member->name.GetStringLength())] =
                json::toJsonText(member->value);
        }
    }
    readServer(root.get("server"));
    readStore(root.get("store"));
    readMcp(root.get("mcp"));
    readPlugins(root.get("plugins"));
    readJobs(root.get("jobs"));
    readAdmin(root.get("admin"));
    config_.audit = detail::readAuditConfig(root.get("audit"), errors_);
    readAuth(root.get("auth"));
    readAuthProfiles(root.get("auth_profiles"));
    readOperations(root.get("operations"));
    readUpstreams(root.get("upstreams"));
    root.allow({"$schema"});
    root.finish();
    crossCheck();
    if (!errors_.empty()) {
        return {std::nullopt, errors_.take()};
    }
    return {std::move(config_), {}};
}

void Loader::readServer(const Json* v) {
    ObjectReader r(v, "server", errors_);
    ServerConfig& s = config_.server;
    if (auto listen = r.optionalString("listen", 300)) {
        auto parsed = parseListenAddress(*listen);
        if (parsed) {
            s.listen = *parsed;
        } else {
            errors_.add(r.pathOf("listen"), parsed.error().message);
        }
    }
    if (options_.listen_override) {
        s.listen = *options_.listen_override;
    }
    s.threads = static_cast<int>(r.integer("threads", s.threads, 1, 1024));
    s.max_concurrent_calls =
        static_cast<int>(r.integer("max_concurrent_calls", s.max_concurrent_calls, 0, 1024));
    if (s.max_concurrent_calls >= s.threads && s.threads > 1) {
        // Each call holds a worker thread: with all of them taken, nothing else is served.
        errors_.add(r.pathOf("max_concurrent_calls"),
                    fmt::format("must be below server.threads ({}), got {}", s.threads,
                                s.max_concurrent_calls));
    }
    s.max_calls_per_upstream =
        static_cast<int>(r.integer("max_calls_per_upstream", s.max_calls_per_upstream, 0, 1024));
    s.queue = static_cast<int>(r.integer("queue", s.queue, 1, 100'000));
    s.backlog = static_cast<int>(r.integer("backlog", s.backlog, 1, 65'535));
    s.max_request_body_bytes =
        r.positiveInteger("max_request_body_bytes", s.max_request_body_bytes, 256LL * 1024 * 1024);
    s.shutdown_grace_ms = r.integer("shutdown_grace_ms", s.shutdown_grace_ms, 0, 600'000);
    s.idle_connection_timeout_ms =
        r.integer("idle_connection_timeout_ms", s.idle_connection_timeout_ms, 100, 3'600'000);
    s.request_head_timeout_ms =
        r.integer("request_head_timeout_ms", s.request_head_timeout_ms, 100, 3'600'000);
    s.max_request_head_bytes =
        r.integer("max_request_head_bytes", s.max_request_head_bytes, 1024, 1024LL * 1024);
    s.request_body_timeout_ms =
        r.integer("request_body_timeout_ms", s.request_body_timeout_ms, 100, 3'600'000);
    s.min_request_body_rate =
        r.integer("min_request_body_rate", s.min_request_body_rate, 0, 1LL << 30);
    s.read_ahead_body_bytes =
        r.integer("read_ahead_body_bytes", s.read_ahead_body_bytes, 0, 16LL * 1024 * 1024);
    s.keep_alive_wait_us = r.integer("keep_alive_wait_us", s.keep_alive_wait_us, 0, 100'000);
    s.max_connections = r.integer("max_connections", s.max_connections, 1, 1'000'000);
    s.max_connections_per_address =
        r.integer("max_connections_per_address", s.max_connections_per_address, 1, 1'000'000);
    s.max_auth_failures = r.integer("max_auth_failures", s.max_auth_failures, 0, 1'000'000);
    s.auth_failure_window_ms =
        r.integer("auth_failure_window_ms", s.auth_failure_window_ms, 1000, 86'400'000);
    if (const Json* token = r.get("metrics_token")) {
        s.metrics_token = readSecret(token, r.pathOf("metrics_token"), true);
        if (s.metrics_token && s.metrics_token->ref().kind != SecretRef::Kind::sha256) {
            if (auto weak = weakKeyReason(s.metrics_token->reveal())) {
                errors_.add(r.pathOf("metrics_token"), "the metrics token " + *weak);
            }
            s.metrics_token = Secret(s.metrics_token->ref(), sha256Hex(s.metrics_token->reveal()));
        }
    }
    s.memory_trim_interval_ms =
        r.integer("memory_trim_interval_ms", s.memory_trim_interval_ms, 0, 86'400'000);
    s.allowed_origins = r.stringArray("allowed_origins", 1024, [](const std::string& origin) {
        const auto scheme = origin.find("://");
        const bool ok = scheme != std::string::npos && scheme > 0 && origin.size() > scheme + 3 &&
                        origin.find('/', scheme + 3) == std::string::npos;
        return ok ? std::nullopt
                  : std::optional<std::string>(
                        "expected an origin such as \"https://app.example.com\" "
                        "(scheme://host[:port], no path), got " +
                        describeString(origin));
    });
    s.allowed_hosts = r.stringArray("allowed_hosts", 1024, [](const std::string& host) {
        if (host.find_first_of("/ \t@") == std::string::npos) {
            return std::optional<std::string>();
        }
        return std::optional<std::string>(
            "expected a host name or host:port such as \"crank.example.com\", got " +
            describeString(host));
    });
    if (auto node = r.optionalString("node_id", 64)) {
        if (!isName(*node)) {
            errors_.add(r.pathOf("node_id"),
                        "a node id has 1 to 64 letters, digits, '_', '-' or '.', got " +
                            describeString(*node));
        } else {
            s.node_id = *node;
        }
    }
    r.finish();
}

void Loader::readJobs(const Json* v) {
    ObjectReader r(v, "jobs", errors_);
    JobsConfig& j = config_.jobs;
    j.workers = static_cast<int>(r.integer("workers", j.workers, 1, 1024));
    j.max_queued = r.integer("max_queued", j.max_queued, 0, 1'000'000);
    j.heartbeat_interval_ms =
        r.integer("heartbeat_interval_ms", j.heartbeat_interval_ms, 100, 3'600'000);
    j.lease_ms = r.integer("lease_ms", j.lease_ms, 1'000, 86'400'000);
    if (j.lease_ms < 2 * j.heartbeat_interval_ms) {
        errors_.add(r.pathOf("lease_ms"),
                    fmt::format("must be at least twice heartbeat_interval_ms ({}), got {}",
                                j.heartbeat_interval_ms, j.lease_ms));
    }
    j.poll_interval_ms = r.integer("poll_interval_ms", j.poll_interval_ms, 10, 3'600'000);
    r.finish();
}

void Loader::readAdmin(const Json* v) {
    ObjectReader r(v, "admin", errors_);
    AdminConfig& a = config_.admin;
    if (const Json* token = r.get("token")) {
        a.token = readSecret(token, r.pathOf("token"), true);
        // Kept as its digest only: requests are compared by digest, the clear token is dropped.
        if (a.token && a.token->ref().kind != SecretRef::Kind::sha256) {
            if (auto weak = weakKeyReason(a.token->reveal())) {
                errors_.add(r.pathOf("token"), "the admin token " + *weak);
            }
            a.token = Secret(a.token->ref(), sha256Hex(a.token->reveal()));
        }
    }
    a.ui = r.boolean("ui", a.ui);
    if (auto dir = r.optionalString("ui_directory")) {
        a.ui_directory = *dir;
    }
    a.test_run_timeout_ms =
        r.integer("test_run_timeout_ms", a.test_run_timeout_ms, 1'000, 3'600'000);
    a.max_test_runs = static_cast<int>(r.integer("max_test_runs", a.max_test_runs, 1, 64));
    if (a.token && a.max_test_runs >= config_.server.threads) {
        // Each test run holds a worker thread for its whole time: some must stay for MCP.
        errors_.add(r.pathOf("max_test_runs"),
                    fmt::format("must be below server.threads ({}), got {}", config_.server.threads,
                                a.max_test_runs));
    }
    a.sync_interval_ms = r.integer("sync_interval_ms", a.sync_interval_ms, 100, 3'600'000);
    r.finish();
}

void Loader::readStore(const Json* v) {
    ObjectReader r(v, "store", errors_);
    StoreConfig& s = config_.store;
    s.backend = std::string(r.enumeration<std::string_view>("backend", "sqlite", kBackends));
    if (auto path = r.optionalString("path")) {
        if (path->empty()) {
            errors_.add(r.pathOf("path"),
                        "must not be empty (use \":memory:\" for a store in memory)");
        } else {
            s.path = *path;
        }
    }
    s.busy_timeout_ms = r.integer("busy_timeout_ms", s.busy_timeout_ms, 0, 600'000);
    s.pool_size = static_cast<int>(r.integer("pool_size", s.pool_size, 1, 64));
    s.cache_kib = r.integer("cache_kib", s.cache_kib, 16, 1'048'576);
    r.finish();
}

void Loader::readMcp(const Json* v) {
    ObjectReader r(v, "mcp", errors_);
    McpConfig& m = config_.mcp;
    if (auto path = r.optionalString("path", 256)) {
        if (path->empty() || path->front() != '/' ||
            path->find_first_of("?# \t") != std::string::npos) {
            errors_.add(r.pathOf("path"), "expected an absolute URL path such as \"/mcp\", got " +
                                              detail::describeString(*path));
        } else {
            m.path = *path;
        }
    }
    m.max_sessions = r.positiveInteger("max_sessions", m.max_sessions, 1'000'000);
    m.session_idle_timeout_ms =
        r.positiveInteger("session_idle_timeout_ms", m.session_idle_timeout_ms, 7LL * 86'400'000);
    m.heartbeat_interval_ms =
        r.positiveInteger("heartbeat_interval_ms", m.heartbeat_interval_ms, 3'600'000);
    m.max_streams = r.positiveInteger("max_streams", m.max_streams, 1'000'000);
    m.max_streams_per_session =
        r.positiveInteger("max_streams_per_session", m.max_streams_per_session, 100'000);
    m.stream_buffer_bytes =
        r.positiveInteger("stream_buffer_bytes", m.stream_buffer_bytes, 256LL * 1024 * 1024);
    m.stream_stall_timeout_ms =
        r.integer("stream_stall_timeout_ms", m.stream_stall_timeout_ms, 0, 3'600'000);
    m.replay_events = r.integer("replay_events", m.replay_events, 0, 100'000);
    m.replay_bytes = r.integer("replay_bytes", m.replay_bytes, 0, 256LL * 1024 * 1024);
    m.replay_budget_bytes =
        r.integer("replay_budget_bytes", m.replay_budget_bytes, 0, 64LL * 1024 * 1024 * 1024);
    m.replay_streams = r.integer("replay_streams", m.replay_streams, 0, 100'000);
    m.tools_page_size = r.positiveInteger("tools_page_size", m.tools_page_size, 10'000);
    m.sse_retry_ms = r.positiveInteger("sse_retry_ms", m.sse_retry_ms, 3'600'000);
    m.list_ttl_ms = r.integer("list_ttl_ms", m.list_ttl_ms, 0, 7LL * 86'400'000);
    m.read_ttl_ms = r.integer("read_ttl_ms", m.read_ttl_ms, 0, 7LL * 86'400'000);
    if (const Json* key = r.get("request_state_key")) {
        m.request_state_key = readSecret(key, r.pathOf("request_state_key"), false);
        if (m.request_state_key) {
            if (auto weak = weakKeyReason(m.request_state_key->reveal())) {
                errors_.add(r.pathOf("request_state_key"), "the request state key " + *weak);
            }
        }
    }
    m.request_state_ttl_ms =
        r.positiveInteger("request_state_ttl_ms", m.request_state_ttl_ms, 7LL * 86'400'000);
    m.max_input_rounds = r.positiveInteger("max_input_rounds", m.max_input_rounds, 1'000);
    m.input_wait_ms = r.positiveInteger("input_wait_ms", m.input_wait_ms, 86'400'000);
    m.max_held_calls = r.positiveInteger("max_held_calls", m.max_held_calls, 100'000);
    m.max_held_calls_per_agent =
        r.positiveInteger("max_held_calls_per_agent", m.max_held_calls_per_agent, 100'000);
    m.max_request_states_per_agent = r.positiveInteger("max_request_states_per_agent",
                                                       m.max_request_states_per_agent, 10'000'000);
    m.max_request_states_per_workspace = r.positiveInteger(
        "max_request_states_per_workspace", m.max_request_states_per_workspace, 100'000'000);
    m.max_input_rounds_per_minute =
        r.positiveInteger("max_input_rounds_per_minute", m.max_input_rounds_per_minute, 1'000'000);
    m.max_tool_tasks = r.positiveInteger("max_tool_tasks", m.max_tool_tasks, 1'000'000);
    m.max_tool_tasks_per_agent =
        r.positiveInteger("max_tool_tasks_per_agent", m.max_tool_tasks_per_agent, 1'000'000);
    m.max_running_tool_tasks =
        r.positiveInteger("max_running_tool_tasks", m.max_running_tool_tasks, 10'000);
    m.tool_task_ttl_ms =
        r.positiveInteger("tool_task_ttl_ms", m.tool_task_ttl_ms, 30LL * 86'400'000);
    r.finish();
}

void Loader::readPlugins(const Json* v) {
    ObjectReader r(v, "plugins", errors_);
    PluginsConfig& p = config_.plugins;
    p.directories = r.stringArray("directories", 64);
    std::set<std::string> seen;
    p.enabled = r.stringArray("enabled", 256, [&seen](const std::string& name) {
        if (!isName(name)) {
            return std::optional<std::string>(
                "expected a plugin name (letters, digits, '_', '-', '.'), got " +
                describeString(name));
        }
        if (!seen.insert(name).second) {
            return std::optional<std::string>("\"" + name + "\" is listed twice");
        }
        return std::optional<std::string>();
    });
    r.finish();
}

Limits Loader::readLimits(const Json* v, const std::string& path, Limits defaults, bool workspace) {
    ObjectReader r(v, path, errors_);
    Limits l = defaults;
    l.max_concurrent_calls =
        r.positiveInteger("max_concurrent_calls", l.max_concurrent_calls, 100'000);
    l.max_sessions = r.integer("max_sessions", l.max_sessions, 0, 1'000'000);
    l.max_jobs = r.integer("max_jobs", l.max_jobs, 0, 1'000'000);
    l.max_mcp_sessions = r.integer("max_mcp_sessions", l.max_mcp_sessions, 0, 1'000'000);
    l.max_streams = r.integer("max_streams", l.max_streams, 0, 1'000'000);
    if (workspace) {
        l.reserved_calls = r.integer("reserved_calls", l.reserved_calls, -1, 1024);
    }
    l.rate = readRateLimit(r, "rate");
    r.finish();
    return l;
}

std::optional<Secret> Loader::readSecret(const Json* v, const std::string& path, bool allowDigest) {
    if (v == nullptr) {
        return std::nullopt;
    }
    const std::string expected =
        allowDigest ? R"({"env": "VARIABLE"}, {"file": "/path"} or {"sha256": "HEX"})"
                    : R"({"env": "VARIABLE"} or {"file": "/path"})";
    if (v->IsString()) {
        // Never echo the literal: it is probably the secret itself.
        errors_.add(path, "secrets are not written in the config file; expected " + expected +
                              ", got a string");
        return std::nullopt;
    }
    if (!v->IsObject() || v->MemberCount() != 1 || !v->MemberBegin()->value.IsString()) {
        // A number may be the secret itself (a PIN, a numeric key): name only its type.
        errors_.add(path, "expected " + expected + ", got " +
                              (v->IsNumber() ? std::string("a number") : describe(*v)));
        return std::nullopt;
    }
    const std::string key(v->MemberBegin()->name.GetString(),
                          v->MemberBegin()->name.GetStringLength());
    const std::string name(v->MemberBegin()->value.GetString(),
                           v->MemberBegin()->value.GetStringLength());
    const std::string where = detail::memberPath(path, key);
    if (key == "env") {
        if (name.empty()) {
            errors_.add(where, "expected the name of an environment variable");
            return std::nullopt;
        }
        auto value = lookupEnv(name);
        if (!value || value->empty()) {
            errors_.add(where,
                        "environment variable " + name + (value ? " is empty" : " is not set"));
            return std::nullopt;
        }
        return Secret({SecretRef::Kind::env, name}, *value);
    }
    if (key == "file") {
        std::ifstream in(name, std::ios::binary);
        if (name.empty() || !in) {
            errors_.add(where, "cannot read secret file \"" + name + "\"");
            return std::nullopt;
        }
        std::string value(kMaxSecretFileBytes + 1, '\0');
        in.read(value.data(), static_cast<std::streamsize>(value.size()));
        if (in.bad()) {  // a directory, for one
            errors_.add(where, "cannot read secret file \"" + name + "\"");
            return std::nullopt;
        }
        value.resize(static_cast<std::size_t>(in.gcount()));
        if (value.size() > kMaxSecretFileBytes) {
            errors_.add(where, fmt::format("secret file \"{}\" is larger than {} bytes", name,
                                           kMaxSecretFileBytes));
            return std::nullopt;
        }
        while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) {
            value.pop_back();
        }
        if (value.empty()) {
            errors_.add(where, "secret file \"" + name + "\" is empty");
            return std::nullopt;
        }
        return Secret({SecretRef::Kind::file, name}, value);
    }
    if (key == "sha256" && allowDigest) {
        std::string hex = name;
        std::transform(hex.begin(), hex.end(), hex.begin(), [](char c) {
            return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        });
        const bool ok = hex.size() == 64 && std::all_of(hex.begin(), hex.end(), [](char c) {
                            return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                        });
        if (!ok) {
            errors_.add(where, "expected 64 hexadecimal digits (a SHA-256 digest)");
            return std::nullopt;
        }
        return Secret({SecretRef::Kind::sha256, ""}, hex);
    }
    errors_.add(where, "unknown secret source; expected " + expected);
    return std::nullopt;
}

void Loader::readAuth(const Json* v) {
    ObjectReader r(v, "auth", errors_);
    AuthConfig& auth = config_.auth;
    auth.mode =
        r.enumeration("mode", AuthConfig::Mode::none,
                      std::span<const std::pair<std::string_view, AuthConfig::Mode>>(kAuthModes));

    const Json* workspaces = r.get("workspaces");
    const std::string wsPath = r.pathOf("workspaces");
    std::set<std::string> workspaceIds;
    if (workspaces != nullptr && !workspaces->IsArray()) {
        errors_.add(wsPath, "expected an array of workspaces, got " + describe(*workspaces));
    } else if (workspaces != nullptr) {
        for (rapidjson::SizeType i = 0; i < workspaces->Size(); ++i) {
            const std::string path = indexPath(wsPath, i);
            ObjectReader w(&(*workspaces)[i], path, errors_);
            if (!w.present()) {
                continue;
            }
            Workspace ws;
            ws.id = w.requiredString("id", 64);
            ws.description = w.optionalString("description").value_or("");
            ws.limits = readLimits(w.get("limits"), w.pathOf("limits"), Limits{}, true);
            w.finish();
            if (!ws.id.empty() && !isName(ws.id)) {
                errors_.add(w.pathOf("id"), "expected letters, digits, '_', '-' or '.', got " +
                                                describeString(ws.id));
            } else if (!ws.id.empty() && !workspaceIds.insert(ws.id).second) {
                errors_.add(w.pathOf("id"), "workspace \"" + ws.id + "\" is defined twice");
            }
            auth.workspaces.push_back(std::move(ws));
        }
    }
    if (workspaceIds.insert("default").second) {
        auth.workspaces.insert(auth.workspaces.begin(), Workspace{"default", "", Limits{}});
    }

    const Json* agents = r.get("agents");
    const std::string agentsPath = r.pathOf("agents");
    std::set<std::string> agentIds;
    std::map<std::string, std::string> keyOwners;  // sha256 of key -> path of its first agent
    if (agents != nullptr && !agents->IsArray()) {
        errors_.add(agentsPath, "expected an array of agents, got " + describe(*agents));
    } else if (agents != nullptr) {
        for (rapidjson::SizeType i = 0; i < agents->Size(); ++i) {
            const std::string path = indexPath(agentsPath, i);
            ObjectReader a(&(*agents)[i], path, errors_);
            if (!a.present()) {
                continue;
            }
            Agent agent;
            agent.id = a.requiredString("id", 64);
            agent.workspace = a.optionalString("workspace", 64).value_or("default");
            agent.api_key = readSecret(a.get("api_key"), a.pathOf("api_key"), true);
            agent.limits = readLimits(a.get("limits"), a.pathOf("limits"), Agent{}.limits, false);
            a.finish();
            if (!agent.id.empty() && !isName(agent.id)) {
                errors_.add(a.pathOf("id"), "expected letters, digits, '_', '-' or '.', got " +
                                                describeString(agent.id));
            } else if (!agent.id.empty() && !agentIds.insert(agent.id).second) {
                errors_.add(a.pathOf("id"), "agent \"" + agent.id + "\" is defined twice");
            }
            if (workspaceIds.count(agent.workspace) == 0) {
                errors_.add(a.pathOf("workspace"), "no workspace \"" + agent.workspace +
                                                       "\" is defined in auth.workspaces");
            }
            if (agent.api_key) {
                // Keep only a digest of clear keys: the process never needs the key itself.
                if (agent.api_key->ref().kind != SecretRef::Kind::sha256) {
                    if (auto weak = weakKeyReason(agent.api_key->reveal())) {
                        errors_.add(a.pathOf("api_key"), "the key " + *weak);
                    }
                    agent.api_key =
                        Secret(agent.api_key->ref(), sha256Hex(agent.api_key->reveal()));
                }
                auto [it, inserted] = keyOwners.emplace(agent.api_key->reveal(), path);
                if (!inserted) {
                    errors_.add(a.pathOf("api_key"), "the same key as " + it->second + ".api_key");
                }
                if (config_.admin.token &&
                    config_.admin.token->reveal() == agent.api_key->reveal()) {
                    errors_.add(a.pathOf("api_key"),
                                "the same key as admin.token: the admin token must differ from "
                                "every agent's key");
                }
            } else if (auth.mode == AuthConfig::Mode::api_key && a.get("api_key") == nullptr) {
                errors_.add(a.pathOf("api_key"), "is required when auth.mode is \"api_key\"");
            }
            auth.agents.push_back(std::move(agent));
        }
    }
    r.finish();
    if (auth.mode == AuthConfig::Mode::api_key && auth.agents.empty()) {
        errors_.add(r.pathOf("agents"),
                    "auth.mode \"api_key\" needs at least one agent with an api_key");
    }
}

void Loader::readAuthProfiles(const Json* v) {
    if (v == nullptr) {
        return;
    }
    if (!v->IsObject()) {
        errors_.add("auth_profiles", "expected an object of named profiles, got " + describe(*v));
        return;
    }
    ObjectReader all(v, "auth_profiles", errors_);  // reports duplicate names
    for (const auto& member : v->GetObject()) {
        const std::string name(member.name.GetString(), member.name.GetStringLength());
        all.allow({std::string_view(member.name.GetString(), member.name.GetStringLength())});
        const std::string path = detail::memberPath("auth_profiles", name);
        if (!isName(name)) {
            errors_.add(path, "a profile name uses letters, digits, '_', '-' or '.' (at most 64)");
            continue;
        }
        ObjectReader r(&member.value, path, errors_);
        if (!r.present()) {
            continue;
        }
        AuthProfile p;
        p.name = name;
        const std::size_t errorsBefore = errors_.size();
        if (r.get("type") == nullptr) {
            errors_.add(r.pathOf("type"), R"(is required: "none", "bearer", "basic" or "api_key")");
        }
        p.type = r.enumeration(
            "type", AuthProfile::Type::none,
            std::span<const std::pair<std::string_view, AuthProfile::Type>>(kProfileTypes));
        // Without a valid type, the checks that depend on it would only add noise.
        const bool typeKnown = errors_.size() == errorsBefore;
        // Fields that belong to one type only; using them with another is a mistake worth naming.
        const auto only = [&](std::string_view key, AuthProfile::Type type,
                              std::string_view typeName) {
            const Json* field = r.get(key);
            if (!typeKnown) {
                return static_cast<const Json*>(nullptr);
            }
            if (field != nullptr && p.type != type) {
                errors_.add(r.pathOf(key),
                            "is only used with type \"" + std::string(typeName) + "\"");
                return static_cast<const Json*>(nullptr);
            }
            if (field == nullptr && p.type == type) {
                errors_.add(r.pathOf(key),
                            "is required with type \"" + std::string(typeName) + "\"");
            }
            return field;
        };
        if (const Json* token = only("token", AuthProfile::Type::bearer, "bearer")) {
            p.token = readSecret(token, r.pathOf("token"), false);
        }
        if (const Json* user = only("username", AuthProfile::Type::basic, "basic")) {
            if (user->IsString() && user->GetStringLength() > 0) {
                p.username.assign(user->GetString(), user->GetStringLength());
            } else {
                errors_.add(r.pathOf("username"),
                            "expected a non-empty string, got " + describe(*user));
            }
        }
        if (const Json* password = only("password", AuthProfile::Type::basic, "basic")) {
            p.password = readSecret(password, r.pathOf("password"), false);
        }
        if (const Json* key = only("key", AuthProfile::Type::api_key, "api_key")) {
            p.key = readSecret(key, r.pathOf("key"), false);
        }
        if (const Json* keyName = only("name", AuthProfile::Type::api_key, "api_key")) {
            if (keyName->IsString() &&
                isHttpToken({keyName->GetString(), keyName->GetStringLength()})) {
                p.key_name.assign(keyName->GetString(), keyName->GetStringLength());
            } else {
                errors_.add(r.pathOf("name"),
                            "expected a header or query parameter name, got " + describe(*keyName));
            }
        }
        if (typeKnown && r.get("in") != nullptr && p.type != AuthProfile::Type::api_key) {
            errors_.add(r.pathOf("in"), "is only used with type \"api_key\"");
        } else {
            p.placement = r.enumeration(
                "in", AuthProfile::Placement::header,
                std::span<const std::pair<std::string_view, AuthProfile::Placement>>(kPlacements));
        }
        if (const Json* headers = r.get("headers")) {
            if (!headers->IsObject()) {
                errors_.add(
                    r.pathOf("headers"),
                    "expected an object of header names to values, got " + describe(*headers));
            } else {
                std::set<std::string> lowerNames;  // header names are case-insensitive
                for (const auto& h : headers->GetObject()) {
                    const std::string hname(h.name.GetString(), h.name.GetStringLength());
                    const std::string hpath = detail::memberPath(r.pathOf("headers"), hname);
                    std::string lower = hname;
                    std::transform(lower.begin(), lower.end(), lower.begin(), [](char c) {
                        return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
                    });
                    if (!isHttpToken(hname)) {
                        errors_.add(hpath, "not a valid HTTP header name");
                    } else if (!lowerNames.insert(lower).second) {
                        errors_.add(hpath, "is given twice (header names are case-insensitive)");
                    } else if (!h.value.IsString()) {
                        errors_.add(hpath, "expected a string, got " + describe(h.value));
                    } else {
                        std::string value(h.value.GetString(), h.value.GetStringLength());
                        // CR/LF would inject headers; NUL and other controls break HTTP too.
                        const bool control = std::any_of(value.begin(), value.end(), [](char c) {
                            const auto u = static_cast<unsigned char>(c);
                            return (u < 0x20 && c != '\t') || u == 0x7f;
                        });
                        if (control) {
                            errors_.add(hpath,
                                        "a header value must not contain line breaks or "
                                        "other control characters");
                        } else {
                            p.headers[hname] = std::move(value);
                        }
                    }
                }
            }
        }
        r.finish();
        config_.auth_profiles[name] = std::move(p);
    }
}

void Loader::readExecution(const Json* v, const std::string& path, OperationConfig& op) {
    ObjectReader r(v, path, errors_);
    ExecutionConfig& e = op.execution;
    using Modes = std::span<const std::pair<std::string_view, ExecutionMode>>;
    using Behaviors = std::span<const std::pair<std::string_view, TransportBehavior>>;
    const std::size_t errorsBefore = errors_.size();
    e.mode = r.enumeration("mode", ExecutionMode::unary, Modes(kModes));
    // With an unknown mode, the checks that depend on the mode would only add noise.
    const bool modeKnown = errors_.size() == errorsBefore;
    const bool behaviorGiven = r.get("transport_behavior") != nullptr;
    e.transport_behavior_given = behaviorGiven;
    e.transport_behavior = r.enumeration("transport_behavior", TransportBehavior::request_response,
                                         Behaviors(kBehaviors));
    if (modeKnown && behaviorGiven && e.mode == ExecutionMode::unary &&
        e.transport_behavior == TransportBehavior::server_stream) {
        errors_.add(r.pathOf("transport_behavior"),
                    "\"server_stream\" needs mode \"window\", \"session\" or \"async_job\"; "
                    "unary returns one response");
    }
    constexpr std::int64_t kMaxMs = ExecutionCeilings::duration_ms;
    e.window_duration_ms = r.positiveInteger("window_duration_ms", e.window_duration_ms, kMaxMs);
    e.poll_interval_ms = r.positiveInteger("poll_interval_ms", e.poll_interval_ms, kMaxMs);
    e.upstream_timeout_ms = r.positiveInteger("upstream_timeout_ms", e.upstream_timeout_ms, kMaxMs);
    e.idle_timeout_ms = r.positiveInteger("idle_timeout_ms", e.idle_timeout_ms, kMaxMs);
    e.max_session_lifetime_ms =
        r.positiveInteger("max_session_lifetime_ms", e.max_session_lifetime_ms, kMaxMs);
    e.max_items = r.positiveInteger("max_items", e.max_items, ExecutionCeilings::max_items);
    e.max_bytes = r.positiveInteger("max_bytes", e.max_bytes, ExecutionCeilings::max_bytes);
    e.overflow_policy = r.enumeration(
        "overflow_policy", OverflowPolicy::pause,
        std::span<const std::pair<std::string_view, OverflowPolicy>>(kOverflowPolicies));
    if (e.mode == ExecutionMode::session && e.idle_timeout_ms > e.max_session_lifetime_ms) {
        errors_.add(r.pathOf("idle_timeout_ms"),
                    fmt::format("must not exceed max_session_lifetime_ms ({}), got {}",
                                e.max_session_lifetime_ms, e.idle_timeout_ms));
    }

    e.max_result_bytes = r.positiveInteger("max_result_bytes", e.max_result_bytes,
                                           ExecutionCeilings::max_result_bytes);
    if (r.get("result_ttl_ms") != nullptr && modeKnown && e.mode != ExecutionMode::async_job) {
        errors_.add(r.pathOf("result_ttl_ms"), "is only used with mode \"async_job\", not \"" +
                                                   std::string(toString(e.mode)) + "\"");
    }
    e.result_ttl_ms = r.positiveInteger("result_ttl_ms", e.result_ttl_ms, 30LL * 86'400'000);

    // Aggregators are plugins: the name is checked against the loaded ones when the runtime
    // compiles the operations; here only its shape.
    if (auto mode = r.optionalString("aggregation_mode", 64)) {
        if (!isPluginName(*mode)) {
            errors_.add(r.pathOf("aggregation_mode"),
                        "an aggregator name has 1 to 64 lowercase letters, digits or '_', got " +
                            describeString(*mode));
        } else {
            e.aggregation_mode = std::move(*mode);
        }
    }
    if (const Json* aggregation = r.get("aggregation")) {
        if (!aggregation->IsObject()) {
            errors_.add(
                r.pathOf("aggregation"),
                "expected an object (the aggregator's config), got " + describe(*aggregation));
        } else {
            e.aggregation_config_json = detail::toJsonText(*aggregation);
        }
    }
    const auto path_ = [&](std::string_view key) {
        auto s = r.optionalString(key, 1024);
        if (s && s->empty()) {
            errors_.add(r.pathOf(key), "must not be empty (leave it out instead)");
            return std::optional<std::string>();
        }
        return s;
    };
    e.items_path = path_("items_path");
    e.summary_path = path_("summary_path");
    e.cursor_path = path_("cursor_path");
    e.status_path = path_("status_path");
    e.done_path = path_("done_path");

    e.truncate_item_fields = r.boolean("truncate_item_fields", e.truncate_item_fields);
    e.max_field_length = r.positiveInteger("max_field_length", e.max_field_length,
                                           ExecutionCeilings::max_field_length);
    e.redacted_paths = r.stringArray("redacted_paths");
    e.drop_duplicates = r.boolean("drop_duplicates", e.drop_duplicates);
    if (const Json* rate = r.get("sampling_rate")) {
        if (!rate->IsNumber() || rate->GetDouble() <= 0.0 || rate->GetDouble() > 1.0) {
            errors_.add(r.pathOf("sampling_rate"),
                        "expected a number greater than 0 and at most 1, got " + describe(*rate));
        } else {
            e.sampling_rate = rate->GetDouble();
        }
    }

    if (r.get("sampling_seed") != nullptr) {
        e.sampling_seed =
            r.integer("sampling_seed", 0, 0, std::numeric_limits<std::int64_t>::max());
    }

    struct FamilyName {
        std::string_view key;
        std::string* target;
        ExecutionMode mode1;
        ExecutionMode mode2;
    };
    const std::array<FamilyName, 6> family{{
        {"start_tool_name", &e.start_tool_name, ExecutionMode::session, ExecutionMode::async_job},
        {"poll_tool_name", &e.poll_tool_name, ExecutionMode::session, ExecutionMode::session},
        {"stop_tool_name", &e.stop_tool_name, ExecutionMode::session, ExecutionMode::session},
        {"status_tool_name", &e.status_tool_name, ExecutionMode::async_job,
         ExecutionMode::async_job},
        {"result_tool_name", &e.result_tool_name, ExecutionMode::async_job,
         ExecutionMode::async_job},
        {"cancel_tool_name", &e.cancel_tool_name, ExecutionMode::async_job,
         ExecutionMode::async_job},
    }};
    for (const FamilyName& f : family) {
        auto name = r.optionalString(f.key, 256);
        if (!name || !modeKnown) {
            continue;
        }
        if (e.mode != f.mode1 && e.mode != f.mode2) {
            const std::string modes = f.mode1 == f.mode2
                                          ? "\"" + std::string(toString(f.mode1)) + "\""
                                          : "\"session\" or \"async_job\"";
            errors_.add(r.pathOf(f.key), "is only used with mode " + modes + ", not \"" +
                                             std::string(toString(e.mode)) + "\"");
        } else if (!isToolName(*name)) {
            errors_.add(r.pathOf(f.key),
                        "a tool name has 1 to 128 letters, digits, '_', '-' or '.', got " +
                            describeString(*name));
        } else {
            *f.target = *name;
        }
    }
    r.finish();
}

OperationConfig Loader::readOperation(const Json& v, const std::string& path) {
    ObjectReader r(&v, path, errors_);
    OperationConfig op;
    if (!r.present()) {
        return op;
    }
    op.source_json = detail::toJsonText(v);
    op.name = r.requiredString("name", kMaxToolNameLength);
    if (!op.name.empty() && !isToolName(op.name)) {
        errors_.add(r.pathOf("name"),
                    "a tool name has 1 to 128 letters, digits, '_', '-' or '.', got " +
                        describeString(op.name));
    }
    op.workspace = r.optionalString("workspace", 64).value_or("default");
    op.title = r.optionalString("title", 256).value_or("");
    // Required, unless the protocol describes the operation itself (a gRPC method): checked when
    // operations are compiled against the plugins.
    op.description = r.optionalString("description", kMaxDescriptionLength).value_or("");
    op.protocol = r.requiredString("protocol", 64);
    if (!op.protocol.empty() && !isPluginName(op.protocol)) {
        errors_.add(r.pathOf("protocol"),
                    "expected a protocol adapter's name (1 to 64 lowercase letters, digits or "
                    "'_'), got " +
                        describeString(op.protocol));
    }
    op.auth_profile = r.optionalString("auth_profile", 64).value_or("");
    op.upstream = r.optionalString("upstream", 256).value_or("");
    op.rate = readRateLimit(r, "rate");
    if (const Json* config = r.get("config")) {
        if (config->IsObject()) {
            op.config_json = detail::toJsonText(*config);
        } else {
            errors_.add(r.pathOf("config"), "expected an object (the " + op.protocol +
                                                " plugin's settings), got " + describe(*config));
        }
    } else {
        op.config_json = "{}";
    }
    if (const Json* schema = r.get("input_schema")) {
        const auto type = schema->IsObject() ? schema->FindMember("type")
                                             : rapidjson::Value::ConstMemberIterator();
        if (!schema->IsObject()) {
            errors_.add(r.pathOf("input_schema"),
                        "expected a JSON Schema object, got " + describe(*schema));
        } else if (type == schema->MemberEnd() || !type->value.IsString() ||
                   std::string_view(type->value.GetString(), type->value.GetStringLength()) !=
                       "object") {
            errors_.add(detail::memberPath(r.pathOf("input_schema"), "type"),
                        "a tool's input schema must have \"type\": \"object\"");
        } else {
            op.input_schema_json = detail::toJsonText(*schema);
            op.input_schema_given = true;
        }
    } else {
        op.input_schema_json = R"({"type":"object"})";
    }
    readExecution(r.get("execution"), r.pathOf("execution"), op);
    r.finish();
    return op;
}

void Loader::readOperations(const Json* v) {
    if (v == nullptr) {
        return;
    }
    if (!v->IsArray()) {
        errors_.add("operations", "expected an array of operations, got " + describe(*v));
        return;
    }
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
        config_.operations.push_back(readOperation((*v)[i], indexPath("operations", i)));
    }
}

void Loader::readUpstreams(const Json* v) {
    if (v == nullptr) {
        return;
    }
    if (!v->IsArray()) {
        errors_.add("upstreams", "expected an array of upstreams, got " + describe(*v));
        return;
    }
    using Naming = UpstreamConfig::Naming;
    static constexpr std::array<std::pair<std::string_view, Naming>, 2> kNamings{
        {{"prefix", Naming::prefix}, {"keep", Naming::keep}}};
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kSeparators{
        {{"_", "_"}, {"__", "__"}, {".", "."}, {"-", "-"}}};
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
        const std::string path = indexPath("upstreams", i);
        ObjectReader r(&(*v)[i], path, errors_);
        if (!r.present()) {
            continue;
        }
        UpstreamConfig u;
        u.name = r.requiredString("name", 64);
        if (!u.name.empty() && !isName(u.name)) {
            errors_.add(r.pathOf("name"),
                        "an upstream name has 1 to 64 letters, digits, '_', '-' or '.', got " +
                            describeString(u.name));
        }
        if (auto protocol = r.optionalString("protocol", 64)) {
            if (!isPluginName(*protocol)) {
                errors_.add(r.pathOf("protocol"),
                            "an adapter name has 1 to 64 lowercase letters, digits or '_', got " +
                                describeString(*protocol));
            } else {
                u.protocol = *protocol;
            }
        }
        u.workspace = r.optionalString("workspace", 64).value_or("default");
        u.naming = r.enumeration<Naming>("naming", Naming::prefix, kNamings);
        u.prefix = r.optionalString("prefix", 64).value_or(u.name);
        if (!u.prefix.empty() && !isToolName(u.prefix)) {
            errors_.add(r.pathOf("prefix"), "a prefix has letters, digits, '_', '-' or '.', got " +
                                                describeString(u.prefix));
        }
        u.separator = std::string(r.enumeration<std::string_view>("separator", "_", kSeparators));
        if (const Json* config = r.get("config")) {
            if (!config->IsObject()) {
                errors_.add(r.pathOf("config"),
                            "expected an object (the adapter's config), got " + describe(*config));
            } else {
                u.config_json = detail::toJsonText(*config);
            }
        }
        u.request_timeout_ms =
            r.integer("request_timeout_ms", u.request_timeout_ms, 100, 86'400'000);
        u.client_request_timeout_ms =
            r.integer("client_request_timeout_ms", u.client_request_timeout_ms, 100, 86'400'000);
        u.max_list_items = r.integer("max_list_items", u.max_list_items, 1, 1'000'000);
        u.max_subscriptions_per_client =
            r.integer("max_subscriptions_per_client", u.max_subscriptions_per_client, 1, 100'000);
        u.max_subscriptions_per_agent =
            r.integer("max_subscriptions_per_agent", u.max_subscriptions_per_agent, 1, 1'000'000);
        u.tools = readToolPolicy(r, "tools");
        u.rate = readRateLimit(r, "rate");
        r.finish();
        config_.upstreams.push_back(std::move(u));
    }
}

void Loader::crossCheck() {
    // Operation and tool names are unique within a workspace: each workspace is its own server.
    std::map<std::pair<std::string, std::string>, std::size_t> names;
    std::map<std::pair<std::string, std::string>, std::string> tools;  // -> path publishing it
    std::set<std::string> workspaces;
    for (const Workspace& ws : config_.auth.workspaces) {
        workspaces.insert(ws.id);
    }
    for (std::size_t i = 0; i < config_.operations.size(); ++i) {
        const OperationConfig& op = config_.operations[i];
        const std::string path = indexPath("operations", i);
        if (op.name.empty()) {
            continue;
        }
        if (workspaces.count(op.workspace) == 0) {
            errors_.add(path + ".workspace",
                        "no workspace \"" + op.workspace + "\" is defined in auth.workspaces");
        }
        if (auto [it, inserted] = names.emplace(std::pair(op.workspace, op.name), i); !inserted) {
            errors_.add(path + ".name",
                        fmt::format("operation \"{}\" is already defined at operations[{}]",
                                    op.name, it->second));
            continue;
        }
        if (!op.auth_profile.empty() && config_.auth_profiles.count(op.auth_profile) == 0) {
            errors_.add(path + ".auth_profile",
                        "no auth profile \"" + op.auth_profile + "\" is defined in auth_profiles");
        }
        for (const std::string& tool : op.toolNames()) {
            if (tool.size() > kMaxToolNameLength) {
                errors_.add(path + ".name",
                            fmt::format("the tool name \"{}\" is longer than {} characters", tool,
                                        kMaxToolNameLength));
            }
            if (auto [it, inserted] = tools.emplace(std::pair(op.workspace, tool), path);
                !inserted) {
                errors_.add(path, it->second == path
                                      ? "publishes the tool \"" + tool +
                                            "\" twice; give its tools distinct names"
                                      : "publishes the tool \"" + tool + "\", which " + it->second +
                                            " publishes too");
            }
        }
    }
    std::map<std::string, std::size_t> upstreamNames;
    for (std::size_t i = 0; i < config_.upstreams.size(); ++i) {
        const UpstreamConfig& u = config_.upstreams[i];
        const std::string path = indexPath("upstreams", i);
        if (workspaces.count(u.workspace) == 0) {
            errors_.add(path + ".workspace",
                        "no workspace \"" + u.workspace + "\" is defined in auth.workspaces");
        }
        if (u.name.empty()) {
            continue;
        }
        if (auto [it, inserted] = upstreamNames.emplace(u.name, i); !inserted) {
            errors_.add(path + ".name", fmt::format("upstream \"{}\" is already defined at "
                                                    "upstreams[{}]",
                                                    u.name, it->second));
        }
    }
    if (config_.auth.mode == AuthConfig::Mode::none && !config_.server.listen.isLoopback()) {
        errors_.add("auth.mode",
                    "\"none\" is only allowed while server.listen is a loopback address (it is " +
                        config_.server.listen.toString() +
                        "); set auth.mode to \"api_key\" and define agents");
    }
}

OperationLoadResult Loader::loadOperation(const Json& value, const Config& base) {
    OperationConfig op = readOperation(value, "");
    if (errors_.empty()) {
        const bool workspaceKnown =
            std::any_of(base.auth.workspaces.begin(), base.auth.workspaces.end(),
                        [&](const Workspace& ws) { return ws.id == op.workspace; });
        if (!workspaceKnown) {
            errors_.add("workspace",
                        "no workspace \"" + op.workspace + "\" is defined in auth.workspaces");
        }
        if (!op.auth_profile.empty() && base.auth_profiles.count(op.auth_profile) == 0) {
            errors_.add("auth_profile",
                        "no auth profile \"" + op.auth_profile + "\" is defined in auth_profiles");
        }
        std::set<std::string> tools;
        for (const std::string& tool : op.toolNames()) {
            if (tool.size() > kMaxToolNameLength) {
                errors_.add("name", fmt::format("the tool name \"{}\" is longer than {} characters",
                                                tool, kMaxToolNameLength));
            }
            if (!tools.insert(tool).second) {
                errors_.add("execution", "publishes the tool \"" + tool +
                                             "\" twice; give its tools distinct names");
            }
        }
    }
    if (!errors_.empty()) {
        return {std::nullopt, errors_.take()};
    }
    return {std::move(op), {}};
}

}  // namespace

OperationLoadResult loadOperation(const rapidjson::Value& value, const Config& base) {
    const LoadOptions options;
    return Loader(options, "operation").loadOperation(value, base);
}

LoadResult loadConfigText(std::string_view text, const std::string& source,
                          const LoadOptions& options) {
    if (text.size() > kMaxConfigBytes) {
        return {std::nullopt,
                {{source, fmt::format("the config is larger than {} bytes", kMaxConfigBytes)}}};
    }
    return Loader(options, source).load(text);
}

std::optional<std::string> readConfigFile(const std::string& path,
                                          std::vector<ConfigError>& errors) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        errors.push_back({path, "cannot open the config file"});
        return std::nullopt;
    }
    // One byte more than the bound: loadConfigText() names a file that is too large.
    std::string text(kMaxConfigBytes + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    if (in.bad()) {
        errors.push_back({path, "cannot read the config file"});
        return std::nullopt;
    }
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

LoadResult loadConfigFile(const std::string& path, const LoadOptions& options) {
    LoadResult result;
    const std::optional<std::string> text = readConfigFile(path, result.errors);
    if (!text) {
        return result;
    }
    return loadConfigText(*text, path, options);
}

}  // namespace crank::config
