#pragma once

// One call's HTTP request as a protocol plugin sends it: the host's auth profile applied
// (credentials only to the configured origin), redirects followed, every phase bounded (connect,
// response head, total), failures turned into sdk::Error with messages that name the request and
// the bound that ran out, a response body read whole up to a byte limit. The REST and GraphQL
// plugins share it; a third party's HTTP-based plugin can too (library crank::sdk_http).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <crank/sdk/error.hpp>
#include <crank/sdk/http/connection.hpp>
#include <crank/sdk/http/exchange.hpp>
#include <crank/sdk/http/url.hpp>

namespace crank::sdk::http {

/// The auth profile the host hands a call (Request::auth_json), ready to apply.
struct AuthProfile {
    HeaderList credential_headers;  ///< Authorization or the API key header
    std::optional<std::pair<std::string, std::string>> query_key;  ///< api_key in: query
    HeaderList static_headers;                                     ///< the profile's `headers`
};

/// Parses the host's auth profile JSON ("" = none). Throws sdk::Error: internal for malformed
/// JSON (the text is never repeated: it holds secrets), unsupported for a type the client does
/// not know. `plugin` names the plugin in that message ("the REST plugin").
AuthProfile parseAuthProfile(std::string_view auth_json, std::string_view plugin);

/// Everything one call sends, and its bounds.
struct RequestPlan {
    std::string method = "GET";
    Url url;  ///< the first request's URL, its query included
    std::optional<std::string> body;
    bool replayable = false;  ///< HttpRequest::replayable of every hop
    HeaderList headers;       ///< the operation's own headers
    /// Sent as Accept when `headers` have none.
    std::string accept = "application/json, */*;q=0.5";
    /// Sent as Content-Type with a body when `headers` have none.
    std::string content_type = "application/json";
    HeaderList extra_headers;  ///< added to every request after the rest (Last-Event-ID...)
    AuthProfile auth;
    std::string credential_origin;  ///< only requests to this origin carry the credentials
    ExchangeOptions options;
    std::int64_t connect_ms = 5'000;   ///< per hop
    std::int64_t headers_ms = 10'000;  ///< per hop, from the request's start to the end of the head
    int follow_redirects = 5;
    /// Origins (Url::origin() text) a redirect may lead to besides the configured one
    /// (credential_origin); see redirect_policy.hpp for the rule.
    std::vector<std::string> redirect_origins;
    std::size_t max_response_bytes = std::size_t{1024} * 1024;
    /// The bound of the whole exchange (redirects and body included), with its value and the
    /// name of the setting it comes from, for messages ("timeouts.total_ms").
    Clock::time_point total_deadline = Clock::time_point::max();
    std::int64_t total_ms = 0;
    std::string total_name;
    /// True when the call was cancelled because the host's own deadline passed (the call's
    /// timeout_ms, the operation's upstream_timeout_ms): the failure is then that timeout, named
    /// with host_timeout_ms, not a cancel. Unset: every cancel is a cancel.
    std::function<bool()> host_deadline_passed;
    std::int64_t host_timeout_ms = 0;
    std::string plugin = "crank";  ///< names the refusing plugin in messages ("the REST plugin")
    /// Where the connect and headers bounds are documented, for messages.
    std::string connect_name = "timeouts.connect_ms";
    std::string headers_name = "timeouts.headers_ms";

    /// Sets the total bound to `ms` from now, named `name`.
    void setTotal(std::int64_t ms, std::string name);
    /// Bounds the whole exchange by the smaller of `own_total_ms` (the config's
    /// timeouts.total_ms, if set) and the host's `timeout_ms` (0: none; named
    /// upstream_timeout_ms), else by `fallback_ms` (named "the plugin's default total timeout").
    void setCallTotal(std::optional<std::int64_t> own_total_ms, std::int64_t timeout_ms,
                      std::int64_t fallback_ms);
};

/// A response read whole.
struct FetchedResponse {
    std::string prefix;  ///< "METHOD scheme://host:port/path: " of the request that answered
    int status = 0;
    std::string type;  ///< the media type, lowercase, without parameters; "" when none was sent
    std::string body;
};

/// The media type of a Content-Type value, lowercase, without parameters ("" for nullptr).
std::string mediaType(const std::string* content_type);

/// The exchange in progress, reachable from another thread to interrupt it (a stream's
/// cancel).
class ExchangeSlot {
public:
    void set(HttpExchange* exchange);
    void interrupt();

private:
    std::mutex mutex_;
    HttpExchange* exchange_ = nullptr;
    bool interrupted_ = false;
};

/// Clears an ExchangeSlot when the exchange it points to is about to go.
class SlotGuard {
public:
    explicit SlotGuard(ExchangeSlot& slot) : slot_(slot) {}
    SlotGuard(const SlotGuard&) = delete;
    SlotGuard& operator=(const SlotGuard&) = delete;
    SlotGuard(SlotGuard&&) = delete;
    SlotGuard& operator=(SlotGuard&&) = delete;
    ~SlotGuard() { slot_.set(nullptr); }

private:
    ExchangeSlot& slot_;
};

/// Turns a transport failure of the exchange with `url` into the call's error, naming the
/// request and the bound that ran out.
Error describeFailure(const ExchangeFailure& failure, const std::string& prefix,
                      const RequestPlan& plan, const Url& url, Clock::time_point connect_deadline,
                      Clock::time_point headers_deadline);

/// Sends the plan's request, following redirects (303, and 301/302 after a POST, become GET
/// without a body; https to http is refused; another origin only as redirect_policy.hpp says:
/// listed in redirect_origins, and never into a local address range the configured URL is not
/// in), and returns the exchange of the final response with
/// its head read. `prefix` receives "METHOD url: " of the last request. `slot` (may be nullptr)
/// always holds the exchange in progress. Throws sdk::Error.
std::unique_ptr<HttpExchange> send(ConnectionPool& pool, const RequestPlan& plan,
                                   const CancelCheck& cancel, ExchangeSlot* slot,
                                   std::string& prefix);

/// Reads up to `max` body bytes, ignoring failures (for excerpts and redirect drains).
std::string readSome(HttpExchange& exchange, std::size_t max, Clock::time_point deadline,
                     const CancelCheck& cancel);

/// A non-2xx answer as the call's error (upstream, details {"http_status": N}): the status and a
/// bounded excerpt of the body.
[[noreturn]] void failStatus(HttpExchange& exchange, const ResponseHead& head,
                             const std::string& prefix, Clock::time_point deadline,
                             const CancelCheck& cancel);

/// Reads the rest of the body of `exchange` whole, bounded by the plan's max_response_bytes and
/// total deadline, and ends the exchange.
void readBody(HttpExchange& exchange, const RequestPlan& plan, const CancelCheck& cancel,
              FetchedResponse& out);

/// Sends the plan's request and reads its 2xx response whole; any other status fails as
/// failStatus() says.
FetchedResponse fetch(ConnectionPool& pool, const RequestPlan& plan, const CancelCheck& cancel);

}  // namespace crank::sdk::http
