// The 2026-07-28 era of the Streamable HTTP transport (http_connection.h): one POST per request
// with its `_meta` and routing headers (modern_request.h), the answer as JSON or on an SSE
// stream that carries the request's own notifications first and is never resumed (a stream that
// ends before the answer fails the request), and a cancellation that closes the stream.

#include <optional>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "http_call.h"
#include "http_connection.h"
#include "json_text.h"
#include "modern_request.h"
#include <crank/sdk/http/sse.hpp>
#include <crank/sdk/json.hpp>

namespace crank::mcpc {

using namespace http_detail;  // NOLINT(google-build-using-namespace): this room's helpers
using sdk::http::SseEvent;
using sdk::http::SseLimits;
using sdk::http::SseParser;

namespace {

/// The JSON-RPC code of a server that does not speak the requested version (SEP-2575).
constexpr std::int64_t kUnsupportedVersion = -32022;

/// A version the server listed in `error_data_json` (`{"supported":[...]}`) that crank speaks.
std::optional<std::string> supportedVersion(const std::string& error_data_json) {
    rapidjson::Document data;
    if (!parseServerMessage(error_data_json, data).empty() || !data.IsObject() ||
        !data.HasMember("supported") || !data["supported"].IsArray()) {
        return std::nullopt;
    }
    for (const rapidjson::Value& v : data["supported"].GetArray()) {
        if (v.IsString() &&
            std::string_view(v.GetString(), v.GetStringLength()) == kModernProtocolVersion) {
            return std::string(kModernProtocolVersion);
        }
    }
    return std::nullopt;
}

}  // namespace

bool HttpConnection::setModernVersion(const std::string& version) {
    const std::lock_guard lock(mutex_);
    if (!version.empty() && active_ == Active::legacy) {
        return false;
    }
    // The 2025 transport stays undecided: a server that refuses the 2026 era may be a legacy
    // HTTP+SSE one, which initialize then finds out.
    modern_version_ = version;
    return true;
}

std::string HttpConnection::modernVersion() const {
    const std::lock_guard lock(mutex_);
    return modern_version_;
}

void HttpConnection::setClientInfo(const std::string& name, const std::string& version) {
    const std::lock_guard lock(mutex_);
    client_name_ = name;
    client_version_ = version;
}

RpcOutcome HttpConnection::modernCall(Call& call, std::string_view params_json) {
    for (int attempt = 0;; ++attempt) {
        ModernClient client;
        {
            const std::lock_guard lock(mutex_);
            client.protocol_version = modern_version_;
            client.client_name = client_name_;
            client.client_version = client_version_;
        }
        ModernRequest request;
        std::string error;
        const std::string& capabilities = call.hooks->client_capabilities_json;
        if (!buildModernRequest(call.id, call.method, params_json, client,
                                capabilities.empty() ? std::string_view("{}") : capabilities,
                                call.hooks->mirrored, request, error)) {
            return failure(call.method + ": " + error);
        }
        RpcOutcome outcome = modernExchange(call, request.body, request.headers);
        if (attempt > 0 || outcome.ok || outcome.error_code != kUnsupportedVersion) {
            return outcome;
        }
        // -32022: the server names the versions it speaks; once more with one of crank's, and a
        // new id (an id is never reused for another request).
        const std::optional<std::string> version = supportedVersion(outcome.error_data_json);
        if (!version) {
            return outcome;
        }
        const std::lock_guard lock(mutex_);
        modern_version_ = *version;
        waiting_.erase(call.id);
        call.id = next_id_++;
        waiting_.emplace(call.id, std::nullopt);
        if (call.hooks->on_id) {
            call.hooks->on_id(call.id);
        }
    }
}

RpcOutcome HttpConnection::modernExchange(Call& call, const std::string& body,
                                          const sdk::http::HeaderList& headers) {
    sdk::http::HttpRequest r;
    r.method = "POST";
    r.url = url_;
    r.headers.reserve(headers.size() + headers_.size() + 2);
    r.headers.emplace_back("Accept", "application/json, text/event-stream");
    r.headers.emplace_back("Content-Type", "application/json");
    r.headers.insert(r.headers.end(), headers.begin(), headers.end());
    r.headers.insert(r.headers.end(), headers_.begin(), headers_.end());
    r.body = body;
    call.sent = true;
    HttpWire wire(wire_, r, call.deadline, call.halt);
    if (!isStatusOk(wire.status())) {
        return httpError(wire, call, url_);
    }
    if (wire.status() == 202 || wire.status() == 204) {
        return failure(call.method + ": " + wire.what() + " answered " + wire.statusText() +
                       " to a request, with no answer");
    }
    const std::string type = wire.mediaType();
    std::optional<RpcOutcome> own;
    if (type == "text/event-stream") {
        SseParser parser(SseLimits::forEvents(options_.max_message_bytes));
        const EventsEnd ended =
            readEvents(wire, parser, call.deadline, call.halt, [&](const SseEvent& e) {
                if (e.type != "message" || e.data.empty()) {
                    return true;
                }
                std::string bad;
                if (!routeText(e.data, &call, own, bad)) {
                    own = failure(call.method + ": " + wire.what() + ": the event stream carried " +
                                  bad);
                }
                return !own;
            });
        if (own) {
            if (ended == EventsEnd::stopped && own->ok) {
                wire.drainAfterAnswer(kDrainBytes, Clock::now() + kDrainWait);
            }
            return std::move(*own);
        }
        if (ended == EventsEnd::refused) {
            return failure(call.method + ": " + wire.what() + ": " +
                           eventTooLarge(options_.max_message_bytes));
        }
        return failure(call.method + ": " + wire.what() +
                       ": the server ended the event stream before the answer (a 2026-07-28 "
                       "stream is not resumed)");
    }
    return jsonAnswer(wire, call);
}

}  // namespace crank::mcpc
