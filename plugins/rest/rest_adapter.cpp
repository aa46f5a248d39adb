#include "rest_adapter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <Poco/Net/SSLManager.h>

#include "fetched_response.h"
#include "rest_config.h"
#include "rest_job.h"
#include "text_util.h"
#include <crank/sdk/http/client.hpp>
#include <crank/sdk/http/sse.hpp>

namespace crank::rest {
namespace {

using sdk::http::SseEvent;
using sdk::http::SseLimits;
using sdk::http::SseParser;

constexpr std::int64_t kFallbackTotalMs = 30'000;  // when neither the host nor the config bounds it
constexpr std::size_t kStreamChunk = std::size_t{16} * 1024;
constexpr std::int64_t kMaxCancelMs = 5'000;  // a job's cancel request, best effort

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

/// One call's plan: the config it was rendered from and what the HTTP client sends.
struct Plan {
    RestConfig config;
    sdk::http::RequestPlan http;
};

Plan makePlan(const sdk::Request& request, bool stream) {
    Plan plan;
    plan.config = requestConfig(request);
    const RestConfig& c = plan.config;
    sdk::http::RequestPlan& h = plan.http;
    h.plugin = "the REST plugin";
    h.auth = sdk::http::parseAuthProfile(request.auth_json, h.plugin);
    h.url = *c.url;
    h.credential_origin = h.url.origin();
    for (const auto& [name, value] : c.query) {
        appendQueryParameter(h.url.query, name, value);
    }
    if (!c.cursor_param.empty() && !request.cursor.empty()) {
        appendQueryParameter(h.url.query, c.cursor_param, request.cursor);
    }
    h.method = c.method;
    h.body = c.body;
    if (stream) {
        h.accept = "text/event-stream";
        h.extra_headers.emplace_back("Cache-Control", "no-cache");
        if (!request.cursor.empty()) {
            h.extra_headers.emplace_back("Last-Event-ID", std::string(request.cursor));
        }
    }
    sdk::http::applySettings(c.http, h);
    request.appendTraceHeaders(h.extra_headers, &h.headers);
    h.options.user_agent = "crank-rest/1.0";
    if (stream) {
        return plan;  // the window bounds a stream
    }
    h.setCallTotal(c.http.total_ms, request.timeout_ms, kFallbackTotalMs);
    return plan;
}

/// A job's exchanges: the call's plan aimed at each URL in turn. Every exchange is bounded by
/// timeouts.total_ms (or the plugin's default) and by the job's own bound, whichever comes first.
class PlanTransport final : public JobTransport {
public:
    PlanTransport(ConnectionPool& pool, const Plan& plan, const sdk::Call& call)
        : pool_(pool),
          plan_(plan),
          start_(plan.http.url),
          start_method_(plan.http.method),
          start_body_(plan.http.body),
          cancel_([call] { return call.isCancelled(); }) {}

    FetchedResponse start(const JobBound& bound) override {
        aim(start_, start_method_, start_body_, bound);
        return sdk::http::fetch(pool_, plan_.http, cancel_);
    }

    FetchedResponse get(const Url& url, const JobBound& bound) override {
        aim(url, "GET", std::nullopt, bound);
        return sdk::http::fetch(pool_, plan_.http, cancel_);
    }

    std::string cancel(const std::string& method, const Url& url) override {
        const std::int64_t ms =
            std::min(plan_.config.http.connect_ms + plan_.config.http.headers_ms, kMaxCancelMs);
        JobBound bound;
        bound.ms = ms;
        bound.name = "the cancel request's bound";
        bound.deadline = Clock::now() + std::chrono::milliseconds(ms);
        aim(url, method, std::nullopt, bound);
        try {
            sdk::http::fetch(pool_, plan_.http, [] { return false; });
            return {};
        } catch (const std::exception& e) {
            return e.what();
        }
    }

private:
    void aim(const Url& url, const std::string& method, const std::optional<std::string>& body,
             const JobBound& bound) {
        sdk::http::RequestPlan& h = plan_.http;
        h.url = url;
        h.method = method;
        h.body = body;
        const RestConfig& c = plan_.config;
        const std::int64_t own = c.http.total_ms.value_or(kFallbackTotalMs);
        const auto now = Clock::now();
        if (now + std::chrono::milliseconds(own) < bound.deadline) {
            h.total_ms = own;
            h.total_name =
                c.http.total_ms ? "timeouts.total_ms" : "the plugin's default total timeout";
            h.total_deadline = now + std::chrono::milliseconds(own);
        } else {
            h.total_ms = bound.ms;
            h.total_name = bound.name;
            h.total_deadline = bound.deadline;
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
    SseStream(ConnectionPool& pool, Plan plan, std::int64_t max_item_bytes)
        : pool_(pool), plan_(std::move(plan)) {
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
        const sdk::http::SlotGuard guard(
            slot_);  // destroyed first: the slot forgets the exchange before it goes
        exchange = sdk::http::send(pool_, plan_.http, cancel, &slot_, prefix);

        const ResponseHead& head = exchange->head();
        if (head.status < 200 || head.status > 299) {
            sdk::http::failStatus(*exchange, head, prefix, Clock::now() + std::chrono::seconds(5),
                                  cancel);
        }
        const std::string type = sdk::http::mediaType(head.header("content-type"));
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
                throw sdk::http::describeFailure(f, prefix, plan_.http, plan_.http.url,
                                                 Clock::time_point::max(),
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
    SseLimits limits_;
    std::string parserError_;
    sdk::http::ExchangeSlot slot_;
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
    Plan plan = makePlan(request, false);
    if (plan.config.job) {
        PlanTransport transport(pool_, plan, call);
        runJob(call, plan.config, plan.http.url, request.cursor, request.timeout_ms, transport);
        return;
    }
    const CancelCheck cancel = [&call] { return call.isCancelled(); };
    plan.http.host_deadline_passed = [&call] {
        return call.cancelReason() == CRANK_CANCEL_DEADLINE;
    };
    call.emit(responseItem(sdk::http::fetch(pool_, plan.http, cancel), plan.config.accept));
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
    return std::make_unique<SseStream>(pool_, std::move(plan), request.max_item_bytes);
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
