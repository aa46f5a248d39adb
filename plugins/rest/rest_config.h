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

#include "http.h"
#include <crank/sdk/http/settings.hpp>
#include <crank/sdk/path.hpp>

namespace crank::rest {

struct SseOptions {
    std::vector<std::string> events;  ///< event types kept; empty: all
    bool text = false;                ///< data becomes a JSON string (sse.data "text")
    bool envelope = false;            ///< items are {"event", "id", "data"}
    std::optional<std::size_t> max_event_bytes;
    std::optional<std::size_t> max_line_bytes;
};

/// A path into a JSON response (crank/sdk/path.hpp syntax, no wildcard) with its text as written,
/// which names it in messages.
struct JobPath {
    std::string text;
    sdk::Path path;
    bool set() const { return !text.empty(); }
};

/// The `job` member: the unary call runs a long REST job (README.md, "Async jobs"): the configured
/// request starts it, status GETs follow it, the result is fetched or read from the last status.
struct JobOptions {
    JobPath status_url_path;  ///< the status URL in the start response
    std::string status_url;   ///< or a URL template with "{id}"
    JobPath id_path;          ///< the job id in the start response (default $.id)
    std::int64_t poll_interval_ms = 1'000;
    JobPath state_path;  ///< the state in a status response (default $.status)
    std::vector<std::string> done_values{"done", "succeeded", "completed"};
    std::vector<std::string> failed_values{"failed", "error", "cancelled"};
    JobPath progress_path;        ///< a number in a status response
    JobPath total_path;           ///< a number in a status response
    JobPath message_path;         ///< a string in a status response
    JobPath error_path;           ///< why a failed job failed, in the final status response
    JobPath result_url_path;      ///< the result URL in the final status response
    std::string result_url;       ///< or a URL template with "{id}"
    JobPath result_path;          ///< without a result URL: the result in the final status response
    std::string cancel_method;    ///< "": no cancel request
    std::string cancel_url;       ///< a URL template with "{id}"; "": the status URL
    std::uint64_t max_polls = 0;  ///< 0: bounded by the call's timeout only

    /// True when a template needs the job id.
    bool needsId() const;
};

/// Documented defaults (README.md; the HTTP settings' are sdk::http::HttpSettings').
struct RestDefaults {
    static constexpr std::size_t max_event_bytes = std::size_t{1024} * 1024;
    static constexpr std::int64_t job_poll_interval_ms = 1'000;
    static constexpr std::int64_t job_min_poll_interval_ms = 10;
    static constexpr std::int64_t job_max_poll_interval_ms = 3'600'000;
};

struct RestConfig {
    std::string method = "GET";
    std::string url_text;    ///< as given (may hold templates before rendering)
    std::optional<Url> url;  ///< parsed when the text has no template left
    std::vector<std::pair<std::string, std::string>> query;
    std::optional<std::string> body;  ///< compact JSON text
    /// headers, timeouts, tls, max_response_bytes, follow_redirects, compression, keep_alive
    sdk::http::HttpSettings http;
    std::vector<std::string> accept{"application/json", "application/*+json", "text/*"};
    std::string cursor_param;
    SseOptions sse;
    std::optional<JobOptions> job;
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

/// `url_template` with every "{id}" replaced by `id` (percent-encoded as a URL component).
std::string expandJobTemplate(std::string_view url_template, std::string_view id);

/// The JSON Schema of the config that the plugin declares to the host.
std::string_view restConfigSchema();

/// True when the media type `type` ("application/json", lowercase, no parameters) matches one of
/// `ranges` ("type/subtype", "type/*", "*/*", "application/*+json").
bool mediaTypeAccepted(std::string_view type, const std::vector<std::string>& ranges);

/// True for JSON media types: application/json and any "+json" suffix.
bool isJsonMediaType(std::string_view type);

}  // namespace crank::rest
