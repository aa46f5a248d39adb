#include "federation/upstream_tasks.h"

#include <algorithm>
#include <chrono>
#include <random>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "federation/upstream_link.h"
#include "json/json_members.h"
#include "json/json_scanner.h"
#include "json/json_text.h"

namespace crank::federation {
namespace {

std::int64_t nowMs() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

/// 16 random hex digits.
std::string randomHex() {
    std::random_device device;
    return fmt::format("{:08x}{:08x}", device(), device());
}

void renameTaskIds(rapidjson::Value& value, json::Allocator& allocator, const std::string& from,
                   const std::string& to, int depth = 0) {
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

}  // namespace

std::string UpstreamTasks::add(UpstreamLink& link, const std::string& upstream_id,
                               const std::string& workspace, const std::string& session,
                               const std::string& agent, bool modern) {
    const std::lock_guard lock(mutex_);
    if (const auto known = ids_.find({link.serial, upstream_id}); known != ids_.end()) {
        drop(std::string(known->second));  // an id given again names a new task
    }
    std::string id = std::string(kPrefix) + randomHex() + randomHex();
    ids_[{link.serial, upstream_id}] = id;
    keep(id, Route{link.weak_from_this(), link.serial, upstream_id, workspace, session, agent,
                   modern, nullptr, nowMs()});
    return id;
}

Result<std::string> UpstreamTasks::settle(UpstreamLink& link, std::string result_json,
                                          const std::string& workspace, const std::string& session,
                                          const std::string& agent) {
    if (result_json.size() > kMaxSettledBytesPerAgent) {
        return Error{ErrorCode::invalid_argument,
                     fmt::format("its answer ({} bytes) is larger than the {} bytes crankd keeps "
                                 "as a task for one agent: call the tool without a task",
                                 result_json.size(), kMaxSettledBytesPerAgent)};
    }
    const std::lock_guard lock(mutex_);
    std::string id = std::string(kPrefix) + randomHex() + randomHex();
    const std::size_t bytes = result_json.size();
    keep(id, Route{link.weak_from_this(),
                   link.serial,
                   {},
                   workspace,
                   session,
                   agent,
                   true,
                   std::make_shared<const std::string>(std::move(result_json)),
                   nowMs()});
    settled_bytes_ += bytes;
    settled_by_agent_[agent] += bytes;
    settled_order_.push_back(id);
    // The agent's own oldest first, then anyone's: each loop drops at least one task.
    for (;;) {
        const auto held = settled_by_agent_.find(agent);
        const auto ids = by_agent_.find(agent);
        if (held == settled_by_agent_.end() || held->second <= kMaxSettledBytesPerAgent ||
            ids == by_agent_.end() || ids->second.empty()) {
            break;
        }
        const std::string oldest = ids->second.front();
        ids->second.pop_front();
        drop(oldest);
    }
    // Past the node's bytes, the oldest settled tasks go (not the tasks that hold no bytes).
    while (settled_bytes_ > kMaxSettledBytes && !settled_order_.empty()) {
        const std::string oldest = settled_order_.front();
        settled_order_.pop_front();
        drop(oldest);
    }
    while (!settled_order_.empty() && routes_.count(settled_order_.front()) == 0) {
        settled_order_.pop_front();
    }
    return id;
}

void UpstreamTasks::keep(const std::string& id, Route route) {
    const std::string agent = route.agent;
    routes_[id] = std::move(route);
    order_.push_back(id);
    std::deque<std::string>& mine = by_agent_[agent];
    mine.push_back(id);
    while (mine.size() > kMaxTasksPerAgent) {
        const std::string oldest = mine.front();  // the agent's own oldest
        mine.pop_front();
        drop(oldest);
    }
    while (routes_.size() > kMaxTasks && !order_.empty()) {
        const std::string oldest = order_.front();
        order_.pop_front();
        drop(oldest);
    }
    // Ids an agent's bound dropped stay in order_ until they reach its front: past twice the
    // bound, it is written again without them.
    while (!order_.empty() && routes_.count(order_.front()) == 0) {
        order_.pop_front();
    }
    if (order_.size() > 2 * kMaxTasks) {
        std::deque<std::string> live;
        for (std::string& kept : order_) {
            if (routes_.count(kept) != 0) {
                live.push_back(std::move(kept));
            }
        }
        order_ = std::move(live);
    }
}

void UpstreamTasks::drop(const std::string& id) {
    const auto old = routes_.find(id);
    if (old == routes_.end()) {
        return;
    }
    const std::string agent = old->second.agent;
    if (old->second.settled) {
        const std::size_t bytes = old->second.settled->size();
        settled_bytes_ -= bytes;
        if (auto mine = settled_by_agent_.find(agent); mine != settled_by_agent_.end()) {
            mine->second -= std::min(mine->second, bytes);
            if (mine->second == 0) {
                settled_by_agent_.erase(mine);
            }
        }
    } else {
        ids_.erase({old->second.serial, old->second.upstream_id});
    }
    routes_.erase(old);
    const auto ids = by_agent_.find(agent);
    if (ids == by_agent_.end()) {
        return;
    }
    // Tasks go oldest first, by either bound: the agent's dropped ids are at its front.
    while (!ids->second.empty() && routes_.count(ids->second.front()) == 0) {
        ids->second.pop_front();
    }
    if (ids->second.empty()) {
        by_agent_.erase(ids);
    }
}

Result<std::string> UpstreamTasks::adoptCreated(UpstreamLink& link, std::string result_json,
                                                const std::string& workspace,
                                                const std::string& agent, bool declared) {
    // Cheap first: a result that cannot say "task" (unless spelled with escapes) is no task.
    if (result_json.find("\"task\"") == std::string::npos &&
        result_json.find("\\u") == std::string::npos) {
        return result_json;
    }
    json::Document doc;
    if (!json::parseObject(result_json, doc)) {
        // Too deep or not JSON for the DOM: passed on only when its top level is surely no task.
        const Result<json::scan::RawEntry> top = json::scan::readObject(result_json);
        const json::scan::RawValue* type =
            top ? json::scan::findMember(top->members, "resultType") : nullptr;
        if (!top || (type != nullptr && type->type == json::scan::ValueType::string &&
                     type->text == "task")) {
            return Error{ErrorCode::internal, "upstream " + link.config.name +
                                                  ": tools/call: its answer cannot be read"};
        }
        return result_json;
    }
    std::string fault;
    const std::string upstreamId = createdTaskId(doc, fault);
    if (upstreamId.empty() && fault.empty()) {
        return result_json;
    }
    const std::string where = "upstream " + link.config.name + ": tools/call: ";
    if (!fault.empty()) {
        return Error{ErrorCode::internal, where + fault};
    }
    if (!declared) {
        // Never passed on: the client did not ask for a task and could not follow it.
        return Error{ErrorCode::internal,
                     where + "it answered with a task, which the call did not ask for"};
    }
    const std::string id = add(link, upstreamId, workspace, "", agent, true);
    return withTaskId(doc, upstreamId, id);
}

std::optional<UpstreamTasks::Route> UpstreamTasks::find(const std::string& id) const {
    const std::lock_guard lock(mutex_);
    const auto it = routes_.find(id);
    if (it == routes_.end()) {
        return std::nullopt;
    }
    return it->second;
}

std::optional<std::pair<std::string, std::string>> UpstreamTasks::crankId(
    const UpstreamLink& link, const std::string& upstream_id) const {
    const std::lock_guard lock(mutex_);
    const auto id = ids_.find({link.serial, upstream_id});
    if (id == ids_.end()) {
        return std::nullopt;
    }
    return std::make_pair(id->second, routes_.at(id->second).session);
}

std::optional<std::string> UpstreamTasks::toClientIds(const UpstreamLink& link,
                                                      std::string_view params_json,
                                                      const std::string& agent) const {
    if (params_json.find("taskId") == std::string_view::npos &&
        params_json.find("\\u") == std::string_view::npos) {
        return std::string(params_json);
    }
    json::Document params;
    if (params_json.empty() || !json::parseObject(params_json, params)) {
        return std::nullopt;
    }
    if (!params.HasMember("_meta") || !params["_meta"].IsObject()) {
        return std::string(params_json);
    }
    rapidjson::Value& meta = params["_meta"];
    if (!meta.HasMember("io.modelcontextprotocol/related-task")) {
        return std::string(params_json);
    }
    const std::string upstreamId =
        json::stringMember(meta["io.modelcontextprotocol/related-task"], "taskId");
    std::optional<std::string> id;
    {
        const std::lock_guard lock(mutex_);
        const auto known = ids_.find({link.serial, upstreamId});
        if (known != ids_.end() && routes_.at(known->second).agent == agent) {
            id = known->second;
        }
    }
    if (!id) {
        // Another agent's task, or one crank does not know: the client is told of none.
        meta.RemoveMember("io.modelcontextprotocol/related-task");
        return json::toJsonText(params);
    }
    return withTaskId(params, upstreamId, *id);
}

UpstreamTasks::Wait::Wait(UpstreamTasks& tasks, std::string id)
    : tasks_(tasks), id_(std::move(id)) {
    const std::lock_guard lock(tasks_.mutex_);
    held_ = tasks_.waited_.insert(id_).second;
}

UpstreamTasks::Wait::~Wait() {
    if (held_) {
        const std::lock_guard lock(tasks_.mutex_);
        tasks_.waited_.erase(id_);
    }
}

std::optional<std::string> withTaskId(std::string_view text, const std::string& from,
                                      const std::string& to) {
    json::Document doc;
    if (!json::parseValue(text, doc)) {
        return std::nullopt;
    }
    return withTaskId(doc, from, to);
}

std::string withTaskId(json::Document& doc, const std::string& from, const std::string& to) {
    renameTaskIds(doc, doc.GetAllocator(), from, to);
    return json::toJsonText(doc);
}

std::string createdTaskId(const json::Value& result, std::string& fault) {
    if (!result.IsObject() || json::stringMember(result, "resultType") != "task") {
        return {};
    }
    std::string id = json::stringMember(result, "taskId");
    if (id.empty()) {
        fault = "a task answer without a taskId string";
    } else if (id.size() > UpstreamTasks::kMaxUpstreamIdBytes) {
        fault = fmt::format("a task id of {} bytes (at most {})", id.size(),
                            UpstreamTasks::kMaxUpstreamIdBytes);
        id.clear();
    }
    return id;
}

}  // namespace crank::federation
