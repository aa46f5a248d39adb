#include "mcp/tool_call_params.h"

#include <utility>

#include "mcp/json_scanner.h"

namespace crank::mcp {

Result<ToolCallParams> parseToolCallParams(std::string_view params_json,
                                           const RequestMeta* known_meta) {
    if (params_json.empty()) {
        params_json = "{}";  // absent params read as {}
    }
    if (params_json.front() != '{') {
        return Error{ErrorCode::invalid_argument, "params must be an object"};
    }
    Result<scan::RawEntry> params = scan::readObject(params_json);
    if (!params) {
        return params.error();
    }
    const auto& members = params->members;
    ToolCallParams out;
    const scan::RawValue* name = scan::findMember(members, "name");
    if (name == nullptr || name->type != scan::ValueType::string || name->text.empty()) {
        return Error{ErrorCode::invalid_argument, "params.name is required (a string)"};
    }
    out.name = name->text;
    // The arguments and the task stay the text the client sent (numbers as written).
    if (const scan::RawValue* arguments = scan::findMember(members, "arguments")) {
        if (arguments->type != scan::ValueType::object) {
            return Error{ErrorCode::invalid_argument, "params.arguments must be an object"};
        }
        out.arguments_json = scan::jsonText(params_json, *arguments);
    }
    if (const scan::RawValue* task = scan::findMember(members, "task")) {
        out.task_json = scan::jsonText(params_json, *task);
    }
    if (const scan::RawValue* meta = scan::findMember(members, "_meta")) {
        if (meta->type != scan::ValueType::object) {
            return Error{ErrorCode::invalid_argument,
                         R"("_meta" must be an object, got )" + scan::describe(params_json, *meta)};
        }
        if (known_meta != nullptr) {
            out.meta = *known_meta;
            return out;
        }
        Result<RequestMeta> read =
            readMetaObject(params_json.substr(meta->start, meta->end - meta->start));
        if (!read) {
            return read.error();
        }
        out.meta = std::move(*read);
    }
    return out;
}

}  // namespace crank::mcp
