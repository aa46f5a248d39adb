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

std::string HttpConnection::openLegacy(Call& call) {
    {
        const std::lock_guard lock(mutex_);
        if (endpoint_) {
            return {};
        }
        if (ended_) {
            return end_reason_;
        }
        if (stop_) {
            return "the connection was closed";
        }
        if (!stream_started_) {
            stream_started_ = true;
            stream_thread_ = std::thread([this] {
                try {
                    legacyStream();
                } catch (const std::exception& e) {
                    end(std::string("the SSE stream ended: ") + e.what());
                }
            });
        }
    }
    while (true) {
        {
            std::unique_lock lock(mutex_);
            changed_.wait_until(lock, std::min(call.deadline, Clock::now() + kSlice),
                                [this] { return endpoint_.has_value() || ended_; });
            if (endpoint_) {
                return {};
            }
            if (ended_) {
                return end_reason_;
            }
        }
        if (Clock::now() >= call.deadline) {
            end("GET " + url_.describe() + " gave no endpoint event within " +
                std::to_string(call.timeout.count()) + " ms");
            return endReason();
        }
        checkHalt(call.halt, call.deadline);
    }
}

RpcOutcome HttpConnection::legacyCall(Call& call, const std::string& detection) {
    const std::string problem = openLegacy(call);
    if (!problem.empty()) {
        return failure(call.method + ": " +
                       (detection.empty() ? problem
                                          : detection +
                                                " (not Streamable HTTP), and as a legacy "
                                                "HTTP+SSE server: " +
                                                problem));
    }
    sdk::http::Url endpoint;
    {
        const std::lock_guard lock(mutex_);
        endpoint = *endpoint_;
    }
    call.sent = true;  // from here on the server may have it: a cancellation is worth sending
    HttpWire wire(wire_, makeRequest("POST", endpoint, false, &call.message, ""), call.deadline,
                  call.halt);
    const sdk::http::ResponseHead& head = wire.head();
    if (head.status == 404) {
        end("the server no longer knows the SSE session (" + wire.what() + " answered HTTP 404)");
        RpcOutcome r = failure(call.method + ": the SSE session has expired (" + wire.what() +
                               " answered HTTP 404)");
        r.session_expired = true;
        return r;
    }
    if (!isStatusOk(head.status)) {
        return httpError(wire, call, endpoint);
    }
    return waitAnswer(call);
}

void HttpConnection::legacyStream() {
    const HaltCheck halt = [this] { return stop_ ? HttpHalt::closed : HttpHalt::none; };
    const Clock::time_point forever = Clock::time_point::max();
    std::string why;
    try {
        HttpWire wire(wire_, makeRequest("GET", url_, false, nullptr, ""), forever, halt);
        const sdk::http::ResponseHead& head = wire.head();
        if (head.status != 200) {
            const std::string body =
                wire.readAtMost(kErrorBodyBytes, Clock::now() + kErrorBodyWait);
            why = wire.what() + " answered " + wire.statusText() +
                  (trimmed(body).empty() ? std::string() : ": " + excerpt(trimmed(body)));
        } else if (wire.mediaType() != "text/event-stream") {
            why = wire.what() + " answered with Content-Type " +
                  sdk::jsonQuote(
                      excerpt(wire.mediaType().empty() ? "(none)" : wire.mediaType(), 80)) +
                  ", not text/event-stream";
        } else {
            SseParser parser(SseLimits::forEvents(options_.max_message_bytes));
            const EventsEnd ended = readEvents(wire, parser, forever, halt, [&](const SseEvent& e) {
                if (e.type == "endpoint") {
                    std::string error;
                    std::optional<sdk::http::Url> endpoint =
                        sdk::http::resolveUrl(url_, e.data, error);
                    if (!endpoint) {
                        why = "its endpoint event is not a usable URL: " + error;
                        return false;
                    }
                    if (endpoint->origin() != url_.origin()) {
                        why = "its endpoint event points to another origin (" + endpoint->origin() +
                              ", not " + url_.origin() + "): refused";
                        return false;
                    }
                    {
                        const std::lock_guard lock(mutex_);
                        if (!endpoint_) {
                            endpoint_ = std::move(endpoint);
                        }
                    }
                    changed_.notify_all();
                } else if (e.type == "message" && !e.data.empty()) {
                    std::optional<RpcOutcome> own;
                    std::string bad;
                    if (!routeText(e.data, nullptr, own, bad)) {
                        log("the SSE stream carried " + bad + "; ignored");
                    }
                }
                return true;
            });
            if (ended == EventsEnd::refused) {
                why = eventTooLarge(options_.max_message_bytes);
            }
            why = wire.what() + ": " + (why.empty() ? std::string("the server closed it") : why);
        }
    } catch (const HttpWireFailure& f) {
        if (f.kind() == HttpWireFailure::Kind::halted) {
            return;
        }
        why = f.what();
    }
    end("the SSE stream ended: " + why);
}

}  // namespace crank::mcpc
