#include "mcp/task_backend.h"

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_members.h"
#include "util/clock.h"
#include "util/json_string.h"

namespace crank::mcp {

std::string_view toString(TaskStatus status) {
    switch (status) {
        case TaskStatus::working:
            return "working";
        case TaskStatus::input_required:
            return "input_required";
        case TaskStatus::completed:
            return "completed";
        case TaskStatus::failed:
            return "failed";
        case TaskStatus::cancelled:
            return "cancelled";
    }
    return "working";
}

bool isTerminal(TaskStatus status) {
    return status == TaskStatus::completed || status == TaskStatus::failed ||
           status == TaskStatus::cancelled;
}

std::string TaskInfo::toJson() const {
    std::string out =
        R"({"taskId":)" + jsonString(task_id) + R"(,"status":)" + jsonString(toString(status));
    if (!status_message.empty()) {
        out += R"(,"statusMessage":)" + jsonString(status_message);
    }
    out += R"(,"createdAt":)" + jsonString(formatRfc3339(created_at_ms));
    out += R"(,"lastUpdatedAt":)" + jsonString(formatRfc3339(last_updated_at_ms));
    out += R"(,"ttl":)" + (ttl_ms ? std::to_string(*ttl_ms) : std::string("null"));
    out += fmt::format(R"(,"pollInterval":{}}})", poll_interval_ms);
    return out;
}

std::string taskIdOf(std::string_view params_json) {
    json::Document params;
    if (!json::parseObject(params_json, params)) {
        return {};
    }
    return json::stringMember(params, "taskId");
}

}  // namespace crank::mcp
