// The fixture tools of the conformance suite's Tasks extension scenarios (MCP 2026-07-28,
// io.modelcontextprotocol/tasks), on the host's tool registry; the host's ToolTasks runs the ones
// with task support as tasks:
//   greet               {name}            -> "Hello, <name>!" (never a task)
//   slow_compute        {seconds, label}  -> "computed <label> in <seconds> s" after that long,
//                                            observing cancellation (task support optional)
//   failing_job         {}                -> after 1 s, an isError result (task required)
//   protocol_error_job  {}                -> after 0.5 s, a JSON-RPC error (task required)
//   confirm_delete      {filename}        -> asks to confirm (elicitation), then "deleted '<f>'"
//   multi_input         {}                -> asks two things at once, then greets with both
//   test_tool_with_task {}                -> asks the user's name first (input_required rounds of
//                                            the tools/call), then greets as a task

#include "task_tools.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include <rapidjson/document.h>

#include "util/json_string.h"

namespace crank::test {
namespace {

using mcp::InputNeed;
using mcp::InputRequest;
using mcp::ToolCall;
using mcp::ToolDefinition;
using mcp::ToolResult;

ToolResult text(const std::string& t, bool is_error = false) {
    ToolResult r;
    r.content_json = R"([{"type":"text","text":)" + jsonString(t) + "}]";
    r.is_error = is_error;
    return r;
}

ToolDefinition tool(std::string name, std::string description, std::string schema,
                    std::string task_support) {
    ToolDefinition d;
    d.name = std::move(name);
    d.description = std::move(description);
    d.input_schema_json = std::move(schema);
    d.task_support = std::move(task_support);
    return d;
}

rapidjson::Document parsed(std::string_view json) {
    rapidjson::Document doc;
    doc.Parse(json.data(), json.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        doc.SetObject();
    }
    return doc;
}

/// Waits `ms`, in steps, until the call is cancelled; false when it was.
bool pause(ToolCall& call, std::int64_t ms) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
        if (call.cancelled()) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return !call.cancelled();
}

InputRequest form(std::string key, const std::string& message, const std::string& property,
                  const std::string& type) {
    return InputRequest{std::move(key), "elicitation/create",
                        R"({"mode":"form","message":)" + jsonString(message) +
                            R"(,"requestedSchema":{"type":"object","properties":{)" +
                            jsonString(property) + R"(:{"type":)" + jsonString(type) +
                            R"(}},"required":[)" + jsonString(property) + "]}}"};
}

/// True when the previous round answered `key` with an accepted elicitation.
bool accepted(const ToolCall& call, std::string_view key) {
    const mcp::InputRound* round = call.inputRound();
    const std::string* answer = round != nullptr ? round->response(key) : nullptr;
    if (answer == nullptr) {
        return false;
    }
    const rapidjson::Document doc = parsed(*answer);
    return doc.HasMember("action") && doc["action"].IsString() &&
           std::string_view(doc["action"].GetString()) == "accept";
}

}  // namespace

void addTaskTools(mcp::FunctionToolRegistry& tools) {
    tools.add(tool("greet", "Greets by name, at once (never a task).",
                   R"({"type":"object","properties":{"name":{"type":"string"}}})", ""),
              [](std::string_view arguments, ToolCall&) -> Result<ToolResult> {
                  const rapidjson::Document args = parsed(arguments);
                  const std::string name = args.HasMember("name") && args["name"].IsString()
                                               ? args["name"].GetString()
                                               : "World";
                  return text("Hello, " + name + "!");
              });
    tools.add(tool("slow_compute", "Computes for `seconds` (0 to 600), then names its label.",
                   R"({"type":"object","properties":{"seconds":{"type":"number","minimum":0,)"
                   R"("maximum":600},"label":{"type":"string"}}})",
                   "optional"),
              [](std::string_view arguments, ToolCall& call) -> Result<ToolResult> {
                  const rapidjson::Document args = parsed(arguments);
                  const double seconds = args.HasMember("seconds") && args["seconds"].IsNumber()
                                             ? std::clamp(args["seconds"].GetDouble(), 0.0, 600.0)
                                             : 0.0;
                  const std::string label = args.HasMember("label") && args["label"].IsString()
                                                ? args["label"].GetString()
                                                : "";
                  if (!pause(call, static_cast<std::int64_t>(seconds * 1000))) {
                      return text("cancelled", true);
                  }
                  return text("computed " + label + " in " + std::to_string(seconds) + " s");
              });
    tools.add(tool("failing_job", "Fails after a second, as a tool error (only as a task).",
                   R"({"type":"object"})", "required"),
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  pause(call, 1000);
                  return text("failing_job failed, as it always does", true);
              });
    tools.add(
        tool("protocol_error_job", "Ends with a JSON-RPC error (only as a task).",
             R"({"type":"object"})", "required"),
        [](std::string_view, ToolCall& call) -> Result<ToolResult> {
            pause(call, 500);
            ToolResult r;
            r.rpc_error_json =
                R"({"code":-32603,"message":"protocol_error_job: an internal error, as planned"})";
            return r;
        });
    tools.add(tool("confirm_delete", "Asks to confirm, then deletes the file (only as a task).",
                   R"({"type":"object","properties":{"filename":{"type":"string"}}})", "required"),
              [](std::string_view arguments, ToolCall& call) -> Result<ToolResult> {
                  const rapidjson::Document args = parsed(arguments);
                  const std::string file = args.HasMember("filename") && args["filename"].IsString()
                                               ? args["filename"].GetString()
                                               : "";
                  if (call.inputRound() == nullptr) {
                      return ToolResult::inputRequired(InputNeed{
                          {form("confirm", "Delete '" + file + "'?", "confirm", "boolean")}, ""});
                  }
                  return accepted(call, "confirm") ? text("deleted '" + file + "'")
                                                   : text("kept '" + file + "'");
              });
    tools.add(tool("multi_input", "Asks a name and a confirmation at once (only as a task).",
                   R"({"type":"object"})", "required"),
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  if (call.inputRound() == nullptr) {
                      return ToolResult::inputRequired(
                          InputNeed{{form("name", "Your name?", "name", "string"),
                                     form("confirm", "Proceed?", "confirm", "boolean")},
                                    ""});
                  }
                  return text(std::string("both answered: name ") +
                              (accepted(call, "name") ? "accepted" : "declined") + ", confirm " +
                              (accepted(call, "confirm") ? "accepted" : "declined"));
              });
    ToolDefinition withTask =
        tool("test_tool_with_task", "Asks your name, then greets you as a task (only as a task).",
             R"({"type":"object"})", "required");
    withTask.input_before_task = true;
    tools.add(std::move(withTask), [](std::string_view, ToolCall& call) -> Result<ToolResult> {
        const mcp::InputRound* round = call.inputRound();
        const std::string* answer = round != nullptr ? round->response("user_name") : nullptr;
        if (answer == nullptr) {
            return ToolResult::inputRequired(
                InputNeed{{form("user_name", "What is your name?", "name", "string")}, ""});
        }
        const rapidjson::Document doc = parsed(*answer);
        const std::string name = doc.HasMember("content") && doc["content"].IsObject() &&
                                         doc["content"].HasMember("name") &&
                                         doc["content"]["name"].IsString()
                                     ? doc["content"]["name"].GetString()
                                     : "stranger";
        pause(call, 100);
        return text("Hello, " + name + "! (computed in task)");
    });
}

}  // namespace crank::test
