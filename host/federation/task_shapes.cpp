#include "federation/task_shapes.h"

#include <rapidjson/document.h>

#include "json/json_members.h"
#include "json/json_text.h"
#include "util/clock.h"
#include "util/json_string.h"

namespace crank::federation {
namespace {

/// `"to":<value of member `from`>` with a leading comma, when `flat` has it and `ok` takes it.
template <typename Check>
std::string copied(const json::Value& flat, const char* from, std::string_view to, Check ok) {
    const auto it = flat.FindMember(from);
    if (it == flat.MemberEnd() || !ok(it->value)) {
        return {};
    }
    return "," + jsonString(to) + ":" + json::toJsonText(it->value);
}

}  // namespace

std::string legacyTaskJson(const json::Value& flat, std::int64_t now_ms) {
    if (!flat.IsObject()) {
        return "{}";
    }
    const auto isString = [](const json::Value& v) { return v.IsString(); };
    const auto isCount = [](const json::Value& v) { return v.IsInt64() && v.GetInt64() >= 0; };
    const auto orElse = [](const std::string& given, std::string_view fallback) {
        return given.empty() ? std::string(fallback) : given;
    };
    const std::string now = R"(:)" + jsonString(formatRfc3339(now_ms));
    std::string out = R"({"taskId":)" + jsonString(json::stringMember(flat, "taskId")) +
                      R"(,"status":)" + jsonString(json::stringMember(flat, "status"));
    out += copied(flat, "statusMessage", "statusMessage", isString);
    out += orElse(copied(flat, "createdAt", "createdAt", isString), R"(,"createdAt")" + now);
    out += orElse(copied(flat, "lastUpdatedAt", "lastUpdatedAt", isString),
                  R"(,"lastUpdatedAt")" + now);
    out += orElse(copied(flat, "ttlMs", "ttl", isCount), R"(,"ttl":null)");
    out += copied(flat, "pollIntervalMs", "pollInterval", isCount);
    return out + "}";
}

std::string modernTaskMembers(const json::Value& legacy, std::int64_t now_ms) {
    if (!legacy.IsObject()) {
        return R"("taskId":"","status":"")";
    }
    const auto isString = [](const json::Value& v) { return v.IsString(); };
    const auto isCount = [](const json::Value& v) { return v.IsInt64() && v.GetInt64() >= 0; };
    const auto orElse = [](const std::string& given, std::string_view fallback) {
        return given.empty() ? std::string(fallback) : given;
    };
    const std::string now = R"(:)" + jsonString(formatRfc3339(now_ms));
    std::string out = R"("taskId":)" + jsonString(json::stringMember(legacy, "taskId")) +
                      R"(,"status":)" + jsonString(json::stringMember(legacy, "status"));
    out += copied(legacy, "statusMessage", "statusMessage", isString);
    out += orElse(copied(legacy, "createdAt", "createdAt", isString), R"(,"createdAt")" + now);
    out += orElse(copied(legacy, "lastUpdatedAt", "lastUpdatedAt", isString),
                  R"(,"lastUpdatedAt")" + now);
    out += orElse(copied(legacy, "ttl", "ttlMs", isCount), R"(,"ttlMs":null)");
    out += copied(legacy, "pollInterval", "pollIntervalMs", isCount);
    return out;
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
