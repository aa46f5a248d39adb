#include "federation/task_shapes.h"

#include <rapidjson/document.h>

#include "json/json_members.h"
#include "json/json_text.h"
#include "util/clock.h"
#include "util/json_string.h"

namespace crank::federation {
namespace {

/// `"to":<value of member `from`>` with a leading comma, when `task` has it and `ok` takes it.
template <typename Check>
std::string copied(const json::Value& task, const char* from, std::string_view to, Check ok) {
    const auto it = task.FindMember(from);
    if (it == task.MemberEnd() || !ok(it->value)) {
        return {};
    }
    return "," + jsonString(to) + ":" + json::toJsonText(it->value);
}

/// How one era names the two members the other names otherwise.
struct TaskNames {
    const char* ttl;
    const char* poll_interval;
};
constexpr TaskNames kLegacyNames{"ttl", "pollInterval"};
constexpr TaskNames kModernNames{"ttlMs", "pollIntervalMs"};

/// The members (without braces) of `task`, an object of the era named `from`, as the era named
/// `to` writes them; the required ones always there (timestamps `now_ms`, ttl null).
std::string taskMembers(const json::Value& task, const TaskNames& from, const TaskNames& to,
                        std::int64_t now_ms) {
    const auto isString = [](const json::Value& v) { return v.IsString(); };
    const auto isCount = [](const json::Value& v) { return v.IsInt64() && v.GetInt64() >= 0; };
    const auto orElse = [](const std::string& given, std::string_view fallback) {
        return given.empty() ? std::string(fallback) : given;
    };
    const std::string now = R"(:)" + jsonString(formatRfc3339(now_ms));
    std::string out = R"("taskId":)" + jsonString(json::stringMember(task, "taskId")) +
                      R"(,"status":)" + jsonString(json::stringMember(task, "status"));
    out += copied(task, "statusMessage", "statusMessage", isString);
    out += orElse(copied(task, "createdAt", "createdAt", isString), R"(,"createdAt")" + now);
    out += orElse(copied(task, "lastUpdatedAt", "lastUpdatedAt", isString),
                  R"(,"lastUpdatedAt")" + now);
    out += orElse(copied(task, from.ttl, to.ttl, isCount), "," + jsonString(to.ttl) + ":null");
    out += copied(task, from.poll_interval, to.poll_interval, isCount);
    return out;
}

}  // namespace

std::string legacyTaskJson(const json::Value& flat, std::int64_t now_ms) {
    if (!flat.IsObject()) {
        return "{}";
    }
    return "{" + taskMembers(flat, kModernNames, kLegacyNames, now_ms) + "}";
}

std::string modernTaskMembers(const json::Value& legacy, std::int64_t now_ms) {
    if (!legacy.IsObject()) {
        return R"("taskId":"","status":"")";
    }
    return taskMembers(legacy, kLegacyNames, kModernNames, now_ms);
}

std::string withoutRelatedTask(json::Value& result) {
    if (result.IsObject() && result.HasMember("_meta") && result["_meta"].IsObject()) {
        result["_meta"].RemoveMember("io.modelcontextprotocol/related-task");
        if (result["_meta"].ObjectEmpty()) {
            result.RemoveMember("_meta");
        }
    }
    return json::toJsonText(result);
}

std::string settledTaskJson(std::string_view task_id, std::int64_t created_ms, bool modern,
                            std::string_view result_json) {
    const std::string at = jsonString(formatRfc3339(created_ms));
    std::string out = R"({"taskId":)" + jsonString(task_id) +
                      R"(,"status":"completed","createdAt":)" + at + R"(,"lastUpdatedAt":)" + at;
    if (!modern) {
        return out + R"(,"ttl":null})";
    }
    out += R"(,"ttlMs":null)";
    if (!result_json.empty()) {
        out += R"(,"result":)";
        out += result_json;
    }
    return out + "}";
}

std::string withRelatedTask(std::string_view result_json, std::string_view task_id) {
    json::Document doc;
    if (!json::parseObject(result_json, doc)) {
        return std::string(result_json);
    }
    auto& a = doc.GetAllocator();
    if (!doc.HasMember("_meta") || !doc["_meta"].IsObject()) {
        doc.RemoveMember("_meta");
        doc.AddMember("_meta", rapidjson::Value(rapidjson::kObjectType), a);
    }
    rapidjson::Value& meta = doc["_meta"];
    meta.RemoveMember("io.modelcontextprotocol/related-task");
    rapidjson::Value related(rapidjson::kObjectType);
    related.AddMember(
        "taskId",
        rapidjson::Value(task_id.data(), static_cast<rapidjson::SizeType>(task_id.size()), a), a);
    meta.AddMember("io.modelcontextprotocol/related-task", std::move(related), a);
    return json::toJsonText(doc);
}

}  // namespace crank::federation
