#include "mcp/method_answer.h"

#include <fmt/core.h>

#include "mcp/json_rpc.h"
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
    return {Kind::error, std::move(json)};
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
