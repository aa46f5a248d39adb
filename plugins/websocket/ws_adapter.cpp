#include "ws_adapter.h"

#include <chrono>
#include <cstdint>
#include <memory>

#include <rapidjson/document.h>
#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "ws_config.h"
#include "ws_connection.h"

namespace crank::ws {
namespace {

using Clock = std::chrono::steady_clock;
using sdk::ErrorCode;

constexpr auto kReadSlice = std::chrono::milliseconds(100);
constexpr auto kCloseWait = std::chrono::milliseconds(1000);
constexpr auto kProgressEvery = std::chrono::milliseconds(250);

std::string percentEncode(std::string_view text) {
    static constexpr std::string_view kHex = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
            c == '-' || c == '_' || c == '.' || c == '~') {
            out.push_back(c);
        } else {
            out.push_back('%');
            out.push_back(kHex[u >> 4]);
            out.push_back(kHex[u & 15]);
        }
    }
    return out;
}

std::string member(const rapidjson::Value& object, const char* name) {
    const auto it = object.FindMember(name);
    return it != object.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
}

std::string compact(const rapidjson::Value& v) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    v.Accept(writer);
    return {buffer.GetString(), buffer.GetSize()};
}

/// The auth profile (crank_request.auth_json) applied: headers, or a query parameter appended to
/// the URL for an api_key "in": "query".
void applyAuth(std::string_view auth_json, WsConfig& config, Headers& headers) {
    if (auth_json.empty()) {
        return;
    }
    rapidjson::Document doc;
    doc.Parse(auth_json.data(), auth_json.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        throw sdk::Error(ErrorCode::internal, "the auth profile from the host is not JSON");
    }
    const rapidjson::Value& root = doc;
    const std::string type = member(root, "type");
    if (type == "bearer") {
        headers.emplace_back("Authorization", "Bearer " + member(root, "token"));
    } else if (type == "basic") {
        headers.emplace_back(
            "Authorization",
            "Basic " + sdk::base64(member(root, "username") + ":" + member(root, "password")));
    } else if (type == "api_key") {
        if (member(root, "in") == "query") {
            config.path_and_query +=
                (config.path_and_query.find('?') == std::string::npos ? "?" : "&") +
                percentEncode(member(root, "name")) + "=" + percentEncode(member(root, "key"));
        } else {
            headers.emplace_back(member(root, "name"), member(root, "key"));
        }
    }
    const auto extra = root.FindMember("headers");
    if (extra != root.MemberEnd() && extra->value.IsObject()) {
        for (auto it = extra->value.MemberBegin(); it != extra->value.MemberEnd(); ++it) {
            if (it->value.IsString()) {
                headers.emplace_back(
                    std::string(it->name.GetString(), it->name.GetStringLength()),
                    std::string(it->value.GetString(), it->value.GetStringLength()));
            }
        }
    }
}

/// The rendered config of a call, with the auth profile applied.
struct Prepared {
    WsConfig config;
    Headers headers;
};

Prepared prepare(const sdk::Request& request) {
    std::string problems;
    auto config = parseWsConfig(
        request.request_json, true, [&](std::string_view path, std::string_view message) {
            problems += problems.empty() ? "" : "; ";
            problems += "config." + std::string(path) + ": " + std::string(message);
        });
    if (!config) {
        throw sdk::Error(ErrorCode::invalid_argument, problems);
    }
    Prepared p;
    p.config = std::move(*config);
    p.headers = p.config.headers;
    applyAuth(request.auth_json, p.config, p.headers);
    request.appendTraceHeaders(p.headers);
    return p;
}

/// True when `text` is one JSON value. SAX, no document built, and iterative: an upstream's
/// message nested a million levels deep must not recurse on the stack.
bool isJson(const std::string& text) {
    rapidjson::MemoryStream memory(text.data(), text.size());
    rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(memory);
    rapidjson::Reader reader;
    rapidjson::BaseReaderHandler<> ignore;
    return !reader
                .Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag>(
                    in, ignore)
                .IsError();
}

/// A text message as an item: JSON as it is, any other text as {"text": "..."}.
std::string itemOf(const std::string& text) {
    if (isJson(text)) {
        return text;
    }
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    writer.StartObject();
    writer.Key("text");
    writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    writer.EndObject();
    return {buffer.GetString(), buffer.GetSize()};
}

const rapidjson::Value* find(const rapidjson::Value& root, const sdk::Path& path) {
    const rapidjson::Value* at = &root;
    for (const sdk::PathSegment& s : path.segments) {
        if (at->IsObject()) {
            const auto it = at->FindMember(rapidjson::StringRef(s.name.data(), s.name.size()));
            if (it == at->MemberEnd()) {
                return nullptr;
            }
            at = &it->value;
        } else if (at->IsArray()) {
            const auto index = s.index();
            if (!index || *index >= at->Size()) {
                return nullptr;
            }
            at = &(*at)[static_cast<rapidjson::SizeType>(*index)];
        } else {
            return nullptr;
        }
    }
    return at;
}

bool truthy(const rapidjson::Value* v) {
    return v != nullptr &&
           ((v->IsBool() && v->GetBool()) || (v->IsString() && v->GetStringLength() > 0 &&
                                              std::string_view(v->GetString()) != "false"));
}

bool retriable(ErrorCode code) {
    return code == ErrorCode::unavailable || code == ErrorCode::timeout ||
           code == ErrorCode::protocol;
}

/// A subscription read on the stream's own thread. When the host pauses it, the socket is not
/// read: TCP flow control makes the upstream wait.
class WsStream final : public sdk::ThreadedStream {
public:
    explicit WsStream(Prepared prepared) : p_(std::move(prepared)) {}
    ~WsStream() override { stop(); }
    WsStream(const WsStream&) = delete;
    WsStream& operator=(const WsStream&) = delete;
    WsStream(WsStream&&) = delete;
    WsStream& operator=(WsStream&&) = delete;

protected:
    void run(sdk::StreamContext& ctx) override {
        int failures = 0;
        std::int64_t backoff = p_.config.reconnect.initial_backoff_ms;
        std::uint64_t connections = 0;
        while (!ctx.cancelled()) {
            std::unique_ptr<WsConnection> connection;
            try {
                connection = std::make_unique<WsConnection>(p_.config, p_.headers);
                if (p_.config.subscribe_message) {
                    connection->send(*p_.config.subscribe_message);
                }
                if (++connections > 1) {
                    ctx.call().log(sdk::LogLevel::info,
                                   "reconnected to " + p_.config.url + " (connection " +
                                       std::to_string(connections) + ") and subscribed again");
                }
                const std::uint64_t before = received_;
                if (readUntilEnd(ctx, *connection)) {
                    return;  // the upstream ended the stream, or the host ended it
                }
                // Failures count in a row: a connection that delivered something was a success.
                // (One that drops right after subscribing, again and again, uses up the attempts.)
                if (received_ > before) {
                    failures = 0;
                    backoff = p_.config.reconnect.initial_backoff_ms;
                }
                throw sdk::Error(ErrorCode::unavailable,
                                 "the upstream at " + p_.config.url + " dropped the connection" +
                                     (connection->closeCode() != 0
                                          ? " (close " + std::to_string(connection->closeCode()) +
                                                " " + connection->closeReason() + ")"
                                          : ""));
            } catch (const sdk::Error& e) {
                if (ctx.cancelled()) {
                    return;
                }
                if (!retriable(e.code()) || failures >= p_.config.reconnect.attempts) {
                    report(ctx);
                    throw;
                }
                ++failures;
                ctx.call().log(sdk::LogLevel::warn,
                               std::string(e.what()) + "; reconnecting in " +
                                   std::to_string(backoff) + " ms (attempt " +
                                   std::to_string(failures) + " of " +
                                   std::to_string(p_.config.reconnect.attempts) + ")");
                if (!ctx.waitFor(std::chrono::milliseconds(backoff))) {
                    return;
                }
                backoff = std::min(backoff * 2, p_.config.reconnect.max_backoff_ms);
            }
        }
    }

private:
    /// Reads `connection` until the upstream closes cleanly (true), the host ends the stream
    /// (true, after unsubscribing and closing), or the connection drops (false).
    bool readUntilEnd(sdk::StreamContext& ctx, WsConnection& connection) {
        WsConnection::Message message;
        auto lastProgress = Clock::now();
        while (true) {
            if (ctx.cancelled()) {
                finish(ctx, connection);
                return true;
            }
            const WsConnection::Event event = connection.read(message, kReadSlice);
            if (event == WsConnection::Event::idle) {
                continue;
            }
            if (event == WsConnection::Event::closed) {
                const std::uint16_t code = connection.closeCode();
                if (code == 1000 || code == 1001) {
                    report(ctx);
                    return true;
                }
                return false;
            }
            if (message.binary) {
                if (binary_++ == 0) {
                    ctx.call().log(sdk::LogLevel::info, "binary frames from " + p_.config.url +
                                                            " are not passed on (counted)");
                }
                continue;
            }
            ++received_;
            if (!ctx.emit(itemOf(message.data))) {
                finish(ctx, connection);
                return true;
            }
            if (const auto now = Clock::now(); now - lastProgress >= kProgressEvery) {
                lastProgress = now;
                ctx.call().progress(static_cast<double>(received_), -1, summary(connection));
            }
        }
    }

    /// The host ended the stream: unsubscribe when configured, then the close handshake.
    void finish(sdk::StreamContext& ctx, WsConnection& connection) {
        const bool shutdown = ctx.call().cancelReason() == CRANK_CANCEL_SHUTDOWN;
        if (p_.config.unsubscribe_message) {
            try {
                connection.send(*p_.config.unsubscribe_message);
            } catch (const sdk::Error&) {  // NOLINT(bugprone-empty-catch): closing anyway
            }
        }
        connection.close(kCloseWait, shutdown);
        report(ctx);
    }

    std::string summary(const WsConnection& connection) const {
        return std::to_string(received_) + " messages from " + p_.config.url + ", " +
               std::to_string(binary_) + " binary frames ignored, " +
               std::to_string(connection.droppedOversize()) + " oversized messages dropped";
    }

    void report(sdk::StreamContext& ctx) {
        if (binary_ > 0) {
            ctx.call().log(sdk::LogLevel::info, std::to_string(binary_) + " binary frames from " +
                                                    p_.config.url + " were not passed on");
        }
    }

    Prepared p_;
    std::uint64_t received_ = 0;
    std::uint64_t binary_ = 0;
};

}  // namespace

void WsAdapter::validate(std::string_view config_json, sdk::Diagnostics& diagnostics) {
    parseWsConfig(config_json, false, [&](std::string_view path, std::string_view message) {
        diagnostics.error(path, message);
    });
}

std::string WsAdapter::describe(std::string_view config_json, sdk::Diagnostics& diagnostics) {
    auto config = parseWsConfig(
        config_json, false,
        [&](std::string_view path, std::string_view message) { diagnostics.error(path, message); });
    if (!config) {
        return {};
    }
    // A job answers once (its final message); a subscription streams.
    return config->job ? R"({"transport_behavior":"request_response"})"
                       : R"({"transport_behavior":"server_stream"})";
}

std::unique_ptr<sdk::Stream> WsAdapter::openStream(sdk::Call& /*call*/,
                                                   const sdk::Request& request) {
    Prepared p = prepare(request);
    if (p.config.job) {
        throw sdk::Error(ErrorCode::invalid_argument,
                         "config.job: a job runs over request_response (mode async_job)",
                         R"({"path":"job"})");
    }
    return std::make_unique<WsStream>(std::move(p));
}

void WsAdapter::unaryCall(sdk::Call& call, const sdk::Request& request) {
    Prepared p = prepare(request);
    if (!p.config.job) {
        throw sdk::Error(ErrorCode::unsupported,
                         "a WebSocket subscription streams: use mode window, session or async_job "
                         "(or give `job` for a progress channel)");
    }
    const JobOptions& job = *p.config.job;
    WsConnection connection(p.config, p.headers);
    if (p.config.subscribe_message) {
        connection.send(*p.config.subscribe_message);
    }
    const auto deadline = request.timeout_ms > 0
                              ? Clock::now() + std::chrono::milliseconds(request.timeout_ms)
                              : Clock::time_point::max();
    WsConnection::Message message;
    while (true) {
        if (call.isCancelled() || Clock::now() >= deadline) {
            if (p.config.unsubscribe_message) {
                try {
                    connection.send(*p.config.unsubscribe_message);
                } catch (const sdk::Error&) {  // NOLINT(bugprone-empty-catch): closing anyway
                }
            }
            connection.close(kCloseWait, call.cancelReason() == CRANK_CANCEL_SHUTDOWN);
            throw sdk::Error(ErrorCode::timeout, "the job at " + p.config.url +
                                                     " did not finish within " +
                                                     std::to_string(request.timeout_ms) + " ms");
        }
        const WsConnection::Event event = connection.read(message, kReadSlice);
        if (event == WsConnection::Event::idle) {
            continue;
        }
        if (event == WsConnection::Event::closed) {
            throw sdk::Error(ErrorCode::unavailable,
                             "the upstream at " + p.config.url + " closed before the job was done");
        }
        if (message.binary) {
            continue;
        }
        rapidjson::Document doc;
        doc.Parse<rapidjson::kParseIterativeFlag>(message.data.data(), message.data.size());
        if (doc.HasParseError()) {
            call.log(sdk::LogLevel::debug, "a job message that is not JSON was ignored");
            continue;
        }
        const rapidjson::Value& root = doc;
        if (!truthy(find(root, job.done_path.path))) {
            const rapidjson::Value* progress =
                job.progress_path ? find(root, job.progress_path->path) : nullptr;
            const rapidjson::Value* total =
                job.total_path ? find(root, job.total_path->path) : nullptr;
            const rapidjson::Value* status =
                job.status_path ? find(root, job.status_path->path) : nullptr;
            if (progress != nullptr && progress->IsNumber()) {
                call.progress(progress->GetDouble(),
                              total != nullptr && total->IsNumber() ? total->GetDouble() : -1,
                              status != nullptr && status->IsString() ? status->GetString() : "");
            }
            continue;
        }
        connection.close(kCloseWait);
        if (job.error_path) {
            const rapidjson::Value* error = find(root, job.error_path->path);
            if (error != nullptr && !error->IsNull() && !(error->IsBool() && !error->GetBool())) {
                throw sdk::Error(
                    ErrorCode::upstream,
                    "the job at " + p.config.url + " failed: " +
                        (error->IsString() ? std::string(error->GetString()) : compact(*error)));
            }
        }
        const rapidjson::Value* result =
            job.result_path ? find(root, job.result_path->path) : &root;
        if (result == nullptr) {
            throw sdk::Error(ErrorCode::protocol, "the final message of the job at " +
                                                      p.config.url + " has nothing at " +
                                                      job.result_path->text);
        }
        call.emit(compact(*result));
        return;
    }
}

sdk::AdapterInfo wsAdapterInfo() {
    sdk::AdapterInfo info;
    info.name = "websocket";
    info.version = "1.0.0";
    info.description =
        "WebSocket subscriptions as windows, sessions and jobs; progress channels as "
        "async jobs";
    info.capabilities = CRANK_CAP_UNARY | CRANK_CAP_SERVER_STREAM;
    info.modes = CRANK_MODE_WINDOW | CRANK_MODE_SESSION | CRANK_MODE_ASYNC_JOB;
    info.config_schema_json = std::string(wsConfigSchema());
    return info;
}

void registerWsPlugin(sdk::Registrar& registrar) {
    registrar.addAdapter(wsAdapterInfo(), std::make_unique<WsAdapter>());
}

}  // namespace crank::ws
