#include "modern_request.h"

#include <utility>

#include <rapidjson/document.h>

#include "json_text.h"
#include <crank/sdk/json.hpp>

namespace crank::mcpc {
namespace {

constexpr const char* kVersionKey = "io.modelcontextprotocol/protocolVersion";
constexpr const char* kClientInfoKey = "io.modelcontextprotocol/clientInfo";
constexpr const char* kCapabilitiesKey = "io.modelcontextprotocol/clientCapabilities";

rapidjson::Value text(std::string_view s, rapidjson::Document::AllocatorType& allocator) {
    return rapidjson::Value(s.data(), static_cast<rapidjson::SizeType>(s.size()), allocator);
}

/// Sets `object[key]` to `value`, replacing a member of that name.
void put(rapidjson::Value& object, const char* key, rapidjson::Value value,
         rapidjson::Document::AllocatorType& allocator) {
    object.RemoveMember(key);
    object.AddMember(rapidjson::StringRef(key), std::move(value), allocator);
}

}  // namespace

const char* nameMemberOf(std::string_view method) {
    if (method == "tools/call" || method == "prompts/get") {
        return "name";
    }
    if (method == "resources/read") {
        return "uri";
    }
    if (method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel") {
        return "taskId";
    }
    return nullptr;
}

bool buildModernRequest(std::int64_t id, std::string_view method, std::string_view params_json,
                        const ModernClient& client, std::string_view capabilities_json,
                        const std::vector<MirroredParam>* mirrored, ModernRequest& out,
                        std::string& error) {
    rapidjson::Document params;
    if (params_json.empty()) {
        params.SetObject();
    } else if (const std::string why = parseServerMessage(params_json, params);
               !why.empty() || !params.IsObject()) {
        error = "the params of " + std::string(method) + " are not a JSON object" +
                (why.empty() ? std::string() : " (" + why + ")");
        return false;
    }
    rapidjson::Document capabilities(&params.GetAllocator());
    if (const std::string why = parseServerMessage(capabilities_json, capabilities);
        !why.empty() || !capabilities.IsObject()) {
        error = "the client capabilities are not a JSON object";
        return false;
    }
    auto& allocator = params.GetAllocator();
    if (!params.HasMember("_meta")) {
        params.AddMember("_meta", rapidjson::Value(rapidjson::kObjectType), allocator);
    } else if (!params["_meta"].IsObject()) {
        error = "the _meta of " + std::string(method) + "'s params is not a JSON object";
        return false;
    }
    rapidjson::Value& meta = params["_meta"];
    rapidjson::Value info(rapidjson::kObjectType);
    info.AddMember("name", text(client.client_name, allocator), allocator);
    info.AddMember("version", text(client.client_version, allocator), allocator);
    put(meta, kVersionKey, text(client.protocol_version, allocator), allocator);
    put(meta, kClientInfoKey, std::move(info), allocator);
    put(meta, kCapabilitiesKey, rapidjson::Value(capabilities, allocator), allocator);

    out.body = R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":)" +
               sdk::jsonQuote(method) + R"(,"params":)" + jsonText(params) + "}";
    out.headers.clear();
    out.headers.emplace_back("MCP-Protocol-Version", client.protocol_version);
    out.headers.emplace_back("Mcp-Method", std::string(method));
    if (const char* member = nameMemberOf(method)) {
        if (params.HasMember(member) && params[member].IsString()) {
            const rapidjson::Value& named = params[member];
            out.headers.emplace_back("Mcp-Name", headerText(std::string_view(
                                                     named.GetString(), named.GetStringLength())));
        }
    }
    if (mirrored != nullptr && method == "tools/call") {
        if (params.HasMember("arguments") && params["arguments"].IsObject()) {
            appendParamHeaders(*mirrored, params["arguments"], out.headers);
        }
    }
    return true;
}

}  // namespace crank::mcpc
