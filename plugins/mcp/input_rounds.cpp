#include "input_rounds.h"

#include <rapidjson/document.h>

#include "json_text.h"

namespace crank::mcpc {

std::optional<InputRequired> inputRequired(std::string_view result_json) {
    rapidjson::Document doc;
    if (!parseServerMessage(result_json, doc).empty() || !doc.IsObject() ||
        stringMember(doc, "resultType") != "input_required") {
        return std::nullopt;
    }
    InputRequired out;
    if (doc.HasMember("inputRequests") && doc["inputRequests"].IsObject()) {
        out.requests_json = jsonText(doc["inputRequests"]);
    }
    if (doc.HasMember("requestState") && doc["requestState"].IsString()) {
        out.state =
            std::string(doc["requestState"].GetString(), doc["requestState"].GetStringLength());
    }
    return out;
}

std::string nextRoundParams(std::string_view params_json, std::string_view responses_json,
                            const std::optional<std::string>& state) {
    rapidjson::Document params;
    if (params_json.empty() || !parseServerMessage(params_json, params).empty() ||
        !params.IsObject()) {
        params.SetObject();
    }
    auto& allocator = params.GetAllocator();
    params.RemoveMember("inputResponses");
    params.RemoveMember("requestState");
    rapidjson::Document responses(&allocator);
    if (!parseServerMessage(responses_json, responses).empty() || !responses.IsObject()) {
        responses.SetObject();
    }
    params.AddMember("inputResponses", rapidjson::Value(responses, allocator), allocator);
    if (state) {
        params.AddMember(
            "requestState",
            rapidjson::Value(state->data(), static_cast<rapidjson::SizeType>(state->size()),
                             allocator),
            allocator);
    }
    return jsonText(params);
}

}  // namespace crank::mcpc
