#include "rest_adapter.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Poco/Net/SSLManager.h>
#include <rapidjson/document.h>

#include "fetched_response.h"
#include "rest_config.h"
#include "rest_job.h"
#include "sse_parser.h"
#include "text_util.h"
#include "url.h"

namespace crank::rest {
namespace {

constexpr std::size_t kErrorBodyRead = 4096;  // bytes of a non-2xx body read for the excerpt
constexpr std::size_t kErrorExcerpt = 512;    // bytes of it shown
constexpr std::size_t kRedirectDrain = std::size_t{64} * 1024;
constexpr std::int64_t kFallbackTotalMs = 30'000;  // when neither the host nor the config bounds it
constexpr std::size_t kStreamChunk = std::size_t{16} * 1024;
constexpr std::int64_t kMaxCancelMs = 5'000;  // a job's cancel request, best effort

/// The resolved auth profile (auth_json), ready to apply.
struct Auth {
    HeaderList credential_headers;  // Authorization or the API key header
    std::optional<std::pair<std::string, std::string>> query_key;
    HeaderList static_headers;
};

Auth parseAuth(std::string_view auth_json) {
    Auth auth;
    if (auth_json.empty()) {
        return auth;
    }
    rapidjson::Document parsed;
    parsed.Parse(auth_json.data(), auth_json.size());
    const rapidjson::Value& doc = parsed;
    if (parsed.HasParseError() || !doc.IsObject()) {
        // Never repeat the text: it holds secrets.
        throw sdk::Error(sdk::ErrorCode::internal,
                         "the host handed an auth profile that is not a JSON object");
    }
    const auto text = [&doc](const char* key) -> std::string {
        const auto it = doc.FindMember(key);
        return it != doc.MemberEnd() && it->value.IsString()
                   ? std::string(it->value.GetString(), it->value.GetStringLength())
                   : std::string();
    };
    const std::string type = text("type");
    if (type == "bearer") {
        auth.credential_headers.emplace_back("Authorization", "Bearer " + text("token"));
    } else if (type == "basic") {
        auth.credential_headers.emplace_back(
            "Authorization", "Basic " + base64(text("username") + ":" + text("password")));
    } else if (type == "api_key") {
        if (text("in") == "query") {
            auth.query_key.emplace(text("name"), text("key"));
        } else {
            auth.credential_headers.emplace_back(text("name"), text("key"));
        }
    } else if (type != "none" && !type.empty()) {
        throw sdk::Error(sdk::ErrorCode::unsupported, "the auth profile type \"" + validUtf8(type) +
                                                          "\" is not supported by the REST plugin");
    }
    const auto headers = doc.FindMember("headers");
    if (headers != doc.MemberEnd() && headers->value.IsObject()) {
        for (const auto& h : headers->value.GetObject()) {
            if (h.value.IsString()) {
                auth.static_headers.emplace_back(
                    std::string(h.name.GetString(), h.name.GetStringLength()),
                    std::string(h.value.GetString(), h.value.GetStringLength()));
            }
        }
    }
    return auth;
}

RestConfig requestConfig(const sdk::Request& request) {
    std::vector<ConfigProblem> problems;
    std::optional<RestConfig> config = parseRestConfig(request.request_json, true, problems);
    if (!config) {
        const ConfigProblem& p = problems.front();
        const std::string where = p.path.empty() ? "config" : "config." + p.path;
        throw sdk::Error(sdk::ErrorCode::invalid_argument,
                         where + " (after templates were rendered): " + p.message,
                         "{\"path\":" + sdk::jsonQuote(p.path) + "}");
    }
    return std::move(*config);
}

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return out;
}

/// The media type of a Content-Type value, lowercase, without parameters.
std::string mediaType(const std::string* contentType) {
    if (contentType == nullptr) {
        return {};
    }
    std::string type = lower(contentType->substr(0, contentType->find(';')));
    while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) {
        type.pop_back();
    }
    const std::size_t start = type.find_first_not_of(" \t");
    return start == std::string::npos ? std::string() : type.substr(start);
}

bool isRedirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/// One call's plan: what to send, where, and its bounds.
struct Plan {
    RestConfig config;
    Auth auth;
    Url first;                      // the URL of the first request, query included
    std::string credential_origin;  // the configured URL's origin: only it gets credentials
    std::string method;
    std::optional<std::string> body;
    ExchangeOptions options;
    Clock::time_point total_deadline;
    std::string total_name;  // what bounds the total ("timeouts.total_ms" / "upstream_timeout_ms")
    std::int64_t total_ms = 0;
};

Plan makePlan(const sdk::Request& request, bool stream) {
    Plan plan;
    plan.config = requestConfig(request);
    plan.auth = parseAuth(request.auth_json);
    const RestConfig& c = plan.config;
    plan.first = *c.url;
    plan.credential_origin = plan.first.origin();
    for (const auto& [name, value] : c.query) {
        appendQueryParameter(plan.first.query, name, value);
    }
    if (!c.cursor_param.empty() && !request.cursor.empty()) {
        appendQueryParameter(plan.first.query, c.cursor_param, request.cursor);
    }
    plan.method = c.method;
    plan.body = c.body;
    plan.options.tls = c.tls;
    plan.options.decompress = c.compression;
    plan.options.max_idle = c.max_idle;
    plan.options.idle_timeout = std::chrono::milliseconds(c.idle_timeout_ms);
    const auto now = Clock::now();
    if (stream) {
        plan.total_deadline = Clock::time_point::max();  // the window bounds a stream
    } else {
        std::int64_t total = std::numeric_limits<std::int64_t>::max();
        if (c.total_ms) {
            total = *c.total_ms;
            plan.total_name = "timeouts.total_ms";
        }
        if (request.timeout_ms > 0 && request.timeout_ms < total) {
            total = request.timeout_ms;
            plan.total_name = "upstream_timeout_ms";
        }
        if (plan.total_name.empty()) {
            total = kFallbackTotalMs;
            plan.total_name = "the plugin's default total timeout";
        }
        plan.total_ms = total;
        plan.total_deadline = now + std::chrono::milliseconds(total);
    }
    return plan;
}

HttpRequest buildRequest(const Plan& plan, const Url& url, const std::string& method,
                         const std::optional<std::string>& body, bool stream,
                         std::string_view last_event_id) {
    HttpRequest r;
    r.method = method;
    r.url = url;
    r.body = body;
    const bool sameOrigin = url.origin() == plan.credential_origin;
    bool accept = false;
    for (const auto& h : plan.auth.static_headers) {
        r.headers.push_back(h);
    }
    for (const auto& h : plan.config.headers) {
        accept = accept || lower(h.first) == "accept";
        r.headers.push_back(h);
    }
    if (sameOrigin) {
        for (const auto& h : plan.auth.credential_headers) {
            r.headers.push_back(h);
        }
        if (plan.auth.query_key) {
            appendQueryParameter(r.url.query, plan.auth.query_key->first,
                                 plan.auth.query_key->second);
        }
    }
    if (!accept) {
        r.headers.emplace_back("Accept",
                               stream ? "text/event-stream" : "application/json, */*;q=0.5");
    }
    if (stream) {
        r.headers.emplace_back("Cache-Control", "no-cache");
        if (!last_event_id.empty()) {
            r.headers.emplace_back("Last-Event-ID", std::string(last_event_id));
        }
    }
    if (body && !plan.config.has_content_type) {
        r.headers.emplace_back("Content-Type", "application/json");
    }
    return r;
}

/// Turns a transport failure into the plugin's error, naming the request and the bound.
sdk::Error describeFailure(const ExchangeFailure& f, const std::string& prefix, const Plan& plan,
                           const Url& url, Clock::time_point connectDeadline,
                           Clock::time_point headersDeadline) {
    const TransportError& e = f.error();
    using Kind = TransportError::Kind;
    const auto totalText = [&] {
        return std::to_string(plan.total_ms) + " ms (" + plan.total_name + ")";
    };
    switch (e.kind) {
        case Kind::refused:
        case Kind::dns:
        case Kind::tls:
            return {sdk::ErrorCode::unavailable, prefix + e.detail};
        case Kind::cancelled:
            return {sdk::ErrorCode::timeout, prefix + "cancelled"};
        case Kind::timeout:
            if (f.phase() == ExchangeFailure::Phase::connect) {
                return {sdk::ErrorCode::timeout, prefix + "no connection to " + url.authority() +
                                                     " within " +
                                                     (connectDeadline >= plan.total_deadline
                                                          ? totalText()
                                                          : std::to_string(plan.config.connect_ms) +
                                                                " ms (timeouts.connect_ms)")};
            }
            if (f.phase() == ExchangeFailure::Phase::headers) {
                return {sdk::ErrorCode::timeout, prefix + "no response headers within " +
                                                     (headersDeadline >= plan.total_deadline
                                                          ? totalText()
                                                          : std::to_string(plan.config.headers_ms) +
                                                                " ms (timeouts.headers_ms)")};
            }
            return {sdk::ErrorCode::timeout,
                    prefix + "the response was not complete within " + totalText()};
        case Kind::closed:
            return {f.phase() == ExchangeFailure::Phase::body ? sdk::ErrorCode::protocol
                                                              : sdk::ErrorCode::unavailable,
                    prefix + e.detail};
        case Kind::io:
            return {f.phase() == ExchangeFailure::Phase::connect ? sdk::ErrorCode::unavailable
                                                                 : sdk::ErrorCode::protocol,
                    prefix + e.detail};
    }
    return {sdk::ErrorCode::internal, prefix + e.detail};
}

/// Reads up to `max` body bytes, ignoring failures (for excerpts and redirect drains).
std::string readSome(HttpExchange& exchange, std::size_t max, Clock::time_point deadline,
                     const CancelCheck& cancel) {
    std::string out;
    char buffer[4096];
    try {
        while (out.size() < max) {
            const std::size_t n = exchange.readBody(
                buffer, std::min(sizeof buffer, max - out.size()), deadline, cancel);
            if (n == 0) {
                break;
            }
            out.append(buffer, n);
        }
    } catch (const ExchangeFailure&) {  // NOLINT(bugprone-empty-catch): best effort
    }
    return out;
}

/// The exchange in progress, reachable from another thread to interrupt it.
class ExchangeSlot {
public:
    void set(HttpExchange* exchange) {
        const std::lock_guard<std::mutex> lock(mutex_);
        exchange_ = exchange;
        if (exchange_ != nullptr && interrupted_) {
            exchange_->interrupt();
        }
    }
    void interrupt() {
        const std::lock_guard<std::mutex> lock(mutex_);
        interrupted_ = true;
        if (exchange_ != nullptr) {
            exchange_->interrupt();
        }
    }

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

/// One hop of send(): the request sent and the head read. True for the final response; false
/// after a redirect, with `url`, `method` and `body` set for the next hop.
bool step(HttpExchange& exchange, const Plan& plan, Url& url, std::string& method,
          std::optional<std::string>& body, bool stream, std::string_view last_event_id,
          const CancelCheck& cancel, const std::string& prefix, Clock::time_point connectDeadline,
          Clock::time_point headersDeadline, int hop) {
    const HttpRequest request = buildRequest(plan, url, method, body, stream, last_event_id);
    const ResponseHead* head = nullptr;
    try {
        head = &exchange.start(
            request, ExchangeDeadlines{connectDeadline, headersDeadline, plan.total_deadline},
            cancel);
    } catch (const ExchangeFailure& f) {
        throw describeFailure(f, prefix, plan, url, connectDeadline, headersDeadline);
    }
    const std::string* location = head->header("location");
    if (!isRedirect(head->status) || location == nullptr) {
        return true;
    }
    const int status = head->status;
    if (hop >= plan.config.follow_redirects) {
        throw sdk::Error(
            sdk::ErrorCode::upstream,
            prefix + (plan.config.follow_redirects == 0
                          ? "answered " + std::to_string(status) +
                                " (a redirect) and follow_redirects is 0"
                          : "more than " + std::to_string(plan.config.follow_redirects) +
                                " redirects (follow_redirects)"),
            "{\"http_status\":" + std::to_string(status) + "}");
    }
    std::string error;
    std::optional<Url> next = resolveUrl(url, *location, error);
    if (!next) {
        throw sdk::Error(sdk::ErrorCode::protocol,
                         prefix + "answered " + std::to_string(status) +
                             " with a Location that is not a usable URL: " + error);
    }
    if (url.tls() && !next->tls()) {
        throw sdk::Error(sdk::ErrorCode::upstream, prefix + "redirects from https to http (" +
                                                       next->describe() +
                                                       "), which the REST plugin refuses");
    }
    readSome(exchange, kRedirectDrain, std::min(headersDeadline, plan.total_deadline), cancel);
    exchange.finish();
    if (status == 303 || ((status == 301 || status == 302) && method == "POST")) {
        if (method != "HEAD") {
            method = "GET";
        }
        body.reset();
    }
    url = std::move(*next);
    return false;
}

/// Sends the plan's request, following redirects, and returns the exchange of the final
/// response (its head read). `prefix` receives "METHOD url: " of the last request.
std::unique_ptr<HttpExchange> send(ConnectionPool& pool, const Plan& plan, bool stream,
                                   std::string_view last_event_id, const CancelCheck& cancel,
                                   ExchangeSlot* slot, std::string& prefix) {
    Url url = plan.first;
    std::string method = plan.method;
    std::optional<std::string> body = plan.body;
    for (int hop = 0;; ++hop) {
        prefix = method + " " + url.describe() + ": ";
        const auto now = Clock::now();
        const Clock::time_point connectDeadline =
            std::min(plan.total_deadline - now > std::chrono::milliseconds(plan.config.connect_ms)
                         ? now + std::chrono::milliseconds(plan.config.connect_ms)
                         : plan.total_deadline,
                     plan.total_deadline);
        const Clock::time_point headersDeadline =
            plan.total_deadline - now > std::chrono::milliseconds(plan.config.headers_ms)
                ? now + std::chrono::milliseconds(plan.config.headers_ms)
                : plan.total_deadline;
        auto exchange = std::make_unique<HttpExchange>(pool, plan.options);
        if (slot != nullptr) {
            slot->set(exchange.get());
        }
        try {
            if (step(*exchange, plan, url, method, body, stream, last_event_id, cancel, prefix,
                     connectDeadline, headersDeadline, hop)) {
                return exchange;
            }
        } catch (...) {
            if (slot != nullptr) {
                slot->set(nullptr);  // before the exchange goes
            }
            throw;
        }
        if (slot != nullptr) {
            slot->set(nullptr);
        }
    }
}

/// A non-2xx answer as the plugin's error: the status and a bounded excerpt of the body.
[[noreturn]] void failStatus(HttpExchange& exchange, const ResponseHead& head,
                             const std::string& prefix, Clock::time_point deadline,
                             const CancelCheck& cancel) {
    const std::string body = readSome(exchange, kErrorBodyRead, deadline, cancel);
    std::string message = prefix + "answered " + std::to_string(head.status);
    if (!head.reason.empty()) {
        message.append(" ").append(excerpt(head.reason, 64));
    }
    if (!body.empty()) {
        message.append(": ").append(excerpt(body, kErrorExcerpt));
    }
    throw sdk::Error(sdk::ErrorCode::upstream, message,
                     "{\"http_status\":" + std::to_string(head.status) + "}");
}

/// Sends the plan's request and reads its 2xx response whole, bounded by max_response_bytes.
FetchedResponse fetch(ConnectionPool& pool, const Plan& plan, const CancelCheck& cancel) {
    FetchedResponse out;
    std::unique_ptr<HttpExchange> exchange =
        send(pool, plan, false, {}, cancel, nullptr, out.prefix);
    const ResponseHead& head = exchange->head();
    if (head.status < 200 || head.status > 299) {
        failStatus(*exchange, head, out.prefix, plan.total_deadline, cancel);
    }
    out.type = mediaType(head.header("content-type"));
    char buffer[kStreamChunk];
    try {
        for (;;) {
            const std::size_t n =
                exchange->readBody(buffer, sizeof buffer, plan.total_deadline, cancel);
            if (n == 0) {
                break;
            }
            if (out.body.size() + n > plan.config.max_response_bytes) {
                throw sdk::Error(sdk::ErrorCode::resource_exhausted,
                                 out.prefix +
                                     "the response body is larger than max_response_bytes (" +
                                     std::to_string(plan.config.max_response_bytes) + ")");
            }
            out.body.append(buffer, n);
        }
    } catch (const ExchangeFailure& f) {
        throw describeFailure(f, out.prefix, plan, plan.first, plan.total_deadline,
                              plan.total_deadline);
    }
    exchange->finish();
    return out;
}

/// A job's exchanges: the call's plan aimed at each URL in turn. Every exchange is bounded by
/// timeouts.total_ms (or the plugin's default) and by the job's own bound, whichever comes first.
class PlanTransport final : public JobTransport {
public:
    PlanTransport(ConnectionPool& pool, const Plan& plan, const sdk::Call& call)
        : pool_(pool),
          plan_(plan),
          start_(plan.first),
          start_method_(plan.method),
          start_body_(plan.body),
          cancel_([call] { return call.isCancelled(); }) {}

    FetchedResponse start(const JobBound& bound) override {
        aim(start_, start_method_, start_body_, bound);
        return fetch(pool_, plan_, cancel_);
    }

    FetchedResponse get(const Url& url, const JobBound& bound) override {
        aim(url, "GET", std::nullopt, bound);
        return fetch(pool_, plan_, cancel_);
    }

    std::string cancel(const std::string& method, const Url& url) override {
        const std::int64_t ms =
            std::min(plan_.config.connect_ms + plan_.config.headers_ms, kMaxCancelMs);
        JobBound bound;
        bound.ms = ms;
        bound.name = "the cancel request's bound";
        bound.deadline = Clock::now() + std::chrono::milliseconds(ms);
        aim(url, method, std::nullopt, bound);
        try {
            fetch(pool_, plan_, [] { return false; });
            return {};
        } catch (const std::exception& e) {
            return e.what();
        }
    }

private:
    void aim(const Url& url, const std::string& method, const std::optional<std::string>& body,
             const JobBound& bound) {
        plan_.first = url;
        plan_.method = method;
        plan_.body = body;
        const RestConfig& c = plan_.config;
        const std::int64_t own = c.total_ms.value_or(kFallbackTotalMs);
        const auto now = Clock::now();
        if (now + std::chrono::milliseconds(own) < bound.deadline) {
            plan_.total_ms = own;
            plan_.total_name =
                c.total_ms ? "timeouts.total_ms" : "the plugin's default total timeout";
            plan_.total_deadline = now + std::chrono::milliseconds(own);
        } else {
            plan_.total_ms = bound.ms;
            plan_.total_name = bound.name;
            plan_.total_deadline = bound.deadline;
        }
    }

    ConnectionPool& pool_;
    Plan plan_;
    Url start_;
    std::string start_method_;
    std::optional<std::string> start_body_;
    CancelCheck cancel_;
};

/// An SSE stream: one GET (or the configured method) read event by event on its own thread.
class SseStream : public sdk::ThreadedStream {
public:
    SseStream(ConnectionPool& pool, Plan plan, std::string cursor, std::int64_t max_item_bytes)
        : pool_(pool), plan_(std::move(plan)), cursor_(std::move(cursor)) {
        const SseOptions& o = plan_.config.sse;
        limits_.max_event_bytes =
            o.max_event_bytes.value_or(max_item_bytes > 0 ? static_cast<std::size_t>(max_item_bytes)
                                                          : RestDefaults::max_event_bytes);
        limits_.max_line_bytes = o.max_line_bytes.value_or(limits_.max_event_bytes + 64);
    }
    SseStream(const SseStream&) = delete;
    SseStream& operator=(const SseStream&) = delete;
    SseStream(SseStream&&) = delete;
    SseStream& operator=(SseStream&&) = delete;
    ~SseStream() override { stop(); }

protected:
    void run(sdk::StreamContext& ctx) override {
        const CancelCheck cancel = [&ctx] { return ctx.cancelled(); };
        std::string prefix;
        std::unique_ptr<HttpExchange> exchange;
        const SlotGuard guard(
            slot_);  // destroyed first: the slot forgets the exchange before it goes
        exchange = send(pool_, plan_, true, cursor_, cancel, &slot_, prefix);

        const ResponseHead& head = exchange->head();
        if (head.status < 200 || head.status > 299) {
            failStatus(*exchange, head, prefix, Clock::now() + std::chrono::seconds(5), cancel);
        }
        const std::string type = mediaType(head.header("content-type"));
        if (type != "text/event-stream") {
            throw sdk::Error(sdk::ErrorCode::protocol, prefix + "the response type \"" +
                                                           excerpt(type, 128) +
                                                           "\" is not text/event-stream");
        }
        SseParser parser(limits_);
        std::vector<SseEvent> events;
        std::string item;
        std::vector<char> buffer(kStreamChunk);
        for (;;) {
            std::size_t n = 0;
            try {
                n = exchange->readBody(buffer.data(), buffer.size(), Clock::time_point::max(),
                                       cancel);
            } catch (const ExchangeFailure& f) {
                if (ctx.cancelled()) {
                    return;
                }
                throw describeFailure(f, prefix, plan_, plan_.first, Clock::time_point::max(),
                                      Clock::time_point::max());
            }
            if (n == 0) {
                break;
            }
            events.clear();
            const bool ok = parser.feed(std::string_view(buffer.data(), n), events);
            parserError_ = parser.error();
            for (const SseEvent& event : events) {
                if (!wanted(event)) {
                    continue;
                }
                makeItem(event, item);
                if (!ctx.emit(item)) {
                    return;  // a limit of the window: the connection closes with the exchange
                }
                if (!event.id.empty()) {
                    ctx.call().setCursor(event.id);
                }
            }
            if (!ok) {
                throw sdk::Error(sdk::ErrorCode::resource_exhausted, prefix + limitMessage());
            }
        }
        parser.finish();
        exchange->finish();
    }

    /// Why the parser stopped, in the config's terms. A line longer than the default line bound
    /// (the event bound plus room for the field name) cannot fit in an event either.
    std::string limitMessage() const {
        if (plan_.config.sse.max_line_bytes && parserError_.rfind("a line", 0) == 0) {
            return "a line is longer than sse.max_line_bytes (" +
                   std::to_string(limits_.max_line_bytes) + ")";
        }
        return "an event is larger than sse.max_event_bytes (" +
               std::to_string(limits_.max_event_bytes) + ")";
    }

    bool wanted(const SseEvent& event) const {
        const std::vector<std::string>& events = plan_.config.sse.events;
        return events.empty() ||
               std::find(events.begin(), events.end(), event.type) != events.end();
    }

    void makeItem(const SseEvent& event, std::string& item) const {
        item.clear();
        const SseOptions& o = plan_.config.sse;
        if (!o.envelope) {
            if (o.text) {
                sdk::appendJsonString(item, validUtf8(event.data));
            } else {
                item = event.data;  // not JSON: the host counts and drops it
            }
            return;
        }
        item.append("{\"event\":");
        sdk::appendJsonString(item, validUtf8(event.type));
        item.append(",\"id\":");
        sdk::appendJsonString(item, validUtf8(event.id));
        item.append(",\"data\":");
        if (!o.text && isValidJson(event.data)) {
            item.append(event.data);
        } else {
            sdk::appendJsonString(item, validUtf8(event.data));
        }
        item.push_back('}');
    }

    void onCancel() override { slot_.interrupt(); }

private:
    ConnectionPool& pool_;
    Plan plan_;
    std::string cursor_;
    SseLimits limits_;
    std::string parserError_;
    ExchangeSlot slot_;
};

}  // namespace

RestAdapter::RestAdapter() {
    Poco::Net::initializeSSL();
}

RestAdapter::~RestAdapter() {
    Poco::Net::uninitializeSSL();
}

void RestAdapter::validate(std::string_view config_json, sdk::Diagnostics& diagnostics) {
    std::vector<ConfigProblem> problems;
    parseRestConfig(config_json, false, problems);
    for (const ConfigProblem& p : problems) {
        diagnostics.error(p.path, p.message);
    }
}

void RestAdapter::unaryCall(sdk::Call& call, const sdk::Request& request) {
    const Plan plan = makePlan(request, false);
    if (plan.config.job) {
        PlanTransport transport(pool_, plan, call);
        runJob(call, plan.config, plan.first, request.cursor, request.timeout_ms, transport);
        return;
    }
    const CancelCheck cancel = [&call] { return call.isCancelled(); };
    call.emit(responseItem(fetch(pool_, plan, cancel), plan.config.accept));
}

std::unique_ptr<sdk::Stream> RestAdapter::openStream(sdk::Call& /*call*/,
                                                     const sdk::Request& request) {
    Plan plan = makePlan(request, true);
    if (plan.config.job) {
        throw sdk::Error(sdk::ErrorCode::invalid_argument,
                         "config.job: a job runs over a request_response transport (mode "
                         "\"async_job\"); this operation opens a server_stream",
                         "{\"path\":\"job\"}");
    }
    return std::make_unique<SseStream>(pool_, std::move(plan), std::string(request.cursor),
                                       request.max_item_bytes);
}

sdk::AdapterInfo restAdapterInfo() {
    sdk::AdapterInfo info;
    info.name = "rest";
    info.version = "1.0.0";
    info.description =
        "HTTP/1.1 upstreams: JSON calls, long-poll, server-sent event streams, long jobs";
    info.capabilities = CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM;
    info.modes = CRANK_MODE_UNARY | CRANK_MODE_WINDOW | CRANK_MODE_SESSION | CRANK_MODE_ASYNC_JOB;
    info.config_schema_json = std::string(restConfigSchema());
    return info;
}

void registerRestPlugin(sdk::Registrar& registrar) {
    registrar.addAdapter(restAdapterInfo(), std::make_unique<RestAdapter>());
}

}  // namespace crank::rest
