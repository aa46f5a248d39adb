#include "mcp/wire/tool_call_params.h"

#include <utility>

#include "json/json_scanner.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/method_registry.h"

namespace crank::mcp {

namespace {

/// tools/call params from their members (spans in `params_json`); `meta_members`: those of an
/// object `_meta` when a scan recorded them, else null (`_meta` is then read from its text).
Result<ToolCallParams> readToolCallMembers(std::string_view params_json,
                                           const std::vector<json::scan::RawMember>& members,
                                           const std::vector<json::scan::RawMember>* meta_members,
                                           const RequestMeta* known_meta) {
    ToolCallParams out;
    const json::scan::RawValue* name = json::scan::findMember(members, "name");
    if (name == nullptr || name->type != json::scan::ValueType::string || name->text.empty()) {
        return Error{ErrorCode::invalid_argument, "params.name is required (a string)"};
    }
    out.name = name->text;
    // The arguments and the task stay the text the client sent (numbers as written).
    if (const json::scan::RawValue* arguments = json::scan::findMember(members, "arguments")) {
        if (arguments->type != json::scan::ValueType::object) {
            return Error{ErrorCode::invalid_argument, "params.arguments must be an object"};
        }
        out.arguments_json = json::scan::jsonText(params_json, *arguments);
    }
    if (const json::scan::RawValue* task = json::scan::findMember(members, "task")) {
        out.task_json = json::scan::jsonText(params_json, *task);
    }
    if (Result<void> retry = readInputRetry(params_json, members, out.retry); !retry) {
        return retry.error();
    }
    if (const json::scan::RawValue* meta = json::scan::findMember(members, "_meta")) {
        if (meta->type != json::scan::ValueType::object) {
            return Error{ErrorCode::invalid_argument, R"("_meta" must be an object, got )" +
                                                          json::scan::describe(params_json, *meta)};
        }
        if (known_meta != nullptr) {
            out.meta = *known_meta;
            return out;
        }
        Result<RequestMeta> read =
            meta_members != nullptr
                ? readMetaMembers(params_json, *meta_members)
                : readMetaObject(params_json.substr(meta->start, meta->end - meta->start));
        if (!read) {
            return read.error();
        }
        out.meta = std::move(*read);
    }
    return out;
}

}  // namespace

Result<ToolCallParams> parseToolCallParams(std::string_view params_json,
                                           const RequestMeta* known_meta) {
    if (params_json.empty()) {
        params_json = "{}";  // absent params read as {}
    }
    if (params_json.front() != '{') {
        return Error{ErrorCode::invalid_argument, "params must be an object"};
    }
    Result<json::scan::RawEntry> params = json::scan::readObject(params_json);
    if (!params) {
        return params.error();
    }
    return readToolCallMembers(params_json, params->members, nullptr, known_meta);
}

Result<ToolCallParams> parseToolCallParams(const JsonRpcMessage& message) {
    if (!message.params_scan) {
        return parseToolCallParams(message.params_json);
    }
    const ScannedParams& scan = *message.params_scan;
    return readToolCallMembers(message.params_json, scan.members,
                               scan.meta_scanned ? &scan.meta_members : nullptr, nullptr);
}

Result<void> readInputRetry(std::string_view params_json,
                            const std::vector<json::scan::RawMember>& members, InputRetry& out) {
    if (const json::scan::RawValue* state = json::scan::findMember(members, "requestState")) {
        if (state->type != json::scan::ValueType::string) {
            return Error{ErrorCode::invalid_argument,
                         "params.requestState must be the string an input_required result gave, "
                         "got " +
                             json::scan::describe(params_json, *state)};
        }
        out.state = state->text;
    }
    const json::scan::RawValue* responses = json::scan::findMember(members, "inputResponses");
    if (responses == nullptr) {
        return {};
    }
    if (responses->type != json::scan::ValueType::object) {
        return Error{ErrorCode::invalid_argument,
                     "params.inputResponses must be an object of answers by key, got " +
                         json::scan::describe(params_json, *responses)};
    }
    const std::string_view text =
        params_json.substr(responses->start, responses->end - responses->start);
    Result<json::scan::RawEntry> answers = json::scan::readObject(text);
    if (!answers) {
        return Error{ErrorCode::invalid_argument,
                     "params.inputResponses: " + answers.error().message};
    }
    for (const json::scan::RawMember& answer : answers->members) {
        if (answer.value.type != json::scan::ValueType::object) {
            return Error{ErrorCode::invalid_argument,
                         "params.inputResponses[" + json::scan::describeString(answer.name) +
                             "] must be the result object of the request it answers, got " +
                             json::scan::describe(text, answer.value)};
        }
        out.responses.emplace(answer.name, json::scan::jsonText(text, answer.value));
    }
    out.has_responses = true;
    return {};
}

Result<CatalogTarget> parseCatalogTarget(std::string_view method, std::string_view params_json) {
    if (params_json.empty() || params_json.front() != '{') {
        return Error{ErrorCode::invalid_argument, "params must be an object"};
    }
    Result<json::scan::RawEntry> params = json::scan::readObject(params_json);
    if (!params) {
        return params.error();
    }
    CatalogTarget out;
    const MethodInfo* info = findMethod(method);
    const std::string key(info != nullptr && !info->name_member.empty() ? info->name_member
                                                                        : "name");
    const json::scan::RawValue* target = json::scan::findMember(params->members, key);
    if (target == nullptr || target->type != json::scan::ValueType::string) {
        return Error{ErrorCode::invalid_argument,
                     std::string("params.") + key + " is required (a string)"};
    }
    out.target = target->text;
    if (const json::scan::RawValue* arguments =
            json::scan::findMember(params->members, "arguments");
        arguments != nullptr && arguments->type == json::scan::ValueType::object) {
        out.arguments_json = json::scan::jsonText(params_json, *arguments);
    }
    if (Result<void> retry = readInputRetry(params_json, params->members, out.retry); !retry) {
        return retry.error();
    }
    return out;
}

}  // namespace crank::mcp
