#include "mcp/wire/json_rpc.h"

#include <utility>

#include "json/json_scanner.h"

namespace crank::mcp {
namespace {

using json::scan::describe;
using json::scan::findMember;
using json::scan::jsonText;
using json::scan::RawEntry;
using json::scan::RawValue;
using json::scan::readObject;
using json::scan::ValueType;

/// `members` (moved out of the scan, their only copy) with spans relative to a value at `by`.
std::vector<json::scan::RawMember> shifted(std::vector<json::scan::RawMember>& members,
                                           std::size_t by) {
    std::vector<json::scan::RawMember> out = std::move(members);
    for (json::scan::RawMember& member : out) {
        member.value.start -= by;
        member.value.end -= by;
    }
    return out;
}

JsonRpcEntry reject(std::optional<RequestId> id, std::string message) {
    return JsonRpcRejection{std::move(id), kInvalidRequest, std::move(message)};
}

JsonRpcEntry readEntry(std::string_view body, RawEntry& entry) {
    if (!entry.is_object) {
        return reject(std::nullopt,
                      "a batch entry must be an object, got " + describe(body, entry.value));
    }
    const RawValue* id = findMember(entry.members, "id");
    const std::optional<RequestId> readableId =
        id != nullptr && !entry.duplicate_id ? requestIdOf(*id) : std::nullopt;
    if (!entry.duplicate.empty()) {
        return reject(readableId, entry.duplicate);
    }
    const RawValue* jsonrpc = findMember(entry.members, "jsonrpc");
    if (jsonrpc == nullptr) {
        return reject(readableId, R"("jsonrpc" must be "2.0", but it is missing)");
    }
    if (jsonrpc->type != ValueType::string || jsonrpc->text != "2.0") {
        return reject(readableId, R"("jsonrpc" must be "2.0", got )" + describe(body, *jsonrpc));
    }
    const RawValue* method = findMember(entry.members, "method");
    const RawValue* params = findMember(entry.members, "params");
    const RawValue* result = findMember(entry.members, "result");
    const RawValue* error = findMember(entry.members, "error");

    JsonRpcMessage message;
    if (method != nullptr) {
        if (result != nullptr) {
            return reject(readableId, R"(a message with "method" must not have "result")");
        }
        if (error != nullptr) {
            return reject(readableId, R"(a message with "method" must not have "error")");
        }
        if (id != nullptr && !readableId) {
            return reject(std::nullopt, badId(R"("id")", body, *id));
        }
        if (method->type != ValueType::string) {
            return reject(readableId,
                          R"("method" must be a string, got )" + describe(body, *method));
        }
        if (params != nullptr && params->type != ValueType::object &&
            params->type != ValueType::array) {
            return reject(readableId, R"("params" must be an object or an array, got )" +
                                          describe(body, *params));
        }
        message.kind = id != nullptr ? JsonRpcKind::request : JsonRpcKind::notification;
        message.id = readableId;
        message.method = method->text;
        if (params != nullptr) {
            message.params_json = jsonText(body, *params);
            if (entry.params_scanned && message.params_json.size() == params->end - params->start) {
                // Written compactly: params_json is the sender's text, and the spans the scan
                // recorded hold in it, shifted.
                message.params_scan =
                    ScannedParams{shifted(entry.params_members, params->start), entry.meta_scanned,
                                  shifted(entry.meta_members, params->start)};
            }
        }
        return message;
    }

    if (result != nullptr && error != nullptr) {
        return reject(readableId, R"(a response must not have both "result" and "error")");
    }
    if (result == nullptr && error == nullptr) {
        return reject(readableId,
                      R"(a message must have "method" (a request or a notification), or "result" )"
                      R"(or "error" (a response))");
    }
    if (params != nullptr) {
        return reject(readableId, R"(a response must not have "params")");
    }
    if (result != nullptr) {
        if (id == nullptr) {
            return reject(std::nullopt, R"(a response must have an "id")");
        }
        if (!readableId) {
            return reject(std::nullopt, badId(R"("id")", body, *id));
        }
        message.kind = JsonRpcKind::response;
        message.id = readableId;
        message.result_json = jsonText(body, *result);
        return message;
    }

    // An error response: "id" may be null or absent when the request's id was unreadable.
    if (id != nullptr && !readableId && id->type != ValueType::null) {
        return reject(std::nullopt, badId(R"("id")", body, *id));
    }
    if (error->type != ValueType::object) {
        return reject(readableId, R"("error" must be an object, got )" + describe(body, *error));
    }
    const RawValue* code = findMember(entry.error_members, "code");
    if (code == nullptr) {
        return reject(readableId, R"("error.code" must be an integer, but it is missing)");
    }
    if (code->type != ValueType::integer) {
        return reject(readableId,
                      R"("error.code" must be an integer, got )" + describe(body, *code));
    }
    const RawValue* text = findMember(entry.error_members, "message");
    if (text == nullptr) {
        return reject(readableId, R"("error.message" must be a string, but it is missing)");
    }
    if (text->type != ValueType::string) {
        return reject(readableId,
                      R"("error.message" must be a string, got )" + describe(body, *text));
    }
    message.kind = JsonRpcKind::error_response;
    message.id = readableId;
    message.error.code = code->integer;
    message.error.message = text->text;
    if (const RawValue* data = findMember(entry.error_members, "data")) {
        message.error.data_json = jsonText(body, *data);
    }
    return message;
}

ParsedBody refuse(ParsedBody parsed, std::int64_t code, std::string message) {
    parsed.fatal = JsonRpcRejection{std::nullopt, code, std::move(message)};
    parsed.entries.clear();
    return parsed;
}

}  // namespace

std::string_view jsonRpcKindName(JsonRpcKind kind) {
    switch (kind) {
        case JsonRpcKind::request:
            return "request";
        case JsonRpcKind::notification:
            return "notification";
        case JsonRpcKind::response:
            return "response";
        case JsonRpcKind::error_response:
            return "error_response";
    }
    return "request";
}

ParsedBody parseJsonRpcBody(std::string_view body, const JsonRpcLimits& limits) {
    ParsedBody parsed;
    json::scan::Scan scan = json::scan::scanJson(
        body, json::scan::ScanOptions{limits.max_depth, limits.max_batch_size, true, true, true});
    parsed.batch = scan.batch;
    if (scan.too_many_entries) {
        return refuse(
            std::move(parsed), kInvalidRequest,
            "a batch may hold at most " + std::to_string(limits.max_batch_size) + " messages");
    }
    if (!scan.valid) {
        return refuse(std::move(parsed), kParseError, scan.error);
    }
    std::vector<RawEntry>& entries = scan.entries;
    if (parsed.batch && entries.empty()) {
        return refuse(std::move(parsed), kInvalidRequest, "a batch must hold at least one message");
    }
    if (!parsed.batch && !entries.front().is_object) {
        return refuse(std::move(parsed), kInvalidRequest,
                      "a JSON-RPC message must be an object (or a batch: an array of objects), "
                      "got " +
                          describe(body, entries.front().value));
    }
    parsed.entries.reserve(entries.size());
    for (RawEntry& entry : entries) {
        parsed.entries.push_back(readEntry(body, entry));
    }
    return parsed;
}

Result<std::string> extractMember(std::string_view objectJson, std::string_view key) {
    if (objectJson.empty()) {
        return std::string();
    }
    Result<RawEntry> object = readObject(objectJson);
    if (!object) {
        return object.error();
    }
    const RawValue* value = findMember(object->members, key);
    return value == nullptr ? std::string() : jsonText(objectJson, *value);
}

}  // namespace crank::mcp
