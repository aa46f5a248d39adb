#include "mcp/mcp_endpoint.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <istream>
#include <map>
#include <mutex>
#include <sstream>

#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <fmt/core.h>
#include <rapidjson/document.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "config/isolation_check.h"
#include "http/origin_policy.h"
#include "http/responses.h"
#include "http/sse_event.h"
#include "http/stream_handoff.h"
#include "http/stream_reactor.h"
#include "log/log.h"
#include "mcp/caller_quotas.h"
#include "mcp/client_capabilities.h"
#include "mcp/json_rpc.h"
#include "mcp/log_level.h"
#include "mcp/task_backend.h"
#include "util/json_string.h"
#include "util/sha256.h"

namespace crank::mcp {
namespace {

using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

/// How much of an oversized body is read and thrown away before answering 413.
constexpr std::int64_t kMaxDiscardBytes = 16LL * 1024 * 1024;

bool versionSupported(std::string_view version) {
    return std::any_of(std::begin(kSupportedVersions), std::end(kSupportedVersions),
                       [&](const char* v) { return version == v; });
}

/// True when an Accept header lists `type` (or a wildcard covering it).
bool accepts(const std::string& accept, std::string_view type) {
    std::string_view rest = accept;
    const std::string_view major = type.substr(0, type.find('/'));
    while (!rest.empty()) {
        const auto comma = rest.find(',');
        std::string_view item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        item = item.substr(0, item.find(';'));
        while (!item.empty() && item.front() == ' ') {
            item.remove_prefix(1);
        }
        while (!item.empty() && item.back() == ' ') {
            item.remove_suffix(1);
        }
        if (item == type || item == "*/*" ||
            (item.size() == major.size() + 2 && item.substr(0, major.size()) == major &&
             item.substr(major.size()) == "/*")) {
            return true;
        }
    }
    return false;
}

using http::sendBody;

/// Reads and drops at most kMaxDiscardBytes of what is left of a request body. Used when a request
/// is refused before (or without) reading its body: closing with unread bytes would reset the
/// connection before the client reads the answer, and on a keep-alive connection the leftover
/// would be read as the next request.
void discardRest(std::istream& in) {
    char buffer[8192];
    std::int64_t discarded = 0;
    while (in && discarded < kMaxDiscardBytes) {
        in.read(buffer, sizeof buffer);
        discarded += in.gcount();
    }
}

/// An HTTP error whose body is a JSON-RPC error without id.
void sendHttpError(HTTPServerResponse& response, int status, std::int64_t code,
                   std::string_view message) {
    sendBody(response, status, "application/json", makeError(std::nullopt, code, message));
}

/// Parses `json` (an object, or empty for {}) into `doc`; false when it is not an object.
bool parseObject(std::string_view json, rapidjson::Document& doc) {
    if (json.empty()) {
        doc.SetObject();
        return true;
    }
    doc.Parse(json.data(), json.size());
    return !doc.HasParseError() && doc.IsObject();
}

/// True when a request's params carry a `task` member (a task-augmented request).
bool hasTask(std::string_view params_json) {
    rapidjson::Document params;
    return parseObject(params_json, params) && params.HasMember("task");
}

std::string memberString(const rapidjson::Value& object, const char* key) {
    const auto it = object.FindMember(key);
    if (it == object.MemberEnd() || !it->value.IsString()) {
        return {};
    }
    return {it->value.GetString(), it->value.GetStringLength()};
}

/// The longest client name (clientInfo.name) written to the log.
constexpr std::size_t kMaxClientNameInLog = 128;

/// True when the session's client declared a capability that lets a server ask it something
/// during a call (sampling, elicitation, roots).
bool clientCanBeAsked(const McpSession& session) {
    for (const char* capability : {"sampling", "elicitation", "roots"}) {
        auto declared = extractMember(session.clientCapabilities(), capability);
        if (declared && !declared->empty()) {
            return true;
        }
    }
    return false;
}

/// `params.taskId` of a tasks/* request ("" when absent). Defined with the Tasks code below.
std::string taskIdOf(std::string_view params_json);

/// A JSON answer to one request, or nothing (notifications, responses).
struct Reply {
    std::string json;
    int status = 200;
};

/// The protocol version whose sessions may use Tasks (experimental in it; reshaped later).
constexpr std::string_view kTasksVersion = "2025-11-25";
/// Tasks whose tasks/result callers wait on this node, at most.
constexpr std::size_t kMaxTaskWaiters = 10'000;

/// `_meta` of a message tied to a task.
std::string relatedTaskMeta(std::string_view task_id) {
    return R"({"io.modelcontextprotocol/related-task":{"taskId":)" + jsonString(task_id) + "}}";
}

}  // namespace

/// The ToolCall given to a tool: cancellation from the session's in-flight table, progress and
/// log notifications onto the request's stream (or the session's standalone stream).
class EndpointToolCall final : public ToolCall {
public:
    EndpointToolCall(std::shared_ptr<McpSession> session, std::optional<std::uint64_t> stream,
                     std::optional<RequestId> progressToken,
                     std::shared_ptr<std::atomic<bool>> cancelled, Caller caller)
        : session_(std::move(session)),
          stream_(stream),
          progressToken_(std::move(progressToken)),
          cancelled_(std::move(cancelled)),
          caller_(std::move(caller)) {}

    Caller caller() const override { return caller_; }

    bool cancelled() const override { return cancelled_->load(); }

    bool progressRequested() const override { return progressToken_.has_value(); }

    ClientAnswer requestClient(std::string_view method, std::string_view paramsJson,
                               std::chrono::milliseconds timeout) override {
        const char* capability = method == "sampling/createMessage" ? "sampling"
                                 : method == "elicitation/create"   ? "elicitation"
                                 : method == "roots/list"           ? "roots"
                                                                    : nullptr;
        if (capability == nullptr) {
            return {false, R"({"code":-32601,"message":)" +
                               jsonString("crank does not forward " +
                                          std::string(method.substr(0, 100)) + " to clients") +
                               "}"};
        }
        auto declared = extractMember(session_->clientCapabilities(), capability);
        if (!declared || declared->empty()) {
            return {false, R"({"code":-32601,"message":)" +
                               jsonString(std::string("the client did not declare the ") +
                                          capability + " capability") +
                               "}"};
        }
        if (!stream_) {
            return {
                false,
                R"({"code":-32603,"message":"this call has no stream to the client to ask on"})"};
        }
        const std::string id = session_->beginClientRequest();
        session_->send(*stream_, makeRequest(RequestId(id), method, paramsJson));
        auto answer = session_->awaitClientAnswer(id, std::chrono::steady_clock::now() + timeout,
                                                  [this] { return cancelled_->load(); });
        if (answer) {
            return {answer->first, std::move(answer->second)};
        }
        // No answer: tell the client to stop (MCP cancellation goes both ways).
        const bool wasCancelled = cancelled_->load();
        session_->send(*stream_, makeNotification(
                                     "notifications/cancelled",
                                     R"({"requestId":)" + RequestId(id).toJson() + R"(,"reason":)" +
                                         jsonString(wasCancelled ? "the call was cancelled"
                                                                 : "no answer in time") +
                                         "}"));
        return {false, wasCancelled
                           ? R"({"code":-32800,"message":"the call was cancelled"})"
                           : R"({"code":-32001,"message":"the client did not answer in time"})"};
    }

    void progress(double progress, std::optional<double> total, std::string_view message) override {
        if (!progressToken_ || !stream_ || !std::isfinite(progress)) {
            return;
        }
        std::string params = R"({"progressToken":)" + progressToken_->toJson() +
                             fmt::format(R"(,"progress":{})", progress);
        if (total && std::isfinite(*total)) {
            params += fmt::format(R"(,"total":{})", *total);
        }
        if (!message.empty()) {
            params += R"(,"message":)" + jsonString(message);
        }
        params += '}';
        session_->send(*stream_, makeNotification("notifications/progress", params));
    }

    void log(LogLevel level, std::string_view logger, std::string_view dataJson) override {
        if (level < session_->logLevel()) {
            return;
        }
        std::string params = R"({"level":)" + jsonString(toString(level));
        if (!logger.empty()) {
            params += R"(,"logger":)" + jsonString(logger);
        }
        params += R"(,"data":)" + std::string(dataJson.empty() ? "null" : dataJson) + "}";
        const std::string message = makeNotification("notifications/message", params);
        if (stream_) {
            session_->send(*stream_, message);
        } else {
            session_->sendStandalone(message);
        }
    }

private:
    std::shared_ptr<McpSession> session_;
    std::optional<std::uint64_t> stream_;
    std::optional<RequestId> progressToken_;
    std::shared_ptr<std::atomic<bool>> cancelled_;
    Caller caller_;
};

/// Who a request speaks for and which workspace's server it reaches.
struct Who {
    std::string agent;
    std::string workspace;
    ToolRegistry* tools = nullptr;

    Caller caller() const { return Caller{workspace, agent}; }
};

/// A tasks/result waiting for its task to end: answered on `stream` of `session`.
struct TaskWaiter {
    std::weak_ptr<McpSession> session;
    std::uint64_t stream = 0;
    RequestId id;
    Caller caller;
    std::chrono::steady_clock::time_point since;  // when its tasks/result came
};

/// The methods the metrics name as they are; any other is "unknown" (a client cannot grow the
/// label set).
constexpr std::string_view kKnownMethods[] = {
    "initialize",
    "ping",
    "logging/setLevel",
    "tools/list",
    "tools/call",
    "tasks/get",
    "tasks/list",
    "tasks/cancel",
    "tasks/result",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "notifications/initialized",
    "notifications/cancelled",
    "notifications/progress",
    "notifications/roots/list_changed",
};

std::string_view methodLabel(std::string_view method) {
    for (const std::string_view known : kKnownMethods) {
        if (method == known) {
            return known;
        }
    }
    return "unknown";
}

std::string_view errorName(std::int64_t code) {
    switch (code) {
        case kParseError:
            return "parse_error";
        case kInvalidRequest:
            return "invalid_request";
        case kMethodNotFound:
            return "method_not_found";
        case kInvalidParams:
            return "invalid_params";
        case kInternalError:
            return "internal_error";
        case kResourceNotFound:
            return "resource_not_found";
        case kUrlElicitationRequired:
            return "url_elicitation_required";
        default:
            return "server_error";
    }
}

/// Reads the top-level members of a reply this endpoint made (makeResult / makeError) only as
/// far as it takes to tell a result from an error and, for an error, its code: the rest of a
/// possibly large result is never parsed.
class OutcomeReader : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, OutcomeReader> {
public:
    std::string_view outcome = "ok";

    bool Default() { return true; }
    bool StartObject() {
        ++depth_;
        return true;
    }
    bool EndObject(rapidjson::SizeType /*members*/) {
        --depth_;
        return depth_ > 0;
    }
    bool StartArray() {
        ++depth_;
        return true;
    }
    bool EndArray(rapidjson::SizeType /*elements*/) {
        --depth_;
        return true;
    }
    bool Key(const char* text, rapidjson::SizeType length, bool /*copy*/) {
        const std::string_view key(text, length);
        if (depth_ == 1 && key == "result") {
            outcome = "ok";
            return false;  // a result: nothing more to read
        }
        if (depth_ == 1 && key == "error") {
            in_error_ = true;
            outcome = "server_error";
        }
        code_next_ = in_error_ && depth_ == 2 && key == "code";
        return true;
    }
    bool Int(int value) { return code(value); }
    bool Int64(std::int64_t value) { return code(value); }
    bool Uint(unsigned value) { return code(value); }
    bool Uint64(std::uint64_t /*value*/) { return code(0); }

private:
    bool code(std::int64_t value) {
        if (code_next_) {
            outcome = errorName(value);
            return false;  // done
        }
        return true;
    }
    int depth_ = 0;
    bool in_error_ = false;
    bool code_next_ = false;
};

std::string_view replyOutcome(std::string_view reply) {
    OutcomeReader reader;
    rapidjson::Reader parser;
    rapidjson::MemoryStream stream(reply.data(), reply.size());
    parser.Parse<rapidjson::kParseStopWhenDoneFlag>(stream, reader);
    return reader.outcome;
}

struct McpEndpoint::Impl : std::enable_shared_from_this<Impl> {
    config::McpConfig mcp;
    bool authRequired = false;
    std::vector<std::pair<std::string, std::string>> agentKeys;  // key digest, agent id
    std::map<std::string, std::string> agentWorkspaces;          // agent id, its workspace
    std::int64_t maxBody;
    ServerIdentity identity;
    std::map<std::string, ToolRegistry*> tools;  // workspace -> its tools
    SessionManager& sessions;
    http::StreamReactor& reactor;
    TaskBackend* tasks;
    std::map<std::string, Catalog*> catalogs;  // workspace -> its resources, prompts...
    http::OriginPolicy origins;
    std::atomic<std::uint64_t> nextToken{1};
    Observer observer;

    /// Reports a JSON-RPC message to the observer; `reply` is its answer (an error's code is read
    /// from it).
    void observed(std::string_view method, std::string_view reply,
                  std::chrono::steady_clock::time_point since) const {
        if (observer.message) {
            observer.message(methodLabel(method), replyOutcome(reply),
                             std::chrono::steady_clock::now() - since);
        }
    }
    void observedOutcome(std::string_view method, std::string_view outcome,
                         std::chrono::steady_clock::time_point since) const {
        if (observer.message) {
            observer.message(method, outcome, std::chrono::steady_clock::now() - since);
        }
    }

    /// Calls in progress, MCP sessions and SSE streams, bounded per agent, per workspace and (for
    /// calls) in all.
    std::shared_ptr<CallerQuotas> quotas;

    std::mutex taskMutex;
    std::map<std::string, std::weak_ptr<McpSession>> taskCreators;  // live task -> its session
    std::multimap<std::string, TaskWaiter> taskWaiters;             // task -> tasks/result

    Impl(const config::Config& c, ServerIdentity id, std::map<std::string, ToolRegistry*> t,
         SessionManager& s, http::StreamReactor& r, TaskBackend* b,
         std::map<std::string, Catalog*> cat)
        : mcp(c.mcp),
          maxBody(c.server.max_request_body_bytes),
          identity(std::move(id)),
          tools(std::move(t)),
          sessions(s),
          reactor(r),
          tasks(b),
          catalogs(std::move(cat)),
          origins(c.server.allowed_hosts, c.server.allowed_origins) {
        authRequired = c.auth.mode == config::AuthConfig::Mode::api_key;
        std::map<std::string, CallerQuotas::Bounds> workspaceBounds;
        std::map<std::string, CallerQuotas::Bounds> agentBounds;
        const auto boundsOf = [](const config::Limits& limits) {
            return CallerQuotas::Bounds{limits.max_concurrent_calls, limits.max_mcp_sessions,
                                        limits.max_streams};
        };
        for (const config::Workspace& workspace : c.auth.workspaces) {
            workspaceBounds[workspace.id] = boundsOf(workspace.limits);
        }
        for (const config::Agent& agent : c.auth.agents) {
            agentBounds[agent.id] = boundsOf(agent.limits);
        }
        quotas = std::make_shared<CallerQuotas>(
            std::move(workspaceBounds), std::move(agentBounds),
            CallerQuotas::Bounds{c.server.effectiveMaxConcurrentCalls(), -1, -1},
            config::reservedCalls(c));
        for (const config::Agent& agent : c.auth.agents) {
            agentWorkspaces[agent.id] = agent.workspace;
            if (agent.api_key) {
                agentKeys.emplace_back(agent.api_key->reveal(), agent.id);
            }
        }
    }

    /// The agent a request speaks for: "" when auth.mode is "none"; nullopt (after answering
    /// 401) when auth.mode is "api_key" and the request has no valid `Authorization: Bearer KEY`.
    std::optional<std::string> authenticate(HTTPServerRequest& request,
                                            HTTPServerResponse& response) const {
        if (!authRequired) {
            return std::string();
        }
        const std::string header = request.get("Authorization", "");
        constexpr std::string_view kBearer = "Bearer ";
        if (header.size() > kBearer.size() && header.compare(0, kBearer.size(), kBearer) == 0) {
            const std::string digest = sha256Hex(std::string_view(header).substr(kBearer.size()));
            std::optional<std::string> agent;
            for (const auto& [keyDigest, id] : agentKeys) {
                if (constantTimeEqual(keyDigest, digest)) {
                    agent = id;
                }
            }
            if (agent) {
                return agent;
            }
        }
        response.set("WWW-Authenticate", R"(Bearer realm="crank")");
        sendHttpError(response, 401, kInvalidRequest,
                      "an agent's API key is required: Authorization: Bearer KEY");
        return std::nullopt;
    }

    /// `route_workspace`: the workspace of a `/w/{workspace}/mcp` path; nullopt for the main
    /// path, which serves the agent's own workspace.
    void handle(HTTPServerRequest& request, HTTPServerResponse& response,
                const std::optional<std::string>& route_workspace);
    /// handle(), then reads and drops what is left of the request body.
    void handleAndDrain(HTTPServerRequest& request, HTTPServerResponse& response,
                        const std::optional<std::string>& route_workspace);
    void handlePost(HTTPServerRequest& request, HTTPServerResponse& response, const Who& who);
    void handleGet(HTTPServerRequest& request, HTTPServerResponse& response, const Who& who);
    void handleDelete(HTTPServerRequest& request, HTTPServerResponse& response, const Who& who);

    /// Checks Mcp-Session-Id and MCP-Protocol-Version; answers the error itself and returns
    /// null when they are wrong.
    std::shared_ptr<McpSession> sessionOf(HTTPServerRequest& request, HTTPServerResponse& response,
                                          const Who& who);
    bool headerVersionOk(HTTPServerRequest& request, HTTPServerResponse& response);

    Reply initialize(const JsonRpcMessage& message, std::shared_ptr<McpSession>& created,
                     const Who& who);
    /// Answers one request of a session with JSON (every method but a streamed tools/call or a
    /// waiting tasks/result).
    std::optional<std::string> dispatch(const JsonRpcMessage& message,
                                        const std::shared_ptr<McpSession>& session, const Who& who);
    void notify(const JsonRpcMessage& message, McpSession& session);
    std::string toolsList(const JsonRpcMessage& message, const McpSession& session, const Who& who);
    std::string toolsCall(const JsonRpcMessage& message, const std::shared_ptr<McpSession>& session,
                          const Who& who, std::optional<std::uint64_t> stream,
                          const std::optional<RequestId>& progressToken, bool& answered);

    bool tasksEnabled(const McpSession& session) const {
        return tasks != nullptr && session.protocolVersion() == kTasksVersion;
    }
    /// tools/call with `params.task`: creates the task and answers CreateTaskResult.
    std::string createTask(const JsonRpcMessage& message,
                           const std::shared_ptr<McpSession>& session, const Who& who,
                           const std::string& name, const std::string& arguments,
                           const rapidjson::Value& task);
    std::string tasksMethod(const JsonRpcMessage& message, const Who& who);
    /// tasks/result: the answer when the task has ended, nullopt (after registering a waiter on
    /// a new SSE stream) when it has not.
    void tasksResult(const JsonRpcMessage& message, const std::shared_ptr<McpSession>& session,
                     const Who& who, HTTPServerRequest& request, HTTPServerResponse& response);
    /// A catalog's notice to the sessions of `workspace` it names (or all of them).
    void deliver(const std::string& workspace, const CatalogNotice& notice);
    /// A catalog method of `who`'s workspace; nullopt when `method` is not a catalog method.
    std::optional<std::string> catalogRequest(const JsonRpcMessage& message,
                                              const std::shared_ptr<McpSession>& session,
                                              const Who& who,
                                              std::optional<std::uint64_t> stream = std::nullopt);
    /// The catalog of `who`'s workspace, or null.
    Catalog* catalogOf(const Who& who) const {
        const auto found = catalogs.find(who.workspace);
        return found != catalogs.end() ? found->second : nullptr;
    }
    /// The backend's listener: status notifications to the creator, answers to waiters.
    void onTask(const TaskInfo& task);
    std::string taskResultMessage(const RequestId& id, const std::string& task_id,
                                  const Caller& caller);

    /// Hands the connection to the reactor as `stream` of `session`; false when it could not.
    bool openSse(HTTPServerRequest& request, HTTPServerResponse& response,
                 const std::shared_ptr<McpSession>& session, std::uint64_t stream,
                 const std::optional<std::string>& resumeFrom);
};

McpEndpoint::McpEndpoint(const config::Config& config, ServerIdentity identity,
                         std::map<std::string, ToolRegistry*> tools, SessionManager& sessions,
                         http::StreamReactor& reactor, TaskBackend* tasks,
                         std::map<std::string, Catalog*> catalogs)
    : impl_(std::make_shared<Impl>(config, std::move(identity), std::move(tools), sessions, reactor,
                                   tasks, std::move(catalogs))) {
    std::weak_ptr<Impl> weak = impl_;
    for (const auto& [workspace, registry] : impl_->tools) {
        registry->subscribe([weak, ws = workspace] {
            if (auto impl = weak.lock()) {
                const std::string message = makeNotification("notifications/tools/list_changed");
                impl->sessions.forEach([&](McpSession& s) {
                    if (s.workspace() == ws) {
                        s.sendStandalone(message);
                    }
                });
            }
        });
    }
    for (const auto& [workspace, catalog] : impl_->catalogs) {
        catalog->subscribe([weak, ws = workspace](const CatalogNotice& notice) {
            if (auto impl = weak.lock()) {
                impl->deliver(ws, notice);
            }
        });
    }
    if (tasks != nullptr) {
        tasks->subscribe([weak](const TaskInfo& task) {
            if (auto impl = weak.lock()) {
                impl->onTask(task);
            }
        });
    }
}

McpEndpoint::~McpEndpoint() = default;

void McpEndpoint::observe(Observer observer) {
    impl_->observer = std::move(observer);
}

void McpEndpoint::addRoutes(http::Router& router) {
    std::shared_ptr<Impl> impl = impl_;
    router.add(impl->mcp.path, [impl](HTTPServerRequest& request, HTTPServerResponse& response) {
        impl->handleAndDrain(request, response, std::nullopt);
    });
    for (const auto& [workspace, registry] : impl->tools) {
        router.add("/w/" + workspace + "/mcp",
                   [impl, ws = std::optional<std::string>(workspace)](
                       HTTPServerRequest& request, HTTPServerResponse& response) {
                       impl->handleAndDrain(request, response, ws);
                   });
    }
}

void McpEndpoint::Impl::handle(HTTPServerRequest& request, HTTPServerResponse& response,
                               const std::optional<std::string>& route_workspace) {
    // DNS-rebinding protection before anything else (MCP 2025-11-25: 403 for a bad Origin).
    if (!origins.hostAllowed(request.getHost())) {
        sendHttpError(response, 403, kInvalidRequest,
                      "Host \"" + request.getHost().substr(0, 200) + "\" is not allowed");
        return;
    }
    const std::string origin = request.get("Origin", "");
    if (!origins.originAllowed(origin)) {
        sendHttpError(response, 403, kInvalidRequest,
                      "Origin \"" + origin.substr(0, 200) + "\" is not allowed");
        return;
    }
    const std::optional<std::string> agent = authenticate(request, response);
    if (!agent) {
        return;
    }
    Who who;
    who.agent = *agent;
    const auto home = agentWorkspaces.find(*agent);
    const std::string own = home != agentWorkspaces.end() ? home->second : "default";
    who.workspace = route_workspace.value_or(own);
    // Another workspace's endpoint does not exist for this agent (not "forbidden": the
    // workspace's existence is not its to learn). Without auth everyone is the anonymous agent.
    const auto registry = tools.find(who.workspace);
    if ((authRequired && who.workspace != own) || registry == tools.end()) {
        sendHttpError(response, 404, kInvalidRequest, "no MCP endpoint at this path");
        return;
    }
    who.tools = registry->second;
    const std::string& method = request.getMethod();
    if (method == "POST") {
        handlePost(request, response, who);
    } else if (method == "GET") {
        handleGet(request, response, who);
    } else if (method == "DELETE") {
        handleDelete(request, response, who);
    } else {
        response.set("Allow", "GET, POST, DELETE");
        sendHttpError(response, 405, kInvalidRequest, "method " + method + " is not allowed");
    }
}

void McpEndpoint::Impl::handleAndDrain(HTTPServerRequest& request, HTTPServerResponse& response,
                                       const std::optional<std::string>& route_workspace) {
    handle(request, response, route_workspace);
    discardRest(request.stream());
    if (observer.http) {
        const std::string& verb = request.getMethod();
        observer.http(verb == "POST" || verb == "GET" || verb == "DELETE" ? verb : "other",
                      static_cast<int>(response.getStatus()));
    }
}

bool McpEndpoint::Impl::headerVersionOk(HTTPServerRequest& request, HTTPServerResponse& response) {
    const std::string version = request.get("MCP-Protocol-Version", kDefaultHeaderVersion);
    if (!versionSupported(version)) {
        sendHttpError(response, 400, kInvalidRequest,
                      "unsupported MCP-Protocol-Version \"" + version.substr(0, 64) +
                          "\"; supported: 2025-11-25, 2025-06-18, 2025-03-26");
        return false;
    }
    return true;
}

std::shared_ptr<McpSession> McpEndpoint::Impl::sessionOf(HTTPServerRequest& request,
                                                         HTTPServerResponse& response,
                                                         const Who& who) {
    const std::string id = request.get("Mcp-Session-Id", "");
    if (id.empty()) {
        sendHttpError(response, 400, kInvalidRequest,
                      "Mcp-Session-Id header is required (send initialize first)");
        return nullptr;
    }
    auto session = sessions.find(id);
    // Another agent's session is answered as unknown: ids are not shared, and not confirmed.
    if (!session || session->agent() != who.agent || session->workspace() != who.workspace) {
        sendHttpError(response, 404, kInvalidRequest,
                      "session not found (it expired or was deleted); initialize a new one");
        return nullptr;
    }
    if (!headerVersionOk(request, response)) {
        return nullptr;
    }
    return session;
}

void McpEndpoint::Impl::handlePost(HTTPServerRequest& request, HTTPServerResponse& response,
                                   const Who& who) {
    const std::string accept = request.get("Accept", "");
    if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream")) {
        sendHttpError(response, 406, kInvalidRequest,
                      "Accept must list both application/json and text/event-stream");
        return;
    }
    const std::string contentType = request.getContentType();
    if (contentType.substr(0, contentType.find(';')) != "application/json") {
        sendHttpError(response, 415, kInvalidRequest, "Content-Type must be application/json");
        return;
    }
    // Read at most maxBody + 1 bytes, whatever Content-Length (or chunking) claims.
    std::string body;
    std::istream& in = request.stream();
    char buffer[8192];
    while (in && static_cast<std::int64_t>(body.size()) <= maxBody) {
        in.read(buffer, sizeof buffer);
        body.append(buffer, static_cast<std::size_t>(in.gcount()));
    }
    if (static_cast<std::int64_t>(body.size()) > maxBody) {
        discardRest(in);
        response.setKeepAlive(false);
        sendHttpError(response, 413, kInvalidRequest,
                      fmt::format("the request body is larger than {} bytes "
                                  "(server.max_request_body_bytes)",
                                  maxBody));
        return;
    }

    const auto since = std::chrono::steady_clock::now();
    ParsedBody parsed = parseJsonRpcBody(body);
    if (parsed.fatal) {
        observedOutcome("invalid", errorName(parsed.fatal->code), since);
        sendBody(response, 400, "application/json", makeError(*parsed.fatal));
        return;
    }

    // initialize opens a session; it must come alone.
    if (!parsed.batch && std::holds_alternative<JsonRpcMessage>(parsed.entries.front())) {
        const auto& message = std::get<JsonRpcMessage>(parsed.entries.front());
        if (message.kind == JsonRpcKind::request && message.method == "initialize") {
            std::shared_ptr<McpSession> created;
            Reply reply = initialize(message, created, who);
            if (created) {
                created->setAgent(who.agent);
                created->setWorkspace(who.workspace);
                response.set("Mcp-Session-Id", created->id());
            }
            observed(message.method, reply.json, since);
            sendBody(response, reply.status, "application/json", reply.json);
            return;
        }
    }

    auto session = sessionOf(request, response, who);
    if (!session) {
        return;
    }
    if (parsed.batch && session->protocolVersion() != "2025-03-26") {
        sendHttpError(response, 400, kInvalidRequest,
                      "batches are only allowed with protocol version 2025-03-26; this session "
                      "uses " +
                          session->protocolVersion());
        return;
    }

    if (!parsed.batch) {
        if (const auto* rejection = std::get_if<JsonRpcRejection>(&parsed.entries.front())) {
            observedOutcome("invalid", errorName(rejection->code), since);
            sendBody(response, 400, "application/json", makeError(*rejection));
            return;
        }
        const auto& message = std::get<JsonRpcMessage>(parsed.entries.front());
        if (message.kind != JsonRpcKind::request) {
            notify(message, *session);
            observedOutcome(message.kind == JsonRpcKind::notification ? methodLabel(message.method)
                                                                      : "response",
                            "accepted", since);
            sendBody(response, 202, "", "");
            return;
        }
        if (message.method == "tasks/result" && tasksEnabled(*session)) {
            tasksResult(message, session, who, request, response);
            return;
        }
        if (message.method == "tools/call") {
            auto token = progressTokenOf(message.params_json);
            bool streamed = token && *token;
            if (!streamed && token) {
                // A tool that may ask the client something while it runs answers on a stream.
                rapidjson::Document params;
                if (parseObject(message.params_json, params)) {
                    const auto definition = who.tools->find(memberString(params, "name"));
                    // Only a client that can be asked something needs the stream (an SSE
                    // answer costs clients more than a JSON one).
                    streamed =
                        definition && definition->requests_client && clientCanBeAsked(*session);
                }
            }
            if (streamed && !(tasksEnabled(*session) && hasTask(message.params_json))) {
                // Progress comes before the result: answer as an SSE stream.
                const std::uint64_t stream = session->openStream(false);
                if (!openSse(request, response, session, stream, std::nullopt)) {
                    return;
                }
                bool answered = true;
                std::string result = toolsCall(message, session, who, stream, *token, answered);
                if (answered) {
                    observed(message.method, result, since);
                    session->send(stream, result);
                } else {
                    observedOutcome(message.method, "cancelled", since);
                }
                session->finish(stream);
                return;
            }
        }
        auto reply = dispatch(message, session, who);
        observed(message.method, reply.value_or("{}"), since);
        sendBody(response, 200, "application/json", reply.value_or("{}"));
        return;
    }

    // A 2025-03-26 batch: every request answered in one JSON array.
    std::string out = "[";
    bool any = false;
    for (const JsonRpcEntry& entry : parsed.entries) {
        std::optional<std::string> reply;
        const auto entrySince = std::chrono::steady_clock::now();
        if (const auto* rejection = std::get_if<JsonRpcRejection>(&entry)) {
            observedOutcome("invalid", errorName(rejection->code), entrySince);
            reply = makeError(*rejection);
        } else {
            const auto& message = std::get<JsonRpcMessage>(entry);
            if (message.kind == JsonRpcKind::request) {
                reply = dispatch(message, session, who);
                observed(message.method, reply.value_or("{}"), entrySince);
            } else {
                notify(message, *session);
                observedOutcome(message.kind == JsonRpcKind::notification
                                    ? methodLabel(message.method)
                                    : "response",
                                "accepted", entrySince);
            }
        }
        if (reply) {
            out += (any ? "," : "") + *reply;
            any = true;
        }
    }
    if (!any) {
        sendBody(response, 202, "", "");
        return;
    }
    sendBody(response, 200, "application/json", out + "]");
}

Reply McpEndpoint::Impl::initialize(const JsonRpcMessage& message,
                                    std::shared_ptr<McpSession>& created, const Who& who) {
    const std::string& workspace = who.workspace;
    rapidjson::Document params;
    if (!parseObject(message.params_json, params)) {
        return {makeError(message.id, kInvalidParams, "initialize: params must be an object"), 200};
    }
    const std::string requested = memberString(params, "protocolVersion");
    if (requested.empty()) {
        return {makeError(message.id, kInvalidParams,
                          "initialize: params.protocolVersion is required (a string)"),
                200};
    }
    const std::string version = versionSupported(requested) ? requested : kLatestVersion;
    std::string refusal;
    std::shared_ptr<CallerQuotas::Hold> place =
        CallerQuotas::hold(quotas, CallerQuotas::Kind::session, who.agent, who.workspace, refusal);
    if (!place) {
        return {makeError(message.id, kInternalError, "initialize: " + refusal), 429};
    }
    auto session = sessions.create(version);
    if (!session) {
        return {makeError(message.id, kInternalError, session.error().message), 503};
    }
    created = *session;
    created->keepUntilEnd(std::move(place));  // the session's place, given back when it ends
    if (params.HasMember("capabilities") && params["capabilities"].IsObject()) {
        created->setClientCapabilities(keptClientCapabilities(params["capabilities"]));
    }
    std::string capabilities = R"({"tools":{"listChanged":true},"logging":{})";
    if (const auto catalog = catalogs.find(workspace); catalog != catalogs.end()) {
        const std::string extra = catalog->second->capabilitiesJson();
        if (!extra.empty()) {
            capabilities += "," + extra;
        }
    }
    if (tasks != nullptr && version == kTasksVersion) {
        // tasks/list only where tasks are bound to an authenticated agent (MCP: without an auth
        // context a receiver should not offer listing).
        capabilities += authRequired
                            ? R"(,"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}})"
                            : R"(,"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}})";
    }
    capabilities += "}";
    const std::string result = R"({"protocolVersion":)" + jsonString(version) +
                               R"(,"capabilities":)" + capabilities + R"(,"serverInfo":{"name":)" +
                               jsonString(identity.name) + R"(,"version":)" +
                               jsonString(identity.version) + "}}";
    // The client's name is the client's bytes: cut short (and escaped by the log).
    log::info(
        "mcp: session {} initialized (protocol {}, client {})", created->id().substr(0, 8), version,
        log::sanitize(memberString(params.HasMember("clientInfo") && params["clientInfo"].IsObject()
                                       ? params["clientInfo"]
                                       : params,
                                   "name"),
                      kMaxClientNameInLog, false));
    return {makeResult(*message.id, result), 200};
}

void McpEndpoint::Impl::notify(const JsonRpcMessage& message, McpSession& session) {
    if (message.kind == JsonRpcKind::response && message.id) {
        session.deliverClientAnswer(message.id->toJson(), true, message.result_json);
        return;
    }
    if (message.kind == JsonRpcKind::error_response) {
        if (message.id) {
            std::string error = fmt::format(R"({{"code":{},"message":{})", message.error.code,
                                            jsonString(message.error.message));
            if (!message.error.data_json.empty()) {
                error += R"(,"data":)" + message.error.data_json;
            }
            session.deliverClientAnswer(message.id->toJson(), false, error + "}");
        }
        return;
    }
    if (message.kind != JsonRpcKind::notification) {
        return;
    }
    if (message.method == "notifications/roots/list_changed") {
        if (const auto catalog = catalogs.find(session.workspace()); catalog != catalogs.end()) {
            catalog->second->clientNotification(message.method, message.params_json);
        }
        return;
    }
    if (message.method == "notifications/initialized") {
        session.setInitialized();
    } else if (message.method == "notifications/cancelled") {
        auto requestId = extractMember(message.params_json, "requestId");
        if (requestId && !requestId->empty()) {
            session.cancelRequest(*requestId);
        }
    }
}

std::optional<std::string> McpEndpoint::Impl::dispatch(const JsonRpcMessage& message,
                                                       const std::shared_ptr<McpSession>& session,
                                                       const Who& who) {
    const RequestId& id = *message.id;
    if (message.method == "ping") {
        return makeResult(id, "{}");
    }
    if (message.method == "logging/setLevel") {
        rapidjson::Document params;
        const auto level = parseObject(message.params_json, params)
                               ? parseLogLevel(memberString(params, "level"))
                               : std::nullopt;
        if (!level) {
            return makeError(id, kInvalidParams,
                             "logging/setLevel: params.level must be one of debug, info, notice, "
                             "warning, error, critical, alert, emergency");
        }
        session->setLogLevel(*level);
        return makeResult(id, "{}");
    }
    if (message.method == "tools/list") {
        return toolsList(message, *session, who);
    }
    if (message.method == "tools/call") {
        bool answered = true;
        std::string reply = toolsCall(message, session, who, std::nullopt, std::nullopt, answered);
        return reply;
    }
    if (tasksEnabled(*session) &&
        (message.method == "tasks/get" || message.method == "tasks/list" ||
         message.method == "tasks/cancel")) {
        if (Catalog* catalog = catalogOf(who);
            catalog != nullptr && catalog->ownsTask(taskIdOf(message.params_json))) {
            return catalogRequest(message, session, who);
        }
        return tasksMethod(message, who);
    }
    if (message.method == "initialize") {
        return makeError(id, kInvalidRequest, "initialize: this session is already initialized");
    }
    if (auto answered = catalogRequest(message, session, who)) {
        return answered;
    }
    return makeError(id, kMethodNotFound, "method not found: " + message.method.substr(0, 100));
}

std::string McpEndpoint::Impl::toolsList(const JsonRpcMessage& message, const McpSession& session,
                                         const Who& who) {
    const RequestId& id = *message.id;
    auto cursorJson = extractMember(message.params_json, "cursor");
    if (!cursorJson) {
        return makeError(id, kInvalidParams, "tools/list: " + cursorJson.error().message);
    }
    const std::vector<ToolDefinition> all = who.tools->list();
    const bool showTasks = tasksEnabled(session);
    std::size_t start = 0;
    if (!cursorJson->empty()) {
        // The cursor is opaque to clients: the index of the first tool of the page, in hex.
        rapidjson::Document doc;
        doc.Parse(cursorJson->c_str());
        std::size_t value = 0;
        bool ok = doc.IsString() && doc.GetStringLength() > 1 && doc.GetString()[0] == 'c';
        if (ok) {
            const std::string_view digits(doc.GetString() + 1, doc.GetStringLength() - 1);
            const auto [end, ec] =
                std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
            ok = ec == std::errc() && end == digits.data() + digits.size() && value <= all.size();
        }
        if (!ok) {
            return makeError(id, kInvalidParams, "tools/list: invalid cursor");
        }
        start = value;
    }
    const std::size_t end =
        std::min(all.size(), start + static_cast<std::size_t>(mcp.tools_page_size));
    std::string result = R"({"tools":[)";
    for (std::size_t i = start; i < end; ++i) {
        const ToolDefinition& t = all[i];
        result += (i == start ? "" : ",");
        if (!t.raw_json.empty()) {
            result += t.raw_json;
            continue;
        }
        result += R"({"name":)" + jsonString(t.name);
        if (!t.title.empty()) {
            result += R"(,"title":)" + jsonString(t.title);
        }
        result += R"(,"description":)" + jsonString(t.description);
        result += R"(,"inputSchema":)" + t.input_schema_json;
        if (!t.output_schema_json.empty()) {
            result += R"(,"outputSchema":)" + t.output_schema_json;
        }
        if (showTasks && !t.task_support.empty()) {
            result += R"(,"execution":{"taskSupport":)" + jsonString(t.task_support) + "}";
        }
        result += '}';
    }
    result += ']';
    if (end < all.size()) {
        result += R"(,"nextCursor":)" + jsonString(fmt::format("c{:x}", end));
    }
    result += '}';
    return makeResult(id, result);
}

std::string McpEndpoint::Impl::toolsCall(const JsonRpcMessage& message,
                                         const std::shared_ptr<McpSession>& session, const Who& who,
                                         std::optional<std::uint64_t> stream,
                                         const std::optional<RequestId>& progressToken,
                                         bool& answered) {
    const RequestId& id = *message.id;
    rapidjson::Document params;
    if (!parseObject(message.params_json, params)) {
        return makeError(id, kInvalidParams, "tools/call: params must be an object");
    }
    const std::string name = memberString(params, "name");
    if (name.empty()) {
        return makeError(id, kInvalidParams, "tools/call: params.name is required (a string)");
    }
    auto arguments = extractMember(message.params_json, "arguments");
    if (!arguments || (!arguments->empty() && arguments->front() != '{')) {
        return makeError(id, kInvalidParams, "tools/call: params.arguments must be an object");
    }
    if (tasksEnabled(*session) && params.HasMember("task")) {
        if (Catalog* catalog = catalogOf(who); catalog != nullptr && catalog->ownsTool(name)) {
            return catalogRequest(message, session, who, stream)
                .value_or(makeError(id, kInternalError, "tools/call: the task was not created"));
        }
        return createTask(message, session, who, name, arguments->empty() ? "{}" : *arguments,
                          params["task"]);
    }
    if (tasksEnabled(*session)) {
        if (auto definition = who.tools->find(name);
            definition && definition->task_support == "required") {
            return makeError(id, kMethodNotFound,
                             "tools/call: tool " + name + " must be called as a task");
        }
    }
    std::string refusal;
    // Released however the call ends.
    const auto slot =
        CallerQuotas::hold(quotas, CallerQuotas::Kind::call, who.agent, who.workspace, refusal);
    if (!slot) {
        // A limit, not a failure of the tool: the model reads it and may retry later.
        return makeResult(id, ToolResult::refusal(refusal).toJson());
    }
    const std::string key = id.toJson();
    auto cancelled = session->beginRequest(key);
    EndpointToolCall call(session, stream, progressToken, cancelled, who.caller());
    Result<ToolResult> result = Error{ErrorCode::internal, "not run"};
    try {
        result = who.tools->call(name, arguments->empty() ? "{}" : *arguments, call);
    } catch (const std::exception& e) {
        result = Error{ErrorCode::internal, std::string("the tool failed: ") + e.what()};
    }
    session->endRequest(key);
    if (cancelled->load()) {
        answered = false;  // the client gave up on it: no response (MCP cancellation)
        return {};
    }
    if (!result) {
        const std::int64_t code = result.error().code == ErrorCode::not_found ||
                                          result.error().code == ErrorCode::invalid_argument
                                      ? kInvalidParams
                                      : kInternalError;
        return makeError(id, code, "tools/call: " + result.error().message);
    }
    if (!result->rpc_error_json.empty()) {
        return R"({"jsonrpc":"2.0","id":)" + id.toJson() + R"(,"error":)" + result->rpc_error_json +
               "}";
    }
    return makeResult(id, result->toJson());
}

bool McpEndpoint::Impl::openSse(HTTPServerRequest& request, HTTPServerResponse& response,
                                const std::shared_ptr<McpSession>& session, std::uint64_t stream,
                                const std::optional<std::string>& resumeFrom) {
    if (reactor.openStreams() >= static_cast<std::size_t>(mcp.max_streams)) {
        response.set("Retry-After", "1");
        sendHttpError(response, 503, kInternalError,
                      "too many open streams (mcp.max_streams); retry later");
        return false;
    }
    if (!session->holdStreamPlace(static_cast<std::size_t>(mcp.max_streams_per_session))) {
        sendHttpError(response, 429, kInvalidRequest,
                      fmt::format("this session already has {} open streams, its limit "
                                  "(mcp.max_streams_per_session); close one first",
                                  mcp.max_streams_per_session));
        return false;
    }
    // The place is the session's until attach() or resume() takes it; every way out before
    // them gives it back.
    struct PlaceGuard {
        McpSession* session;
        ~PlaceGuard() {
            if (session != nullptr) {
                session->releaseStreamPlace();
            }
        }
    } guard{session.get()};
    std::string refusal;
    std::shared_ptr<CallerQuotas::Hold> place = CallerQuotas::hold(
        quotas, CallerQuotas::Kind::stream, session->agent(), session->workspace(), refusal);
    if (!place) {
        sendHttpError(response, 429, kInvalidRequest, refusal);
        return false;
    }
    response.setStatus(Poco::Net::HTTPResponse::HTTP_OK);
    response.setContentType("text/event-stream");
    response.set("Cache-Control", "no-cache");
    response.set("Mcp-Session-Id", session->id());
    auto fd = http::takeOverConnection(request, response);
    if (!fd) {
        log::warn("mcp: cannot hand a stream to the reactor: {}", fd.error().message);
        return false;
    }
    const std::uint64_t token = nextToken++;
    std::weak_ptr<McpSession> weak = session;
    // The stream's place is given back when the reactor lets go of it (or refuses it).
    auto adopted =
        reactor.adopt(*fd, [weak, stream, token, place](http::StreamId, http::CloseReason) {
            if (auto s = weak.lock()) {
                s->detach(stream, token);
            }
        });
    if (!adopted) {
        log::warn("mcp: stream refused: {}", adopted.error().message);
        return false;
    }
    const http::StreamId sid = *adopted;
    http::StreamReactor* r = &reactor;
    StreamConnection connection{
        token, [r, sid](std::string bytes) { return r->send(sid, std::move(bytes)); },
        [r, sid] { r->close(sid); }};
    guard.session = nullptr;  // taken by resume() or attach()
    if (resumeFrom) {
        session->resume(*resumeFrom, std::move(connection));
    } else {
        session->attach(stream, std::move(connection));
    }
    return true;
}

void McpEndpoint::Impl::handleGet(HTTPServerRequest& request, HTTPServerResponse& response,
                                  const Who& who) {
    if (!accepts(request.get("Accept", ""), "text/event-stream")) {
        sendHttpError(response, 406, kInvalidRequest, "Accept must list text/event-stream");
        return;
    }
    auto session = sessionOf(request, response, who);
    if (!session) {
        return;
    }
    const std::string lastEventHeader = request.get("Last-Event-ID", "");
    if (!lastEventHeader.empty()) {
        auto lastEventId = http::parseLastEventId(lastEventHeader);
        if (!lastEventId || !session->canResume(*lastEventId)) {
            sendHttpError(response, 400, kInvalidRequest,
                          "Last-Event-ID does not name a stream of this session");
            return;
        }
        openSse(request, response, session, 0, lastEventId);
        return;
    }
    openSse(request, response, session, session->openStream(true), std::nullopt);
}

void McpEndpoint::Impl::handleDelete(HTTPServerRequest& request, HTTPServerResponse& response,
                                     const Who& who) {
    const std::string id = request.get("Mcp-Session-Id", "");
    if (id.empty()) {
        sendHttpError(response, 400, kInvalidRequest, "Mcp-Session-Id header is required");
        return;
    }
    const auto session = sessions.find(id);
    if (!session || session->agent() != who.agent || session->workspace() != who.workspace ||
        !sessions.remove(id)) {
        sendHttpError(response, 404, kInvalidRequest, "session not found");
        return;
    }
    log::info("mcp: session {} deleted by the client", id.substr(0, 8));
    sendBody(response, 200, "", "");
}

// ----- Catalog: resources, prompts, completions ---------------------------------------------

std::optional<std::string> McpEndpoint::Impl::catalogRequest(
    const JsonRpcMessage& message, const std::shared_ptr<McpSession>& session, const Who& who,
    std::optional<std::uint64_t> stream) {
    const auto found = catalogs.find(who.workspace);
    if (found == catalogs.end()) {
        return std::nullopt;
    }
    const RequestId& id = *message.id;
    const std::string key = id.toJson();
    auto cancelled = session->beginRequest(key);
    EndpointToolCall call(session, stream, std::nullopt, cancelled, who.caller());
    std::optional<CatalogReply> reply;
    try {
        reply = found->second->handle(message.method, message.params_json, call, session->id());
    } catch (const std::exception& e) {
        reply = CatalogReply{{},
                             R"({"code":-32603,"message":)" +
                                 jsonString(message.method + " failed: " + e.what()) + "}"};
    }
    session->endRequest(key);
    if (!reply) {
        return std::nullopt;
    }
    if (!reply->error_json.empty()) {
        return R"({"jsonrpc":"2.0","id":)" + key + R"(,"error":)" + reply->error_json + "}";
    }
    return makeResult(id, reply->result_json);
}

void McpEndpoint::Impl::deliver(const std::string& workspace, const CatalogNotice& notice) {
    const std::string message = makeNotification(notice.method, notice.params_json);
    if (!notice.sessions.empty()) {
        for (const std::string& id : notice.sessions) {
            if (auto s = sessions.find(id); s && s->workspace() == workspace) {
                s->sendStandalone(message);
            }
        }
        return;
    }
    sessions.forEach([&](McpSession& s) {
        if (s.workspace() == workspace && (!notice.level || *notice.level >= s.logLevel())) {
            s.sendStandalone(message);
        }
    });
}

// ----- Tasks (2025-11-25) -----------------------------------------------------------------

namespace {

/// The JSON-RPC error code of a backend's refusal.
std::int64_t taskErrorCode(const Error& error) {
    return error.code == ErrorCode::not_found || error.code == ErrorCode::invalid_argument
               ? kInvalidParams
               : kInternalError;
}

/// `params.taskId` of a tasks/* request; empty when missing.
std::string taskIdOf(std::string_view params_json) {
    rapidjson::Document params;
    if (!parseObject(params_json, params)) {
        return {};
    }
    return memberString(params, "taskId");
}

}  // namespace

std::string McpEndpoint::Impl::createTask(const JsonRpcMessage& message,
                                          const std::shared_ptr<McpSession>& session,
                                          const Who& who, const std::string& name,
                                          const std::string& arguments,
                                          const rapidjson::Value& task) {
    const RequestId& id = *message.id;
    if (!task.IsObject()) {
        return makeError(id, kInvalidParams, "tools/call: params.task must be an object");
    }
    std::optional<std::int64_t> ttl;
    if (const auto it = task.FindMember("ttl"); it != task.MemberEnd() && !it->value.IsNull()) {
        if (!it->value.IsInt64() || it->value.GetInt64() < 0) {
            return makeError(id, kInvalidParams,
                             "tools/call: params.task.ttl must be a number of milliseconds");
        }
        ttl = it->value.GetInt64();
    }
    const auto definition = who.tools->find(name);
    if (!definition) {
        return makeError(id, kInvalidParams, "tools/call: unknown tool: " + name);
    }
    if (definition->task_support.empty()) {
        return makeError(id, kMethodNotFound,
                         "tools/call: tool " + name + " does not support task-augmented calls");
    }
    auto created = tasks->create(name, arguments, who.caller(), ttl);
    if (!created) {
        return makeError(id, taskErrorCode(created.error()),
                         "tools/call: " + created.error().message);
    }
    {
        const std::lock_guard lock(taskMutex);
        if (taskCreators.size() < kMaxTaskWaiters) {
            taskCreators[created->task_id] = session;
        }
    }
    return makeResult(id, R"({"task":)" + created->toJson() + "}");
}

std::string McpEndpoint::Impl::tasksMethod(const JsonRpcMessage& message, const Who& who) {
    const RequestId& id = *message.id;
    if (message.method == "tasks/list") {
        if (!authRequired) {
            // Not offered without an auth context (see initialize).
            return makeError(id, kMethodNotFound, "method not found: tasks/list");
        }
        rapidjson::Document params;
        if (!parseObject(message.params_json, params)) {
            return makeError(id, kInvalidParams, "tasks/list: params must be an object");
        }
        auto page = tasks->list(who.caller(), memberString(params, "cursor"));
        if (!page) {
            return makeError(id, taskErrorCode(page.error()), page.error().message);
        }
        std::string result = R"({"tasks":[)";
        for (std::size_t i = 0; i < page->tasks.size(); ++i) {
            result += (i == 0 ? "" : ",") + page->tasks[i].toJson();
        }
        result += "]";
        if (!page->next_cursor.empty()) {
            result += R"(,"nextCursor":)" + jsonString(page->next_cursor);
        }
        return makeResult(id, result + "}");
    }
    const std::string taskId = taskIdOf(message.params_json);
    if (taskId.empty()) {
        return makeError(id, kInvalidParams, message.method + ": params.taskId is required");
    }
    auto task = message.method == "tasks/get" ? tasks->get(taskId, who.caller())
                                              : tasks->cancel(taskId, who.caller());
    if (!task) {
        const std::string what = task.error().code == ErrorCode::not_found
                                     ? "Failed to retrieve task: Task not found"
                                     : task.error().message;
        return makeError(id, taskErrorCode(task.error()), message.method + ": " + what);
    }
    return makeResult(id, task->toJson());
}

std::string McpEndpoint::Impl::taskResultMessage(const RequestId& id, const std::string& task_id,
                                                 const Caller& caller) {
    auto result = tasks->result(task_id, caller);
    if (!result) {
        return makeError(id, taskErrorCode(result.error()),
                         "tasks/result: " + (result.error().code == ErrorCode::not_found
                                                 ? std::string("Task not found")
                                                 : result.error().message));
    }
    if (!*result) {
        return {};
    }
    return makeResult(id, (*result)->toJson(relatedTaskMeta(task_id)));
}

void McpEndpoint::Impl::tasksResult(const JsonRpcMessage& message,
                                    const std::shared_ptr<McpSession>& session, const Who& who,
                                    HTTPServerRequest& request, HTTPServerResponse& response) {
    const RequestId& id = *message.id;
    const auto since = std::chrono::steady_clock::now();
    const std::string taskId = taskIdOf(message.params_json);
    if (taskId.empty()) {
        observedOutcome(message.method, "invalid_params", since);
        sendBody(response, 200, "application/json",
                 makeError(id, kInvalidParams, "tasks/result: params.taskId is required"));
        return;
    }
    if (Catalog* catalog = catalogOf(who); catalog != nullptr && catalog->ownsTask(taskId)) {
        // An upstream's task: its tasks/result waits for the upstream, and whatever the task
        // asks the client meanwhile (elicitation) goes on this request's stream.
        const std::uint64_t stream = session->openStream(false);
        if (!openSse(request, response, session, stream, std::nullopt)) {
            return;
        }
        auto reply = catalogRequest(message, session, who, stream);
        if (reply) {
            observed(message.method, *reply, since);
            session->send(stream, *reply);
        }
        session->finish(stream);
        return;
    }
    const std::string now = taskResultMessage(id, taskId, who.caller());
    if (!now.empty()) {
        observed(message.method, now, since);
        sendBody(response, 200, "application/json", now);
        return;
    }
    {
        const std::lock_guard lock(taskMutex);
        if (taskWaiters.size() >= kMaxTaskWaiters) {
            observedOutcome(message.method, "internal_error", since);
            sendBody(response, 200, "application/json",
                     makeError(id, kInternalError,
                               "tasks/result: too many waiting requests; poll tasks/get"));
            return;
        }
    }
    // Not finished: the answer comes on an SSE stream once the task ends.
    const std::uint64_t stream = session->openStream(false);
    if (!openSse(request, response, session, stream, std::nullopt)) {
        return;
    }
    {
        const std::lock_guard lock(taskMutex);
        taskWaiters.emplace(taskId, TaskWaiter{session, stream, id, who.caller(), since});
    }
    tasks->watch(taskId);  // another node may run it
    // It may have ended between the first look and the registration.
    TaskInfo probe;
    probe.task_id = taskId;
    probe.status = TaskStatus::completed;
    onTask(probe);
}

void McpEndpoint::Impl::onTask(const TaskInfo& task) {
    std::shared_ptr<McpSession> creator;
    const bool terminal = isTerminal(task.status);
    {
        const std::lock_guard lock(taskMutex);
        if (const auto it = taskCreators.find(task.task_id); it != taskCreators.end()) {
            creator = it->second.lock();
            if (terminal || !creator) {
                taskCreators.erase(it);
            }
        }
    }
    // A probe (created_at 0) only checks the waiters; a real change is announced to the
    // session that created the task (notifications/tasks/status is optional: best effort).
    if (creator && task.created_at_ms != 0) {
        creator->sendStandalone(makeNotification("notifications/tasks/status", task.toJson()));
    }
    if (!terminal) {
        return;
    }
    const std::lock_guard lock(taskMutex);
    auto [first, last] = taskWaiters.equal_range(task.task_id);
    for (auto it = first; it != last;) {
        const std::string answer =
            taskResultMessage(it->second.id, task.task_id, it->second.caller);
        if (answer.empty()) {
            ++it;  // a probe of a task that has not ended
            continue;
        }
        observed("tasks/result", answer, it->second.since);
        if (auto session = it->second.session.lock()) {
            session->send(it->second.stream, answer);
            session->finish(it->second.stream);
        }
        it = taskWaiters.erase(it);
    }
}

}  // namespace crank::mcp
