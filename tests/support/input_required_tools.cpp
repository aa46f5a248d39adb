// The MRTR fixture tools of crankd-test-tools: the argumentless tools the conformance suite's
// 2026-07-28 input-required-result-* and server-stateless scenarios call, written on the host's
// MRTR facility (ToolResult::inputRequired, ToolCall::inputRound). Through a 2025-era session the
// host asks the same questions on the call's stream instead.
//
//   test_input_required_result_elicitation   user_name (elicitation)       -> "Hello, NAME!"
//   test_input_required_result_sampling      capital_question (sampling)   -> the model's text
//   test_input_required_result_list_roots    client_roots (roots/list)     -> the roots' URIs
//   test_input_required_result_request_state confirm + a state             -> "state-ok ..."
//   test_input_required_result_multiple_inputs user_name, greeting, client_roots + a state
//   test_input_required_result_multi_round   step1, then step2, a new state each round
//   test_input_required_result_tampered_state confirm + a state (the host refuses a forged one)
//   test_input_required_result_capabilities  asks only what the request declared
//   test_streaming_elicitation               an elicitation round (server-stateless)

#include "input_required_tools.h"

#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "util/json_string.h"

namespace crank::test {
namespace {

using mcp::InputNeed;
using mcp::InputRequest;
using mcp::InputRound;
using mcp::ToolCall;
using mcp::ToolDefinition;
using mcp::ToolResult;

ToolResult text(const std::string& text) {
    ToolResult r;
    r.content_json = R"([{"type":"text","text":)" + jsonString(text) + "}]";
    return r;
}

/// The answer to `key` of the call's round, parsed; false when there is none.
bool answerOf(const ToolCall& call, std::string_view key, rapidjson::Document& doc) {
    const InputRound* round = call.inputRound();
    const std::string* answer = round != nullptr ? round->response(key) : nullptr;
    if (answer == nullptr) {
        return false;
    }
    doc.Parse(answer->data(), answer->size());
    return !doc.HasParseError() && doc.IsObject();
}

/// The string `content.{field}` of an accepted ElicitResult; "" otherwise.
std::string elicited(const rapidjson::Document& answer, const char* field) {
    if (!answer.HasMember("content") || !answer["content"].IsObject()) {
        return "";
    }
    const auto& content = answer["content"];
    const auto it = content.FindMember(field);
    return it != content.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

/// The text of a CreateMessageResult; "" when it has none.
std::string sampled(const rapidjson::Document& answer) {
    if (answer.HasMember("content") && answer["content"].IsObject() &&
        answer["content"].HasMember("text") && answer["content"]["text"].IsString()) {
        return answer["content"]["text"].GetString();
    }
    return "";
}

/// The URIs of a ListRootsResult, comma-separated.
std::string rootUris(const rapidjson::Document& answer) {
    std::string uris;
    if (answer.HasMember("roots") && answer["roots"].IsArray()) {
        for (const auto& root : answer["roots"].GetArray()) {
            if (root.IsObject() && root.HasMember("uri") && root["uri"].IsString()) {
                uris += (uris.empty() ? "" : ",") + std::string(root["uri"].GetString());
            }
        }
    }
    return uris;
}

InputRequest elicitation(std::string key, const std::string& message, const std::string& field,
                         const char* type = "string") {
    return InputRequest{std::move(key), "elicitation/create",
                        R"({"message":)" + jsonString(message) +
                            R"(,"requestedSchema":{"type":"object","properties":{)" +
                            jsonString(field) + R"(:{"type":")" + type + R"("}},"required":[)" +
                            jsonString(field) + "]}}"};
}

InputRequest sampling(std::string key, const std::string& prompt, int max_tokens) {
    return InputRequest{std::move(key), "sampling/createMessage",
                        R"({"messages":[{"role":"user","content":{"type":"text","text":)" +
                            jsonString(prompt) + R"(}}],"maxTokens":)" +
                            std::to_string(max_tokens) + "}"};
}

InputRequest roots(std::string key) {
    return InputRequest{std::move(key), "roots/list", "{}"};
}

ToolResult ask(std::vector<InputRequest> requests, std::string state = {}) {
    return ToolResult::inputRequired(InputNeed{std::move(requests), std::move(state)});
}

ToolDefinition argumentless(std::string name, std::string description) {
    ToolDefinition d;
    d.name = std::move(name);
    d.description = std::move(description);
    d.input_schema_json = R"({"type":"object"})";
    d.requests_client = true;  // through a 2025 session it asks on the call's stream
    return d;
}

/// The state of the tools that carry one: it must come back byte for byte.
constexpr const char* kConfirmState = "awaiting-confirmation";

/// A tool that asks for a confirmation with kConfirmState, and answers `done` once the
/// confirmation comes back with that state.
mcp::FunctionToolRegistry::Function confirming(std::string done) {
    return [done = std::move(done)](std::string_view, ToolCall& call) -> Result<ToolResult> {
        rapidjson::Document answer;
        const InputRound* round = call.inputRound();
        if (round == nullptr || !answerOf(call, "confirm", answer) ||
            round->state != kConfirmState) {
            return ask({elicitation("confirm", "Please confirm", "ok", "boolean")}, kConfirmState);
        }
        return text(done);
    };
}

}  // namespace

void addInputRequiredTools(mcp::FunctionToolRegistry& tools) {
    tools.add(argumentless("test_input_required_result_elicitation", "Asks the user's name."),
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  rapidjson::Document answer;
                  if (!answerOf(call, "user_name", answer)) {
                      return ask({elicitation("user_name", "What is your name?", "name")});
                  }
                  const std::string name = elicited(answer, "name");
                  return text(name.empty() ? "No name given." : "Hello, " + name + "!");
              });
    tools.add(
        argumentless("test_input_required_result_sampling", "Asks the model a question."),
        [](std::string_view, ToolCall& call) -> Result<ToolResult> {
            rapidjson::Document answer;
            if (!answerOf(call, "capital_question", answer)) {
                return ask({sampling("capital_question", "What is the capital of France?", 100)});
            }
            return text("The model said: " + sampled(answer));
        });
    tools.add(argumentless("test_input_required_result_list_roots", "Asks the client's roots."),
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  rapidjson::Document answer;
                  if (!answerOf(call, "client_roots", answer)) {
                      return ask({roots("client_roots")});
                  }
                  return text("Roots: " + rootUris(answer));
              });
    tools.add(argumentless("test_input_required_result_request_state",
                           "Asks for a confirmation and carries a state through the round."),
              confirming("state-ok: the confirmation came back with its state"));
    tools.add(argumentless("test_input_required_result_multiple_inputs",
                           "Asks a name, a greeting and the roots in one round."),
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  rapidjson::Document name;
                  rapidjson::Document greeting;
                  rapidjson::Document listed;
                  const InputRound* round = call.inputRound();
                  const bool all = round != nullptr && answerOf(call, "user_name", name) &&
                                   answerOf(call, "greeting", greeting) &&
                                   answerOf(call, "client_roots", listed);
                  if (!all || round->state != kConfirmState) {
                      return ask(
                          {elicitation("user_name", "What is your name?", "name"),
                           sampling("greeting", "Generate a greeting", 50), roots("client_roots")},
                          kConfirmState);
                  }
                  return text(sampled(greeting) + " " + elicited(name, "name") + " (" +
                              rootUris(listed) + ")");
              });
    tools.add(argumentless("test_input_required_result_multi_round",
                           "Asks a name, then a colour, with a new state each round."),
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  const InputRound* round = call.inputRound();
                  const std::string state = round != nullptr ? round->state : "";
                  rapidjson::Document answer;
                  if (state.rfind("step2:", 0) == 0 && answerOf(call, "step2", answer)) {
                      return text(state.substr(6) + " likes " + elicited(answer, "color"));
                  }
                  if (state == "step1" && answerOf(call, "step1", answer)) {
                      return ask(
                          {elicitation("step2", "Step 2: What is your favorite color?", "color")},
                          "step2:" + elicited(answer, "name"));
                  }
                  return ask({elicitation("step1", "Step 1: What is your name?", "name")}, "step1");
              });
    tools.add(argumentless("test_input_required_result_tampered_state",
                           "Asks for a confirmation; its state is sealed, a forged one refused."),
              confirming("confirmed"));
    tools.add(argumentless("test_input_required_result_capabilities",
                           "Asks only for what the client declared: sampling, elicitation."),
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  if (call.inputRound() != nullptr) {
                      return text("answered");
                  }
                  std::vector<InputRequest> requests;
                  if (call.clientDeclares("sampling")) {
                      requests.push_back(sampling("question", "Say something", 20));
                  }
                  if (call.clientDeclares("elicitation")) {
                      requests.push_back(elicitation("user_name", "What is your name?", "name"));
                  }
                  if (requests.empty()) {
                      return ToolResult::refusal(
                          "declare the sampling or the elicitation client capability");
                  }
                  return ask(std::move(requests));
              });
    tools.add(argumentless("test_streaming_elicitation",
                           "Reports progress, then asks the user's name through the result."),
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  rapidjson::Document answer;
                  if (!answerOf(call, "user_name", answer)) {
                      call.progress(1, 2, "asking for a name");
                      return ask({elicitation("user_name", "What is your name?", "name")});
                  }
                  return text("Hello, " + elicited(answer, "name") + "!");
              });
}

}  // namespace crank::test
