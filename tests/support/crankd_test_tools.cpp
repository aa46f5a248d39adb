// crankd-test-tools: the real crankd with fixture tools, for the end-to-end and conformance tests
// until protocol plugins publish real ones. Never installed, never linked into crankd.
//
//   noop            {}                   -> an empty result (benchmarks)
//   add_tool        {name}               -> publishes another tool (tools/list_changed)
//   echo            {text}               -> the text back
//   slow_progress   {steps, delay_ms}    -> one progress notification per step, observes cancel
//   log_then_echo   {text, level}        -> a notifications/message at level, then the text
//   route_echo      {region, priority}   -> "region/priority"; both declare x-mcp-header (2026
//                                           Mcp-Param-Region and Mcp-Param-Priority)
// The diagnostic tools of the conformance suite's 2026-07-28 server-stateless scenario:
//   test_logging_tool       {}           -> three notifications/message (info), then "logged"
//   test_missing_capability {}           -> asks the client for sampling (needs the capability)
//   test_trigger_tool_change {}          -> adds or removes test_triggered_tool (list_changed)
// the MRTR tools of input_required_tools.cpp and the Tasks fixtures of task_tools.cpp.

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include <rapidjson/document.h>

#include "app/crankd.h"
#include "input_required_tools.h"
#include "mcp/tool_registry.h"
#include "task_tools.h"
#include "util/json_string.h"

namespace {

using crank::Error;
using crank::ErrorCode;
using crank::Result;
using crank::mcp::ToolCall;
using crank::mcp::ToolDefinition;
using crank::mcp::ToolResult;

ToolResult textResult(const std::string& text) {
    ToolResult r;
    r.content_json = R"([{"type":"text","text":)" + crank::jsonString(text) + "}]";
    return r;
}

void addFixtureTools(crank::mcp::FunctionToolRegistry& tools) {
    tools.add(ToolDefinition{"noop", "No-op", "Does nothing and returns an empty result.",
                             R"({"type":"object"})", "", "", "", false, "", false},
              [](std::string_view, ToolCall&) -> Result<ToolResult> { return ToolResult{}; });
    tools.add(ToolDefinition{"echo", "Echo", "Returns the text it is given.",
                             R"({"type":"object","properties":{"text":{"type":"string"}},)"
                             R"("required":["text"]})",
                             "", "", "", false, "", false},
              [](std::string_view arguments, ToolCall&) -> Result<ToolResult> {
                  rapidjson::Document doc;
                  doc.Parse(arguments.data(), arguments.size());
                  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("text") ||
                      !doc["text"].IsString()) {
                      return Error{ErrorCode::invalid_argument, "arguments.text must be a string"};
                  }
                  return textResult(doc["text"].GetString());
              });
    tools.add(
        ToolDefinition{"slow_progress", "Slow progress",
                       "Counts to `steps`, waiting `delay_ms` between steps, reporting progress.",
                       R"({"type":"object","properties":{"steps":{"type":"integer"},)"
                       R"("delay_ms":{"type":"integer"}}})",
                       "", "", "", false, "", false},
        [](std::string_view arguments, ToolCall& call) -> Result<ToolResult> {
            rapidjson::Document doc;
            doc.Parse(arguments.data(), arguments.size());
            const int steps = doc.IsObject() && doc.HasMember("steps") && doc["steps"].IsInt()
                                  ? std::clamp(doc["steps"].GetInt(), 0, 1000)
                                  : 3;
            const int delay = doc.IsObject() && doc.HasMember("delay_ms") && doc["delay_ms"].IsInt()
                                  ? std::clamp(doc["delay_ms"].GetInt(), 0, 10'000)
                                  : 50;
            for (int i = 0; i < steps; ++i) {
                if (call.cancelled()) {
                    return textResult("cancelled at step " + std::to_string(i));
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(delay));
                call.progress(i + 1, steps, "step " + std::to_string(i + 1));
            }
            return textResult("done " + std::to_string(steps));
        });
    // Publishes a new tool (an echo under another name): the set of tools changes while serving.
    tools.add(ToolDefinition{"add_tool", "Add a tool", "Publishes a copy of echo named `name`.",
                             R"({"type":"object","properties":{"name":{"type":"string"}},)"
                             R"("required":["name"]})",
                             "", "", "", false, "", false},
              [&tools](std::string_view arguments, ToolCall&) -> Result<ToolResult> {
                  rapidjson::Document doc;
                  doc.Parse(arguments.data(), arguments.size());
                  if (!doc.IsObject() || !doc.HasMember("name") || !doc["name"].IsString()) {
                      // A tool's own refusal (isError), as the suites calling it with {} expect.
                      ToolResult refused = textResult("arguments.name must be a string");
                      refused.is_error = true;
                      return refused;
                  }
                  const std::string name = doc["name"].GetString();
                  tools.add(ToolDefinition{name, "", "A copy of echo.", R"({"type":"object"})", "",
                                           "", "", false, "", false},
                            [name](std::string_view, ToolCall&) -> Result<ToolResult> {
                                return textResult(name);
                            });
                  return textResult("added " + name);
              });
    tools.add(ToolDefinition{"log_then_echo", "Log then echo",
                             "Sends a log message at `level`, then returns `text`.",
                             R"({"type":"object","properties":{"text":{"type":"string"},)"
                             R"("level":{"type":"string"}}})",
                             "", "", "", false, "", false},
              [](std::string_view arguments, ToolCall& call) -> Result<ToolResult> {
                  rapidjson::Document doc;
                  doc.Parse(arguments.data(), arguments.size());
                  const std::string text =
                      doc.IsObject() && doc.HasMember("text") && doc["text"].IsString()
                          ? doc["text"].GetString()
                          : "";
                  const std::string level =
                      doc.IsObject() && doc.HasMember("level") && doc["level"].IsString()
                          ? doc["level"].GetString()
                          : "info";
                  call.log(crank::mcp::parseLogLevel(level).value_or(crank::mcp::LogLevel::info),
                           "fixture", crank::jsonString(text));
                  return textResult(text);
              });
    tools.add(ToolDefinition{"test_logging_tool", "Logging test",
                             "Sends three log messages at info, then answers.",
                             R"({"type":"object"})", "", "", "", false, "", false},
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  for (int i = 1; i <= 3; ++i) {
                      call.log(crank::mcp::LogLevel::info, "fixture",
                               crank::jsonString("log message " + std::to_string(i)));
                  }
                  return textResult("logged");
              });
    tools.add(ToolDefinition{"test_missing_capability", "Needs sampling",
                             "Asks the client for a sampling/createMessage.",
                             R"({"type":"object"})", "", "", "", true, "", false},
              [](std::string_view, ToolCall& call) -> Result<ToolResult> {
                  const auto answer = call.requestClient(
                      "sampling/createMessage",
                      R"({"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],)"
                      R"("maxTokens":10})",
                      std::chrono::seconds(10));
                  ToolResult r = textResult(answer.json);
                  r.is_error = !answer.ok;
                  return r;
              });
    tools.add(ToolDefinition{"route_echo", "Route echo",
                             "Returns `region/priority`; both arguments travel in headers too.",
                             R"({"type":"object","properties":{)"
                             R"("region":{"type":"string","x-mcp-header":"Region"},)"
                             R"("priority":{"type":"integer","x-mcp-header":"Priority"}}})",
                             "", "", "", false, "", false},
              [](std::string_view arguments, ToolCall&) -> Result<ToolResult> {
                  rapidjson::Document doc;
                  doc.Parse(arguments.data(), arguments.size());
                  if (doc.HasParseError() || !doc.IsObject()) {
                      return Error{ErrorCode::invalid_argument, "arguments must be an object"};
                  }
                  const std::string region = doc.HasMember("region") && doc["region"].IsString()
                                                 ? doc["region"].GetString()
                                                 : "";
                  const std::string priority =
                      doc.HasMember("priority") && doc["priority"].IsInt64()
                          ? std::to_string(doc["priority"].GetInt64())
                          : "";
                  return textResult(region + "/" + priority);
              });
    // server-stateless (2026-07-28): a hook that changes the tool list (tools/list_changed on an
    // open listen): it adds test_triggered_tool, then removes it, in turn.
    tools.add(ToolDefinition{"test_trigger_tool_change", "Change the tools",
                             "Adds or removes the tool test_triggered_tool.",
                             R"({"type":"object"})", "", "", "", false, "", false},
              [&tools](std::string_view, ToolCall&) -> Result<ToolResult> {
                  if (tools.find("test_triggered_tool")) {
                      tools.remove("test_triggered_tool");
                      return textResult("tool removed");
                  }
                  tools.add(ToolDefinition{"test_triggered_tool", "", "Added by a trigger.",
                                           R"({"type":"object"})", "", "", "", false, "", false},
                            [](std::string_view, ToolCall&) -> Result<ToolResult> {
                                return textResult("triggered");
                            });
                  return textResult("tool added");
              });
    crank::test::addInputRequiredTools(tools);
    crank::test::addTaskTools(tools);
}

}  // namespace

int main(int argc, char** argv) {
    return crank::app::crankdMain(argc, argv, addFixtureTools);
}
