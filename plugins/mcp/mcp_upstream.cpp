#include "mcp_upstream.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "http_connection.h"
#include "json_text.h"
#include <crank/sdk/json.hpp>

namespace crank::mcpc {
namespace {

/// The `_meta` key under which the host hands the capabilities of the client that made the
/// call (plugin.h, upstream_request): what a 2026 upstream may ask it for.
constexpr const char* kCallerCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";
/// And the level of log notifications the caller takes: a 2026 upstream sends none without it.
constexpr const char* kCallerLogLevelKey = "io.modelcontextprotocol/logLevel";

/// What the host's params say of the call, taken out of them: the caller's capabilities (a
/// 2026 upstream gets them in its own `_meta`, a 2025 one never sees them) and whether progress
/// was asked for (the token is replaced by one unique on this connection).
struct CallerParams {
    std::string capabilities_json = "{}";
    bool progress = false;
    bool changed = false;  ///< the params lost a member the host added
};

CallerParams takeCallerParams(rapidjson::Document& params, bool modern) {
    CallerParams out;
    if (!params.IsObject() || !params.HasMember("_meta") || !params["_meta"].IsObject()) {
        return out;
    }
    rapidjson::Value& meta = params["_meta"];
    if (!modern && meta.HasMember(kCallerLogLevelKey)) {
        meta.RemoveMember(kCallerLogLevelKey);  // a 2025 server has logging/setLevel instead
        out.changed = true;
    }
    if (meta.HasMember(kCallerCapabilitiesKey)) {
        if (meta[kCallerCapabilitiesKey].IsObject()) {
            out.capabilities_json = jsonText(meta[kCallerCapabilitiesKey]);
        }
        meta.RemoveMember(kCallerCapabilitiesKey);
        out.changed = true;
    }
    out.progress = meta.HasMember("progressToken");
    if (meta.ObjectEmpty()) {
        params.RemoveMember("_meta");
    }
    return out;
}

/// `result_json` without a `resultType` member (a 2025 server's, which crank must not read as
/// the 2026 era's).
std::string withoutResultType(std::string result_json) {
    if (result_json.find("resultType") == std::string::npos &&
        result_json.find("\\u") == std::string::npos) {
        return result_json;
    }
    rapidjson::Document doc;
    if (!parseServerMessage(result_json, doc).empty() || !doc.IsObject() ||
        !doc.HasMember("resultType")) {
        return result_json;
    }
    doc.RemoveMember("resultType");
    return jsonText(doc);
}

}  // namespace

McpUpstream::McpUpstream(sdk::Host host, sdk::Peer peer, std::string name, McpUpstreamConfig config)
    : host_(host), peer_(peer), name_(std::move(name)), config_(std::move(config)) {
    ClientRequests::Options options;
    options.max_requests = config_.max_client_requests;
    options.answer_timeout = config_.options.request_timeout;
    options.unrouted_wait = config_.unrouted_request_wait;
    options.blocking_question = config_.blocking_question;
    requests_ = std::make_unique<ClientRequests>(
        options, [this](const std::string& message) { session_->send(message); });
    session_ = std::make_unique<UpstreamSession>(
        config_.options, [this](std::string_view message) { onMessage(message, nullptr); },
        [this](std::string_view line) { log(sdk::LogLevel::info, std::string(line)); },
        [this] {
            // A new connection: its lists may differ from the last one's, and the server knows
            // none of the resources crank follows (a restarted process, an expired session).
            peer_.notify("notifications/tools/list_changed", "");
            peer_.notify("notifications/resources/list_changed", "");
            peer_.notify("notifications/prompts/list_changed", "");
            resubscribe();
            // A new connection: new listens (2026 era).
            lists_listen_->changed();
            resources_listen_->changed();
        });
    for (const bool lists : {true, false}) {
        UpstreamListen::Hooks listen;
        listen.filter = [this, lists] { return listenFilter(lists); };
        listen.send = [this](const std::string& params, const RequestHooks& hooks,
                             std::chrono::milliseconds timeout) {
            return session_->request("subscriptions/listen", params, hooks, timeout);
        };
        if (lists) {
            listen.on_gap = [this] {
                // What changed while no listen was open was not heard: the lists are read again.
                peer_.notify("notifications/tools/list_changed", "");
                peer_.notify("notifications/resources/list_changed", "");
                peer_.notify("notifications/prompts/list_changed", "");
            };
        }
        listen.log = [this, lists](const std::string& line) {
            log(sdk::LogLevel::warn,
                std::string(lists ? "the listen of list changes: " : "the listen of resources: ") +
                    line);
        };
        (lists ? lists_listen_ : resources_listen_) =
            std::make_unique<UpstreamListen>(std::move(listen));
    }
    lists_listen_->start();
    resources_listen_->start();
}

McpUpstream::~McpUpstream() {
    shutdown();
}

void McpUpstream::shutdown() {
    lists_listen_->stop();  // before the session: the listens wait on it
    resources_listen_->stop();
    session_->close();  // fails what waits, so that the calls end
    requests_->close();
}

void McpUpstream::log(sdk::LogLevel level, const std::string& message) const {
    host_.log(level, "upstream " + name_ + ": " + message);
}

std::string McpUpstream::request(sdk::Call& call, std::string_view method,
                                 std::string_view params_json) {
    std::string params(params_json);
    std::string token;
    const bool subscription = method == "resources/subscribe" || method == "resources/unsubscribe";
    std::string uri;  // a subscription's, noted once the server accepts it
    CallerParams caller;
    if (!params.empty()) {
        rapidjson::Document doc;
        doc.Parse(params.data(), params.size());
        if (!doc.HasParseError() && doc.IsObject()) {
            if (subscription) {
                uri = stringMember(doc, "uri");
            }
            caller = takeCallerParams(doc, modern());
            if (caller.progress) {
                token = "crank-" + std::to_string(next_token_++);
                rapidjson::Value value(token.c_str(),
                                       static_cast<rapidjson::SizeType>(token.size()),
                                       doc.GetAllocator());
                doc["_meta"]["progressToken"] = value;
            }
            if (caller.progress || caller.changed) {
                params = jsonText(doc);
            }
        }
    }
    if (subscription && modern()) {
        // The 2026 era has no resources/subscribe: the URI joins the listen's filter.
        if (!offersSubscribe(session_->status().capabilities_json)) {
            throw sdk::Error(
                sdk::ErrorCode::unsupported,
                std::string(method) + ": the upstream does not offer resources.subscribe");
        }
        if (method == "resources/subscribe" && !fitsTheListen(uri)) {
            throw sdk::Error(sdk::ErrorCode::resource_exhausted,
                             std::string(method) + ": crank follows at most " +
                                 std::to_string(kMaxListenedResources) + " resources (" +
                                 std::to_string(kMaxListenedResourceBytes / 1024) +
                                 " KiB of URIs) of this upstream");
        }
        remember(method == "resources/subscribe", uri);
        resources_listen_->changed();
        return "{}";
    }
    const auto flight = requests_->begin(call, std::move(token));
    RequestHooks hooks;
    hooks.cancelled = [flight] { return flight->call.isCancelled(); };
    // A 2026 upstream asks the caller only for what the caller can answer (its input_required
    // results are passed back as they are: the host relays the questions and sends the request
    // again with the answers).
    hooks.client_capabilities_json = std::move(caller.capabilities_json);
    hooks.on_related = [this, flight](std::string_view message) { onMessage(message, flight); };
    RpcOutcome outcome = session_->request(method, params, hooks);
    if (outcome.ok && !uri.empty()) {
        remember(method == "resources/subscribe", uri);
    }
    // Answered: a result, or an error of the server's (not a cancellation or a transport's).
    requests_->end(flight, outcome.ok || outcome.error_code != 0);
    if (outcome.ok && !modern()) {
        // From a 2025 server resultType means nothing: never an input_required to relay.
        return withoutResultType(std::move(outcome.result_json));
    }
    if (outcome.ok) {
        return std::move(outcome.result_json);
    }
    if (outcome.cancelled) {
        throw sdk::Error(sdk::ErrorCode::timeout, std::string(method) + ": cancelled");
    }
    if (outcome.error_code != 0) {
        std::string details = R"({"jsonrpc_error":{"code":)" + std::to_string(outcome.error_code) +
                              R"(,"message":)" + sdk::jsonQuote(outcome.error_message);
        if (!outcome.error_data_json.empty()) {
            details += R"(,"data":)" + outcome.error_data_json;
        }
        throw sdk::Error(sdk::ErrorCode::upstream, outcome.error_message, details + "}}");
    }
    throw sdk::Error(sdk::ErrorCode::unavailable, outcome.error_message);
}

void McpUpstream::remember(bool subscribed, const std::string& uri) {
    const std::lock_guard lock(subscribed_mutex_);
    if (!subscribed) {
        subscribed_.erase(uri);
    } else if (subscribed_.size() < kMaxSubscribed) {
        subscribed_.insert(uri);
    }
}

bool McpUpstream::fitsTheListen(const std::string& uri) {
    const std::lock_guard lock(subscribed_mutex_);
    if (subscribed_.count(uri) != 0) {
        return true;
    }
    std::size_t bytes = uri.size();
    for (const std::string& u : subscribed_) {
        bytes += u.size();
    }
    return subscribed_.size() < kMaxListenedResources && bytes <= kMaxListenedResourceBytes;
}

bool McpUpstream::modern() const {
    return session_->status().protocol_version.rfind("2026", 0) == 0;
}

std::optional<ListenFilter> McpUpstream::listenFilter(bool lists) {
    const UpstreamStatus s = session_->status();
    if (!s.connected || s.protocol_version.rfind("2026", 0) != 0) {
        return std::nullopt;
    }
    if (lists) {
        return listsFilterFor(s.capabilities_json);
    }
    std::vector<std::string> uris;
    {
        const std::lock_guard lock(subscribed_mutex_);
        uris.assign(subscribed_.begin(), subscribed_.end());
    }
    return resourcesFilterFor(s.capabilities_json, uris);
}

McpUpstream::ListenOwner McpUpstream::ownerOf(const rapidjson::Value& params) {
    constexpr const char* kSubscriptionId = "io.modelcontextprotocol/subscriptionId";
    if (!params.IsObject() || !params.HasMember("_meta") || !params["_meta"].IsObject() ||
        !params["_meta"].HasMember(kSubscriptionId)) {
        return ListenOwner::none;  // not a listen's (a 2025 server's, or one tied to a call)
    }
    const std::string id = jsonText(params["_meta"][kSubscriptionId]);
    if (lists_listen_->owns(id)) {
        return ListenOwner::lists;
    }
    if (resources_listen_->owns(id)) {
        return ListenOwner::resources;
    }
    if (!said_foreign_subscription_.exchange(true)) {
        log(sdk::LogLevel::warn,
            "a notification named a subscriptionId that is not the open listen's; it is dropped "
            "(and so are the next ones, without a word)");
    }
    return ListenOwner::foreign;
}

void McpUpstream::resubscribe() {
    if (modern()) {
        return;  // the listen's filter carries them
    }
    std::vector<std::string> uris;
    {
        const std::lock_guard lock(subscribed_mutex_);
        uris.assign(subscribed_.begin(), subscribed_.end());
    }
    std::size_t failed = 0;
    for (const std::string& uri : uris) {
        const RpcOutcome r = session_->request(
            "resources/subscribe", R"({"uri":)" + sdk::jsonQuote(uri) + "}", RequestHooks{});
        failed += r.ok ? 0 : 1;
    }
    if (!uris.empty()) {
        log(failed == 0 ? sdk::LogLevel::info : sdk::LogLevel::warn,
            "subscribed again to " + std::to_string(uris.size() - failed) + " of " +
                std::to_string(uris.size()) + " resources on the new connection");
    }
}

void McpUpstream::notify(std::string_view method, std::string_view params_json) {
    session_->notify(method, params_json);
}

namespace {

/// The tools a 2026 listing left out, as the status shows them: [{"name":..,"reason":..}].
std::string refusedTools(const std::vector<RefusedTool>& refused) {
    std::string out = "[";
    for (const RefusedTool& r : refused) {
        out += (out.size() == 1 ? "{" : ",{") + std::string(R"("name":)") + sdk::jsonQuote(r.name) +
               R"(,"reason":)" + sdk::jsonQuote(r.reason) + "}";
    }
    return out + "]";
}

}  // namespace

std::string McpUpstream::status() {
    const UpstreamStatus s = session_->status();
    return std::string(R"({"connected":)") + (s.connected ? "true" : "false") +
           R"(,"connected_since_ms":)" + std::to_string(s.connected_since_ms) +
           R"(,"last_used_ms":)" + std::to_string(s.last_used_ms) + R"(,"last_error":)" +
           sdk::jsonQuote(s.last_error) + R"(,"transport":)" + sdk::jsonQuote(s.transport) +
           R"(,"protocol_version":)" + sdk::jsonQuote(s.protocol_version) +
           // The era of MCP the connection speaks: "2025" (initialize and sessions, the revisions
           // of 2024-11-05 to 2025-11-25) or "2026" (2026-07-28, stateless); "" before a
           // handshake.
           R"(,"era":)" +
           sdk::jsonQuote(s.protocol_version.empty()                 ? ""
                          : s.protocol_version.rfind("2026", 0) == 0 ? "2026"
                                                                     : "2025") +
           R"(,"instructions":)" + sdk::jsonQuote(s.instructions) + R"(,"refused_tools":)" +
           refusedTools(s.refused_tools) + R"(,"capabilities":)" +
           (s.capabilities_json.empty() ? std::string("null") : s.capabilities_json) +
           R"(,"server":{"name":)" + sdk::jsonQuote(s.server_name) + R"(,"version":)" +
           sdk::jsonQuote(s.server_version) + R"(},"reconnects":)" + std::to_string(s.reconnects) +
           "}";
}

void McpUpstream::onMessage(std::string_view message,
                            const std::shared_ptr<ClientRequests::Flight>& related) {
    rapidjson::Document doc;
    if (!parseServerMessage(message, doc).empty() || !doc.IsObject()) {
        return;
    }
    const std::string method = stringMember(doc, "method");
    const bool isRequest = doc.HasMember("id") && !method.empty();
    std::string params = "{}";
    const bool hasParams = doc.HasMember("params") && doc["params"].IsObject();
    if (hasParams) {
        params = jsonText(doc["params"]);
    }
    if (isRequest) {
        const std::string id = jsonText(doc["id"]);
        if (method == "ping") {
            session_->send(R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{}})");
            return;
        }
        requests_->handle(id, method, params, related);
        return;
    }
    if (method == "notifications/cancelled") {
        // The server gave up one of its requests to a client.
        if (hasParams && doc["params"].HasMember("requestId")) {
            requests_->cancelled(jsonText(doc["params"]["requestId"]));
        }
        return;
    }
    if (method == "notifications/progress") {
        const rapidjson::Value* p = hasParams ? &doc["params"] : nullptr;
        const auto flight =
            p != nullptr && p->HasMember("progressToken") && (*p)["progressToken"].IsString()
                ? requests_->byToken(stringMember(*p, "progressToken"))
                : nullptr;
        if (flight && p->HasMember("progress") && (*p)["progress"].IsNumber()) {
            flight->call.progress(
                (*p)["progress"].GetDouble(),
                p->HasMember("total") && (*p)["total"].IsNumber() ? (*p)["total"].GetDouble() : -1,
                stringMember(*p, "message"));
        }
        return;
    }
    if (method == "notifications/message") {
        const auto flight = related ? related : requests_->sole();
        if (flight) {
            flight->call.notify(method, params);
        } else {
            peer_.notify(method, params);
        }
        return;
    }
    const ListenOwner owner = hasParams ? ownerOf(doc["params"]) : ListenOwner::none;
    if (method == "notifications/subscriptions/acknowledged") {
        if (owner == ListenOwner::lists) {
            lists_listen_->acknowledged();
        } else if (owner == ListenOwner::resources) {
            resources_listen_->acknowledged();
        }
        return;
    }
    if (owner == ListenOwner::foreign) {
        return;
    }
    if (method == "notifications/tools/list_changed" ||
        method == "notifications/resources/list_changed" ||
        method == "notifications/prompts/list_changed" ||
        method == "notifications/resources/updated" || method == "notifications/tasks/status") {
        peer_.notify(method, params);
    }
    // Others have no client here.
}

namespace {

constexpr std::string_view kOperationSchema = R"({
  "type": "object",
  "properties": {
    "upstream": {"type": "string", "minLength": 1},
    "tool": {"type": "string", "minLength": 1},
    "arguments": {"type": "object"}
  },
  "required": ["upstream", "tool"],
  "additionalProperties": false
})";

/// What the host holds for one open upstream: closing it unregisters it from the adapter and
/// shuts the connection; an operation's call still running keeps the object itself alive.
class UpstreamHandle final : public sdk::Upstream {
public:
    UpstreamHandle(std::shared_ptr<McpUpstream> core, std::function<void()> on_close)
        : core_(std::move(core)), on_close_(std::move(on_close)) {}
    ~UpstreamHandle() override {
        on_close_();
        core_->shutdown();
    }
    UpstreamHandle(const UpstreamHandle&) = delete;
    UpstreamHandle& operator=(const UpstreamHandle&) = delete;
    UpstreamHandle(UpstreamHandle&&) = delete;
    UpstreamHandle& operator=(UpstreamHandle&&) = delete;

    std::string request(sdk::Call& call, std::string_view method,
                        std::string_view params_json) override {
        return core_->request(call, method, params_json);
    }
    void notify(std::string_view method, std::string_view params_json) override {
        core_->notify(method, params_json);
    }
    std::string status() override { return core_->status(); }

private:
    std::shared_ptr<McpUpstream> core_;
    std::function<void()> on_close_;
};

class McpAdapter final : public sdk::Adapter {
public:
    explicit McpAdapter(sdk::Host host) : host_(host) {}

    void validate(std::string_view config_json, sdk::Diagnostics& diagnostics) override {
        // An operation's config names an upstream and a tool; an upstream's has a command.
        rapidjson::Document doc;
        doc.Parse(config_json.data(), config_json.size());
        if (!doc.HasParseError() && doc.IsObject() && doc.HasMember("tool")) {
            return;
        }
        try {
            parseMcpUpstreamConfig(config_json);
        } catch (const sdk::Error& e) {
            // The member at fault as the diagnostic's path ("command"), its message without it.
            rapidjson::Document details;
            details.Parse(e.details().c_str());
            std::string path;
            if (!details.HasParseError() && details.IsObject() && details.HasMember("path") &&
                details["path"].IsString()) {
                path = details["path"].GetString();
            }
            std::string message = e.what();
            if (!path.empty() && message.rfind(path + ": ", 0) == 0) {
                message.erase(0, path.size() + 2);
            }
            diagnostics.error(path, message);
        }
    }

    std::unique_ptr<sdk::Upstream> openUpstream(sdk::Peer peer, std::string_view name,
                                                std::string_view config_json) override {
        auto core = std::make_shared<McpUpstream>(host_, peer, std::string(name),
                                                  parseMcpUpstreamConfig(config_json));
        const std::string key(name);
        {
            const std::lock_guard lock(mutex_);
            open_[key] = core;
        }
        return std::make_unique<UpstreamHandle>(core, [this, key, weak = std::weak_ptr(core)] {
            const std::lock_guard lock(mutex_);
            const auto it = open_.find(key);
            if (it != open_.end() && it->second.lock() == weak.lock()) {
                open_.erase(it);
            }
        });
    }

    /// An operation over an upstream's tool: one tools/call; the item is the result's
    /// structuredContent, or {"content": [...]} when it has none. A result with isError fails the
    /// call with its text.
    void unaryCall(sdk::Call& call, const sdk::Request& request) override {
        rapidjson::Document config;
        config.Parse(request.request_json.data(), request.request_json.size());
        if (config.HasParseError() || !config.IsObject()) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument, "the config must be an object");
        }
        const std::string upstream = stringMember(config, "upstream");
        std::shared_ptr<McpUpstream> core;
        {
            const std::lock_guard lock(mutex_);
            const auto it = open_.find(upstream);
            if (it != open_.end()) {
                core = it->second.lock();
            }
        }
        if (!core) {
            throw sdk::Error(sdk::ErrorCode::unavailable,
                             "no upstream " + sdk::jsonQuote(upstream) +
                                 " is open (config upstreams[], protocol \"mcp\")",
                             R"({"path":"upstream"})");
        }
        const std::string arguments =
            config.HasMember("arguments") ? jsonText(config["arguments"]) : std::string("{}");
        const std::string result =
            core->request(call, "tools/call",
                          R"({"name":)" + sdk::jsonQuote(stringMember(config, "tool")) +
                              R"(,"arguments":)" + arguments + "}");
        rapidjson::Document doc;
        doc.Parse(result.data(), result.size());
        if (doc.HasParseError() || !doc.IsObject()) {
            throw sdk::Error(sdk::ErrorCode::protocol, "tools/call answered no object");
        }
        if (stringMember(doc, "resultType") == "input_required") {
            // An operation's call has no client to ask (a federated tool's has: the host relays).
            throw sdk::Error(sdk::ErrorCode::unsupported,
                             "the tool asked the caller for input (an input_required result), "
                             "which an operation cannot relay: publish the upstream's tools "
                             "through federation instead");
        }
        if (doc.HasMember("isError") && doc["isError"].IsBool() && doc["isError"].GetBool()) {
            std::string text;
            if (doc.HasMember("content") && doc["content"].IsArray()) {
                for (const rapidjson::Value& block : doc["content"].GetArray()) {
                    text += stringMember(block, "text");
                }
            }
            throw sdk::Error(sdk::ErrorCode::upstream, "the tool failed: " + text.substr(0, 2000));
        }
        if (doc.HasMember("structuredContent")) {
            call.emit(jsonText(doc["structuredContent"]));
            return;
        }
        call.emit(R"({"content":)" +
                  (doc.HasMember("content") ? jsonText(doc["content"]) : std::string("[]")) + "}");
    }

private:
    sdk::Host host_;
    std::mutex mutex_;
    std::map<std::string, std::weak_ptr<McpUpstream>> open_;
};

}  // namespace

void registerMcpPlugin(sdk::Registrar& registrar) {
    sdk::AdapterInfo info;
    info.name = "mcp";
    info.version = "1.0.0";
    info.description =
        "MCP servers federated (tools, resources, prompts, completions), and their tools as "
        "operations";
    info.capabilities = CRANK_CAP_FEDERATION | CRANK_CAP_UNARY;
    info.modes = CRANK_MODE_UNARY | CRANK_MODE_WINDOW | CRANK_MODE_SESSION | CRANK_MODE_ASYNC_JOB;
    info.config_schema_json = std::string(kOperationSchema);
    registrar.addAdapter(std::move(info), std::make_unique<McpAdapter>(registrar.host()));
}

}  // namespace crank::mcpc
