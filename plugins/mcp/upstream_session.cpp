#include "upstream_session.h"

#include <algorithm>

#include <rapidjson/document.h>

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

std::string member(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject()) {
        return {};
    }
    const auto it = object.FindMember(name);
    return it != object.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
}

RpcOutcome failure(std::string message) {
    RpcOutcome r;
    r.error_message = std::move(message);
    return r;
}

struct Handshake {
    std::string version;
    std::string server_name;
    std::string server_version;
};

/// initialize + notifications/initialized on `c`; the error message when it fails.
std::string initialize(StdioConnection& c, const UpstreamOptions& o, Handshake& out) {
    const std::string params = R"({"protocolVersion":)" +
                               sdk::jsonQuote(o.protocol_versions.front()) +
                               R"(,"capabilities":{},"clientInfo":{"name":"crank","version":"0"}})";
    const RpcOutcome r = c.request("initialize", params, o.initialize_timeout);
    if (!r.ok) {
        return "initialize failed: " + r.error_message;
    }
    rapidjson::Document doc;
    doc.Parse(r.result_json.c_str());
    out.version = member(doc, "protocolVersion");
    if (std::find(o.protocol_versions.begin(), o.protocol_versions.end(), out.version) ==
        o.protocol_versions.end()) {
        std::string offered;
        for (const std::string& v : o.protocol_versions) {
            offered += (offered.empty() ? "" : ", ") + v;
        }
        return "the server answered protocol version " + sdk::jsonQuote(out.version.substr(0, 64)) +
               ", which is not one crank speaks (" + offered + ")";
    }
    if (doc.IsObject() && doc.HasMember("serverInfo")) {
        out.server_name = member(doc["serverInfo"], "name").substr(0, 256);
        out.server_version = member(doc["serverInfo"], "version").substr(0, 256);
    }
    if (!c.notify("notifications/initialized", "")) {
        return "the server went away after initialize";
    }
    return {};
}

}  // namespace

UpstreamSession::UpstreamSession(UpstreamOptions options,
                                 StdioConnection::MessageHandler on_message,
                                 StdioConnection::LogHandler on_log)
    : options_(std::move(options)),
      on_message_(std::move(on_message)),
      on_log_(std::move(on_log)) {}

UpstreamSession::~UpstreamSession() {
    close();
}

bool UpstreamSession::connect() {
    const std::lock_guard lock(mutex_);
    return connectLocked();
}

bool UpstreamSession::connectLocked() {
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
    std::shared_ptr<StdioConnection> c(
        StdioConnection::start(options_.stdio, on_message_, on_log_, error));
    Handshake handshake;
    if (c) {
        error = initialize(*c, options_, handshake);
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
    backoff_ = milliseconds(0);
    next_attempt_ = {};
    status_.connected = true;
    status_.connected_since_ms = unixMs();
    status_.protocol_version = handshake.version;
    status_.server_name = handshake.server_name;
    status_.server_version = handshake.server_version;
    if (ever_connected_) {
        ++status_.reconnects;
    }
    ever_connected_ = true;
    return true;
}

RpcOutcome UpstreamSession::request(std::string_view method, std::string_view params_json) {
    std::shared_ptr<StdioConnection> c;
    {
        const std::lock_guard lock(mutex_);
        if (!connectLocked()) {
            return failure("the upstream is not connected: " + status_.last_error);
        }
        c = connection_;
        status_.last_used_ms = unixMs();
    }
    RpcOutcome r = c->request(method, params_json, options_.request_timeout);
    if (!r.ok) {
        const std::lock_guard lock(mutex_);
        status_.last_error = std::string(method) + ": " + r.error_message;
        if (!c->open() && connection_ == c) {
            status_.connected = false;
        }
    }
    return r;
}

RpcOutcome UpstreamSession::listTools(std::vector<std::string>& tools, int max_pages) {
    std::string cursor;
    for (int page = 0; page < max_pages; ++page) {
        RpcOutcome r = request(
            "tools/list", cursor.empty() ? "{}" : R"({"cursor":)" + sdk::jsonQuote(cursor) + "}");
        if (!r.ok) {
            return r;
        }
        rapidjson::Document doc;
        doc.Parse(r.result_json.c_str());
        if (!doc.IsObject() || !doc.HasMember("tools") || !doc["tools"].IsArray()) {
            return failure("tools/list: the server's answer has no tools array");
        }
        for (const rapidjson::Value& tool : doc["tools"].GetArray()) {
            tools.push_back(jsonText(tool));
        }
        cursor = member(doc, "nextCursor");
        if (cursor.empty()) {
            return r;
        }
    }
    return failure("tools/list: more than " + std::to_string(max_pages) +
                   " pages; the list was cut there");
}

UpstreamStatus UpstreamSession::status() const {
    const std::lock_guard lock(mutex_);
    UpstreamStatus s = status_;
    if (connection_ && !connection_->open()) {
        s.connected = false;
    }
    return s;
}

void UpstreamSession::close() {
    std::shared_ptr<StdioConnection> c;
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
    auto c = StdioConnection::start(options.stdio, nullptr, nullptr, error);
    if (!c) {
        return failure(error);
    }
    Handshake handshake;
    error = initialize(*c, options, handshake);
    if (!error.empty()) {
        c->close();
        return failure(error);
    }
    RpcOutcome r = c->request("ping", "", options.initialize_timeout);
    c->close();
    return r;
}

}  // namespace crank::mcpc
