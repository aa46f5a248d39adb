// crank-mcp-probe: crank's MCP client (the mcp plugin's UpstreamSession over the HTTP transports)
// as a command, for operators and for the conformance suite's client scenarios.
//
//   crank-mcp-probe [--tool NAME] [--transport auto|streamable_http|sse] URL
//
// Connects (initialize, notifications/initialized), lists the server's tools, calls each one
// (or only NAME) with arguments made from its input schema (its defaults, else 1 for numbers,
// true for booleans, "probe" for strings, for the required properties), prints every answer on
// stdout, and closes. While a call runs it answers the server's requests as a client with no
// person behind it would: elicitation/create is accepted with the schema's defaults (the client
// declares elicitation.form.applyDefaults), sampling/createMessage gets a fixed assistant text,
// roots/list no roots, ping {}; the 2026 era's input requests (input_required results) get the
// same answers, and the call is sent again with them. Exit status 0 when every step got an
// answer (a tool call answered with a JSON-RPC error counts: it is printed), 1 otherwise, 2 on
// bad arguments. The suite's environment picks the version initialize offers first
// (MCP_CONFORMANCE_PROTOCOL_VERSION, a 2025 revision; the 2026 era is tried before it) and the
// tool calls to make (MCP_CONFORMANCE_CONTEXT's toolCalls).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <rapidjson/document.h>

#include "http_connection.h"
#include "json_text.h"
#include "upstream_session.h"
#include <crank/sdk/json.hpp>

namespace {

using crank::mcpc::RequestHooks;
using crank::mcpc::RpcOutcome;
using crank::mcpc::stringMember;
using crank::mcpc::UpstreamSession;

/// A value for a property of `schema`: its default, else one of its type.
std::string sampleValue(const rapidjson::Value& schema) {
    if (!schema.IsObject()) {
        return R"("probe")";
    }
    if (schema.HasMember("default")) {
        return crank::mcpc::jsonText(schema["default"]);
    }
    if (schema.HasMember("enum") && schema["enum"].IsArray() && !schema["enum"].Empty()) {
        return crank::mcpc::jsonText(schema["enum"][0]);
    }
    const std::string type = stringMember(schema, "type");
    if (type == "number" || type == "integer") {
        return "1";
    }
    if (type == "boolean") {
        return "true";
    }
    if (type == "array") {
        return "[]";
    }
    if (type == "object") {
        return "{}";
    }
    return R"("probe")";
}

/// An object with a value for each property `properties` lists (all of them when `all`, else
/// the required ones and those with a default).
std::string sampleObject(const rapidjson::Value& schema, bool all) {
    std::string out = "{";
    if (schema.IsObject() && schema.HasMember("properties") && schema["properties"].IsObject()) {
        std::vector<std::string> required;
        if (schema.HasMember("required") && schema["required"].IsArray()) {
            for (const rapidjson::Value& r : schema["required"].GetArray()) {
                if (r.IsString()) {
                    required.emplace_back(r.GetString(), r.GetStringLength());
                }
            }
        }
        for (const auto& p : schema["properties"].GetObject()) {
            const std::string name(p.name.GetString(), p.name.GetStringLength());
            const bool needed = all || p.value.HasMember("default") ||
                                std::find(required.begin(), required.end(), name) != required.end();
            if (needed) {
                out += (out.size() == 1 ? "" : ",") + crank::sdk::jsonQuote(name) + ":" +
                       sampleValue(p.value);
            }
        }
    }
    return out + "}";
}

/// The result the probe gives a request of the server (pushed in the 2025 era, an input request
/// of the 2026 era), or nullopt for a method it does not handle.
std::optional<std::string> resultFor(const std::string& method, const rapidjson::Value& params) {
    if (method == "elicitation/create") {
        const rapidjson::Value* schema = params.IsObject() && params.HasMember("requestedSchema")
                                             ? &params["requestedSchema"]
                                             : nullptr;
        const std::string content = schema != nullptr ? sampleObject(*schema, false) : "{}";
        return R"({"action":"accept","content":)" + content + "}";
    }
    if (method == "sampling/createMessage") {
        return R"({"role":"assistant","content":{"type":"text","text":"a probe's answer"},)"
               R"("model":"crank-mcp-probe","stopReason":"endTurn"})";
    }
    if (method == "roots/list") {
        return R"({"roots":[]})";
    }
    if (method == "ping") {
        return "{}";
    }
    return std::nullopt;
}

/// The answer to one request of the server (JSON-RPC `result` or `error` member and value).
std::string answerFor(const std::string& method, const rapidjson::Value& params) {
    if (const std::optional<std::string> result = resultFor(method, params)) {
        return R"("result":)" + *result;
    }
    return R"("error":{"code":-32601,"message":"the probe does not handle )" + method + "\"}";
}

/// The `inputResponses` of a 2026 input_required result's `inputRequests` (key -> {method,
/// params}), or nullopt when one asks for something the probe does not handle.
std::optional<std::string> answerInputs(const std::string& requests_json) {
    rapidjson::Document requests;
    requests.Parse(requests_json.data(), requests_json.size());
    if (requests.HasParseError() || !requests.IsObject()) {
        return std::nullopt;
    }
    std::string out = "{";
    for (const auto& m : std::as_const(requests).GetObject()) {
        static const rapidjson::Value kNone;
        const std::string method = stringMember(m.value, "method");
        const std::optional<std::string> result = resultFor(
            method, m.value.IsObject() && m.value.HasMember("params") ? m.value["params"] : kNone);
        if (!result) {
            return std::nullopt;
        }
        std::printf("server asks %s (an input request); answered %s\n", method.c_str(),
                    result->c_str());
        out +=
            (out.size() == 1 ? "" : ",") +
            crank::sdk::jsonQuote(std::string_view(m.name.GetString(), m.name.GetStringLength())) +
            ":" + *result;
    }
    return out + "}";
}

/// The tool calls the conformance suite's context names (MCP_CONFORMANCE_CONTEXT's toolCalls:
/// name and arguments), empty when it names none.
std::vector<std::pair<std::string, std::string>> contextToolCalls() {
    std::vector<std::pair<std::string, std::string>> calls;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, before any thread starts
    const char* context = std::getenv("MCP_CONFORMANCE_CONTEXT");
    if (context == nullptr) {
        return calls;
    }
    rapidjson::Document doc;
    doc.Parse(context);
    if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("toolCalls") ||
        !doc["toolCalls"].IsArray()) {
        return calls;
    }
    for (const rapidjson::Value& call : doc["toolCalls"].GetArray()) {
        if (call.IsObject() && call.HasMember("arguments")) {
            calls.emplace_back(stringMember(call, "name"),
                               crank::mcpc::jsonText(call["arguments"]));
        }
    }
    return calls;
}

int usage() {
    std::fputs("usage: crank-mcp-probe [--tool NAME] [--transport auto|streamable_http|sse] URL\n",
               stderr);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    std::string url;
    std::string onlyTool;
    crank::mcpc::HttpMode mode = crank::mcpc::HttpMode::automatic;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--tool" && i + 1 < argc) {
            onlyTool = argv[++i];
        } else if (arg == "--transport" && i + 1 < argc) {
            if (!crank::mcpc::parseHttpMode(argv[++i], mode)) {
                return usage();
            }
        } else if (!arg.starts_with("-") && url.empty()) {
            url = std::string(arg);
        } else {
            return usage();
        }
    }
    if (url.empty()) {
        return usage();
    }
    crank::mcpc::HttpOptions http;
    http.url = url;
    http.mode = mode;
    crank::mcpc::UpstreamOptions options;
    options.transport = crank::mcpc::httpTransport(http);
    options.request_timeout = std::chrono::seconds(20);
    options.initialize_timeout = std::chrono::seconds(10);
    options.client_name = "crank-mcp-probe";
    options.client_version = "1.0.0";
    options.client_capabilities_json = R"({"roots":{"listChanged":true},"sampling":{},)"
                                       R"("elicitation":{"form":{"applyDefaults":true},"url":{}}})";
    // NOLINTNEXTLINE(concurrency-mt-unsafe): read once, before any thread starts
    if (const char* version = std::getenv("MCP_CONFORMANCE_PROTOCOL_VERSION");
        version != nullptr && *version != '\0' && std::string_view(version) < "2026") {
        // A 2025 revision: offered first by initialize; the 2026 era is still tried before it.
        options.protocol_versions = {version, "2025-11-25", "2025-06-18", "2025-03-26"};
    }

    UpstreamSession* self = nullptr;
    // Every message that is not an answer: the server's requests are answered here.
    const auto onMessage = [&self](std::string_view message) {
        rapidjson::Document doc;
        doc.Parse(message.data(), message.size());
        if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("id") ||
            stringMember(doc, "method").empty() || self == nullptr) {
            std::printf("server says: %.*s\n",
                        static_cast<int>(std::min<std::size_t>(message.size(), 500)),
                        message.data());
            return;
        }
        const std::string method = stringMember(doc, "method");
        static const rapidjson::Value kNone;
        const std::string answer =
            answerFor(method, doc.HasMember("params") ? doc["params"] : kNone);
        std::printf("server asks %s; answered %s\n", method.c_str(), answer.c_str());
        self->send(R"({"jsonrpc":"2.0","id":)" + crank::mcpc::jsonText(doc["id"]) + "," + answer +
                   "}");
    };
    UpstreamSession session(options, onMessage, [](std::string_view line) {
        std::fprintf(stderr, "transport: %.*s\n", static_cast<int>(line.size()), line.data());
    });
    self = &session;
    if (!session.connect()) {
        std::fprintf(stderr, "crank-mcp-probe: cannot connect: %s\n",
                     session.status().last_error.c_str());
        return 1;
    }
    const auto status = session.status();
    std::printf("connected: %s %s, protocol %s, transport %s\n", status.server_name.c_str(),
                status.server_version.c_str(), status.protocol_version.c_str(),
                status.transport.c_str());
    std::vector<std::string> tools;
    const RpcOutcome listed = session.listTools(tools);
    if (!listed.ok) {
        std::fprintf(stderr, "crank-mcp-probe: tools/list failed: %s\n",
                     listed.error_message.c_str());
        session.close();
        return 1;
    }
    // The calls: the suite's context names them, or one per listed tool with sample arguments.
    std::vector<std::pair<std::string, std::string>> calls = contextToolCalls();
    if (calls.empty()) {
        for (const std::string& text : tools) {
            rapidjson::Document tool;
            tool.Parse(text.data(), text.size());
            calls.emplace_back(
                stringMember(tool, "name"),
                tool.HasMember("inputSchema") ? sampleObject(tool["inputSchema"], false) : "{}");
        }
    }
    int failures = 0;
    for (const auto& [name, arguments] : calls) {
        if (!onlyTool.empty() && name != onlyTool) {
            continue;
        }
        RequestHooks hooks;
        hooks.on_related = onMessage;
        hooks.answer_inputs = answerInputs;
        hooks.client_capabilities_json = options.client_capabilities_json;  // 2026: per request
        const RpcOutcome called = session.request(
            "tools/call",
            R"({"name":)" + crank::sdk::jsonQuote(name) + R"(,"arguments":)" + arguments + "}",
            hooks);
        if (called.ok) {
            std::printf("tools/call %s %s -> %s\n", name.c_str(), arguments.c_str(),
                        called.result_json.substr(0, 2000).c_str());
        } else if (called.error_code != 0) {
            // The server's own answer: the exchange worked, whatever the server made of it.
            std::printf("tools/call %s %s -> error %lld: %s\n", name.c_str(), arguments.c_str(),
                        static_cast<long long>(called.error_code), called.error_message.c_str());
        } else {
            ++failures;
            std::printf("tools/call %s %s FAILED: %s\n", name.c_str(), arguments.c_str(),
                        called.error_message.c_str());
        }
    }
    session.close();
    return failures == 0 ? 0 : 1;
}
