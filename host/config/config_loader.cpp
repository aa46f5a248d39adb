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
#include "config/loader.h"
#include "config/tool_policy.h"
#include "json/depth_limited_handler.h"
#include "json/json_text.h"
#include "json/json_value.h"
#include "util/sha256.h"

namespace crank::config {
namespace detail {
namespace {

constexpr std::array<std::pair<std::string_view, std::string_view>, 1> kBackends{{
    {"sqlite", "sqlite"},
}};

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

}  // namespace

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
    readLog(root.get("log"));
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
    if (r.get("upstream_commands") != nullptr) {
        a.upstream_commands = r.stringArray(
            "upstream_commands", 256, [](const std::string& pattern) -> std::optional<std::string> {
                if (pattern.size() > 4096) {
                    return std::string("expected a glob pattern of at most 4096 characters");
                }
                return std::nullopt;
            });
    }
    r.finish();
}

void Loader::readLog(const Json* v) {
    static constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kLevels{{
        {"trace", "trace"},
        {"debug", "debug"},
        {"info", "info"},
        {"warn", "warn"},
        {"error", "error"},
        {"critical", "critical"},
        {"off", "off"},
    }};
    ObjectReader r(v, "log", errors_);
    if (r.get("level") != nullptr) {
        config_.log_level = std::string(r.enumeration<std::string_view>("level", "info", kLevels));
    }
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

}  // namespace detail

LoadResult loadConfigText(std::string_view text, const std::string& source,
                          const LoadOptions& options) {
    if (text.size() > kMaxConfigBytes) {
        return {std::nullopt,
                {{source, fmt::format("the config is larger than {} bytes", kMaxConfigBytes)}}};
    }
    return detail::Loader(options, source).load(text);
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
