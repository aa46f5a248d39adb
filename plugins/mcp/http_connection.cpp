#include "http_connection.h"

#include <algorithm>
#include <functional>

#include <rapidjson/document.h>

#include "http_call.h"
#include "json_text.h"
#include "rpc_message.h"
#include <crank/sdk/http/text.hpp>
#include <crank/sdk/json.hpp>

namespace crank::mcpc {

using namespace http_detail;  // NOLINT(google-build-using-namespace): this room's helpers
using std::chrono::milliseconds;

namespace {

constexpr std::size_t kMaxSessionId = 1024;
constexpr std::size_t kMaxProtocolVersion = 64;
constexpr milliseconds kCancelBound{2'000};  // the POST of notifications/cancelled
/// Idle keep-alive connections kept to the server (the requests' POSTs reuse them).
constexpr std::size_t kMaxIdle = 4;

/// Every character visible ASCII (0x21-0x7E), and at least one.
bool isVisibleAscii(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c > 0x20 && c < 0x7F; });
}

}  // namespace

bool parseHttpMode(std::string_view name, HttpMode& mode) {
    if (name == "auto") {
        mode = HttpMode::automatic;
    } else if (name == "streamable_http") {
        mode = HttpMode::streamable_http;
    } else if (name == "sse") {
        mode = HttpMode::sse;
    } else {
        return false;
    }
    return true;
}

HttpConnection::HttpConnection(HttpOptions options, MessageHandler on_message, LogHandler on_log)
    : options_(std::move(options)),
      on_message_(std::move(on_message)),
      on_log_(std::move(on_log)) {}

std::unique_ptr<HttpConnection> HttpConnection::create(HttpOptions options,
                                                       MessageHandler on_message, LogHandler on_log,
                                                       std::string& error) {
    std::optional<sdk::http::Url> url = sdk::http::parseUrl(options.url, error);
    if (!url) {
        error = "url: " + error;
        return nullptr;
    }
    static constexpr std::string_view kReserved[] = {
        "host",          "content-length", "content-type",   "transfer-encoding",
        "connection",    "accept",         "mcp-session-id", "mcp-protocol-version",
        "last-event-id", "mcp-method",     "mcp-name"};
    sdk::http::HeaderList headers;
    for (const auto& [name, value] : options.headers) {
        if (!isHttpToken(name)) {
            error = "headers: " + sdk::jsonQuote(excerpt(name, 64)) + " is not a header name";
            return nullptr;
        }
        const std::string lowered = asciiLower(name);
        if (std::find(std::begin(kReserved), std::end(kReserved), lowered) != std::end(kReserved) ||
            lowered.rfind("mcp-param-", 0) == 0) {
            error = "headers: " + name + " is set by the transport itself";
            return nullptr;
        }
        if (value.find_first_of(std::string_view("\r\n\0", 3)) != std::string::npos) {
            error = "headers: the value of " + name + " has a line break or a NUL character";
            return nullptr;
        }
        headers.emplace_back(name, value);
    }
    if (options.max_message_bytes == 0 || options.connect_timeout.count() <= 0) {
        error = "max_message_bytes and connect_timeout must be positive";
        return nullptr;
    }
    options.max_reconnect_attempts = std::max(options.max_reconnect_attempts, 0);
    options.max_retry_delay = std::max(options.max_retry_delay, milliseconds(1));
    options.retry_delay = std::clamp(options.retry_delay, milliseconds(1), options.max_retry_delay);
    std::unique_ptr<HttpConnection> c(
        new HttpConnection(std::move(options), std::move(on_message), std::move(on_log)));
    c->url_ = std::move(*url);
    c->headers_ = std::move(headers);
    c->wire_.pool = &c->pool_;
    c->wire_.options.tls = sdk::http::TlsOptions{c->options_.tls_verify, c->options_.ca_file};
    c->wire_.options.max_idle = kMaxIdle;
    c->wire_.options.user_agent = "crank";
    c->wire_.connect_timeout = c->options_.connect_timeout;
    c->active_ = c->options_.mode == HttpMode::streamable_http ? Active::streamable
                 : c->options_.mode == HttpMode::sse           ? Active::legacy
                                                               : Active::undecided;
    return c;
}

HttpConnection::~HttpConnection() {
    close();
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return running_ == 0; });
    if (stream_thread_.joinable()) {
        // Only when close() ran on the stream's own thread (from a handler).
        if (stream_thread_.get_id() == std::this_thread::get_id()) {
            stream_thread_.detach();
        } else {
            std::thread t = std::move(stream_thread_);
            lock.unlock();
            t.join();
        }
    }
}

HttpConnection::Active HttpConnection::active() const {
    const std::lock_guard lock(mutex_);
    return active_;
}

bool HttpConnection::open() const {
    const std::lock_guard lock(mutex_);
    return !ended_;
}

std::string HttpConnection::endReason() const {
    const std::lock_guard lock(mutex_);
    return end_reason_;
}

std::string HttpConnection::transportName() const {
    return active() == Active::legacy ? "sse" : "streamable_http";
}

std::string HttpConnection::sessionId() const {
    const std::lock_guard lock(mutex_);
    return session_id_;
}

void HttpConnection::setProtocolVersion(const std::string& version) {
    if (version.size() > kMaxProtocolVersion || !isVisibleAscii(version)) {
        log("the protocol version " + sdk::jsonQuote(excerpt(version, 64)) +
            " cannot be sent in a header; MCP-Protocol-Version is left out");
        return;
    }
    const std::lock_guard lock(mutex_);
    protocol_version_ = version;
}

void HttpConnection::log(const std::string& line) const {
    if (on_log_) {
        on_log_(line);
    }
}

void HttpConnection::end(const std::string& reason) {
    {
        const std::lock_guard lock(mutex_);
        if (!ended_) {
            ended_ = true;
            end_reason_ = reason;
        }
    }
    stop_ = true;
    changed_.notify_all();
}

void HttpConnection::expire() {
    {
        const std::lock_guard lock(mutex_);
        deleted_ = true;  // nothing left to DELETE
    }
    end("the server ended the session (it answered HTTP 404 to the session id)");
}

bool HttpConnection::deliver(std::int64_t id, RpcOutcome outcome) {
    {
        const std::lock_guard lock(mutex_);
        const auto it = waiting_.find(id);
        if (it == waiting_.end() || it->second) {
            return false;
        }
        it->second = std::move(outcome);
    }
    changed_.notify_all();
    return true;
}

bool HttpConnection::noteSessionId(const std::string* header, std::string& error) {
    if (header == nullptr) {
        return true;
    }
    const std::lock_guard lock(mutex_);
    if (!session_id_.empty()) {
        return true;
    }
    if (header->size() > kMaxSessionId || !isVisibleAscii(*header)) {
        error = "the server's Mcp-Session-Id header is invalid (it must be 1 to " +
                std::to_string(kMaxSessionId) + " visible ASCII characters)";
        return false;
    }
    session_id_ = *header;
    return true;
}

sdk::http::HttpRequest HttpConnection::makeRequest(const char* method, const sdk::http::Url& target,
                                                   bool streamable, const std::string* body,
                                                   const std::string& last_event_id) const {
    sdk::http::HttpRequest r;
    r.method = method;
    r.url = target;
    const bool get = r.method == "GET";
    r.headers.reserve(headers_.size() + 5);
    r.headers.emplace_back("Accept",
                           get ? "text/event-stream" : "application/json, text/event-stream");
    if (get) {
        r.headers.emplace_back("Cache-Control", "no-cache");
    }
    if (body != nullptr) {
        r.headers.emplace_back("Content-Type", "application/json");
        r.body = *body;
    }
    if (streamable) {
        const std::lock_guard lock(mutex_);
        if (!session_id_.empty()) {
            r.headers.emplace_back("Mcp-Session-Id", session_id_);
        }
        if (!protocol_version_.empty()) {
            r.headers.emplace_back("MCP-Protocol-Version", protocol_version_);
        }
    }
    // An id with control characters cannot be sent; the server then resumes nothing.
    if (!last_event_id.empty() &&
        std::all_of(last_event_id.begin(), last_event_id.end(),
                    [](char c) { return static_cast<unsigned char>(c) >= 0x20 && c != 0x7F; })) {
        r.headers.emplace_back("Last-Event-ID", last_event_id);
    }
    r.headers.insert(r.headers.end(), headers_.begin(), headers_.end());
    // A GET, or a DELETE: sent again on a fresh connection when a pooled one was closed.
    r.replayable = body == nullptr;
    return r;
}

bool HttpConnection::routeText(std::string_view text, Call* call, std::optional<RpcOutcome>& own,
                               std::string& problem) {
    rapidjson::Document doc;
    if (const std::string why = parseServerMessage(text, doc); !why.empty()) {
        problem = "data that is not JSON (" + why + "): " + excerpt(text);
        return false;
    }
    const auto one = [&](const rapidjson::Value& v, std::string_view json) {
        const Classified c = classify(v);
        if (c.kind == Classified::Kind::invalid) {
            problem = "JSON that is not a JSON-RPC message: " + excerpt(json);
            return false;
        }
        if (c.kind == Classified::Kind::answer) {
            if (call != nullptr &&
                ((c.int_id && c.id == call->id) || (c.null_id && v.HasMember("error")))) {
                own = answerOutcome(v);
            } else if (!c.int_id || !deliver(c.id, answerOutcome(v))) {
                log("an answer to no request waiting was dropped (id " +
                    excerpt(jsonText(v["id"]), 40) + ")");
            }
            return true;
        }
        if (v.HasMember("id") && !modernVersion().empty()) {
            // A 2026-07-28 server sends no requests (MRTR replaced them): dropped, and said once.
            if (!dropped_requests_.exchange(true)) {
                log("the server sent a request on a 2026-07-28 stream, which the revision "
                    "forbids; it is dropped (and so are the next ones, without a word)");
            }
            return true;
        }
        if (call != nullptr && call->hooks->on_related) {
            call->hooks->on_related(json);
        } else if (on_message_) {
            on_message_(json);
        }
        return true;
    };
    if (doc.IsArray()) {  // a batch (2025-03-26)
        for (const rapidjson::Value& v : doc.GetArray()) {
            if (!one(v, jsonText(v))) {
                return false;
            }
        }
        return true;
    }
    return one(doc, text);
}

RpcOutcome HttpConnection::request(std::string_view method, std::string_view params_json,
                                   milliseconds timeout, const RequestHooks& hooks) {
    Call call;
    call.method = std::string(method);
    call.timeout = timeout;
    call.hooks = &hooks;
    {
        const std::lock_guard lock(mutex_);
        if (ended_) {
            return failure("the connection to the server is closed: " + end_reason_);
        }
        call.id = next_id_++;
        waiting_.emplace(call.id, std::nullopt);
        ++running_;
    }
    const Finally done([this, &call] {
        {
            const std::lock_guard lock(mutex_);
            waiting_.erase(call.id);
            --running_;
        }
        changed_.notify_all();
    });
    if (hooks.on_id) {
        hooks.on_id(call.id);
    }
    call.message = requestText(call.id, method, params_json);
    call.deadline = Clock::now() + timeout;
    call.halt = [this, &call] {
        if (stop_) {
            return HttpHalt::closed;
        }
        {
            const std::lock_guard lock(mutex_);
            const auto it = waiting_.find(call.id);
            if (it != waiting_.end() && it->second) {
                return HttpHalt::answered;
            }
        }
        if (call.hooks->cancelled && call.hooks->cancelled()) {
            return HttpHalt::cancelled;
        }
        return HttpHalt::none;
    };
    RpcOutcome outcome;
    const bool modern = !modernVersion().empty();
    try {
        if (modern) {
            return modernCall(call, params_json);
        }
        Active a = active();
        if (a == Active::undecided && startDetection(call)) {
            const Finally detected([this] {
                {
                    const std::lock_guard lock(mutex_);
                    detecting_ = false;
                }
                changed_.notify_all();
            });
            a = active();
            if (a == Active::undecided) {
                std::string refused;
                outcome = streamableCall(call, true, refused);
                if (!refused.empty()) {
                    {
                        const std::lock_guard lock(mutex_);
                        active_ = Active::legacy;
                    }
                    log("the server refused the Streamable HTTP POST (" + refused +
                        "); trying the legacy HTTP+SSE transport");
                    outcome = legacyCall(call, refused);
                }
                return outcome;
            }
        }
        a = active();
        std::string refused;
        outcome = a == Active::legacy ? legacyCall(call, "") : streamableCall(call, false, refused);
    } catch (const HttpWireFailure& f) {
        if (f.kind() == HttpWireFailure::Kind::halted && f.halt() == HttpHalt::answered) {
            const std::lock_guard lock(mutex_);
            const auto it = waiting_.find(call.id);
            if (it != waiting_.end() && it->second) {
                outcome = std::move(*it->second);
            }
        } else if (f.kind() == HttpWireFailure::Kind::halted && f.halt() == HttpHalt::cancelled) {
            if (call.sent && !modern) {  // 2026: closing the request's stream is the cancel
                sendCancelled(call.id, "cancelled by the client");
            }
            outcome = failure(call.method + ": cancelled");
            outcome.cancelled = true;
        } else if (f.kind() == HttpWireFailure::Kind::halted) {
            const std::string reason = endReason();
            outcome = failure(call.method + ": " +
                              (reason.empty() ? std::string("the connection was closed") : reason));
        } else if (f.kind() == HttpWireFailure::Kind::timeout) {
            if (call.sent && !modern) {
                sendCancelled(call.id, "timed out");
            }
            outcome = failure(call.method + ": the server did not answer within " +
                              std::to_string(timeout.count()) + " ms");
        } else {
            outcome = failure(call.method + ": " + f.what());
        }
    } catch (const std::exception& e) {
        outcome = failure(call.method + ": " + e.what());
    }
    return outcome;
}

bool HttpConnection::startDetection(Call& call) {
    while (true) {
        {
            std::unique_lock lock(mutex_);
            changed_.wait_until(lock, std::min(call.deadline, Clock::now() + kSlice),
                                [this] { return !detecting_ || active_ != Active::undecided; });
            if (active_ != Active::undecided) {
                return false;
            }
            if (!detecting_) {
                detecting_ = true;
                return true;
            }
        }
        checkHalt(call.halt, call.deadline);
    }
}

RpcOutcome HttpConnection::waitAnswer(Call& call) {
    while (true) {
        {
            std::unique_lock lock(mutex_);
            const auto it = waiting_.find(call.id);
            changed_.wait_until(lock, std::min(call.deadline, Clock::now() + kSlice),
                                [&] { return ended_ || it->second.has_value(); });
            if (it->second) {
                RpcOutcome r = std::move(*it->second);
                it->second.reset();
                return r;
            }
            if (ended_) {
                return failure(call.method + ": " + end_reason_);
            }
        }
        checkHalt(call.halt, call.deadline);
    }
}

RpcOutcome HttpConnection::httpError(HttpWire& wire, const Call& call,
                                     const sdk::http::Url& target) {
    const sdk::http::ResponseHead& head = wire.head();
    const std::string body =
        wire.readAtMost(kErrorBodyBytes, std::min(call.deadline, Clock::now() + kErrorBodyWait));
    RpcOutcome r;
    std::string what = call.method + ": " + wire.what() + " answered " + wire.statusText();
    if (head.status >= 300 && head.status < 400) {
        const std::string* location = head.header("location");
        std::string ignored;
        const std::optional<sdk::http::Url> to =
            location != nullptr ? sdk::http::resolveUrl(target, *location, ignored) : std::nullopt;
        what += to ? ", a redirect to " + to->describe() +
                         ", which is not followed (configure the "
                         "final URL)"
                   : ", a redirect, which is not followed (configure the final URL)";
    }
    if (head.status == 401 || head.status == 403) {
        what += " (check the credentials configured for this server";
        if (const std::string* challenge = head.header("www-authenticate")) {
            what += "; WWW-Authenticate: " + excerpt(*challenge, 200);
        }
        what += ")";
    }
    rapidjson::Document doc;
    if (parseServerMessage(body, doc).empty() && doc.IsObject() && doc.HasMember("error") &&
        doc["error"].IsObject()) {
        const RpcOutcome e = answerOutcome(doc);
        r.error_code = e.error_code;
        r.error_data_json = e.error_data_json;
        what += ": " + excerpt(e.error_message);
    } else if (!trimmed(body).empty()) {
        what += ": " + excerpt(trimmed(body));
    }
    r.error_message = std::move(what);
    return r;
}

bool HttpConnection::post(std::string_view message, milliseconds bound, std::string_view what) {
    sdk::http::Url target;
    bool streamable = true;
    {
        const std::lock_guard lock(mutex_);
        if (ended_ || stop_) {
            return false;
        }
        if (active_ == Active::legacy) {
            if (!endpoint_) {
                return false;
            }
            target = *endpoint_;
            streamable = false;
        } else {
            target = url_;
        }
        ++running_;
    }
    const Finally done([this] {
        {
            const std::lock_guard lock(mutex_);
            --running_;
        }
        changed_.notify_all();
    });
    const Clock::time_point deadline = Clock::now() + bound;
    const HaltCheck halt = [this] { return stop_ ? HttpHalt::closed : HttpHalt::none; };
    bool ok = false;
    try {
        const bool withSession = streamable && !sessionId().empty();
        const std::string body(message);
        HttpWire wire(wire_, makeRequest("POST", target, streamable, &body, ""), deadline, halt);
        ok = isStatusOk(wire.status());
        if (ok) {
            // A short answer (202, no body) is read to its end, so that the connection is kept.
            if (wire.contentLength() && *wire.contentLength() <= kErrorBodyBytes) {
                (void)wire.readAtMost(kErrorBodyBytes, deadline);
            }
        } else if (wire.status() == 404 && withSession) {
            expire();
        } else if (wire.status() == 404 && !streamable) {
            end("the server no longer knows the SSE session (" + wire.what() +
                " answered HTTP 404)");
        } else {
            const std::string answer =
                wire.readAtMost(kErrorBodyBytes, std::min(deadline, Clock::now() + kErrorBodyWait));
            log(std::string(what) + ": " + wire.what() + " answered " + wire.statusText() +
                (trimmed(answer).empty() ? std::string() : ": " + excerpt(trimmed(answer))));
        }
    } catch (const HttpWireFailure& f) {
        if (f.kind() == HttpWireFailure::Kind::timeout) {
            log(std::string(what) + ": no answer to the POST within " +
                std::to_string(bound.count()) + " ms");
        } else if (f.kind() == HttpWireFailure::Kind::failed) {
            log(std::string(what) + ": " + f.what());
        }
    } catch (const std::exception& e) {
        log(std::string(what) + ": " + e.what());
    }
    return ok;
}

bool HttpConnection::notify(std::string_view method, std::string_view params_json) {
    if (!modernVersion().empty()) {
        // A 2026 client sends no notifications over HTTP: a cancellation closes the request's
        // stream, and the rest (initialized, roots/list_changed) are gone from the revision.
        log("the notification " + std::string(method) + " is not sent in the 2026-07-28 era");
        return false;
    }
    const bool ok = post(notificationText(method, params_json), options_.send_timeout, method);
    if (ok && method == "notifications/initialized") {
        maybeStartStandaloneStream();
        awaitStreamRequested();
    }
    return ok;
}

bool HttpConnection::send(std::string_view message_json) {
    if (!modernVersion().empty()) {
        log("a 2026-07-28 server sent a request, which the revision forbids; its answer is "
            "dropped");
        return false;
    }
    return post(message_json, options_.send_timeout, "a message to the server");
}

void HttpConnection::sendCancelled(std::int64_t id, const char* reason) {
    post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":)" +
             std::to_string(id) + R"(,"reason":)" + sdk::jsonQuote(reason) + "}}",
         std::min(options_.send_timeout, kCancelBound), "notifications/cancelled");
}

void HttpConnection::close() {
    stop_ = true;
    changed_.notify_all();
    std::thread thread;
    bool remove = false;
    {
        const std::lock_guard lock(mutex_);
        if (stream_thread_.joinable() && stream_thread_.get_id() != std::this_thread::get_id()) {
            thread = std::move(stream_thread_);
        }
        if (!deleted_ && active_ == Active::streamable && !session_id_.empty()) {
            deleted_ = true;
            remove = true;
        }
    }
    if (thread.joinable()) {
        thread.join();
    }
    if (remove) {
        const Clock::time_point deadline = Clock::now() + options_.close_timeout;
        try {
            HttpWire wire(wire_, makeRequest("DELETE", url_, true, nullptr, ""), deadline, nullptr);
            if (!isStatusOk(wire.status()) && wire.status() != 404 && wire.status() != 405) {
                log("deleting the session: " + wire.what() + " answered " + wire.statusText());
            }
        } catch (const HttpWireFailure& f) {
            log(std::string("deleting the session: ") +
                (f.kind() == HttpWireFailure::Kind::timeout
                     ? "no answer within " + std::to_string(options_.close_timeout.count()) + " ms"
                     : f.what()));
        } catch (const std::exception& e) {
            log(std::string("deleting the session: ") + e.what());
        }
    }
    end("the connection was closed");
}

ConnectionFactory httpTransport(HttpOptions options) {
    return [options = std::move(options)](Connection::MessageHandler on_message,
                                          Connection::LogHandler on_log,
                                          std::string& error) -> std::unique_ptr<Connection> {
        return HttpConnection::create(options, std::move(on_message), std::move(on_log), error);
    };
}

}  // namespace crank::mcpc
