#include "mcp/listen_hub.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "mcp/json_rpc.h"
#include "mcp/json_scanner.h"
#include "mcp/modern_result.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

constexpr std::string_view kSubscriptionId = "io.modelcontextprotocol/subscriptionId";

}  // namespace

Result<ListenFilter> parseListenFilter(std::string_view params_json) {
    ListenFilter filter;
    if (params_json.empty()) {
        return filter;
    }
    auto params = scan::readObject(params_json);
    if (!params) {
        return Error{ErrorCode::invalid_argument, "params: " + params.error().message};
    }
    const scan::RawValue* notifications = scan::findMember(params->members, "notifications");
    if (notifications == nullptr || notifications->type == scan::ValueType::null) {
        return filter;
    }
    if (notifications->type != scan::ValueType::object) {
        return Error{ErrorCode::invalid_argument, "params.notifications must be an object, got " +
                                                      scan::describe(params_json, *notifications)};
    }
    const std::string_view text =
        params_json.substr(notifications->start, notifications->end - notifications->start);
    auto kinds = scan::readObject(text);
    if (!kinds) {
        return Error{ErrorCode::invalid_argument, "params.notifications: " + kinds.error().message};
    }
    for (const auto& [name, flag] :
         {std::pair{"toolsListChanged", &filter.tools_list_changed},
          std::pair{"promptsListChanged", &filter.prompts_list_changed},
          std::pair{"resourcesListChanged", &filter.resources_list_changed}}) {
        const scan::RawValue* v = scan::findMember(kinds->members, name);
        if (v == nullptr || v->type == scan::ValueType::null) {
            continue;
        }
        if (v->type != scan::ValueType::boolean) {
            return Error{ErrorCode::invalid_argument, std::string("params.notifications.") + name +
                                                          " must be a boolean, got " +
                                                          scan::describe(text, *v)};
        }
        *flag = text.substr(v->start, v->end - v->start) == "true";
    }
    const scan::RawValue* ids = scan::findMember(kinds->members, "taskIds");
    if (ids == nullptr || ids->type == scan::ValueType::null) {
        return filter;
    }
    const auto badIds = [&] {
        return Error{ErrorCode::invalid_argument,
                     "params.notifications.taskIds must be an array of at most " +
                         std::to_string(kMaxListenTaskIds) +
                         " task ids (strings of 1 to 256 bytes), got " +
                         scan::describe(text, *ids)};
    };
    if (ids->type != scan::ValueType::array) {
        return badIds();
    }
    rapidjson::Document doc;
    const std::string_view array = text.substr(ids->start, ids->end - ids->start);
    doc.Parse(array.data(), array.size());
    if (doc.HasParseError() || !doc.IsArray() || doc.Size() > kMaxListenTaskIds) {
        return badIds();
    }
    for (const auto& id : doc.GetArray()) {
        if (!id.IsString() || id.GetStringLength() == 0 || id.GetStringLength() > 256) {
            return badIds();
        }
        std::string value(id.GetString(), id.GetStringLength());
        if (std::find(filter.task_ids.begin(), filter.task_ids.end(), value) ==
            filter.task_ids.end()) {
            filter.task_ids.push_back(std::move(value));
        }
    }
    return filter;
}

std::string acknowledgement(const ListenFilter& honoured, std::string_view listen_id_json) {
    std::string kinds;
    for (const auto& [name, on] :
         {std::pair{"toolsListChanged", honoured.tools_list_changed},
          std::pair{"promptsListChanged", honoured.prompts_list_changed},
          std::pair{"resourcesListChanged", honoured.resources_list_changed}}) {
        if (on) {
            kinds += (kinds.empty() ? "" : ",") + jsonString(name) + ":true";
        }
    }
    if (!honoured.task_ids.empty()) {
        kinds += std::string(kinds.empty() ? "" : ",") + R"("taskIds":[)";
        for (std::size_t i = 0; i < honoured.task_ids.size(); ++i) {
            kinds += (i == 0 ? "" : ",") + jsonString(honoured.task_ids[i]);
        }
        kinds += "]";
    }
    return R"({"notifications":{)" + kinds + R"(},"_meta":{)" + jsonString(kSubscriptionId) + ":" +
           std::string(listen_id_json) + "}}";
}

std::string tagged(std::string_view notification_method, std::string_view params_json,
                   std::string_view listen_id_json) {
    return makeNotification(notification_method,
                            withMetaMember(params_json, kSubscriptionId, listen_id_json));
}

std::uint64_t ListenHub::add(const std::string& workspace, const std::string& agent,
                             const ListenFilter& filter, std::string listen_id_json,
                             std::shared_ptr<RequestStream> stream, std::string_view first) {
    const std::lock_guard lock(mutex_);
    // Queued under the lock: a notice sent by another thread either finds the listen in (and is
    // queued after this), or was collected before it joined.
    stream->send(first);
    const std::uint64_t key = next_++;
    listens_.emplace(
        key, Listen{workspace, agent, filter, std::move(listen_id_json), std::move(stream)});
    return key;
}

void ListenHub::remove(std::uint64_t key) {
    std::shared_ptr<RequestStream> stream;  // released outside the lock
    const std::lock_guard lock(mutex_);
    const auto it = listens_.find(key);
    if (it != listens_.end()) {
        stream = std::move(it->second.stream);
        listens_.erase(it);
    }
}

template <typename Wants>
void ListenHub::send(const std::string& workspace, std::string_view method, Wants wants) {
    std::vector<std::pair<std::shared_ptr<RequestStream>, std::string>> targets;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [key, listen] : listens_) {
            if (listen.workspace == workspace && wants(listen.filter)) {
                targets.emplace_back(listen.stream, listen.id_json);
            }
        }
    }
    for (const auto& [stream, id] : targets) {
        stream->send(tagged(method, "", id));
    }
}

void ListenHub::toolsChanged(const std::string& workspace) {
    send(workspace, "notifications/tools/list_changed",
         [](const ListenFilter& f) { return f.tools_list_changed; });
}

void ListenHub::deliver(const std::string& workspace, const CatalogNotice& notice) {
    if (notice.method == "notifications/prompts/list_changed") {
        send(workspace, notice.method,
             [](const ListenFilter& f) { return f.prompts_list_changed; });
    } else if (notice.method == "notifications/resources/list_changed") {
        send(workspace, notice.method,
             [](const ListenFilter& f) { return f.resources_list_changed; });
    }
}

void ListenHub::taskChanged(const std::string& task_id, const Caller& owner,
                            const DetailedTask& detailed) {
    std::vector<std::pair<std::shared_ptr<RequestStream>, std::string>> targets;
    {
        const std::lock_guard lock(mutex_);
        for (const auto& [key, listen] : listens_) {
            const auto& ids = listen.filter.task_ids;
            if (listen.workspace == owner.workspace && listen.agent == owner.agent &&
                std::find(ids.begin(), ids.end(), task_id) != ids.end()) {
                targets.emplace_back(listen.stream, listen.id_json);
            }
        }
    }
    if (targets.empty()) {
        return;
    }
    const std::optional<std::string> task = detailed();
    if (!task) {
        return;
    }
    for (const auto& [stream, id] : targets) {
        stream->send(tagged("notifications/tasks", *task, id));
    }
}

std::size_t ListenHub::size() const {
    const std::lock_guard lock(mutex_);
    return listens_.size();
}

}  // namespace crank::mcp
