#include "upstream_session.h"

#include <algorithm>

#include <rapidjson/document.h>

#include "handshake.h"
#include "input_rounds.h"
#include "json_text.h"
#include <crank/sdk/json.hpp>

namespace crank::mcpc {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::int64_t unixMs() {
    return std::chrono::duration_cast<milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

RpcOutcome failure(std::string message) {
    RpcOutcome r;
    r.error_message = std::move(message);
    return r;
}

}  // namespace

ConnectionFactory stdioTransport(StdioOptions options) {
    return [options = std::move(options)](Connection::MessageHandler on_message,
                                          Connection::LogHandler on_log,
                                          std::string& error) -> std::unique_ptr<Connection> {
        return StdioConnection::start(options, std::move(on_message), std::move(on_log), error);
    };
}

UpstreamSession::UpstreamSession(UpstreamOptions options, Connection::MessageHandler on_message,
                                 Connection::LogHandler on_log, std::function<void()> on_connected)
    : options_(std::move(options)),
      on_message_(std::move(on_message)),
      on_log_(std::move(on_log)),
      on_connected_(std::move(on_connected)) {}

UpstreamSession::~UpstreamSession() {
    close();
}

bool UpstreamSession::connect() {
    bool fresh = false;
    bool ok = false;
    {
        const std::lock_guard lock(mutex_);
        ok = connectLocked(fresh);
    }
    if (fresh && on_connected_) {
        on_connected_();
    }
    return ok;
}

bool UpstreamSession::connectLocked(bool& fresh) {
    if (connection_ && connection_->open()) {
        return true;
    }
    if (connection_) {
        // It ended on its own (the server exited): note why, reap it, connect again.
        status_.last_error = "the connection ended: " + connection_->endReason();
        connection_->close();
        connection_.reset();
        status_.connected = false;
        status_.connected_since_ms = 0;
    }
    const Clock::time_point now = Clock::now();
    if (now < next_attempt_) {
        const auto wait = std::chrono::duration_cast<milliseconds>(next_attempt_ - now);
        if (status_.last_error.find("; next attempt in ") == std::string::npos) {
            status_.last_error += "; next attempt in " + std::to_string(wait.count()) + " ms";
        }
        return false;
    }
    std::string error;
    std::shared_ptr<Connection> c;
    if (!options_.transport) {
        error = "no transport is configured";
    } else {
        c = options_.transport(on_message_, on_log_, error);
    }
    Handshake shake;
    if (c) {
        error = handshake(c, options_, shake, [this](std::string& e) {
            return std::shared_ptr<Connection>(options_.transport(on_message_, on_log_, e));
        });
    }
    if (!error.empty()) {
        if (c) {
            c->close();
        }
        backoff_ = backoff_.count() == 0 ? options_.backoff_initial
                                         : std::min(backoff_ * 2, options_.backoff_max);
        next_attempt_ = Clock::now() + backoff_;
        status_.last_error = error;
        return false;
    }
    connection_ = std::move(c);
    modern_tools_.clear();  // the new connection's listing decides the headers
    backoff_ = milliseconds(0);
    next_attempt_ = {};
    status_.connected = true;
    status_.connected_since_ms = unixMs();
    status_.protocol_version = shake.version;
    status_.server_name = shake.server_name;
    status_.server_version = shake.server_version;
    status_.capabilities_json = shake.capabilities_json;
    status_.instructions = shake.instructions;
    status_.transport = connection_->transportName();
    fresh = true;
    if (ever_connected_) {
        ++status_.reconnects;
    }
    ever_connected_ = true;
    return true;
}

std::shared_ptr<Connection> UpstreamSession::live(std::string& why) {
    bool fresh = false;
    std::shared_ptr<Connection> c;
    {
        const std::lock_guard lock(mutex_);
        if (connectLocked(fresh)) {
            c = connection_;
            status_.last_used_ms = unixMs();
        } else {
            why = status_.last_error;
        }
    }
    if (fresh && on_connected_) {
        on_connected_();
    }
    return c;
}

RpcOutcome UpstreamSession::request(std::string_view method, std::string_view params_json,
                                    const RequestHooks& hooks,
                                    std::optional<std::chrono::milliseconds> timeout) {
    RpcOutcome r = requestOnce(method, params_json, hooks, timeout);
    if (!hooks.answer_inputs) {
        return r;
    }
    // 2026 era: an input_required result is answered and the request sent again (a new request
    // with a new id), at most kMaxInputRounds times in all.
    // All rounds together are bounded by the one timeout.
    const auto deadline =
        std::chrono::steady_clock::now() + timeout.value_or(options_.request_timeout);
    std::string params(params_json);
    for (int round = 1; r.ok && round < kMaxInputRounds; ++round) {
        const std::optional<InputRequired> asked = inputRequired(r.result_json);
        if (!asked) {
            break;
        }
        const std::optional<std::string> answers = hooks.answer_inputs(asked->requests_json);
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (!answers || left.count() <= 0) {
            break;
        }
        params = nextRoundParams(params, *answers, asked->state);
        r = requestOnce(method, params, hooks, left);
    }
    return r;
}

RpcOutcome UpstreamSession::requestOnce(std::string_view method, std::string_view params_json,
                                        const RequestHooks& hooks,
                                        std::optional<std::chrono::milliseconds> timeout) {
    RpcOutcome r;
    // At most one more attempt, and only after the server said our session has expired.
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::string why;
        std::shared_ptr<Connection> c = live(why);
        if (!c) {
            return failure("the upstream is not connected: " + why);
        }
        const bool modern = !c->modernVersion().empty();
        if (modern && method == "tools/call") {
            // The called tool's Mcp-Param-* headers, as its listing declared them.
            rapidjson::Document params;
            std::shared_ptr<const std::vector<MirroredParam>> mirrored;
            if (parseServerMessage(params_json, params).empty()) {
                mirrored = modern_tools_.headersOf(stringMember(params, "name"));
            }
            RequestHooks with = hooks;
            with.mirrored = mirrored.get();
            r = c->request(method, params_json, timeout.value_or(options_.request_timeout), with);
        } else {
            r = c->request(method, params_json, timeout.value_or(options_.request_timeout), hooks);
        }
        // An HTTP client must not call a tool whose x-mcp-header is invalid (its headers could
        // not be sent right); over stdio no header is sent, and the tool is kept.
        if (r.ok && modern && method == "tools/list" && c->transportName() != "stdio") {
            rapidjson::Document params;
            const bool paged = parseServerMessage(params_json, params).empty() &&
                               !stringMember(params, "cursor").empty();
            r.result_json = modern_tools_.filterList(r.result_json, !paged);
        }
        if (r.ok || r.cancelled) {
            return r;
        }
        const std::lock_guard lock(mutex_);
        status_.last_error = std::string(method) + ": " + r.error_message;
        if (r.session_expired && connection_ == c) {
            // Streamable HTTP 404: the old session is gone; the next attempt initializes anew.
            c->close();
            connection_.reset();
            status_.connected = false;
            continue;
        }
        if (!c->open() && connection_ == c) {
            status_.connected = false;
        }
        return r;
    }
    return r;
}

bool UpstreamSession::notify(std::string_view method, std::string_view params_json) {
    std::shared_ptr<Connection> c;
    {
        const std::lock_guard lock(mutex_);
        c = connection_;
    }
    return c && c->notify(method, params_json);
}

bool UpstreamSession::send(std::string_view message_json) {
    std::shared_ptr<Connection> c;
    {
        const std::lock_guard lock(mutex_);
        c = connection_;
    }
    return c && c->send(message_json);
}

RpcOutcome UpstreamSession::listAll(std::string_view method, const char* array_member,
                                    std::vector<std::string>& items, int max_pages) {
    std::string cursor;
    for (int page = 0; page < max_pages; ++page) {
        RpcOutcome r =
            request(method, cursor.empty() ? "{}" : R"({"cursor":)" + sdk::jsonQuote(cursor) + "}");
        if (!r.ok) {
            return r;
        }
        rapidjson::Document doc;
        doc.Parse(r.result_json.data(), r.result_json.size());
        if (!doc.IsObject() || !doc.HasMember(array_member) || !doc[array_member].IsArray()) {
            return failure(std::string(method) + ": the server's answer has no " + array_member +
                           " array");
        }
        for (const rapidjson::Value& item : doc[array_member].GetArray()) {
            items.push_back(jsonText(item));
        }
        cursor = stringMember(doc, "nextCursor");
        if (cursor.empty()) {
            return r;
        }
    }
    return failure(std::string(method) + ": more than " + std::to_string(max_pages) +
                   " pages; the list was cut there");
}

UpstreamStatus UpstreamSession::status() const {
    const std::lock_guard lock(mutex_);
    UpstreamStatus s = status_;
    s.refused_tools = modern_tools_.refused();
    if (connection_ && !connection_->open()) {
        s.connected = false;
    }
    return s;
}

void UpstreamSession::close() {
    std::shared_ptr<Connection> c;
    {
        const std::lock_guard lock(mutex_);
        c = std::move(connection_);
        status_.connected = false;
        status_.connected_since_ms = 0;
    }
    if (c) {
        c->close();
    }
}

RpcOutcome UpstreamSession::test(const UpstreamOptions& options) {
    std::string error;
    std::shared_ptr<Connection> c =
        options.transport ? options.transport(nullptr, nullptr, error) : nullptr;
    if (!c) {
        return failure(error.empty() ? "no transport is configured" : error);
    }
    Handshake shake;
    error = handshake(c, options, shake, [&options](std::string& e) {
        return std::shared_ptr<Connection>(options.transport(nullptr, nullptr, e));
    });
    if (!error.empty()) {
        c->close();
        return failure(error);
    }
    if (!c->modernVersion().empty()) {
        // The 2026 era has no ping: server/discover answering was the test.
        c->close();
        RpcOutcome r;
        r.ok = true;
        r.result_json = "{}";
        return r;
    }
    RpcOutcome r = c->request("ping", "", options.initialize_timeout);
    c->close();
    return r;
}

}  // namespace crank::mcpc
