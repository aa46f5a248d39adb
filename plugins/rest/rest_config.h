#pragma once

// The REST plugin's operation config (README.md, "Operation config"): parsed and checked once at
// config load (with templates still in it) and again per call (rendered over the tool input).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "http_client.h"
#include "url.h"

namespace crank::rest {

struct SseOptions {
    std::vector<std::string> events;  ///< event types kept; empty: all
    bool text = false;                ///< data becomes a JSON string (sse.data "text")
    bool envelope = false;            ///< items are {"event", "id", "data"}
    std::optional<std::size_t> max_event_bytes;
    std::optional<std::size_t> max_line_bytes;
};

/// Documented defaults (README.md).
struct RestDefaults {
    static constexpr std::int64_t connect_ms = 5'000;
    static constexpr std::int64_t headers_ms = 10'000;
    static constexpr std::size_t max_response_bytes = std::size_t{1024} * 1024;
    static constexpr int follow_redirects = 5;
    static constexpr std::size_t max_idle = 16;
    static constexpr std::int64_t idle_timeout_ms = 30'000;
    static constexpr std::size_t max_event_bytes = std::size_t{1024} * 1024;
};

struct RestConfig {
    std::string method = "GET";
    std::string url_text;    ///< as given (may hold templates before rendering)
    std::optional<Url> url;  ///< parsed when the text has no template left
    std::vector<std::pair<std::string, std::string>> query;
    HeaderList headers;
    std::optional<std::string> body;  ///< compact JSON text
    bool has_content_type = false;    ///< headers set Content-Type
    std::int64_t connect_ms = RestDefaults::connect_ms;
    std::int64_t headers_ms = RestDefaults::headers_ms;
    std::optional<std::int64_t> total_ms;
    TlsOptions tls;
    std::size_t max_response_bytes = RestDefaults::max_response_bytes;
    std::vector<std::string> accept{"application/json", "application/*+json", "text/*"};
    int follow_redirects = RestDefaults::follow_redirects;
    bool compression = true;
    std::string cursor_param;
    std::size_t max_idle = RestDefaults::max_idle;
    std::int64_t idle_timeout_ms = RestDefaults::idle_timeout_ms;
    SseOptions sse;
};

struct ConfigProblem {
    std::string path;  ///< the member at fault ("timeouts.connect_ms"), "" for the whole config
    std::string message;
};

/// Parses `json`. `rendered`: the templates have been rendered (a call), so the URL must parse
/// whole; otherwise (config load) strings holding "{{" are only checked where that makes sense.
/// All problems are appended to `problems`; nullopt when there is any.
std::optional<RestConfig> parseRestConfig(std::string_view json, bool rendered,
                                          std::vector<ConfigProblem>& problems);

/// The JSON Schema of the config that the plugin declares to the host.
std::string_view restConfigSchema();

/// True when the media type `type` ("application/json", lowercase, no parameters) matches one of
/// `ranges` ("type/subtype", "type/*", "*/*", "application/*+json").
bool mediaTypeAccepted(std::string_view type, const std::vector<std::string>& ranges);

/// True for JSON media types: application/json and any "+json" suffix.
bool isJsonMediaType(std::string_view type);

}  // namespace crank::rest
