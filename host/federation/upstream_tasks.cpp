#include "federation/upstream_tasks.h"

#include <random>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "federation/upstream_link.h"
#include "json/json_members.h"
#include "json/json_text.h"

namespace crank::federation {
namespace {

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
                               const std::string& agent) {
    const std::lock_guard lock(mutex_);
    if (const auto known = ids_.find({link.serial, upstream_id}); known != ids_.end()) {
        return known->second;
    }
    std::string id = std::string(kPrefix) + randomHex() + randomHex();
    routes_[id] = Route{link.weak_from_this(), link.serial, upstream_id, workspace, session, agent};
    ids_[{link.serial, upstream_id}] = id;
    order_.push_back(id);
    while (order_.size() > kMaxTasks) {
        const auto old = routes_.find(order_.front());
        if (old != routes_.end()) {
            ids_.erase({old->second.serial, old->second.upstream_id});
            routes_.erase(old);
        }
        order_.pop_front();
    }
    return id;
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

std::string UpstreamTasks::toClientIds(const UpstreamLink& link,
                                       std::string_view params_json) const {
    if (params_json.find("taskId") == std::string_view::npos) {
        return std::string(params_json);
    }
    json::Document params;
    if (params_json.empty() || !json::parseObject(params_json, params) ||
        !params.HasMember("_meta") || !params["_meta"].IsObject()) {
        return std::string(params_json);
    }
    const rapidjson::Value& meta = params["_meta"];
    const auto related = meta.FindMember("io.modelcontextprotocol/related-task");
    if (related == meta.MemberEnd()) {
        return std::string(params_json);
    }
    const std::string upstreamId = json::stringMember(related->value, "taskId");
    const auto id = crankId(link, upstreamId);
    return id ? withTaskId(params, upstreamId, id->first) : std::string(params_json);
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

}  // namespace crank::federation
