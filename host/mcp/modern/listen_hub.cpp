#include "mcp/modern/listen_hub.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "json/json_members.h"
#include "json/json_scanner.h"
#include "mcp/modern/modern_result.h"
#include "mcp/wire/json_rpc.h"
#include "util/json_string.h"

namespace crank::mcp {
namespace {

constexpr std::string_view kSubscriptionId = "io.modelcontextprotocol/subscriptionId";
constexpr std::string_view kSubscriberPrefix = "listen:";

/// The distinct strings of the array `value` of `text`: nullopt when it is not an array of at
/// most `most` strings of 1 to `bytes` bytes.
std::optional<std::vector<std::string>> readStrings(std::string_view text,
                                                    const json::scan::RawValue& value,
                                                    std::size_t most, std::size_t bytes) {
    if (value.type != json::scan::ValueType::array) {
        return std::nullopt;
    }
    json::Document doc;
    const std::string_view array = text.substr(value.start, value.end - value.start);
    if (!json::parseValue(array, doc) || !doc.IsArray() || doc.Size() > most) {
        return std::nullopt;
    }
    std::vector<std::string> out;
    for (const auto& item : doc.GetArray()) {
        if (!item.IsString() || item.GetStringLength() == 0 || item.GetStringLength() > bytes) {
            return std::nullopt;
        }
        std::string s(item.GetString(), item.GetStringLength());
        if (std::find(out.begin(), out.end(), s) == out.end()) {
            out.push_back(std::move(s));
        }
    }
    return out;
}

/// `"name":["a","b"]`.
std::string stringArrayMember(std::string_view name, const std::vector<std::string>& items) {
    std::string out = jsonString(name) + ":[";
    for (std::size_t i = 0; i < items.size(); ++i) {
        out += (i == 0 ? "" : ",") + jsonString(items[i]);
    }
    return out + "]";
}

}  // namespace

std::string listenSubscriber(std::uint64_t key) {
    return std::string(kSubscriberPrefix) + std::to_string(key);
}

Result<ListenFilter> parseListenFilter(std::string_view params_json) {
    ListenFilter filter;
    if (params_json.empty()) {
        return filter;
    }
    auto params = json::scan::readObject(params_json);
    if (!params) {
        return Error{ErrorCode::invalid_argument, "params: " + params.error().message};
    }
    const json::scan::RawValue* notifications =
        json::scan::findMember(params->members, "notifications");
    if (notifications == nullptr || notifications->type == json::scan::ValueType::null) {
        return filter;
    }
    if (notifications->type != json::scan::ValueType::object) {
        return Error{ErrorCode::invalid_argument,
                     "params.notifications must be an object, got " +
                         json::scan::describe(params_json, *notifications)};
    }
    const std::string_view text =
        params_json.substr(notifications->start, notifications->end - notifications->start);
    auto kinds = json::scan::readObject(text);
    if (!kinds) {
        return Error{ErrorCode::invalid_argument, "params.notifications: " + kinds.error().message};
    }
    for (const auto& [name, flag] :
         {std::pair{"toolsListChanged", &filter.tools_list_changed},
          std::pair{"promptsListChanged", &filter.prompts_list_changed},
          std::pair{"resourcesListChanged", &filter.resources_list_changed}}) {
        const json::scan::RawValue* v = json::scan::findMember(kinds->members, name);
        if (v == nullptr || v->type == json::scan::ValueType::null) {
            continue;
        }
        if (v->type != json::scan::ValueType::boolean) {
            return Error{ErrorCode::invalid_argument, std::string("params.notifications.") + name +
                                                          " must be a boolean, got " +
                                                          json::scan::describe(text, *v)};
        }
        *flag = text.substr(v->start, v->end - v->start) == "true";
    }
    for (const auto& [name, into, most, bytes, what] :
         {std::tuple{"taskIds", &filter.task_ids, kMaxListenTaskIds, std::size_t{256}, "task ids"},
          std::tuple{"resourceSubscriptions", &filter.resource_uris, kMaxListenResources,
                     kMaxListenUriBytes, "resource URIs"}}) {
        const json::scan::RawValue* v = json::scan::findMember(kinds->members, name);
        if (v == nullptr || v->type == json::scan::ValueType::null) {
            continue;
        }
        auto strings = readStrings(text, *v, most, bytes);
        if (!strings) {
            return Error{ErrorCode::invalid_argument,
                         std::string("params.notifications.") + name +
                             " must be an array of at most " + std::to_string(most) + " " + what +
                             " (strings of 1 to " + std::to_string(bytes) + " bytes), got " +
                             json::scan::describe(text, *v)};
        }
        *into = std::move(*strings);
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
    if (!honoured.resource_uris.empty()) {
        kinds += (kinds.empty() ? "" : ",") +
                 stringArrayMember("resourceSubscriptions", honoured.resource_uris);
    }
    if (!honoured.task_ids.empty()) {
        kinds += (kinds.empty() ? "" : ",") + stringArrayMember("taskIds", honoured.task_ids);
    }
    return R"({"notifications":{)" + kinds + R"(},"_meta":{)" + jsonString(kSubscriptionId) + ":" +
           std::string(listen_id_json) + "}}";
}

std::string tagged(std::string_view notification_method, std::string_view params_json,
                   std::string_view listen_id_json) {
    return makeNotification(notification_method,
                            withMetaMember(params_json, kSubscriptionId, listen_id_json));
}

std::uint64_t ListenHub::reserve() {
    const std::lock_guard lock(mutex_);
    return next_++;
}

void ListenHub::add(std::uint64_t key, const std::string& workspace, const std::string& agent,
                    const ListenFilter& filter, std::string listen_id_json,
                    std::shared_ptr<RequestStream> stream, std::string_view first,
                    Catalog* subscribed_on) {
    const std::lock_guard lock(mutex_);
    // Queued under the lock: a notice sent by another thread either finds the listen in (and is
    // queued after this), or was collected before it joined.
    stream->send(first);
    listens_.emplace(key, Listen{workspace, agent, filter, std::move(listen_id_json),
                                 std::move(stream), subscribed_on});
    by_workspace_[workspace].insert(key);
    for (const std::string& task_id : filter.task_ids) {
        by_task_[task_id].insert(key);
    }
}

void ListenHub::remove(std::uint64_t key) {
    std::shared_ptr<RequestStream> stream;  // released outside the lock
    Catalog* catalog = nullptr;
    {
        const std::lock_guard lock(mutex_);
        const auto it = listens_.find(key);
        if (it == listens_.end()) {
            return;
        }
        stream = std::move(it->second.stream);
        catalog = it->second.subscribed_on;
        unindex(by_workspace_, it->second.workspace, key);
        for (const std::string& task_id : it->second.filter.task_ids) {
            unindex(by_task_, task_id, key);
        }
        listens_.erase(it);
    }
    if (catalog != nullptr) {
        catalog->forget(listenSubscriber(key));  // never waits on an upstream
    }
}

template <typename Wants>
void ListenHub::send(const std::string& workspace, std::string_view method, Wants wants) {
    std::vector<std::pair<std::shared_ptr<RequestStream>, std::string>> targets;
    {
        const std::lock_guard lock(mutex_);
        const auto keys = by_workspace_.find(workspace);
        if (keys == by_workspace_.end()) {
            return;
        }
        for (const std::uint64_t key : keys->second) {
            const Listen& listen = listens_.at(key);
            if (wants(listen.filter)) {
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
    } else if (notice.method == "notifications/resources/updated") {
        resourceUpdated(workspace, notice);
    }
}

void ListenHub::resourceUpdated(const std::string& workspace, const CatalogNotice& notice) {
    // The catalog names the listens subscribed to the resource among its subscribers.
    const auto params = json::scan::readObject(notice.params_json);
    const json::scan::RawValue* uriValue =
        params ? json::scan::findMember(params->members, "uri") : nullptr;
    if (uriValue == nullptr || uriValue->type != json::scan::ValueType::string) {
        return;
    }
    const std::string& uri = uriValue->text;
    std::vector<std::pair<std::shared_ptr<RequestStream>, std::string>> targets;
    {
        const std::lock_guard lock(mutex_);
        for (const std::string& subscriber : notice.sessions) {
            if (subscriber.rfind(kSubscriberPrefix, 0) != 0) {
                continue;
            }
            std::uint64_t key = 0;
            const std::string_view digits =
                std::string_view(subscriber).substr(kSubscriberPrefix.size());
            if (std::from_chars(digits.data(), digits.data() + digits.size(), key).ec !=
                std::errc()) {
                continue;
            }
            const auto it = listens_.find(key);
            if (it == listens_.end() || it->second.workspace != workspace) {
                continue;
            }
            const auto& uris = it->second.filter.resource_uris;
            if (std::any_of(uris.begin(), uris.end(),
                            [&](const std::string& u) { return u == uri; })) {
                targets.emplace_back(it->second.stream, it->second.id_json);
            }
        }
    }
    for (const auto& [stream, id] : targets) {
        stream->send(tagged(notice.method, notice.params_json, id));
    }
}

void ListenHub::taskChanged(const std::string& task_id, const Caller& owner,
                            const DetailedTask& detailed) {
    std::vector<std::pair<std::shared_ptr<RequestStream>, std::string>> targets;
    {
        const std::lock_guard lock(mutex_);
        const auto keys = by_task_.find(task_id);
        if (keys == by_task_.end()) {
            return;
        }
        for (const std::uint64_t key : keys->second) {
            const Listen& listen = listens_.at(key);
            if (listen.workspace == owner.workspace && listen.agent == owner.agent) {
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

void ListenHub::unindex(Index& index, const std::string& name, std::uint64_t key) {
    const auto it = index.find(name);
    if (it != index.end()) {
        it->second.erase(key);
        if (it->second.empty()) {
            index.erase(it);
        }
    }
}

std::size_t ListenHub::size() const {
    const std::lock_guard lock(mutex_);
    return listens_.size();
}

}  // namespace crank::mcp
