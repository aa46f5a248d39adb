#include <algorithm>
#include <limits>

#include <rapidjson/document.h>

#include <crank/sdk/base64.hpp>
#include <crank/sdk/http/client.hpp>
#include <crank/sdk/http/redirect_policy.hpp>
#include <crank/sdk/http/text.hpp>

namespace crank::sdk::http {
namespace {

constexpr std::size_t kErrorBodyRead = 4096;  // bytes of a non-2xx body read for the excerpt
constexpr std::size_t kErrorExcerpt = 512;    // bytes of it shown
constexpr std::size_t kRedirectDrain = std::size_t{64} * 1024;
constexpr std::size_t kReadChunk = std::size_t{16} * 1024;

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return out;
}

bool isRedirect(int status) {
    return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

HttpRequest buildRequest(const RequestPlan& plan, const Url& url, const std::string& method,
                         const std::optional<std::string>& body) {
    HttpRequest r;
    r.method = method;
    r.url = url;
    r.body = body;
    r.replayable = plan.replayable;
    const bool sameOrigin = url.origin() == plan.credential_origin;
    bool accept = false;
    bool contentType = false;
    for (const auto& h : plan.auth.static_headers) {
        r.headers.push_back(h);
    }
    for (const auto& h : plan.headers) {
        const std::string name = lower(h.first);
        accept = accept || name == "accept";
        contentType = contentType || name == "content-type";
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
    if (!accept && !plan.accept.empty()) {
        r.headers.emplace_back("Accept", plan.accept);
    }
    for (const auto& h : plan.extra_headers) {
        r.headers.push_back(h);
    }
    if (body && !contentType && !plan.content_type.empty()) {
        r.headers.emplace_back("Content-Type", plan.content_type);
    }
    return r;
}

/// One hop of send(): the request sent and the head read. True for the final response; false
/// after a redirect, with `url`, `method` and `body` set for the next hop.
/// `pin`: the address rule of this hop (redirect_policy.hpp), set for the next one.
bool step(HttpExchange& exchange, const RequestPlan& plan, Url& url, std::string& method,
          std::optional<std::string>& body, AddressCheck& pin, const CancelCheck& cancel,
          const std::string& prefix, Clock::time_point connect_deadline,
          Clock::time_point headers_deadline, int hop) {
    HttpRequest request = buildRequest(plan, url, method, body);
    request.address_check = pin;
    for (const auto& [name, value] : request.headers) {
        if (hasControlCharacter(name) || hasControlCharacter(value)) {
            // The value is never repeated (it may be a secret); the name shows no control bytes.
            throw Error(
                ErrorCode::invalid_argument,
                prefix +
                    (hasControlCharacter(name) ? std::string("a request header name")
                                               : "the request header \"" + validUtf8(name) + "\"") +
                    " contains a line break or another control character");
        }
    }
    const ResponseHead* head = nullptr;
    try {
        head = &exchange.start(
            request, ExchangeDeadlines{connect_deadline, headers_deadline, plan.total_deadline},
            cancel);
    } catch (const ExchangeFailure& f) {
        throw describeFailure(f, prefix, plan, url, connect_deadline, headers_deadline);
    }
    const std::string* location = head->header("location");
    if (!isRedirect(head->status) || location == nullptr) {
        return true;
    }
    const int status = head->status;
    if (hop >= plan.follow_redirects) {
        throw Error(ErrorCode::upstream,
                    prefix + (plan.follow_redirects == 0
                                  ? "answered " + std::to_string(status) +
                                        " (a redirect) and follow_redirects is 0"
                                  : "more than " + std::to_string(plan.follow_redirects) +
                                        " redirects (follow_redirects)"),
                    "{\"http_status\":" + std::to_string(status) + "}");
    }
    std::string error;
    std::optional<Url> next = resolveUrl(url, *location, error);
    if (!next) {
        throw Error(ErrorCode::protocol, prefix + "answered " + std::to_string(status) +
                                             " with a Location that is not a usable URL: " + error);
    }
    if (url.tls() && !next->tls()) {
        throw Error(ErrorCode::upstream, prefix + "redirects from https to http (" +
                                             next->describe() + "), which " + plan.plugin +
                                             " refuses");
    }
    std::optional<std::string> refused;
    try {
        refused = refuseRedirect(
            plan.credential_origin.empty() ? plan.url.origin() : plan.credential_origin, *next,
            plan.redirect_origins, connect_deadline, cancel, &pin);
    } catch (const TransportFailure& f) {
        throw Error(ErrorCode::unavailable,
                    prefix + "answered " + std::to_string(status) + " with a redirect to " +
                        next->describe() + ", whose host cannot be checked: " + f.error().detail);
    }
    if (refused) {
        throw Error(ErrorCode::upstream,
                    prefix + "answered " + std::to_string(status) + " with a redirect to " +
                        next->describe() + ", which " + plan.plugin + " refuses: " + *refused,
                    "{\"http_status\":" + std::to_string(status) + "}");
    }
    readSome(exchange, kRedirectDrain, std::min(headers_deadline, plan.total_deadline), cancel);
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

}  // namespace

AuthProfile parseAuthProfile(std::string_view auth_json, std::string_view plugin) {
    AuthProfile auth;
    if (auth_json.empty()) {
        return auth;
    }
    rapidjson::Document parsed;
    parsed.Parse(auth_json.data(), auth_json.size());
    const rapidjson::Value& doc = parsed;
    if (parsed.HasParseError() || !doc.IsObject()) {
        // Never repeat the text: it holds secrets.
        throw Error(ErrorCode::internal,
                    "the host handed an auth profile that is not a JSON object");
    }
    const auto text = [&doc](const char* key) -> std::string {
        const auto it = doc.FindMember(key);
        return it != doc.MemberEnd() && it->value.IsString()
                   ? std::string(it->value.GetString(), it->value.GetStringLength())
                   : std::string();
    };
    // A secret or a header with a line break would inject headers into every request: refused,
    // naming the field but never repeating its value.
    const auto refuse = [](const std::string& what) {
        return Error(ErrorCode::invalid_argument,
                     what + " contains a line break or another control character");
    };
    const auto checked = [&text, &refuse](const char* key) {
        std::string value = text(key);
        if (hasControlCharacter(value)) {
            throw refuse(std::string("the auth profile's ") + key);
        }
        return value;
    };
    const std::string type = text("type");
    if (type == "bearer") {
        auth.credential_headers.emplace_back("Authorization", "Bearer " + checked("token"));
    } else if (type == "basic") {
        const std::string username = checked("username");
        auth.credential_headers.emplace_back(
            "Authorization", "Basic " + base64(username + ":" + checked("password")));
    } else if (type == "api_key") {
        if (text("in") == "query") {
            auth.query_key.emplace(text("name"), text("key"));
        } else {
            const std::string name = checked("name");
            auth.credential_headers.emplace_back(name, checked("key"));
        }
    } else if (type != "none" && !type.empty()) {
        throw Error(ErrorCode::unsupported, "the auth profile type \"" + validUtf8(type) +
                                                "\" is not supported by " + std::string(plugin));
    }
    const auto headers = doc.FindMember("headers");
    if (headers != doc.MemberEnd() && headers->value.IsObject()) {
        for (const auto& h : headers->value.GetObject()) {
            if (h.value.IsString()) {
                std::string name(h.name.GetString(), h.name.GetStringLength());
                std::string value(h.value.GetString(), h.value.GetStringLength());
                if (hasControlCharacter(name)) {
                    throw refuse("a header name in the auth profile's headers");
                }
                if (hasControlCharacter(value)) {
                    throw refuse("the auth profile's header \"" + validUtf8(name) + "\"");
                }
                auth.static_headers.emplace_back(std::move(name), std::move(value));
            }
        }
    }
    return auth;
}

void RequestPlan::setTotal(std::int64_t ms, std::string name) {
    total_ms = ms;
    total_name = std::move(name);
    total_deadline = Clock::now() + std::chrono::milliseconds(ms);
}

void RequestPlan::setCallTotal(std::optional<std::int64_t> own_total_ms, std::int64_t timeout_ms,
                               std::int64_t fallback_ms) {
    host_timeout_ms = timeout_ms;
    std::int64_t total = std::numeric_limits<std::int64_t>::max();
    std::string name;
    if (own_total_ms) {
        total = *own_total_ms;
        name = "timeouts.total_ms";
    }
    if (timeout_ms > 0 && timeout_ms < total) {
        total = timeout_ms;
        name = "upstream_timeout_ms";
    }
    if (name.empty()) {
        total = fallback_ms;
        name = "the plugin's default total timeout";
    }
    setTotal(total, std::move(name));
}

std::string mediaType(const std::string* content_type) {
    if (content_type == nullptr) {
        return {};
    }
    std::string type = lower(content_type->substr(0, content_type->find(';')));
    while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) {
        type.pop_back();
    }
    const std::size_t start = type.find_first_not_of(" \t");
    return start == std::string::npos ? std::string() : type.substr(start);
}

void ExchangeSlot::set(HttpExchange* exchange) {
    const std::lock_guard<std::mutex> lock(mutex_);
    exchange_ = exchange;
    if (exchange_ != nullptr && interrupted_) {
        exchange_->interrupt();
    }
}

void ExchangeSlot::interrupt() {
    const std::lock_guard<std::mutex> lock(mutex_);
    interrupted_ = true;
    if (exchange_ != nullptr) {
        exchange_->interrupt();
    }
}

Error describeFailure(const ExchangeFailure& failure, const std::string& prefix,
                      const RequestPlan& plan, const Url& url, Clock::time_point connect_deadline,
                      Clock::time_point headers_deadline) {
    const TransportError& e = failure.error();
    using Kind = TransportError::Kind;
    using Phase = ExchangeFailure::Phase;
    const auto totalText = [&] {
        return std::to_string(plan.total_ms) + " ms (" + plan.total_name + ")";
    };
    switch (e.kind) {
        case Kind::refused:
        case Kind::dns:
        case Kind::tls:
            return {ErrorCode::unavailable, prefix + e.detail};
        case Kind::cancelled:
            if (plan.host_deadline_passed && plan.host_deadline_passed()) {
                return {ErrorCode::timeout, prefix + "no complete response within " +
                                                std::to_string(plan.host_timeout_ms) +
                                                " ms (upstream_timeout_ms)"};
            }
            return {ErrorCode::timeout, prefix + "cancelled"};
        case Kind::timeout:
            if (failure.phase() == Phase::connect) {
                return {ErrorCode::timeout, prefix + "no connection to " + url.authority() +
                                                " within " +
                                                (connect_deadline >= plan.total_deadline
                                                     ? totalText()
                                                     : std::to_string(plan.connect_ms) + " ms (" +
                                                           plan.connect_name + ")")};
            }
            if (failure.phase() == Phase::headers) {
                return {ErrorCode::timeout, prefix + "no response headers within " +
                                                (headers_deadline >= plan.total_deadline
                                                     ? totalText()
                                                     : std::to_string(plan.headers_ms) + " ms (" +
                                                           plan.headers_name + ")")};
            }
            return {ErrorCode::timeout,
                    prefix + "the response was not complete within " + totalText()};
        case Kind::closed:
            return {failure.phase() == Phase::body ? ErrorCode::protocol : ErrorCode::unavailable,
                    prefix + e.detail};
        case Kind::io:
            return {
                failure.phase() == Phase::connect ? ErrorCode::unavailable : ErrorCode::protocol,
                prefix + e.detail};
    }
    return {ErrorCode::internal, prefix + e.detail};
}

std::unique_ptr<HttpExchange> send(ConnectionPool& pool, const RequestPlan& plan,
                                   const CancelCheck& cancel, ExchangeSlot* slot,
                                   std::string& prefix) {
    Url url = plan.url;
    std::string method = plan.method;
    std::optional<std::string> body = plan.body;
    AddressCheck pin;  // none for the configured URL; set by each redirect to another origin
    for (int hop = 0;; ++hop) {
        prefix = method + " " + url.describe() + ": ";
        const auto now = Clock::now();
        const auto bounded = [&](std::int64_t ms) {
            return plan.total_deadline - now > std::chrono::milliseconds(ms)
                       ? now + std::chrono::milliseconds(ms)
                       : plan.total_deadline;
        };
        const Clock::time_point connectDeadline = bounded(plan.connect_ms);
        const Clock::time_point headersDeadline = bounded(plan.headers_ms);
        auto exchange = std::make_unique<HttpExchange>(pool, plan.options);
        if (slot != nullptr) {
            slot->set(exchange.get());
        }
        try {
            if (step(*exchange, plan, url, method, body, pin, cancel, prefix, connectDeadline,
                     headersDeadline, hop)) {
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

void failStatus(HttpExchange& exchange, const ResponseHead& head, const std::string& prefix,
                Clock::time_point deadline, const CancelCheck& cancel) {
    const std::string body = readSome(exchange, kErrorBodyRead, deadline, cancel);
    std::string message = prefix + "answered " + std::to_string(head.status);
    if (!head.reason.empty()) {
        message.append(" ").append(excerpt(head.reason, 64));
    }
    if (!body.empty()) {
        message.append(": ").append(excerpt(body, kErrorExcerpt));
    }
    throw Error(ErrorCode::upstream, message,
                "{\"http_status\":" + std::to_string(head.status) + "}");
}

void readBody(HttpExchange& exchange, const RequestPlan& plan, const CancelCheck& cancel,
              FetchedResponse& out) {
    const ResponseHead& head = exchange.head();
    out.status = head.status;
    out.type = mediaType(head.header("content-type"));
    char buffer[kReadChunk];
    try {
        for (;;) {
            const std::size_t n =
                exchange.readBody(buffer, sizeof buffer, plan.total_deadline, cancel);
            if (n == 0) {
                break;
            }
            if (out.body.size() + n > plan.max_response_bytes) {
                throw Error(ErrorCode::resource_exhausted,
                            out.prefix + "the response body is larger than max_response_bytes (" +
                                std::to_string(plan.max_response_bytes) + ")");
            }
            out.body.append(buffer, n);
        }
    } catch (const ExchangeFailure& f) {
        throw describeFailure(f, out.prefix, plan, plan.url, plan.total_deadline,
                              plan.total_deadline);
    }
    exchange.finish();
}

FetchedResponse fetch(ConnectionPool& pool, const RequestPlan& plan, const CancelCheck& cancel) {
    FetchedResponse out;
    std::unique_ptr<HttpExchange> exchange = send(pool, plan, cancel, nullptr, out.prefix);
    const ResponseHead& head = exchange->head();
    if (head.status < 200 || head.status > 299) {
        failStatus(*exchange, head, out.prefix, plan.total_deadline, cancel);
    }
    readBody(*exchange, plan, cancel, out);
    return out;
}

}  // namespace crank::sdk::http
