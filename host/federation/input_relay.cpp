#include "federation/input_relay.h"

#include <string_view>
#include <utility>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_members.h"
#include "json/json_text.h"
#include "util/json_string.h"

namespace crank::federation {
namespace {

constexpr const char* kCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";
constexpr const char* kLogLevelKey = "io.modelcontextprotocol/logLevel";
/// The Tasks extension (SEP-2663), as a client declares it under `extensions`.
constexpr std::string_view kTasksExtension = "io.modelcontextprotocol/tasks";

/// The requests an input_required result may carry (those crankd can ask a client).
bool askable(std::string_view method) {
    return method == "elicitation/create" || method == "sampling/createMessage" ||
           method == "roots/list";
}

/// What a question asks beyond the capabilities crankd declares for its caller (elicitation in
/// form mode, sampling without tools: withCallerMeta's `{}`), in words; "" when nothing.
std::string beyondDeclared(std::string_view method, const json::Value& params) {
    if (method == "elicitation/create" && params.HasMember("mode") &&
        json::stringMember(params, "mode") != "form") {
        return "an elicitation in mode " + json::describeValue(params["mode"]);
    }
    if (method == "sampling/createMessage" &&
        (params.HasMember("tools") || params.HasMember("toolChoice"))) {
        return "sampling with tools";
    }
    return {};
}

std::string quoted(std::string_view s) {
    return jsonString(s.substr(0, 64));
}

/// `doc`'s `_meta` object, added when missing; null when `_meta` is there but not an object.
rapidjson::Value* metaOf(json::Document& doc) {
    if (!doc.HasMember("_meta")) {
        doc.AddMember("_meta", rapidjson::Value(rapidjson::kObjectType), doc.GetAllocator());
    }
    rapidjson::Value& meta = doc["_meta"];
    return meta.IsObject() ? &meta : nullptr;
}

}  // namespace

std::string readQuestions(const json::Value& requests, std::vector<mcp::InputRequest>& out) {
    if (!requests.IsObject()) {
        return "its inputRequests is " + json::describeValue(requests) + ", not an object";
    }
    if (requests.MemberCount() > kMaxRelayedQuestions) {
        return fmt::format("it asks {} questions at once, more than the {} crankd relays",
                           requests.MemberCount(), kMaxRelayedQuestions);
    }
    for (const auto& m : requests.GetObject()) {
        const std::string_view key(m.name.GetString(), m.name.GetStringLength());
        const json::Value& q = m.value;
        const std::string method = json::stringMember(q, "method");
        if (!q.IsObject() || !askable(method)) {
            return "its question " + quoted(key) +
                   " is not a sampling/createMessage, elicitation/create or roots/list request";
        }
        std::string params = "{}";
        if (q.HasMember("params")) {
            if (!q["params"].IsObject()) {
                return "the params of its question " + quoted(key) + " are not an object";
            }
            if (const std::string beyond = beyondDeclared(method, q["params"]); !beyond.empty()) {
                return "its question " + quoted(key) + " asks " + beyond +
                       ", which crankd does not declare upstream";
            }
            params = json::toJsonText(q["params"]);
        }
        out.push_back(mcp::InputRequest{std::string(key), method, std::move(params)});
    }
    return {};
}

InputVerdict readInputRequired(std::string_view result_json) {
    InputVerdict verdict;
    // Cheap first: most results never mention it (unless spelled with escapes).
    if (result_json.find("input_required") == std::string_view::npos &&
        result_json.find("\\u") == std::string_view::npos) {
        return verdict;
    }
    json::Document doc;
    if (!json::parseObject(result_json, doc) ||
        json::stringMember(doc, "resultType") != "input_required") {
        return verdict;
    }
    mcp::InputNeed need;
    if (doc.HasMember("requestState")) {
        const json::Value& state = doc["requestState"];
        if (!state.IsString()) {
            verdict.fault = "its requestState is " + json::describeValue(state) + ", not a string";
            return verdict;
        }
        need.state.assign(state.GetString(), state.GetStringLength());
        // Bounded as sealed: escaped, as crankd's own state carries it.
        if (const std::size_t escaped = jsonString(need.state).size();
            escaped > kMaxRelayedStateBytes) {
            verdict.fault = fmt::format(
                "its requestState is {} bytes (escaped), more than the {} crankd relays", escaped,
                kMaxRelayedStateBytes);
            return verdict;
        }
    }
    if (doc.HasMember("inputRequests")) {
        verdict.fault = readQuestions(doc["inputRequests"], need.requests);
        if (!verdict.fault.empty()) {
            return verdict;
        }
    }
    if (need.requests.empty() && need.state.empty()) {
        verdict.fault = "it asks nothing and carries no requestState";
        return verdict;
    }
    verdict.need = std::move(need);
    return verdict;
}

std::string withCallerMeta(std::string_view params_json, const mcp::ToolCall& call, bool tasks) {
    std::string declared;
    for (const char* capability : {"sampling", "elicitation", "roots"}) {
        if (call.clientDeclares(capability)) {
            declared += (declared.empty() ? "" : ",") + jsonString(capability) + ":{}";
        }
    }
    if (tasks) {
        declared += std::string(declared.empty() ? "" : ",") + R"("extensions":{)" +
                    jsonString(kTasksExtension) + ":{}}";
    }
    const std::optional<mcp::LogLevel> level = call.logLevel();
    if (declared.empty() && !level &&
        params_json.find("io.modelcontextprotocol") == std::string_view::npos &&
        params_json.find("\\u") == std::string_view::npos) {
        return std::string(params_json);  // nothing to set, and nothing a client could have set
    }
    json::Document doc;
    if (!json::parseObject(params_json, doc)) {
        return std::string(params_json);
    }
    rapidjson::Value* meta = metaOf(doc);
    if (meta == nullptr) {
        return std::string(params_json);
    }
    meta->RemoveMember(kCapabilitiesKey);
    meta->RemoveMember(kLogLevelKey);
    auto& a = doc.GetAllocator();
    if (!declared.empty()) {
        json::Document capabilities(&a);
        json::parseObject("{" + declared + "}", capabilities);
        meta->AddMember(rapidjson::StringRef(kCapabilitiesKey), rapidjson::Value(capabilities, a),
                        a);
    }
    if (level) {
        const std::string_view name = mcp::toString(*level);
        meta->AddMember(
            rapidjson::StringRef(kLogLevelKey),
            rapidjson::Value(name.data(), static_cast<rapidjson::SizeType>(name.size()), a), a);
    }
    if (meta->ObjectEmpty()) {
        doc.RemoveMember("_meta");
    }
    return json::toJsonText(doc);
}

std::string withInputRound(std::string_view params_json,
                           const std::map<std::string, std::string, std::less<>>& responses,
                           std::string_view state) {
    json::Document doc;
    if (!json::parseObject(params_json, doc)) {
        return std::string(params_json);
    }
    auto& a = doc.GetAllocator();
    doc.RemoveMember("inputResponses");
    doc.RemoveMember("requestState");
    rapidjson::Value answers(rapidjson::kObjectType);
    for (const auto& [key, result] : responses) {
        json::Document one(&a);
        if (!json::parseValue(result, one)) {
            continue;  // not JSON: the client's answer was checked before it got here
        }
        answers.AddMember(
            rapidjson::Value(key.c_str(), static_cast<rapidjson::SizeType>(key.size()), a),
            rapidjson::Value(one, a), a);
    }
    doc.AddMember("inputResponses", std::move(answers), a);
    if (!state.empty()) {
        doc.AddMember(
            "requestState",
            rapidjson::Value(state.data(), static_cast<rapidjson::SizeType>(state.size()), a), a);
    }
    return json::toJsonText(doc);
}

std::string withoutInputRound(std::string_view params_json) {
    if (params_json.find("inputResponses") == std::string_view::npos &&
        params_json.find("requestState") == std::string_view::npos &&
        params_json.find("\\u") == std::string_view::npos) {
        return std::string(params_json);
    }
    json::Document doc;
    if (!json::parseObject(params_json, doc)) {
        return std::string(params_json);
    }
    doc.RemoveMember("inputResponses");
    doc.RemoveMember("requestState");
    return json::toJsonText(doc);
}

Answer relayInputRounds(const std::function<Answer(const std::string& params_json)>& send,
                        std::string_view client_params_json, mcp::ToolCall& call,
                        std::string_view who, int max_rounds,
                        std::chrono::milliseconds question_timeout) {
    // The client's own inputResponses and requestState never reach the upstream: only the
    // upstream's state, relayed, and the answers crankd got for it.
    const std::string params_json = withoutInputRound(client_params_json);
    // All the client's answers together take at most one question's time.
    const auto deadline = std::chrono::steady_clock::now() + question_timeout;
    Answer answer = send(params_json);
    for (int round = 1; answer.ok && answer.input; ++round) {
        if (round > max_rounds) {
            return {false, rpcError(-32603, fmt::format("{}: the upstream asked for input more "
                                                        "than {} times",
                                                        who, max_rounds))};
        }
        std::map<std::string, std::string, std::less<>> responses;
        for (const mcp::InputRequest& question : answer.input->requests) {
            const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) {
                return {false, rpcError(-32603, fmt::format("{}: the client's answers to the "
                                                            "upstream's questions took longer "
                                                            "than {} ms in all",
                                                            who, question_timeout.count()))};
            }
            mcp::ToolCall::ClientAnswer reply =
                call.requestClient(question.method, question.params_json, left);
            if (call.cancelled()) {
                return {false, rpcError(-32800, "request cancelled")};
            }
            if (!reply.ok) {
                json::Document error;
                const std::string why = json::parseObject(reply.json, error)
                                            ? json::stringMember(error, "message")
                                            : std::string("no answer");
                return {false, rpcError(-32603, fmt::format("{}: the client did not answer the "
                                                            "upstream's question {} ({}): {}",
                                                            who, quoted(question.key),
                                                            question.method, why))};
            }
            responses.emplace(question.key, std::move(reply.json));
        }
        answer = send(withInputRound(params_json, responses, answer.input->state));
    }
    return answer;
}

}  // namespace crank::federation
