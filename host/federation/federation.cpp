#include "federation/federation.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "config/plugin_secrets.h"
#include "federation/resource_subscriptions.h"
#include "json/json_text.h"
#include "log/log.h"
#include "mcp/modern/modern_result.h"
#include "mcp/wire/json_scanner.h"
#include "mcp/wire/log_level.h"
#include "plugins/plugin_call.h"
#include "plugins/plugin_peer.h"
#include "plugins/plugin_writer.h"
#include "runtime/secret_scrubber.h"
#include "util/json_string.h"

namespace crank::federation {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

/// The lists an upstream publishes, as dirty bits.
constexpr int kTools = 1;
constexpr int kResources = 2;
constexpr int kPrompts = 4;
constexpr int kAllLists = kTools | kResources | kPrompts;

/// Largest answer taken from an upstream (a tools/call result, a resource's contents).
constexpr std::size_t kMaxAnswerBytes = std::size_t{64} * 1024 * 1024;
/// Pages followed through nextCursor for one list.
constexpr int kMaxPages = 100;
/// Unsubscribes waiting for the refresher, at most; beyond, the oldest is dropped (its upstream
/// stays subscribed, and its updates reach nobody).
constexpr std::size_t kMaxUnsubscribes = 10'000;

std::string rpcError(std::int64_t code, std::string_view message, std::string_view data = {}) {
    std::string out = fmt::format(R"({{"code":{},"message":{})", code, jsonString(message));
    if (!data.empty()) {
        out += R"(,"data":)" + std::string(data);
    }
    return out + "}";
}

std::string stringMember(const rapidjson::Value& object, const char* name) {
    if (!object.IsObject()) {
        return {};
    }
    const auto it = object.FindMember(name);
    return it != object.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
}

bool parseObject(std::string_view text, rapidjson::Document& doc) {
    doc.Parse(text.data(), text.size());
    return !doc.HasParseError() && doc.IsObject();
}

/// One published entry of a list: the key clients use (a published name or a URI), the
/// upstream's own name for it, and its JSON as clients see it.
struct Item {
    std::string key;
    std::string original;
    std::string json;
};

struct Lists {
    std::vector<Item> tools;
    std::vector<Item> resources;
    std::vector<Item> templates;
    std::vector<Item> prompts;
};

/// Does `uri` match the RFC 6570 template `tmpl`? Each expression ({x}, {+x}, {/x}, ...)
/// matches a non-empty run of characters; simple ones ({x}) stop at '/', '?' and '#'.
bool matchTemplate(std::string_view tmpl, std::string_view uri, int depth = 0) {
    if (depth > 32) {
        return false;
    }
    while (!tmpl.empty()) {
        if (tmpl.front() != '{') {
            if (uri.empty() || uri.front() != tmpl.front()) {
                return false;
            }
            tmpl.remove_prefix(1);
            uri.remove_prefix(1);
            continue;
        }
        const std::size_t close = tmpl.find('}');
        if (close == std::string_view::npos) {
            return false;
        }
        const bool reserved = close > 1 && (tmpl[1] == '+' || tmpl[1] == '#' || tmpl[1] == '/');
        const std::string_view rest = tmpl.substr(close + 1);
        for (std::size_t n = 1; n <= uri.size(); ++n) {
            const char c = uri[n - 1];
            if (!reserved && (c == '/' || c == '?' || c == '#')) {
                break;
            }
            if (matchTemplate(rest, uri.substr(n), depth + 1)) {
                return true;
            }
        }
        return false;
    }
    return uri.empty();
}

/// A page of `items` from `cursor` ("c<hex index>"), as `{"<member>":[...],"nextCursor":..}`.
std::optional<std::string> page(const std::vector<Item>& items, const char* member,
                                const rapidjson::Value& params, std::size_t page_size) {
    std::size_t start = 0;
    const std::string cursor = stringMember(params, "cursor");
    if (params.IsObject() && params.HasMember("cursor")) {
        std::size_t value = 0;
        bool ok = cursor.size() > 1 && cursor[0] == 'c';
        if (ok) {
            const auto [end, ec] =
                std::from_chars(cursor.data() + 1, cursor.data() + cursor.size(), value, 16);
            ok = ec == std::errc() && end == cursor.data() + cursor.size() && value <= items.size();
        }
        if (!ok) {
            return std::nullopt;
        }
        start = value;
    }
    const std::size_t end = std::min(items.size(), start + page_size);
    std::string out = R"({")" + std::string(member) + R"(":[)";
    for (std::size_t i = start; i < end; ++i) {
        out += (i == start ? "" : ",") + items[i].json;
    }
    out += ']';
    if (end < items.size()) {
        out += R"(,"nextCursor":)" + jsonString(fmt::format("c{:x}", end));
    }
    return out + "}";
}

/// `object` with its member `name` set to `value` (added when missing), as JSON text.
std::string withStringMember(const rapidjson::Value& object, const char* name,
                             const std::string& value) {
    rapidjson::Document copy;
    copy.CopyFrom(object, copy.GetAllocator());
    rapidjson::Value v(value.c_str(), static_cast<rapidjson::SizeType>(value.size()),
                       copy.GetAllocator());
    if (copy.HasMember(name)) {
        copy[name] = v;
    } else {
        copy.AddMember(rapidjson::StringRef(name), v, copy.GetAllocator());
    }
    return json::toJsonText(copy);
}

/// Replaces, in every object of `value` (at most 16 levels deep), a member "taskId" whose value is
/// `from` by `to`.
void renameTaskIds(rapidjson::Value& value, rapidjson::Document::AllocatorType& allocator,
                   const std::string& from, const std::string& to, int depth = 0) {
    if (depth > 16) {
        return;
    }
    if (value.IsObject()) {
        // By index: comparing two rapidjson member iterators is ambiguous in C++20.
        for (rapidjson::SizeType i = 0; i < value.MemberCount(); ++i) {
            auto m = value.MemberBegin() + i;
            if (m->value.IsString() && std::string_view(m->name.GetString()) == "taskId" &&
                std::string_view(m->value.GetString(), m->value.GetStringLength()) == from) {
                m->value.SetString(to.c_str(), static_cast<rapidjson::SizeType>(to.size()),
                                   allocator);
            } else {
                renameTaskIds(m->value, allocator, from, to, depth + 1);
            }
        }
    } else if (value.IsArray()) {
        for (auto& v : value.GetArray()) {
            renameTaskIds(v, allocator, from, to, depth + 1);
        }
    }
}

/// `json` with every "taskId" equal to `from` renamed `to` (as renameTaskIds).
std::string withTaskId(std::string_view json, const std::string& from, const std::string& to) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    if (doc.HasParseError()) {
        return std::string(json);
    }
    renameTaskIds(doc, doc.GetAllocator(), from, to);
    return json::toJsonText(doc);
}

/// 16 random hex digits: the node-unique part of the ids given to upstream tasks.
std::string randomHex() {
    std::random_device device;
    return fmt::format("{:08x}{:08x}", device(), device());
}

}  // namespace

// ----- one upstream ------------------------------------------------------------------------

/// The host side of one upstream: its config, the adapter's handle, its lists.
struct Link final : plugins::PluginPeer {
    Federation::Impl* owner = nullptr;
    config::UpstreamConfig config;
    /// The secrets of `config` (its {"env": NAME} references, sent upstream by the adapter, such
    /// as the mcp plugin's `headers`): scrubbed from every answer, error, notification and log
    /// line of the upstream, which may echo them.
    runtime::SecretScrubber scrubber;
    const plugins::AdapterHandle* adapter = nullptr;
    crank_upstream* upstream = nullptr;  // set by start(), cleared by stop()
    std::atomic<int> dirty{kAllLists};
    std::atomic<bool> settled{false};
    /// Requests running in the adapter now: the upstream is closed only once none is.
    std::atomic<int> active{0};

    // Guarded by Impl::mutex.
    Lists lists;
    std::string last_error;
    std::vector<std::string> collisions;

    void notify(std::string_view method, std::string_view raw_params_json) noexcept override;
};

/// What an upstream request answered: the result object, or a JSON-RPC error object.
struct Answer {
    bool ok = false;
    std::string json;
};

/// The crank_call of one request to an upstream: cancellation, deadline, progress, log lines
/// and requests to the client go to the downstream call (when there is one).
class FederatedCall final : public plugins::PluginCall {
public:
    FederatedCall(const Link& link, mcp::ToolCall* call, Clock::time_point deadline,
                  const std::atomic<bool>& stopping)
        : link_(link), call_(call), deadline_(deadline), stopping_(stopping) {
        context_ = "upstream " + link.config.name;
    }

    crank_emit_result emit(std::string_view /*item_json*/) noexcept override {
        return CRANK_EMIT_CANCELLED;
    }
    void setError(crank_error_code code, std::string_view message,
                  std::string_view details_json) noexcept override {
        try {
            const std::lock_guard lock(mutex_);
            code_ = code;
            message_ = link_.scrubber.scrub(message.substr(0, 4096));
            details_ = link_.scrubber.scrubJson(details_json.substr(0, 65536));
        } catch (...) {  // NOLINT(bugprone-empty-catch): out of memory; the status says it failed
        }
    }
    void progress(double progress, double total, std::string_view message) noexcept override {
        if (call_ == nullptr) {
            return;
        }
        try {
            call_->progress(progress, total < 0 ? std::nullopt : std::optional<double>(total),
                            message);
        } catch (...) {  // NOLINT(bugprone-empty-catch): a lost progress note is no failure
        }
    }
    bool isCancelled() const noexcept override {
        return stopping_.load() || Clock::now() >= deadline_ ||
               (call_ != nullptr && call_->cancelled());
    }
    crank_cancel_reason cancelReason() const noexcept override {
        if (stopping_.load()) {
            return CRANK_CANCEL_REQUESTED;
        }
        if (Clock::now() >= deadline_) {
            return CRANK_CANCEL_DEADLINE;
        }
        return call_ != nullptr && call_->cancelled() ? CRANK_CANCEL_REQUESTED : CRANK_CANCEL_NONE;
    }
    std::string_view logContext() const noexcept override { return context_; }
    void scrubLogLine(std::string& line) const override { link_.scrubber.scrubInPlace(line); }

    void notify(std::string_view method, std::string_view params_json) noexcept override {
        if (call_ == nullptr || method != "notifications/message") {
            return;
        }
        try {
            rapidjson::Document params;
            if (!parseObject(link_.scrubber.scrubJson(params_json), params)) {
                return;
            }
            const auto level = mcp::parseLogLevel(stringMember(params, "level"));
            const rapidjson::Value& object = params;
            const auto data = object.FindMember("data");
            call_->log(level.value_or(mcp::LogLevel::info), stringMember(params, "logger"),
                       data != object.MemberEnd() ? json::toJsonText(data->value) : "null");
        } catch (...) {  // NOLINT(bugprone-empty-catch): a lost log line is no failure
        }
    }

    crank_status request(std::string_view method, std::string_view params_json,
                         std::int64_t timeout_ms, std::string& answer) noexcept override {
        try {
            if (call_ == nullptr) {
                answer = rpcError(-32601, "no client is waiting on this request");
                return CRANK_ERROR;
            }
            const std::int64_t limit =
                std::min(timeout_ms > 0 ? timeout_ms : link_.config.client_request_timeout_ms,
                         link_.config.client_request_timeout_ms);
            auto reply =
                call_->requestClient(method, clientTaskIds(params_json), milliseconds(limit));
            answer = std::move(reply.json);
            return reply.ok ? CRANK_OK : CRANK_ERROR;
        } catch (...) {
            return CRANK_ERROR;
        }
    }

    /// `params_json` with the upstream's task ids (a related-task `_meta`) turned into crank's.
    std::string clientTaskIds(std::string_view params_json) const;

    /// The message of errorJson(): what an operator reads.
    std::string errorMessage(std::string_view method) const {
        rapidjson::Document error;
        const std::string json = errorJson(method);
        return parseObject(json, error) ? stringMember(error, "message") : json;
    }

    /// The JSON-RPC error object for a failed request.
    std::string errorJson(std::string_view method) const {
        const std::lock_guard lock(mutex_);
        rapidjson::Document details;
        if (!details_.empty() && parseObject(details_, details) &&
            details.HasMember("jsonrpc_error") && details["jsonrpc_error"].IsObject()) {
            return json::toJsonText(details["jsonrpc_error"]);  // the upstream's, as it is
        }
        std::int64_t code = -32603;
        if (code_ == CRANK_ERR_INVALID_ARGUMENT) {
            code = -32602;
        }
        return rpcError(code, fmt::format("upstream {}: {}: {}", link_.config.name, method,
                                          message_.empty() ? "failed" : message_));
    }

private:
    const Link& link_;
    mcp::ToolCall* call_;
    Clock::time_point deadline_;
    const std::atomic<bool>& stopping_;
    std::string context_;
    mutable std::mutex mutex_;
    crank_error_code code_ = CRANK_ERR_INTERNAL;
    std::string message_;
    std::string details_;
};

/// The name under which the calls and catalog requests of `link` share the node's per-upstream
/// bound (server.max_calls_per_upstream).
std::string upstreamKey(const Link& link) {
    return "mcp:" + link.config.name;
}

// ----- the federation ------------------------------------------------------------------------

class WorkspaceCatalog;

struct Federation::Impl : std::enable_shared_from_this<Federation::Impl> {
    std::vector<config::UpstreamConfig> configs;
    const plugins::PluginRegistry& registry;
    std::map<std::string, mcp::FunctionToolRegistry*> tools;
    std::size_t pageSize;
    std::shared_ptr<store::Store> store;
    /// The node's per-upstream bound, shared with the tools' calls (limitUpstreams); null: none.
    std::shared_ptr<mcp::UpstreamSlots> slots;

    std::vector<std::unique_ptr<Link>> links;
    std::map<std::string, std::unique_ptr<WorkspaceCatalog>> catalogs;

    mutable std::mutex mutex;
    /// Serializes publish(): its changes reach the tool registry in the order computed.
    std::mutex publishMutex;
    std::condition_variable wake;
    std::atomic<bool> stopping{false};
    /// Raised by cancelRequests() and stop(): requests in flight end as cancelled (their
    /// upstreams told), and no new request starts.
    std::atomic<bool> cancelling{false};
    std::thread refresher;
    /// Per workspace: the tools the federation published there (name -> tool JSON).
    std::map<std::string, std::map<std::string, std::string>> publishedTools;
    /// Per workspace: published resources, templates, prompts (what the catalog lists).
    std::map<std::string, Lists> published;
    /// What clients follow here (resources/subscribe, listens' resourceSubscriptions).
    ResourceSubscriptions subscriptions;
    /// Resources whose last subscriber went away, to unsubscribe upstream (the refresher's work,
    /// so that Catalog::forget never waits on an upstream). Under mutex.
    std::vector<ResourceSubscriptions::Orphan> unsubscribes;
    /// Per workspace: published tool name -> the upstream and its own name for it.
    std::map<std::string, std::map<std::string, std::pair<Link*, std::string>>> toolOwners;

    /// Tasks that upstreams run, under the ids crank gave them (clients never see the
    /// upstream's own id, which could collide across upstreams). In memory, bounded: the oldest
    /// go first. A task lives on the node whose connection created it.
    struct TaskRoute {
        Link* link = nullptr;
        std::string upstream_id;
        std::string workspace;
        std::string session;  // the MCP session that created it (gets its status notices)
        std::string agent;    // only the agent that created it may use it
    };
    static constexpr std::size_t kMaxTasks = 10'000;
    std::map<std::string, TaskRoute> taskRoutes;
    std::map<std::pair<const Link*, std::string>, std::string> taskIds;  // -> crank's id
    std::deque<std::string> taskOrder;
    std::string taskPrefix = "up-";

    /// Registers an upstream task and returns crank's id for it (under mutex).
    std::string addTask(Link& link, const std::string& upstream_id, const std::string& workspace,
                        const std::string& session, const std::string& agent) {
        if (const auto known = taskIds.find({&link, upstream_id}); known != taskIds.end()) {
            return known->second;
        }
        // Unguessable on its own: one id tells nothing of another.
        std::string id = taskPrefix + randomHex() + randomHex();
        taskRoutes[id] = TaskRoute{&link, upstream_id, workspace, session, agent};
        taskIds[{&link, upstream_id}] = id;
        taskOrder.push_back(id);
        while (taskOrder.size() > kMaxTasks) {
            const auto old = taskRoutes.find(taskOrder.front());
            if (old != taskRoutes.end()) {
                taskIds.erase({old->second.link, old->second.upstream_id});
                taskRoutes.erase(old);
            }
            taskOrder.pop_front();
        }
        return id;
    }

    Impl(std::vector<config::UpstreamConfig> c, const plugins::PluginRegistry& r,
         std::map<std::string, mcp::FunctionToolRegistry*> t, std::size_t p,
         std::shared_ptr<store::Store> s)
        : configs(std::move(c)),
          registry(r),
          tools(std::move(t)),
          pageSize(p),
          store(std::move(s)) {}

    /// One audit event `upstream.<verb>` for `call`'s agent: which upstream, which of its
    /// names (a tool, a task), how it ended and how long it took.
    void audit(const Link& link, const mcp::ToolCall& call, std::string_view verb,
               std::string_view name, const Answer& answer, Clock::time_point started) const {
        if (!store) {
            return;
        }
        const mcp::Caller caller = call.caller();
        store::AuditEvent event;
        event.workspace_id = caller.workspace;
        event.agent_id = caller.agent.empty() ? "anonymous" : caller.agent;
        event.operation_id = link.config.name;
        event.action = "upstream." + std::string(verb);
        std::string detail =
            R"({"upstream":)" + jsonString(link.config.name) + R"(,"name":)" +
            jsonString(name.substr(0, 256)) +
            fmt::format(R"(,"elapsed_ms":{})",
                        std::chrono::duration_cast<milliseconds>(Clock::now() - started).count());
        if (answer.ok) {
            // A tool that ran and failed is a result, not an error of crank's.
            // Read from the result's own isError, however the upstream spelt its JSON.
            const auto result = mcp::scan::readObject(answer.json);
            const mcp::scan::RawValue* isError =
                result ? mcp::scan::findMember(result->members, "isError") : nullptr;
            const bool failed = isError != nullptr &&
                                isError->type == mcp::scan::ValueType::boolean &&
                                std::string_view(answer.json).substr(isError->start, 4) == "true";
            event.outcome = failed ? "tool_error" : "ok";
        } else {
            rapidjson::Document error;
            parseObject(answer.json, error);
            const std::string message = stringMember(error, "message");
            event.outcome = call.cancelled() ? "cancelled" : "error";
            detail += R"(,"error":)" + jsonString(message.substr(0, 512));
        }
        event.detail_json = detail + "}";
        if (auto r = store->appendAudit(std::move(event)); !r) {
            log::warn("upstream {}: the audit log refused upstream.{}: {}", link.config.name, verb,
                      r.error().message);
        }
    }

    /// One request to `link`; `call` is the downstream call it serves (or null).
    Answer request(Link& link, std::string_view method, std::string_view params_in,
                   mcp::ToolCall* call) {
        // The client's trace context goes on in the request's _meta (W3C Trace Context in MCP),
        // checked: a forwarded request's own _meta members are replaced, or dropped when the
        // client's were not valid.
        const std::string traced =
            mcp::withTraceContext(params_in, call != nullptr ? call->trace() : mcp::TraceContext{});
        const std::string_view params = traced;
        crank_upstream* handle = nullptr;
        {
            const std::lock_guard lock(mutex);
            handle = link.upstream;
        }
        if (handle == nullptr || stopping.load() || cancelling.load()) {
            return {false, rpcError(-32603, "upstream " + link.config.name + " is closed")};
        }
        FederatedCall c(link, call, Clock::now() + milliseconds(link.config.request_timeout_ms),
                        cancelling);
        plugins::PluginWriter writer(kMaxAnswerBytes);
        // Counted from before the check of `upstream` that stop() makes after raising
        // `stopping`: either stop() sees this request, or this request sees `stopping`.
        ++link.active;
        crank_status status = CRANK_ERROR;
        {
            const std::lock_guard lock(mutex);
            handle = link.upstream;
        }
        if (handle != nullptr && !stopping.load() && !cancelling.load()) {
            status = link.adapter->upstreamRequest(handle, c, method, params, writer.handle());
        } else {
            c.setError(CRANK_ERR_UNAVAILABLE, "the upstream is closed", {});
        }
        --link.active;
        if (status == CRANK_OK && !writer.overflowed() && !writer.text().empty()) {
            // resultType, ttlMs and cacheScope are crankd's to set on a 2026-era answer.
            return {true, mcp::withoutModernMembers(link.scrubber.scrubJson(writer.text()))};
        }
        if (writer.overflowed()) {
            return {false,
                    rpcError(-32603, fmt::format("upstream {}: {}: the answer is larger "
                                                 "than {} bytes",
                                                 link.config.name, method, kMaxAnswerBytes))};
        }
        if (status == CRANK_CANCELLED || (call != nullptr && call->cancelled())) {
            return {false, rpcError(-32800, "request cancelled")};
        }
        return {false, c.errorJson(method)};
    }

    /// Every item of a paged list method of `link`; nullopt (and `error`) when it failed. A
    /// method the upstream does not have is an empty list.
    std::optional<std::vector<std::string>> fetchAll(Link& link, const char* method,
                                                     const char* member, std::string& error) {
        std::vector<std::string> items;
        std::string cursor;
        for (int pageNo = 0; pageNo < kMaxPages; ++pageNo) {
            const std::string params =
                cursor.empty() ? "{}" : R"({"cursor":)" + jsonString(cursor) + "}";
            const Answer a = request(link, method, params, nullptr);
            rapidjson::Document doc;
            if (!a.ok) {
                if (parseObject(a.json, doc) && doc.HasMember("code") && doc["code"].IsInt64() &&
                    doc["code"].GetInt64() == -32601) {
                    return items;  // the upstream has no such list
                }
                // The host's own messages already say which upstream and method; the
                // upstream's (a JSON-RPC error of its own) do not.
                const std::string message = stringMember(doc, "message");
                const std::string context = "upstream " + link.config.name + ": ";
                error = message.rfind(context, 0) == 0
                            ? message
                            : fmt::format("{}{}: {}", context, method, message);
                return std::nullopt;
            }
            if (!parseObject(a.json, doc) || !doc.HasMember(member) || !doc[member].IsArray()) {
                error = fmt::format("upstream {}: {}: the answer has no {} array", link.config.name,
                                    method, member);
                return std::nullopt;
            }
            for (const rapidjson::Value& item : doc[member].GetArray()) {
                if (static_cast<std::int64_t>(items.size()) >= link.config.max_list_items) {
                    log::warn("upstream {}: {} has more than {} entries; the rest is not published",
                              link.config.name, method, link.config.max_list_items);
                    return items;
                }
                items.push_back(json::toJsonText(item));
            }
            cursor = stringMember(doc, "nextCursor");
            if (cursor.empty()) {
                return items;
            }
        }
        log::warn("upstream {}: {} has more than {} pages; the rest is not published",
                  link.config.name, method, kMaxPages);
        return items;
    }

    /// Fetches the lists named by `which` (dirty bits) of `link`.
    void refresh(Link& link, int which) {
        std::string error;
        const auto take = [&](const char* method, const char* member,
                              const char* key) -> std::optional<std::vector<Item>> {
            if (!error.empty()) {
                return std::nullopt;  // the upstream already failed this round
            }
            auto raw = fetchAll(link, method, member, error);
            if (!raw) {
                return std::nullopt;
            }
            std::vector<Item> items;
            for (const std::string& text : *raw) {
                rapidjson::Document doc;
                if (!parseObject(text, doc) || stringMember(doc, key).empty()) {
                    log::warn("upstream {}: an entry of {} has no {}; skipped", link.config.name,
                              method, key);
                    continue;
                }
                items.push_back(Item{{}, stringMember(doc, key), text});
            }
            return items;
        };
        std::optional<std::vector<Item>> toolList;
        std::optional<std::vector<Item>> resourceList;
        std::optional<std::vector<Item>> templateList;
        std::optional<std::vector<Item>> promptList;
        if ((which & kTools) != 0) {
            toolList = take("tools/list", "tools", "name");
        }
        if ((which & kResources) != 0) {
            resourceList = take("resources/list", "resources", "uri");
            templateList = take("resources/templates/list", "resourceTemplates", "uriTemplate");
        }
        if ((which & kPrompts) != 0) {
            promptList = take("prompts/list", "prompts", "name");
        }
        {
            const std::lock_guard lock(mutex);
            if (toolList) {
                link.lists.tools = std::move(*toolList);
            }
            if (resourceList) {
                link.lists.resources = std::move(*resourceList);
            }
            if (templateList) {
                link.lists.templates = std::move(*templateList);
            }
            if (promptList) {
                link.lists.prompts = std::move(*promptList);
            }
            link.last_error = error;
        }
        if (!error.empty()) {
            log::warn("{}", error);
        }
        link.settled = true;
    }

    /// Recomputes what `workspace` publishes from its upstreams' lists, in config order.
    void publish(const std::string& workspace);

    void runRefresher() {
        while (true) {
            {
                std::unique_lock lock(mutex);
                wake.wait(lock, [&] {
                    return stopping.load() || !unsubscribes.empty() ||
                           std::any_of(links.begin(), links.end(),
                                       [](const auto& l) { return l->dirty.load() != 0; });
                });
                if (stopping.load()) {
                    return;
                }
            }
            unsubscribeUnused();
            std::set<std::string> touched;
            for (auto& link : links) {
                const int which = link->dirty.exchange(0);
                if (which != 0 && !stopping.load()) {
                    refresh(*link, which);
                    touched.insert(link->config.workspace);
                }
            }
            for (const std::string& ws : touched) {
                publish(ws);
            }
        }
    }

    /// Tells upstreams of the resources nobody here follows any more (unless somebody subscribed
    /// again meanwhile).
    void unsubscribeUnused() {
        std::vector<ResourceSubscriptions::Orphan> pending;
        {
            const std::lock_guard lock(mutex);
            pending.swap(unsubscribes);
        }
        for (const auto& orphan : pending) {
            if (stopping.load() ||
                !subscriptions.subscribers(orphan.workspace, orphan.uri).empty()) {
                continue;  // followed again meanwhile: the upstream stays subscribed
            }
            for (auto& link : links) {
                if (link->config.name == orphan.upstream &&
                    link->config.workspace == orphan.workspace) {
                    request(*link, "resources/unsubscribe",
                            R"({"uri":)" + jsonString(orphan.uri) + "}", nullptr);
                }
            }
        }
    }

    void markDirty(Link& link, int which) {
        link.dirty |= which;
        const std::lock_guard lock(mutex);
        wake.notify_all();
    }

    void noticeToWorkspace(const std::string& workspace, const mcp::CatalogNotice& notice);
};

std::string FederatedCall::clientTaskIds(std::string_view params_json) const {
    if (params_json.find("taskId") == std::string_view::npos) {
        return std::string(params_json);
    }
    rapidjson::Document params;
    if (!parseObject(params_json, params) || !params.HasMember("_meta") ||
        !params["_meta"].IsObject()) {
        return std::string(params_json);
    }
    const rapidjson::Value& meta = params["_meta"];
    const auto related = meta.FindMember("io.modelcontextprotocol/related-task");
    if (related == meta.MemberEnd()) {
        return std::string(params_json);
    }
    const std::string upstreamId = stringMember(related->value, "taskId");
    const std::lock_guard lock(link_.owner->mutex);
    const auto id = link_.owner->taskIds.find({&link_, upstreamId});
    return id == link_.owner->taskIds.end() ? std::string(params_json)
                                            : withTaskId(params_json, upstreamId, id->second);
}

void Link::notify(std::string_view method, std::string_view raw_params_json) noexcept {
    try {
        const std::string scrubbed = scrubber.scrubJson(raw_params_json);
        const std::string_view params_json = scrubbed;
        if (method == "notifications/tools/list_changed") {
            owner->markDirty(*this, kTools);
        } else if (method == "notifications/resources/list_changed") {
            owner->markDirty(*this, kResources);
        } else if (method == "notifications/prompts/list_changed") {
            owner->markDirty(*this, kPrompts);
        } else if (method == "notifications/resources/updated") {
            rapidjson::Document params;
            if (!parseObject(params_json, params)) {
                return;
            }
            mcp::CatalogNotice notice{std::string(method), std::string(params_json), {}, {}};
            notice.sessions =
                owner->subscriptions.subscribers(config.workspace, stringMember(params, "uri"));
            if (notice.sessions.empty()) {
                return;
            }
            owner->noticeToWorkspace(config.workspace, notice);
        } else if (method == "notifications/tasks/status") {
            rapidjson::Document params;
            if (!parseObject(params_json, params)) {
                return;
            }
            const std::string upstreamId = stringMember(params, "taskId");
            mcp::CatalogNotice notice{std::string(method), {}, {}, {}};
            {
                const std::lock_guard lock(owner->mutex);
                const auto id = owner->taskIds.find({this, upstreamId});
                if (id == owner->taskIds.end()) {
                    return;  // a task no client of crank created
                }
                notice.params_json = withTaskId(params_json, upstreamId, id->second);
                notice.sessions.push_back(owner->taskRoutes.at(id->second).session);
            }
            owner->noticeToWorkspace(config.workspace, notice);
        } else if (method == "notifications/message") {
            rapidjson::Document params;
            if (!parseObject(params_json, params)) {
                return;
            }
            const auto level = mcp::parseLogLevel(stringMember(params, "level"));
            owner->noticeToWorkspace(config.workspace,
                                     mcp::CatalogNotice{std::string(method),
                                                        std::string(params_json),
                                                        {},
                                                        level.value_or(mcp::LogLevel::info)});
        }
    } catch (const std::exception& e) {
        log::warn("upstream {}: a notification was lost: {}", config.name, e.what());
    }
}

// ----- the catalog of one workspace -------------------------------------------------------------

class WorkspaceCatalog final : public mcp::Catalog {
public:
    WorkspaceCatalog(Federation::Impl& impl, std::string workspace)
        : impl_(impl), workspace_(std::move(workspace)) {}

    std::string capabilitiesJson() const override {
        return R"("resources":{"subscribe":true,"listChanged":true},)"
               R"("prompts":{"listChanged":true},"completions":{})";
    }

    std::optional<mcp::CatalogReply> handle(std::string_view method, std::string_view params_json,
                                            mcp::ToolCall& call,
                                            const std::string& session_id) override {
        static const std::set<std::string_view> kMethods = {"resources/list",
                                                            "resources/templates/list",
                                                            "resources/read",
                                                            "resources/subscribe",
                                                            "resources/unsubscribe",
                                                            "prompts/list",
                                                            "prompts/get",
                                                            "completion/complete",
                                                            "tools/call",
                                                            "tasks/get",
                                                            "tasks/result",
                                                            "tasks/cancel"};
        if (kMethods.count(method) == 0) {
            return std::nullopt;
        }
        rapidjson::Document params;
        if (params_json.empty()) {
            params.SetObject();
        } else if (!parseObject(params_json, params)) {
            return error(-32602, std::string(method) + ": params must be an object");
        }
        if (method == "resources/list" || method == "resources/templates/list" ||
            method == "prompts/list") {
            std::optional<std::string> answer;
            {
                const std::lock_guard lock(impl_.mutex);
                const Lists& lists = impl_.published[workspace_];
                answer = method == "resources/list"
                             ? page(lists.resources, "resources", params, impl_.pageSize)
                         : method == "prompts/list"
                             ? page(lists.prompts, "prompts", params, impl_.pageSize)
                             : page(lists.templates, "resourceTemplates", params, impl_.pageSize);
            }
            if (!answer) {
                return error(-32602, std::string(method) + ": invalid cursor");
            }
            return mcp::CatalogReply{*answer, {}};
        }
        if (method == "tools/call") {
            return taskCall(params, call, session_id);
        }
        if (method == "tasks/get" || method == "tasks/result" || method == "tasks/cancel") {
            return taskRequest(method, params, call);
        }
        if (method == "prompts/get") {
            const std::string name = stringMember(params, "name");
            Link* owner = nullptr;
            std::string original;
            {
                const std::lock_guard lock(impl_.mutex);
                for (const Item& item : impl_.published[workspace_].prompts) {
                    if (item.key == name) {
                        original = item.original;
                        owner = ownerOfPrompt(name);
                    }
                }
            }
            if (owner == nullptr) {
                return error(-32602, "prompts/get: unknown prompt: " + name.substr(0, 128));
            }
            return forward(*owner, method, withStringMember(params, "name", original), call);
        }
        if (method == "completion/complete") {
            if (!params.HasMember("ref") || !params["ref"].IsObject()) {
                return error(-32602, "completion/complete: params.ref must be an object");
            }
            const rapidjson::Value& ref = params["ref"];
            const std::string type = stringMember(ref, "type");
            Link* owner = nullptr;
            std::string rewritten;
            if (type == "ref/prompt") {
                const std::string name = stringMember(ref, "name");
                std::string original;
                {
                    const std::lock_guard lock(impl_.mutex);
                    owner = ownerOfPrompt(name);
                    for (const Item& item : impl_.published[workspace_].prompts) {
                        if (item.key == name) {
                            original = item.original;
                        }
                    }
                }
                if (owner == nullptr) {
                    return error(-32602,
                                 "completion/complete: unknown prompt: " + name.substr(0, 128));
                }
                rapidjson::Document copy;
                copy.CopyFrom(params, copy.GetAllocator());
                copy["ref"]["name"].SetString(original.c_str(),
                                              static_cast<rapidjson::SizeType>(original.size()),
                                              copy.GetAllocator());
                rewritten = json::toJsonText(copy);
            } else if (type == "ref/resource") {
                owner = ownerOfUri(stringMember(ref, "uri"));
                rewritten = std::string(params_json);
                if (owner == nullptr) {
                    return error(-32602, "completion/complete: no upstream serves " +
                                             stringMember(ref, "uri").substr(0, 256));
                }
            } else {
                return error(-32602, "completion/complete: unknown ref.type " +
                                         jsonString(type.substr(0, 64)));
            }
            return forward(*owner, method, rewritten, call);
        }
        // resources/read, resources/subscribe, resources/unsubscribe: by URI.
        const std::string uri = stringMember(params, "uri");
        if (uri.empty()) {
            return error(-32602, std::string(method) + ": params.uri is required (a string)");
        }
        Link* owner = ownerOfUri(uri);
        const bool subscribing =
            method == "resources/subscribe" || method == "resources/unsubscribe";
        if (owner == nullptr && !subscribing) {
            // Perhaps created a moment ago (a tool's resource_link) and not listed yet here:
            // fetch the workspace's resource lists once, now, before saying it does not exist.
            // Not for a subscription: a listen subscribes to up to 64 URIs in one request, and
            // each unknown one would fetch every upstream's lists again.
            for (auto& link : impl_.links) {
                if (link->config.workspace == workspace_ && !impl_.stopping.load()) {
                    impl_.refresh(*link, kResources);
                }
            }
            impl_.publish(workspace_);
            owner = ownerOfUri(uri);
        }
        if (owner == nullptr) {
            return mcp::CatalogReply{
                {}, rpcError(-32002, "Resource not found", R"({"uri":)" + jsonString(uri) + "}")};
        }
        if (subscribing) {
            return subscription(*owner, method == "resources/subscribe", uri, params_json, call,
                                session_id);
        }
        return forward(*owner, method, std::string(params_json.empty() ? "{}" : params_json), call);
    }

    /// resources/subscribe or resources/unsubscribe of `uri` (served by `owner`) for
    /// `subscriber`: the upstream is told only of the first subscriber and the last one gone.
    mcp::CatalogReply subscription(Link& owner, bool subscribe, const std::string& uri,
                                   std::string_view params_json, mcp::ToolCall& call,
                                   const std::string& subscriber) {
        const std::string method = subscribe ? "resources/subscribe" : "resources/unsubscribe";
        const std::string params(params_json.empty() ? "{}" : params_json);
        if (!subscribe) {
            if (!impl_.subscriptions.remove(workspace_, uri, subscriber)) {
                return mcp::CatalogReply{"{}", {}};
            }
            return forward(owner, method, params, call);
        }
        const Result<bool> first = impl_.subscriptions.add(
            workspace_, uri, owner.config.name, subscriber, call.caller().agent,
            {static_cast<std::size_t>(owner.config.max_subscriptions_per_client),
             static_cast<std::size_t>(owner.config.max_subscriptions_per_agent)});
        if (!first) {
            return error(first.error().code == ErrorCode::invalid_argument ? -32602 : -32603,
                         method + ": " + first.error().message);
        }
        if (!*first) {
            return mcp::CatalogReply{"{}", {}};
        }
        mcp::CatalogReply reply = forward(owner, method, params, call);
        if (!reply.error_json.empty()) {
            // Not subscribed upstream: neither is the subscriber.
            impl_.subscriptions.remove(workspace_, uri, subscriber);
        }
        return reply;
    }

    void forget(const std::string& subscriber) override {
        auto orphans = impl_.subscriptions.forget(workspace_, subscriber);
        if (orphans.empty()) {
            return;
        }
        const std::lock_guard lock(impl_.mutex);
        for (auto& orphan : orphans) {
            impl_.unsubscribes.push_back(std::move(orphan));
        }
        if (impl_.unsubscribes.size() > kMaxUnsubscribes) {
            impl_.unsubscribes.erase(impl_.unsubscribes.begin(),
                                     impl_.unsubscribes.end() - kMaxUnsubscribes);
        }
        impl_.wake.notify_all();
    }

    bool ownsTool(std::string_view name) const override {
        const std::lock_guard lock(impl_.mutex);
        const auto ws = impl_.toolOwners.find(workspace_);
        return ws != impl_.toolOwners.end() && ws->second.count(std::string(name)) != 0;
    }

    bool ownsTask(std::string_view task_id) const override {
        // Every id of this form is the federation's (an unknown one is answered as unknown).
        const std::lock_guard lock(impl_.mutex);
        return task_id.substr(0, impl_.taskPrefix.size()) == impl_.taskPrefix;
    }

    void clientNotification(std::string_view method, std::string_view params_json) override {
        for (auto& link : impl_.links) {
            crank_upstream* handle = nullptr;
            {
                const std::lock_guard lock(impl_.mutex);
                handle = link->upstream;
            }
            if (link->config.workspace == workspace_ && handle != nullptr) {
                link->adapter->upstreamNotify(handle, method, params_json);
            }
        }
    }

    void subscribe(Listener listener) override {
        const std::lock_guard lock(listenerMutex_);
        listeners_.push_back(std::move(listener));
    }

    void emit(const mcp::CatalogNotice& notice) {
        std::vector<Listener> listeners;
        {
            const std::lock_guard lock(listenerMutex_);
            listeners = listeners_;
        }
        for (const Listener& l : listeners) {
            l(notice);
        }
    }

private:
    static mcp::CatalogReply error(std::int64_t code, const std::string& message) {
        return mcp::CatalogReply{{}, rpcError(code, message)};
    }

    /// tools/call with params.task of a federated tool: the upstream creates the task.
    mcp::CatalogReply taskCall(const rapidjson::Document& params, mcp::ToolCall& call,
                               const std::string& session_id) {
        const std::string name = stringMember(params, "name");
        Link* link = nullptr;
        std::string original;
        {
            const std::lock_guard lock(impl_.mutex);
            const auto& owners = impl_.toolOwners[workspace_];
            if (const auto it = owners.find(name); it != owners.end()) {
                link = it->second.first;
                original = it->second.second;
            }
        }
        if (link == nullptr) {
            return error(-32602, "tools/call: unknown tool: " + name.substr(0, 128));
        }
        Answer a = request(*link, "tools/call", withStringMember(params, "name", original), call);
        if (!a.ok) {
            return mcp::CatalogReply{{}, std::move(a.json)};
        }
        rapidjson::Document result;
        if (!parseObject(a.json, result) || !result.HasMember("task") ||
            stringMember(result["task"], "taskId").empty()) {
            return error(-32603, "upstream " + link->config.name +
                                     ": tools/call with a task answered no task.taskId");
        }
        const std::string upstreamId = stringMember(result["task"], "taskId");
        std::string id;
        {
            const std::lock_guard lock(impl_.mutex);
            id = impl_.addTask(*link, upstreamId, workspace_, session_id, call.caller().agent);
        }
        return mcp::CatalogReply{withTaskId(a.json, upstreamId, id), {}};
    }

    /// tasks/get, tasks/result, tasks/cancel of an upstream's task.
    mcp::CatalogReply taskRequest(std::string_view method, const rapidjson::Document& params,
                                  mcp::ToolCall& call) {
        const std::string id = stringMember(params, "taskId");
        Federation::Impl::TaskRoute route;
        {
            const std::lock_guard lock(impl_.mutex);
            const auto it = impl_.taskRoutes.find(id);
            // Another agent's task is answered as unknown: ids are not shared, and not confirmed.
            if (it == impl_.taskRoutes.end() || it->second.workspace != workspace_ ||
                it->second.agent != call.caller().agent) {
                return error(-32602, std::string(method) + ": unknown task " +
                                         jsonString(id.substr(0, 128)));
            }
            route = it->second;
        }
        const Clock::time_point started = Clock::now();
        Answer a = request(*route.link, method,
                           withStringMember(params, "taskId", route.upstream_id), call);
        if (method == "tasks/cancel") {
            impl_.audit(*route.link, call, "task_cancel", id, a, started);
        }
        return a.ok ? mcp::CatalogReply{withTaskId(a.json, route.upstream_id, id), {}}
                    : mcp::CatalogReply{{}, std::move(a.json)};
    }

    mcp::CatalogReply forward(Link& link, std::string_view method, const std::string& params,
                              mcp::ToolCall& call) {
        Answer a = request(link, method, params, call);
        return a.ok ? mcp::CatalogReply{std::move(a.json), {}}
                    : mcp::CatalogReply{{}, std::move(a.json)};
    }

    /// A request of this catalog to `link`, within the upstream's bound like its tools' calls:
    /// beyond it, refused at once with an error that names the upstream and the limit, so that
    /// reads of a slow upstream cannot take every worker.
    Answer request(Link& link, std::string_view method, std::string_view params,
                   mcp::ToolCall& call) {
        std::unique_ptr<mcp::UpstreamSlots::Hold> slot;  // released however the request ends
        if (impl_.slots) {
            std::string refusal;
            slot = impl_.slots->hold(upstreamKey(link), refusal);
            if (!slot) {
                return {false, rpcError(-32603, std::string(method) + ": " + refusal)};
            }
        }
        return impl_.request(link, method, params, &call);
    }

    /// The upstream that published prompt `name` here (under impl_.mutex).
    Link* ownerOfPrompt(const std::string& name) {
        for (auto& link : impl_.links) {
            if (link->config.workspace != workspace_) {
                continue;
            }
            for (const Item& item : link->lists.prompts) {
                if (link->config.publishedName(item.original) == name) {
                    return link.get();
                }
            }
        }
        return nullptr;
    }

    /// The upstream that serves `uri` here: the one that lists it, else the first whose
    /// template matches it, else the only upstream of the workspace.
    Link* ownerOfUri(const std::string& uri) {
        const std::lock_guard lock(impl_.mutex);
        Link* only = nullptr;
        int count = 0;
        for (auto& link : impl_.links) {
            if (link->config.workspace != workspace_) {
                continue;
            }
            ++count;
            only = link.get();
            for (const Item& item : link->lists.resources) {
                if (item.original == uri) {
                    return link.get();
                }
            }
        }
        for (auto& link : impl_.links) {
            if (link->config.workspace != workspace_) {
                continue;
            }
            for (const Item& item : link->lists.templates) {
                if (matchTemplate(item.original, uri)) {
                    return link.get();
                }
            }
        }
        return count == 1 ? only : nullptr;
    }

    Federation::Impl& impl_;
    std::string workspace_;
    std::mutex listenerMutex_;
    std::vector<Listener> listeners_;
};

void Federation::Impl::noticeToWorkspace(const std::string& workspace,
                                         const mcp::CatalogNotice& notice) {
    const auto it = catalogs.find(workspace);
    if (it != catalogs.end()) {
        it->second->emit(notice);
    }
}

void Federation::Impl::publish(const std::string& workspace) {
    const std::lock_guard serial(publishMutex);
    mcp::FunctionToolRegistry* toolRegistry =
        tools.count(workspace) != 0 ? tools.at(workspace) : nullptr;
    std::vector<std::pair<mcp::ToolDefinition, mcp::FunctionToolRegistry::Function>> add;
    std::vector<std::string> remove;
    bool resourcesChanged = false;
    bool promptsChanged = false;
    std::weak_ptr<Impl> weak = weak_from_this();
    {
        const std::lock_guard lock(mutex);
        std::map<std::string, std::string>& before = publishedTools[workspace];
        // Names taken by the workspace's own tools (operations), which always win.
        std::set<std::string> taken;
        if (toolRegistry != nullptr) {
            for (const mcp::ToolDefinition& t : toolRegistry->list()) {
                if (before.count(t.name) == 0) {
                    taken.insert(t.name);
                }
            }
        }
        std::map<std::string, std::string> now;
        std::map<std::string, std::pair<Link*, std::string>>& owners = toolOwners[workspace];
        owners.clear();
        Lists merged;
        std::set<std::string> uris;
        std::set<std::string> templates;
        std::set<std::string> prompts;
        for (auto& link : links) {
            if (link->config.workspace != workspace) {
                continue;
            }
            link->collisions.clear();
            const auto collide = [&](const std::string& what) {
                link->collisions.push_back(what);
                log::warn("upstream {}: {}", link->config.name, what);
            };
            for (const Item& item : link->lists.tools) {
                const std::string name = link->config.publishedName(item.original);
                if (taken.count(name) != 0 || now.count(name) != 0) {
                    collide("tool \"" + item.original + "\" is not published: the name \"" + name +
                            "\" is taken (by an operation or an earlier upstream)");
                    continue;
                }
                rapidjson::Document doc;
                parseObject(item.json, doc);
                now[name] = withStringMember(doc, "name", name);
                owners[name] = {link.get(), item.original};
                if (before.count(name) == 0 || before[name] != now[name]) {
                    mcp::ToolDefinition d;
                    d.name = name;
                    d.title = stringMember(doc, "title");
                    d.description = stringMember(doc, "description");
                    d.raw_json = now[name];
                    d.requests_client = true;
                    d.upstream = upstreamKey(*link);  // its calls share one bound
                    if (doc.HasMember("execution") && doc["execution"].IsObject()) {
                        d.task_support = stringMember(doc["execution"], "taskSupport");
                    }
                    Link* target = link.get();
                    const std::string original = item.original;
                    add.emplace_back(
                        std::move(d),
                        [weak, target, original](std::string_view arguments,
                                                 mcp::ToolCall& call) -> Result<mcp::ToolResult> {
                            auto self = weak.lock();
                            if (!self) {
                                return Error{ErrorCode::unavailable, "crankd is stopping"};
                            }
                            std::string params = R"({"name":)" + jsonString(original) +
                                                 R"(,"arguments":)" + std::string(arguments);
                            if (call.progressRequested()) {
                                params += R"(,"_meta":{"progressToken":"crank"})";
                            }
                            params += "}";
                            const Clock::time_point started = Clock::now();
                            Answer a = self->request(*target, "tools/call", params, &call);
                            self->audit(*target, call, "call", original, a, started);
                            mcp::ToolResult r;
                            (a.ok ? r.raw_json : r.rpc_error_json) = std::move(a.json);
                            return r;
                        });
                }
            }
            for (const Item& item : link->lists.resources) {
                if (!uris.insert(item.original).second) {
                    collide("resource " + item.original + " is listed by an earlier upstream");
                    continue;
                }
                merged.resources.push_back(Item{item.original, item.original, item.json});
            }
            for (const Item& item : link->lists.templates) {
                if (!templates.insert(item.original).second) {
                    collide("resource template " + item.original +
                            " is listed by an earlier upstream");
                    continue;
                }
                merged.templates.push_back(Item{item.original, item.original, item.json});
            }
            for (const Item& item : link->lists.prompts) {
                const std::string name = link->config.publishedName(item.original);
                if (!prompts.insert(name).second) {
                    collide("prompt \"" + item.original + "\" is not published: the name \"" +
                            name + "\" is taken by an earlier upstream");
                    continue;
                }
                rapidjson::Document doc;
                parseObject(item.json, doc);
                merged.prompts.push_back(
                    Item{name, item.original, withStringMember(doc, "name", name)});
            }
        }
        for (const auto& [name, text] : before) {
            if (now.count(name) == 0) {
                remove.push_back(name);
            }
        }
        before = std::move(now);
        Lists& old = published[workspace];
        const auto same = [](const std::vector<Item>& a, const std::vector<Item>& b) {
            return a.size() == b.size() &&
                   std::equal(a.begin(), a.end(), b.begin(),
                              [](const Item& x, const Item& y) { return x.json == y.json; });
        };
        resourcesChanged =
            !same(old.resources, merged.resources) || !same(old.templates, merged.templates);
        promptsChanged = !same(old.prompts, merged.prompts);
        old = std::move(merged);
    }
    if (toolRegistry != nullptr && (!add.empty() || !remove.empty())) {
        toolRegistry->replace(remove, std::move(add));
    }
    if (resourcesChanged) {
        noticeToWorkspace(workspace,
                          mcp::CatalogNotice{"notifications/resources/list_changed", {}, {}, {}});
    }
    if (promptsChanged) {
        noticeToWorkspace(workspace,
                          mcp::CatalogNotice{"notifications/prompts/list_changed", {}, {}, {}});
    }
}

// ----- Federation ------------------------------------------------------------------------------

Federation::Federation(std::vector<config::UpstreamConfig> upstreams,
                       const plugins::PluginRegistry& registry,
                       std::map<std::string, mcp::FunctionToolRegistry*> tools,
                       std::size_t page_size, std::shared_ptr<store::Store> store)
    : impl_(std::make_shared<Impl>(std::move(upstreams), registry, std::move(tools),
                                   std::max<std::size_t>(page_size, 1), std::move(store))) {}

Federation::~Federation() {
    stop();
}

void Federation::limitUpstreams(std::shared_ptr<mcp::UpstreamSlots> slots) {
    impl_->slots = std::move(slots);
}

Result<void> Federation::start() {
    Impl& impl = *impl_;
    for (std::size_t i = 0; i < impl.configs.size(); ++i) {
        const config::UpstreamConfig& c = impl.configs[i];
        const plugins::AdapterHandle* adapter = impl.registry.adapter(c.protocol);
        std::string problem;
        if (adapter == nullptr) {
            problem = "no adapter \"" + c.protocol + "\" is loaded (see `crankd plugins`)";
        } else if (!adapter->hasCapability(CRANK_CAP_FEDERATION)) {
            problem = "adapter \"" + c.protocol + "\" cannot federate upstreams";
        }
        auto link = std::make_unique<Link>();
        link->owner = &impl;
        link->config = c;
        link->scrubber = runtime::SecretScrubber(config::pluginConfigSecretValues(c.config_json));
        link->adapter = adapter;
        if (problem.empty()) {
            FederatedCall diagnostics(*link, nullptr, Clock::now() + milliseconds(10'000),
                                      impl.stopping);
            link->upstream =
                adapter->upstreamOpen(link->handle(), c.name, c.config_json, diagnostics);
            if (link->upstream == nullptr) {
                problem = diagnostics.errorMessage("open");
            }
        }
        if (!problem.empty()) {
            stop();
            return Error{ErrorCode::invalid_argument,
                         fmt::format("upstreams[{}] ({}): {}", i, c.name, problem)};
        }
        if (impl.catalogs.count(c.workspace) == 0) {
            impl.catalogs[c.workspace] = std::make_unique<WorkspaceCatalog>(impl, c.workspace);
        }
        log::info("upstream {} ({}) opened for workspace {}", c.name, c.protocol, c.workspace);
        impl.links.push_back(std::move(link));
    }
    if (!impl.links.empty()) {
        impl.refresher = std::thread([&impl] { impl.runRefresher(); });
    }
    return {};
}

void Federation::cancelRequests() {
    impl_->cancelling = true;
}

void Federation::stop() {
    Impl& impl = *impl_;
    impl.cancelling = true;
    {
        const std::lock_guard lock(impl.mutex);
        if (impl.stopping.exchange(true)) {
            return;
        }
        impl.wake.notify_all();
    }
    if (impl.refresher.joinable()) {
        impl.refresher.join();
    }
    for (auto& link : impl.links) {
        // Requests still running see `stopping` as a cancellation and end soon; the upstream
        // is closed only after them (closing under a running request would free its state).
        const Clock::time_point giveUp = Clock::now() + milliseconds(10'000);
        while (link->active.load() > 0 && Clock::now() < giveUp) {
            std::this_thread::sleep_for(milliseconds(10));
        }
        crank_upstream* handle = nullptr;
        {
            const std::lock_guard lock(impl.mutex);
            handle = std::exchange(link->upstream, nullptr);
        }
        if (handle == nullptr) {
            continue;
        }
        if (link->active.load() > 0) {
            log::error(
                "upstream {}: {} request(s) did not end within 10 s of the stop; the "
                "upstream is left open until exit",
                link->config.name, link->active.load());
            continue;
        }
        link->adapter->upstreamClose(handle);
    }
}

std::vector<Federation::TestResult> Federation::test(
    const std::vector<config::UpstreamConfig>& upstreams, const plugins::PluginRegistry& registry) {
    std::vector<TestResult> results;
    for (const config::UpstreamConfig& c : upstreams) {
        // One upstream per federation, opened and closed alone: nothing is published.
        Federation one({c}, registry, {}, 1);
        Impl& impl = *one.impl_;
        impl.stopping = false;
        TestResult r;
        r.name = c.name;
        const plugins::AdapterHandle* adapter = registry.adapter(c.protocol);
        if (adapter == nullptr || !adapter->hasCapability(CRANK_CAP_FEDERATION)) {
            r.detail = "no adapter \"" + c.protocol + "\" that federates upstreams is loaded";
            results.push_back(std::move(r));
            continue;
        }
        auto link = std::make_unique<Link>();
        link->owner = &impl;
        link->config = c;
        link->scrubber = runtime::SecretScrubber(config::pluginConfigSecretValues(c.config_json));
        link->adapter = adapter;
        FederatedCall diagnostics(*link, nullptr, Clock::now() + milliseconds(10'000),
                                  impl.stopping);
        link->upstream = adapter->upstreamOpen(link->handle(), c.name, c.config_json, diagnostics);
        if (link->upstream == nullptr) {
            r.detail = diagnostics.errorMessage("open");
            results.push_back(std::move(r));
            continue;
        }
        const Answer a = impl.request(*link, "ping", "{}", nullptr);
        r.ok = a.ok;
        if (!a.ok) {
            rapidjson::Document error;
            r.detail = parseObject(a.json, error) ? stringMember(error, "message") : a.json;
        }
        r.status_json = link->scrubber.scrubJson(adapter->upstreamStatus(link->upstream));
        adapter->upstreamClose(link->upstream);
        results.push_back(std::move(r));
    }
    return results;
}

std::map<std::string, mcp::Catalog*> Federation::catalogs() {
    std::map<std::string, mcp::Catalog*> out;
    for (auto& [ws, catalog] : impl_->catalogs) {
        out[ws] = catalog.get();
    }
    return out;
}

bool Federation::settled() const {
    return std::all_of(impl_->links.begin(), impl_->links.end(),
                       [](const auto& l) { return l->settled.load(); });
}

std::string Federation::statusJson() const {
    std::string out = "[";
    for (const auto& link : impl_->links) {
        crank_upstream* handle = nullptr;
        std::string entry;
        {
            const std::lock_guard lock(impl_->mutex);
            handle = link->upstream;
            entry = R"({"name":)" + jsonString(link->config.name) + R"(,"workspace":)" +
                    jsonString(link->config.workspace) + R"(,"protocol":)" +
                    jsonString(link->config.protocol) +
                    fmt::format(R"(,"tools":{},"resources":{},"resource_templates":{},)"
                                R"("prompts":{})",
                                link->lists.tools.size(), link->lists.resources.size(),
                                link->lists.templates.size(), link->lists.prompts.size()) +
                    R"(,"last_error":)" + jsonString(link->last_error) + R"(,"collisions":[)";
            for (std::size_t i = 0; i < link->collisions.size(); ++i) {
                entry += (i == 0 ? "" : ",") + jsonString(link->collisions[i]);
            }
            entry += "]";
        }
        const std::string status =
            handle != nullptr ? link->scrubber.scrubJson(link->adapter->upstreamStatus(handle))
                              : "{}";
        entry += R"(,"connection":)" + status + "}";
        out += (out.size() == 1 ? "" : ",") + entry;
    }
    return out + "]";
}

}  // namespace crank::federation
