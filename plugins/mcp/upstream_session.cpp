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

RpcOutcome failure(std::string message) {
    RpcOutcome r;
    r.error_message = std::move(message);
    return r;
}

struct Handshake {
    std::string version;
    std::string server_name;
    std::string server_version;
    std::string capabilities_json = "{}";
    std::string instructions;
};

/// initialize + notifications/initialized on `c`; the error message when it fails.
std::string initialize(Connection& c, const UpstreamOptions& o, Handshake& out) {
    const std::string params =
        R"({"protocolVersion":)" + sdk::jsonQuote(o.protocol_versions.front()) +
        R"(,"capabilities":)" + o.client_capabilities_json + R"(,"clientInfo":{"name":)" +
        sdk::jsonQuote(o.client_name) + R"(,"version":)" + sdk::jsonQuote(o.client_version) + "}}";
    const RpcOutcome r = c.request("initialize", params, o.initialize_timeout);
    if (!r.ok) {
        return "initialize failed: " + r.error_message;
    }
    rapidjson::Document doc;
    doc.Parse(r.result_json.data(), r.result_json.size());
    out.version = stringMember(doc, "protocolVersion");
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
        out.server_name = stringMember(doc["serverInfo"], "name").substr(0, 256);
        out.server_version = stringMember(doc["serverInfo"], "version").substr(0, 256);
    }
    if (doc.IsObject() && doc.HasMember("capabilities") && doc["capabilities"].IsObject()) {
        out.capabilities_json = jsonText(doc["capabilities"]);
    }
    // Shown in crankd's status: bounded, cut at a character boundary.
    out.instructions = stringMember(doc, "instructions");
    if (constexpr std::size_t kMaxInstructions = std::size_t{16} * 1024;
        out.instructions.size() > kMaxInstructions) {
        std::size_t cut = kMaxInstructions;
        while (cut > 0 && (static_cast<unsigned char>(out.instructions[cut]) & 0xC0U) == 0x80U) {
            --cut;
        }
        out.instructions.resize(cut);
    }
    c.setProtocolVersion(out.version);
    if (!c.notify("notifications/initialized", "")) {
        return "the server went away after initialize";
    }
    return {};
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
    status_.capabilities_json = handshake.capabilities_json;
    status_.instructions = handshake.instructions;
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
    RpcOutcome r;
    // At most one more attempt, and only after the server said our session has expired.
    for (int attempt = 0; attempt < 2; ++attempt) {
        std::string why;
        std::shared_ptr<Connection> c = live(why);
        if (!c) {
            return failure("the upstream is not connected: " + why);
        }
        r = c->request(method, params_json, timeout.value_or(options_.request_timeout), hooks);
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
    std::unique_ptr<Connection> c =
        options.transport ? options.transport(nullptr, nullptr, error) : nullptr;
    if (!c) {
        return failure(error.empty() ? "no transport is configured" : error);
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
