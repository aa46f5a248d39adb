#pragma once

// The REST plugin's long jobs (README.md, "Async jobs"): the configured request starts a job,
// status GETs follow it until a done or failed state, then the result is fetched (or read from
// the last status). The job's cursor lets a later call follow the same job without starting it
// again (a crankd restart); a cancelled call sends the configured cancel request.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fetched_response.h"
#include "http.h"
#include "rest_config.h"
#include <crank/sdk/call.hpp>

namespace crank::rest {

/// What bounds a whole job, for the exchanges and the messages.
struct JobBound {
    Clock::time_point deadline;
    std::int64_t ms = 0;
    std::string name;  ///< "upstream_timeout_ms" (the call's), or the plugin's own bound
};

/// The HTTP side of a job, done by the adapter with the call's config: auth profile (credentials
/// only to the request URL's origin), headers, redirects, timeouts, TLS, max_response_bytes.
/// start() and get() return a 2xx response or throw sdk::Error; an exchange in progress stops
/// when the call is cancelled.
class JobTransport {
public:
    JobTransport() = default;
    JobTransport(const JobTransport&) = delete;
    JobTransport& operator=(const JobTransport&) = delete;
    JobTransport(JobTransport&&) = delete;
    JobTransport& operator=(JobTransport&&) = delete;
    virtual ~JobTransport() = default;

    /// Sends the configured request: the job's start.
    virtual FetchedResponse start(const JobBound& bound) = 0;
    /// GET `url` (a status or result URL).
    virtual FetchedResponse get(const Url& url, const JobBound& bound) = 0;
    /// Sends `method` to `url` once, without a body, bounded by
    /// min(timeouts.connect_ms + timeouts.headers_ms, 5 s), whether the call is cancelled or not.
    /// Never throws: "" when it was answered 2xx, otherwise what went wrong.
    virtual std::string cancel(const std::string& method, const Url& url) = 0;
};

/// What follows a started job: the cursor's content.
struct JobCursor {
    Url status_url;
    std::string id;                 ///< "" when the start response had none
    std::optional<Url> result_url;  ///< job.result_url resolved
    std::optional<Url> cancel_url;  ///< job.cancel_url resolved
};

/// Documented bounds of the job logic (README.md).
struct JobLimits {
    static constexpr std::size_t max_cursor_bytes = std::size_t{16} * 1024;
    static constexpr std::size_t max_id_bytes = 1024;
    static constexpr std::size_t max_url_bytes = std::size_t{8} * 1024;
    static constexpr std::int64_t default_bound_ms = 24LL * 3'600'000;  ///< no upstream_timeout_ms
    static constexpr std::int64_t sleep_slice_ms = 100;  ///< cancel is checked this often
    static constexpr std::size_t max_write_depth = 512;  ///< result_path, error_path values
};

/// The cursor as the plugin hands it to set_cursor():
/// {"v":1,"status_url":"...","id":"...","result_url":"...","cancel_url":"..."} (id, result_url
/// and cancel_url only when known).
std::string formatJobCursor(const JobCursor& cursor);

/// Parses a cursor made by formatJobCursor(); nullopt with `error` naming the problem.
std::optional<JobCursor> parseJobCursor(std::string_view text, std::string& error);

/// Runs the job of `config` (config.job is set) for one unary call: starts it with `transport`
/// (or, with a non-empty `cursor`, follows the job the cursor names without starting one), sets
/// the cursor, polls, reports progress, emits the result as the call's one item. Throws
/// sdk::Error on failure, cancel and timeout. `timeout_ms` (0: none) bounds the whole job.
void runJob(sdk::Call& call, const RestConfig& config, const Url& start_url,
            std::string_view cursor, std::int64_t timeout_ms, JobTransport& transport);

}  // namespace crank::rest
