#include "rpc_message.h"

#include "json_text.h"
#include <crank/sdk/json.hpp>

namespace crank::mcpc {

std::string requestText(std::int64_t id, std::string_view method, std::string_view params_json) {
    std::string text =
        R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":)" + sdk::jsonQuote(method);
    if (!params_json.empty()) {
        text.append(R"(,"params":)").append(params_json);
    }
    text += '}';
    return text;
}

std::string notificationText(std::string_view method, std::string_view params_json) {
    std::string text = R"({"jsonrpc":"2.0","method":)" + sdk::jsonQuote(method);
    if (!params_json.empty()) {
        text.append(R"(,"params":)").append(params_json);
    }
    text += '}';
    return text;
}

Classified classify(const rapidjson::Value& message) {
    Classified c;
    if (!message.IsObject()) {
        return c;
    }
    const bool hasMethod = message.HasMember("method");
    if (!hasMethod && message.HasMember("id") &&
        (message.HasMember("result") || message.HasMember("error"))) {
        const rapidjson::Value& id = message["id"];
        c.kind = Classified::Kind::answer;
        c.int_id = id.IsInt64();
        c.id = c.int_id ? id.GetInt64() : 0;
        c.null_id = id.IsNull();
    } else if (hasMethod && message["method"].IsString()) {
        c.kind = Classified::Kind::message;
    }
    return c;
}

RpcOutcome answerOutcome(const rapidjson::Value& answer) {
    RpcOutcome outcome;
    if (answer.HasMember("result")) {
        outcome.ok = true;
        outcome.result_json = jsonText(answer["result"]);
        return outcome;
    }
    const rapidjson::Value& e = answer["error"];
    outcome.error_code =
        e.IsObject() && e.HasMember("code") && e["code"].IsInt64() ? e["code"].GetInt64() : -32603;
    outcome.error_message =
        e.IsObject() && e.HasMember("message") && e["message"].IsString()
            ? std::string(e["message"].GetString(), e["message"].GetStringLength())
            : std::string("the server answered an error without a message");
    if (e.IsObject() && e.HasMember("data")) {
        outcome.error_data_json = jsonText(e["data"]);
    }
    return outcome;
}

}  // namespace crank::mcpc
