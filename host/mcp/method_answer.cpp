#include "mcp/method_answer.h"

#include <fmt/core.h>

#include "json/json_scanner.h"
#include "mcp/message_outcome.h"
#include "mcp/wire/json_rpc.h"
#include "util/json_string.h"

namespace crank::mcp {

MethodAnswer MethodAnswer::error(std::int64_t code, std::string_view message,
                                 std::string_view data_json) {
    std::string json = fmt::format(R"({{"code":{},"message":{})", code, jsonString(message));
    if (!data_json.empty()) {
        json += R"(,"data":)";
        json += data_json;
    }
    json += '}';
    return {Kind::error, std::move(json), code};
}

MethodAnswer MethodAnswer::rawError(std::string json) {
    std::int64_t code = 0;  // no readable code: counted as a server_error
    if (const auto object = json::scan::readObject(json)) {
        const json::scan::RawValue* value = json::scan::findMember(object->members, "code");
        if (value != nullptr && value->type == json::scan::ValueType::integer) {
            code = value->integer;
        }
    }
    return {Kind::error, std::move(json), code};
}

std::string_view MethodAnswer::outcome() const {
    switch (kind) {
        case Kind::result:
            return "ok";
        case Kind::error:
            return errorName(code);
        case Kind::none:
            break;
    }
    return "cancelled";
}

std::string toMessage(const RequestId& id, const MethodAnswer& answer) {
    switch (answer.kind) {
        case MethodAnswer::Kind::result:
            return makeResult(id, answer.json);
        case MethodAnswer::Kind::error:
            return R"({"jsonrpc":"2.0","id":)" + id.toJson() + R"(,"error":)" + answer.json + "}";
        case MethodAnswer::Kind::none:
            break;
    }
    return {};
}

}  // namespace crank::mcp
