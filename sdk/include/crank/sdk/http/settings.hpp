#pragma once

// The HTTP settings every HTTP-based plugin's operation config shares, read and checked one way:
// `headers`, `timeouts` (connect_ms, headers_ms, total_ms), `tls` (verify, ca_file),
// `max_response_bytes`, `follow_redirects`, `redirect_origins`, `compression`, `keep_alive`
// (max_idle, idle_timeout_ms). Documented defaults (plugins/rest/README.md,
// plugins/graphql/README.md).

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <rapidjson/document.h>

#include <crank/sdk/http/client.hpp>
#include <crank/sdk/http/exchange.hpp>

namespace crank::sdk::http {

struct HttpSettings {
    HeaderList headers;
    bool has_content_type = false;  ///< headers set Content-Type
    std::int64_t connect_ms = 5'000;
    std::int64_t headers_ms = 10'000;
    std::optional<std::int64_t> total_ms;
    TlsOptions tls;
    std::size_t max_response_bytes = std::size_t{1024} * 1024;
    int follow_redirects = 5;
    /// Origins a redirect may lead to besides the configured URL's (redirect_policy.hpp).
    std::vector<std::string> redirect_origins;
    bool compression = true;
    std::size_t max_idle = 16;
    std::int64_t idle_timeout_ms = 30'000;
};

/// The config members readHttpSettings() reads.
inline constexpr std::array<std::string_view, 8> kHttpSettingMembers = {
    "headers",          "timeouts",         "tls",         "max_response_bytes",
    "follow_redirects", "redirect_origins", "compression", "keep_alive"};

struct SettingProblem {
    std::string path;  ///< the member at fault ("timeouts.connect_ms")
    std::string message;
};

/// Reads the HTTP settings of `config` (a plugin's operation config, parsed: a JSON object; other
/// members are the caller's) into `out`, appending every problem to `problems`. `plugin` names the
/// plugin in messages ("the REST plugin sets this header itself", "unknown member of the REST
/// config").
void readHttpSettings(const rapidjson::Value& config, std::string_view plugin, HttpSettings& out,
                      std::vector<SettingProblem>& problems);

/// Copies `settings` into `plan` (headers, timeouts but the total, TLS, limits, keep-alive).
void applySettings(const HttpSettings& settings, RequestPlan& plan);

}  // namespace crank::sdk::http
