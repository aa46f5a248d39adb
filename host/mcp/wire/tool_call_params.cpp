#include "mcp/wire/tool_call_params.h"

#include <utility>

#include "mcp/wire/json_scanner.h"
#include "mcp/wire/method_registry.h"

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
    if (Result<void> retry = readInputRetry(params_json, members, out.retry); !retry) {
        return retry.error();
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

Result<void> readInputRetry(std::string_view params_json,
                            const std::vector<scan::RawMember>& members, InputRetry& out) {
    if (const scan::RawValue* state = scan::findMember(members, "requestState")) {
        if (state->type != scan::ValueType::string) {
            return Error{ErrorCode::invalid_argument,
                         "params.requestState must be the string an input_required result gave, "
                         "got " +
                             scan::describe(params_json, *state)};
        }
        out.state = state->text;
    }
    const scan::RawValue* responses = scan::findMember(members, "inputResponses");
    if (responses == nullptr) {
        return {};
    }
    if (responses->type != scan::ValueType::object) {
        return Error{ErrorCode::invalid_argument,
                     "params.inputResponses must be an object of answers by key, got " +
                         scan::describe(params_json, *responses)};
    }
    const std::string_view text =
        params_json.substr(responses->start, responses->end - responses->start);
    Result<scan::RawEntry> answers = scan::readObject(text);
    if (!answers) {
        return Error{ErrorCode::invalid_argument,
                     "params.inputResponses: " + answers.error().message};
    }
    for (const scan::RawMember& answer : answers->members) {
        if (answer.value.type != scan::ValueType::object) {
            return Error{ErrorCode::invalid_argument,
                         "params.inputResponses[" + scan::describeString(answer.name) +
                             "] must be the result object of the request it answers, got " +
                             scan::describe(text, answer.value)};
        }
        out.responses.emplace(answer.name, scan::jsonText(text, answer.value));
    }
    out.has_responses = true;
    return {};
}

Result<CatalogTarget> parseCatalogTarget(std::string_view method, std::string_view params_json) {
    if (params_json.empty() || params_json.front() != '{') {
        return Error{ErrorCode::invalid_argument, "params must be an object"};
    }
    Result<scan::RawEntry> params = scan::readObject(params_json);
    if (!params) {
        return params.error();
    }
    CatalogTarget out;
    const MethodInfo* info = findMethod(method);
    const std::string key(info != nullptr && !info->name_member.empty() ? info->name_member
                                                                        : "name");
    const scan::RawValue* target = scan::findMember(params->members, key);
    if (target == nullptr || target->type != scan::ValueType::string) {
        return Error{ErrorCode::invalid_argument,
                     std::string("params.") + key + " is required (a string)"};
    }
    out.target = target->text;
    if (const scan::RawValue* arguments = scan::findMember(params->members, "arguments");
        arguments != nullptr && arguments->type == scan::ValueType::object) {
        out.arguments_json = scan::jsonText(params_json, *arguments);
    }
    if (Result<void> retry = readInputRetry(params_json, params->members, out.retry); !retry) {
        return retry.error();
    }
    return out;
}

}  // namespace crank::mcp
