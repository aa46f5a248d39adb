#include <algorithm>
#include <vector>

#include "http_call.h"
#include "http_connection.h"
#include <crank/sdk/http/sse.hpp>
#include <crank/sdk/json.hpp>

namespace crank::mcpc {

using namespace http_detail;  // NOLINT(google-build-using-namespace): this room's helpers
using sdk::http::SseEvent;
using sdk::http::SseLimits;
using sdk::http::SseParser;
using std::chrono::milliseconds;

RpcOutcome HttpConnection::streamableCall(Call& call, bool detecting, std::string& refused) {
    maybeStartStandaloneStream();
    const bool withSession = !sessionId().empty();
    call.sent = true;  // from here on the server may have it: a cancellation is worth sending
    auto wire = std::make_unique<HttpWire>(
        wire_, makeRequest("POST", url_, true, &call.message, ""), call.deadline, call.halt);
    const sdk::http::ResponseHead& head = wire->head();
    if (head.status == 404 && withSession) {
        expire();
        RpcOutcome r = failure(call.method + ": the session has expired (" + wire->what() +
                               " answered HTTP 404 to the session id)");
        r.session_expired = true;
        return r;
    }
    if (detecting && (head.status == 400 || head.status == 404 || head.status == 405)) {
        refused = wire->what() + " answered " + wire->statusText();
        return {};
    }
    if (!isStatusOk(head.status)) {
        return httpError(*wire, call, url_);
    }
    std::string invalid;
    if (!noteSessionId(head.header("mcp-session-id"), invalid)) {
        return failure(call.method + ": " + wire->what() + ": " + invalid);
    }
    if (detecting) {
        const std::lock_guard lock(mutex_);
        active_ = Active::streamable;
    }
    if (head.status == 202 || head.status == 204) {
        return waitAnswer(call);  // accepted: the answer comes on another stream
    }
    const std::string type = wire->mediaType();
    if (type == "text/event-stream") {
        return answerStream(call, std::move(wire));
    }
    return jsonAnswer(*wire, call);
}

RpcOutcome HttpConnection::jsonAnswer(HttpWire& wire, Call& call) {
    const std::string type = wire.mediaType();
    if (!isJsonType(type)) {
        return failure(call.method + ": " + wire.what() + " answered with Content-Type " +
                       sdk::jsonQuote(excerpt(type.empty() ? "(none)" : type, 80)) +
                       ", not application/json or text/event-stream");
    }
    const std::size_t max = options_.max_message_bytes;
    const std::string tooLarge = call.method + ": " + wire.what() +
                                 ": the answer is larger than max_message_bytes (" +
                                 std::to_string(max) + " bytes)";
    if (wire.contentLength() && *wire.contentLength() > max) {
        return failure(tooLarge);
    }
    std::string body;
    while (wire.readBody(body, call.deadline, call.halt)) {
        if (body.size() > max) {
            return failure(tooLarge);
        }
    }
    std::optional<RpcOutcome> own;
    std::string problem;
    if (!routeText(body, &call, own, problem)) {
        return failure(call.method + ": " + wire.what() + " answered " + problem);
    }
    if (!own) {
        return failure(call.method + ": " + wire.what() +
                       " answered JSON without the answer: " + excerpt(body));
    }
    return std::move(*own);
}

std::chrono::milliseconds HttpConnection::reconnectDelay(const SseParser& parser,
                                                         int failures) const {
    // The server's `retry:` when it gave one (at least kMinReconnectDelay: `retry: 0` and a
    // stream closed at once must not spin a thread and a port); else retry_delay, doubled after
    // each failed attempt; both at most max_retry_delay.
    if (parser.retryMs()) {
        return std::clamp(milliseconds(*parser.retryMs()),
                          std::min(kMinReconnectDelay, options_.max_retry_delay),
                          options_.max_retry_delay);
    }
    milliseconds delay = options_.retry_delay;
    for (int i = 1; i < failures && delay < options_.max_retry_delay; ++i) {
        delay *= 2;
    }
    return std::min(delay, options_.max_retry_delay);
}

RpcOutcome HttpConnection::answerStream(Call& call, std::unique_ptr<HttpWire> wire) {
    SseParser parser(SseLimits::forEvents(options_.max_message_bytes));
    int failures = 0;     // reconnection attempts since the stream last gave an event
    std::string problem;  // why the stream (or the last attempt to resume it) failed
    while (true) {
        if (wire) {
            const std::uint64_t before = parser.eventsEnded();
            std::string broke;
            try {
                std::optional<RpcOutcome> outcome;
                const EventsEnd ended =
                    readEvents(*wire, parser, call.deadline, call.halt, [&](const SseEvent& e) {
                        if (e.type != "message" || e.data.empty()) {
                            return true;
                        }
                        std::string bad;
                        if (!routeText(e.data, &call, outcome, bad)) {
                            outcome = failure(call.method + ": " + wire->what() +
                                              ": the event stream carried " + bad);
                        }
                        return !outcome;
                    });
                if (outcome) {
                    if (ended == EventsEnd::stopped && outcome->ok) {
                        wire->drainAfterAnswer(kDrainBytes, Clock::now() + kDrainWait);
                    }
                    return std::move(*outcome);
                }
                if (ended == EventsEnd::refused) {
                    return failure(call.method + ": " + wire->what() + ": " +
                                   eventTooLarge(options_.max_message_bytes));
                }
            } catch (const HttpWireFailure& f) {
                if (f.kind() != HttpWireFailure::Kind::failed) {
                    throw;
                }
                broke = f.what();
            }
            if (parser.eventsEnded() > before) {
                failures = 0;
            }
            problem = broke.empty() ? wire->what() +
                                          ": the server ended the event stream before "
                                          "the answer"
                                    : broke;
            wire.reset();
            if (parser.lastEventId().empty()) {
                return failure(call.method + ": " + problem +
                               ", and gave no event id to resume it from");
            }
        }
        if (failures >= options_.max_reconnect_attempts) {
            return failure(call.method + ": the event stream of the answer could not be resumed (" +
                           std::to_string(failures) + " attempts): " + problem);
        }
        ++failures;
        const milliseconds delay = reconnectDelay(parser, failures);
        pause(delay, call.deadline, call.halt);
        try {
            auto next = std::make_unique<HttpWire>(
                wire_, makeRequest("GET", url_, true, nullptr, parser.lastEventId()), call.deadline,
                call.halt);
            const sdk::http::ResponseHead& head = next->head();
            if (head.status == 200 && next->mediaType() == "text/event-stream") {
                parser.restart();
                wire = std::move(next);
                continue;
            }
            if (head.status == 405) {
                return failure(call.method + ": " + problem +
                               ", and the server does not allow resuming it (" + next->what() +
                               " answered HTTP 405)");
            }
            if (head.status == 404 && !sessionId().empty()) {
                expire();
                return failure(call.method + ": the session ended before the answer arrived (" +
                               next->what() + " answered HTTP 404)");
            }
            problem = next->what() + " answered " + next->statusText();
        } catch (const HttpWireFailure& f) {
            if (f.kind() != HttpWireFailure::Kind::failed) {
                throw;
            }
            problem = f.what();
        }
    }
}

void HttpConnection::maybeStartStandaloneStream() {
    const std::lock_guard lock(mutex_);
    if (stream_started_ || active_ != Active::streamable || protocol_version_.empty() || ended_ ||
        stop_) {
        return;
    }
    stream_started_ = true;
    stream_thread_ = std::thread([this] {
        try {
            standaloneStream();
        } catch (const std::exception& e) {
            log(std::string("the standalone SSE stream stopped: ") + e.what());
        }
        markStreamRequested();
    });
}

namespace {
/// The most notifications/initialized waits for the standalone stream's GET to be sent.
constexpr std::chrono::milliseconds kGetHeadStart{2'000};
}  // namespace

void HttpConnection::markStreamRequested() {
    {
        const std::lock_guard lock(mutex_);
        stream_requested_ = true;
    }
    changed_.notify_all();
}

void HttpConnection::awaitStreamRequested() {
    std::unique_lock lock(mutex_);
    // Bounded short: a server slow to take the GET must not hold up initialization.
    changed_.wait_for(lock,
                      std::min<std::chrono::milliseconds>(options_.connect_timeout, kGetHeadStart),
                      [&] { return stream_requested_ || !stream_started_ || stop_ || ended_; });
}

void HttpConnection::standaloneStream() {
    const HaltCheck halt = [this] { return stop_ ? HttpHalt::closed : HttpHalt::none; };
    const Clock::time_point forever = Clock::time_point::max();
    SseParser parser(SseLimits::forEvents(options_.max_message_bytes));
    int failures = 0;
    while (!stop_) {
        bool delivered = false;
        std::string problem;
        try {
            // The stream counts as requested once the server answered the GET's head (the SDK
            // sends a request and reads its head in one step), or failed to: requests sent after
            // notifications/initialized then reach the server after it, as a client's would.
            std::unique_ptr<HttpWire> opened;
            try {
                opened = std::make_unique<HttpWire>(
                    wire_, makeRequest("GET", url_, true, nullptr, parser.lastEventId()), forever,
                    halt);
            } catch (...) {
                markStreamRequested();
                throw;
            }
            markStreamRequested();
            HttpWire& wire = *opened;
            const sdk::http::ResponseHead& head = wire.head();
            if (head.status == 405) {
                log("the server offers no standalone SSE stream (" + wire.what() +
                    " answered HTTP 405)");
                return;
            }
            if (head.status == 404 && !sessionId().empty()) {
                log("the standalone SSE stream stops: " + wire.what() +
                    " answered HTTP 404 (the session has ended)");
                return;
            }
            if (head.status != 200 || wire.mediaType() != "text/event-stream") {
                problem = wire.what() + " answered " + wire.statusText() +
                          (head.status == 200 ? " with Content-Type " +
                                                    sdk::jsonQuote(excerpt(wire.mediaType(), 80))
                                              : std::string());
            } else {
                parser.restart();
                const std::uint64_t before = parser.eventsEnded();
                const EventsEnd ended =
                    readEvents(wire, parser, forever, halt, [&](const SseEvent& e) {
                        std::optional<RpcOutcome> own;
                        std::string bad;
                        if (e.type == "message" && !e.data.empty() &&
                            !routeText(e.data, nullptr, own, bad)) {
                            log("the standalone SSE stream carried " + bad + "; ignored");
                        }
                        return true;
                    });
                if (ended == EventsEnd::refused) {
                    problem = eventTooLarge(options_.max_message_bytes);
                }
                delivered = parser.eventsEnded() > before;
                if (problem.empty()) {
                    problem = "the server ended it";
                }
            }
        } catch (const HttpWireFailure& f) {
            if (f.kind() == HttpWireFailure::Kind::halted) {
                return;
            }
            problem = f.what();
        }
        failures = delivered ? 0 : failures + 1;
        if (failures > options_.max_reconnect_attempts) {
            log("the standalone SSE stream is given up after " + std::to_string(failures) +
                " failed attempts: " + problem);
            return;
        }
        const milliseconds delay = reconnectDelay(parser, failures);
        if (!delivered) {
            log("the standalone SSE stream failed (" + problem + "); trying again in " +
                std::to_string(delay.count()) + " ms");
        }
        try {
            pause(delay, forever, halt);
        } catch (const HttpWireFailure&) {
            return;
        }
    }
}

}  // namespace crank::mcpc
