#pragma once

// A configuration that uses every section and every execution field, with comments and trailing
// commas. config_loader_test checks it field by field; hostile_input_test cuts it into pieces.

#include <string_view>

#include "config_test_support.h"

namespace crank::config::test {

/// The environment that resolves every secret of kFullConfig.
inline EnvMap fullConfigEnv() {
    return {
        {"BOT1_KEY", "abc-key-0123456789"},
        {"GITHUB_TOKEN", "ghp-full-config-token"},
        {"LEGACY_PASSWORD", "legacy-full-config-password"},
        {"WEATHER_KEY", "weather-full-config-key"},
    };
}

/// sha256("abc-key-0123456789"), the digest that bot-1's key must be stored as.
inline constexpr std::string_view kSha256OfBotKey =
    "7430377a1f8322805068da3e9618a72b3fb4a0552d5a59b42d7dd6161e514bce";
/// sha256(""), given in upper case for bot-2.
inline constexpr std::string_view kSha256OfEmpty =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// Ends with the closing brace (no newline), so that every proper prefix is truncated JSON.
inline constexpr std::string_view kFullConfig =
    R"json(// Crank configuration used by the config tests.
/* Block comments are accepted too,
   over several lines. */
{
  "$schema": "https://crank.dev/schema/config.json",
  "server": {
    "listen": "127.0.0.1:9090",
    "threads": 8,
    "max_calls_per_upstream": 3,
    "queue": 128,
    "backlog": 256,
    "max_request_body_bytes": 2097152,
    "shutdown_grace_ms": 5000,
    "idle_connection_timeout_ms": 15000,
    "allowed_origins": ["https://app.example.com", "http://localhost:3000",],
    "allowed_hosts": ["crank.example.com", "crank.example.com:8443"],
  },
  "store": {"backend": "sqlite", "path": ":memory:", "busy_timeout_ms": 250, "pool_size": 2},
  "plugins": {
    "directories": ["/opt/crank/plugins", "./plugins"],
    "enabled": ["rest", "grpc", "websocket"],  // graphql stays off
  },
  "auth": {
    "mode": "api_key",
    "workspaces": [
      {"id": "team-a", "description": "Team A",
       "limits": {"max_concurrent_calls": 4, "max_sessions": 10, "max_jobs": 0}},
    ],
    "agents": [
      {"id": "bot-1", "workspace": "team-a", "api_key": {"env": "BOT1_KEY"},
       "limits": {"max_concurrent_calls": 2, "max_sessions": 3, "max_jobs": 5}},
      {"id": "bot-2", "api_key": {"sha256": "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"}},
    ],
  },
  "auth_profiles": {
    "github": {"type": "bearer", "token": {"env": "GITHUB_TOKEN"},
               "headers": {"X-GitHub-Api-Version": "2022-11-28", "Accept": "application/json"}},
    "legacy": {"type": "basic", "username": "svc", "password": {"env": "LEGACY_PASSWORD"}},
    "weather": {"type": "api_key", "in": "query", "name": "appid", "key": {"env": "WEATHER_KEY"}},
    "public": {"type": "none"},
  },
  "operations": [
    {
      "name": "get_issue",
      "title": "Get an issue",
      "description": "Reads one GitHub issue.",
      "protocol": "rest",
      "auth_profile": "github",
      "upstream": "github-api",
      "config": {"url": "https://api.github.com/repos/{owner}/{repo}/issues/{number}", "method": "GET"},
      "input_schema": {"type": "object", "required": ["owner"], "properties": {"owner": {"type": "string"}}},
      "execution": {"mode": "unary"},
    },
    {
      "name": "watch_prices",
      "description": "Streams price ticks.",
      "protocol": "websocket",
      "execution": {
        "mode": "session",
        "transport_behavior": "server_stream",
        "window_duration_ms": 2000,
        "poll_interval_ms": 250,
        "upstream_timeout_ms": 7000,
        "idle_timeout_ms": 60000,
        "max_session_lifetime_ms": 600000,
        "max_items": 500,
        "max_bytes": 131072,
        "aggregation_mode": "summary_plus_samples",
        "items_path": "$.data.ticks",
        "summary_path": "$.summary",
        "cursor_path": "$.next",
        "status_path": "$.state",
        "done_path": "$.finished",
        "truncate_item_fields": true,
        "max_field_length": 512,
        "redacted_paths": ["$.account", "$.owner.email"],
        "drop_duplicates": true,
        "sampling_rate": 0.25,
        "start_tool_name": "prices_open",
        "poll_tool_name": "prices_next",
        "stop_tool_name": "prices_close",
      },
    },
    {
      "name": "export",
      "description": "Exports a report.",
      "protocol": "rest",
      "auth_profile": "weather",
      "execution": {"mode": "async_job", "status_tool_name": "export_progress",
                    "result_tool_name": "export_fetch", "cancel_tool_name": "export_abort",},
    },
    {
      "name": "tail_logs",
      "description": "Collects log lines for a while.",
      "protocol": "grpc",
      "execution": {"mode": "window", "transport_behavior": "server_stream", "aggregation_mode": "stats"},
    },
  ],
})json";

}  // namespace crank::config::test
