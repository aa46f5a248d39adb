#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <rapidjson/document.h>

#include "http_connection.h"
#include "json_text.h"
#include "mcp_upstream.h"
#include <crank/sdk/json.hpp>

// The mcp plugin's upstream config (`upstreams[].config`, plugins/mcp/README.md): every member
// checked by name and type, bounded, then turned into the session's options.

namespace crank::mcpc {
namespace {

using std::chrono::milliseconds;

/// What crank tells upstreams it can do: it forwards these to the client that made the call.
constexpr std::string_view kClientCapabilities =
    R"({"roots":{"listChanged":true},"sampling":{},"elicitation":{"form":{},"url":{}}})";

std::int64_t integer(const rapidjson::Value& object, const char* name, std::int64_t fallback) {
    const auto it = object.FindMember(name);
    return it != object.MemberEnd() && it->value.IsInt64() ? it->value.GetInt64() : fallback;
}

/// Refuses what the config may not hold: an unknown member (a typo would otherwise be ignored)
/// or a member of the wrong type, naming it.
void checkMembers(const rapidjson::Value& doc) {
    enum class Kind { string, strings, string_map, header_map, integer };
    static const std::map<std::string_view, Kind> kKnown = {
        {"transport", Kind::string},
        {"protocol_version", Kind::string},
        {"command", Kind::string},
        {"args", Kind::strings},
        {"env", Kind::string_map},
        {"cwd", Kind::string},
        {"url", Kind::string},
        {"headers", Kind::header_map},
        {"connect_timeout_ms", Kind::integer},
        {"request_timeout_ms", Kind::integer},
        {"initialize_timeout_ms", Kind::integer},
        {"close_wait_ms", Kind::integer},
        {"term_wait_ms", Kind::integer},
        {"max_message_bytes", Kind::integer},
        {"max_client_requests", Kind::integer},
        {"unrouted_request_wait_ms", Kind::integer},
        {"blocking_question_ms", Kind::integer}};
    const auto fail = [](const std::string& name, const std::string& what) {
        throw sdk::Error(sdk::ErrorCode::invalid_argument, name + ": " + what,
                         R"({"path":)" + sdk::jsonQuote(name) + "}");
    };
    for (auto m = doc.MemberBegin(); m != doc.MemberEnd(); ++m) {
        const std::string name(m->name.GetString(), m->name.GetStringLength());
        const auto known = kKnown.find(name);
        if (known == kKnown.end()) {
            std::string all;
            for (const auto& [key, kind] : kKnown) {
                all += (all.empty() ? "" : ", ") + std::string(key);
            }
            fail(name.substr(0, 64), "unknown member (known: " + all + ")");
        }
        const rapidjson::Value& v = m->value;
        bool ok = true;
        switch (known->second) {
            case Kind::string:
                ok = v.IsString() && v.GetStringLength() > 0;
                break;
            case Kind::integer: {
                // Bounds that keep a stop, a delete and crankd's own shutdown bounded.
                static const std::map<std::string_view, std::int64_t> kMax = {
                    {"connect_timeout_ms", 300'000},
                    {"request_timeout_ms", 86'400'000},
                    {"initialize_timeout_ms", 300'000},
                    {"close_wait_ms", 60'000},
                    {"term_wait_ms", 60'000},
                    {"max_message_bytes", std::int64_t{256} * 1024 * 1024},
                    {"max_client_requests", 1024},
                    {"unrouted_request_wait_ms", 3'600'000},
                    {"blocking_question_ms", 86'400'000}};
                const std::int64_t most = kMax.at(name);
                if (v.IsInt64() && v.GetInt64() > most) {
                    fail(name, "at most " + std::to_string(most) + ", got " +
                                   std::to_string(v.GetInt64()));
                }
                ok = v.IsInt64() && v.GetInt64() >= 0;
                break;
            }
            case Kind::strings:
                ok = v.IsArray() && std::all_of(v.Begin(), v.End(), [](const rapidjson::Value& a) {
                         return a.IsString();
                     });
                break;
            case Kind::string_map:
            case Kind::header_map:
                ok = v.IsObject();
                for (auto e = v.MemberBegin(); ok && e != v.MemberEnd(); ++e) {
                    ok = e->value.IsString() || (known->second == Kind::header_map &&
                                                 e->value.IsObject() && e->value.HasMember("env"));
                }
                break;
        }
        if (!ok) {
            static const std::map<Kind, const char*> kExpected = {
                {Kind::string, "a non-empty string"},
                {Kind::integer, "a non-negative integer"},
                {Kind::strings, "an array of strings"},
                {Kind::string_map, "an object of strings"},
                {Kind::header_map, "an object of strings or {\"env\": NAME}"}};
            fail(name, std::string("expected ") + kExpected.at(known->second));
        }
    }
}

}  // namespace

McpUpstreamConfig parseMcpUpstreamConfig(std::string_view config_json) {
    rapidjson::Document doc;
    doc.Parse(config_json.data(), config_json.size());
    if (doc.HasParseError() || !doc.IsObject()) {
        throw sdk::Error(sdk::ErrorCode::invalid_argument, "the config must be a JSON object");
    }
    checkMembers(doc);
    McpUpstreamConfig c;
    std::string transport = stringMember(doc, "transport");
    if (transport.empty()) {
        transport = doc.HasMember("url") ? "auto" : "stdio";
    }
    if (transport == "stdio") {
        StdioOptions stdio;
        stdio.command = stringMember(doc, "command");
        if (stdio.command.empty()) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument,
                             "command: the server's command is required (transport stdio)",
                             R"({"path":"command"})");
        }
        if (doc.HasMember("args") && doc["args"].IsArray()) {
            for (const rapidjson::Value& a : doc["args"].GetArray()) {
                if (a.IsString()) {
                    stdio.args.emplace_back(a.GetString(), a.GetStringLength());
                }
            }
        }
        if (doc.HasMember("env") && doc["env"].IsObject()) {
            const rapidjson::Value& env = doc["env"];
            for (auto m = env.MemberBegin(); m != env.MemberEnd(); ++m) {
                if (m->value.IsString()) {
                    stdio.env[std::string(m->name.GetString(), m->name.GetStringLength())] =
                        std::string(m->value.GetString(), m->value.GetStringLength());
                }
            }
        }
        stdio.cwd = stringMember(doc, "cwd");
        stdio.close_wait = milliseconds(integer(doc, "close_wait_ms", stdio.close_wait.count()));
        stdio.term_wait = milliseconds(integer(doc, "term_wait_ms", stdio.term_wait.count()));
        stdio.max_message_bytes = static_cast<std::size_t>(
            integer(doc, "max_message_bytes", static_cast<std::int64_t>(stdio.max_message_bytes)));
        c.options.transport = stdioTransport(std::move(stdio));
    } else {
        HttpOptions http;
        http.url = stringMember(doc, "url");
        if (http.url.empty()) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument,
                             "url: the server's URL is required (transport " + transport + ")",
                             R"({"path":"url"})");
        }
        if (!parseHttpMode(transport, http.mode)) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument,
                             "transport: expected stdio, streamable_http, sse or auto, got " +
                                 sdk::jsonQuote(transport.substr(0, 64)),
                             R"({"path":"transport"})");
        }
        if (doc.HasMember("headers") && doc["headers"].IsObject()) {
            const rapidjson::Value& headers = doc["headers"];
            for (auto m = headers.MemberBegin(); m != headers.MemberEnd(); ++m) {
                const std::string name(m->name.GetString(), m->name.GetStringLength());
                std::string value = m->value.IsString() ? std::string(m->value.GetString(),
                                                                      m->value.GetStringLength())
                                                        : std::string();
                if (m->value.IsObject()) {
                    // A secret stays out of the config file: {"env": "NAME"}.
                    const std::string variable = stringMember(m->value, "env");
                    // NOLINTNEXTLINE(concurrency-mt-unsafe): read while opening, not racing setenv
                    const char* found = variable.empty() ? nullptr : std::getenv(variable.c_str());
                    if (found == nullptr || *found == '\0') {
                        throw sdk::Error(sdk::ErrorCode::invalid_argument,
                                         "headers." + name + ": the environment variable " +
                                             sdk::jsonQuote(variable) + " is not set",
                                         R"({"path":"headers"})");
                    }
                    value = found;
                }
                http.headers.emplace_back(name, std::move(value));
            }
        }
        http.connect_timeout =
            milliseconds(integer(doc, "connect_timeout_ms", http.connect_timeout.count()));
        http.max_message_bytes = static_cast<std::size_t>(
            integer(doc, "max_message_bytes", static_cast<std::int64_t>(http.max_message_bytes)));
        std::string error;
        if (!HttpConnection::create(http, nullptr, nullptr, error)) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument, error, R"({"path":"url"})");
        }
        c.options.transport = httpTransport(std::move(http));
    }
    if (const std::string pinned = stringMember(doc, "protocol_version"); !pinned.empty()) {
        static const std::vector<std::string> kVersions = {
            "auto", "2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"};
        if (std::find(kVersions.begin(), kVersions.end(), pinned) == kVersions.end()) {
            throw sdk::Error(sdk::ErrorCode::invalid_argument,
                             "protocol_version: expected auto, 2026-07-28, 2025-11-25, "
                             "2025-06-18, 2025-03-26 or 2024-11-05, got " +
                                 sdk::jsonQuote(pinned.substr(0, 64)),
                             R"({"path":"protocol_version"})");
        }
        c.options.protocol_version = pinned;
    }
    c.options.request_timeout =
        milliseconds(integer(doc, "request_timeout_ms", c.options.request_timeout.count()));
    c.options.initialize_timeout =
        milliseconds(integer(doc, "initialize_timeout_ms", c.options.initialize_timeout.count()));
    c.options.client_capabilities_json = std::string(kClientCapabilities);
    c.options.client_name = "crank";
    c.options.client_version = "1.0.0";
    c.max_client_requests = static_cast<std::size_t>(integer(doc, "max_client_requests", 16));
    c.unrouted_request_wait =
        milliseconds(integer(doc, "unrouted_request_wait_ms", c.unrouted_request_wait.count()));
    c.blocking_question =
        milliseconds(integer(doc, "blocking_question_ms", c.blocking_question.count()));
    return c;
}

}  // namespace crank::mcpc
