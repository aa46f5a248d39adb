#include "handshake.h"

#include <algorithm>
#include <chrono>

#include <rapidjson/document.h>

#include "http_wire.h"
#include "json_text.h"
#include "modern_request.h"
#include "upstream_session.h"
#include <crank/sdk/json.hpp>

namespace crank::mcpc {
namespace {

constexpr std::size_t kMaxInstructions = std::size_t{16} * 1024;
/// server/discover as the auto probe: a server that ignores the unknown method costs this much.
constexpr std::chrono::milliseconds kDiscoverProbe{5'000};
constexpr std::size_t kMaxServerField = 256;

/// serverInfo, capabilities and instructions of an initialize or discover result.
void readServer(const rapidjson::Value& result, const rapidjson::Value* server_info,
                Handshake& out) {
    if (server_info != nullptr) {
        out.server_name = excerpt(stringMember(*server_info, "name"), kMaxServerField);
        out.server_version = excerpt(stringMember(*server_info, "version"), kMaxServerField);
    }
    if (result.HasMember("capabilities") && result["capabilities"].IsObject()) {
        out.capabilities_json = jsonText(result["capabilities"]);
    }
    // Shown in crankd's status: bounded, cut at a character boundary.
    out.instructions = stringMember(result, "instructions");
    if (out.instructions.size() > kMaxInstructions) {
        std::size_t cut = kMaxInstructions;
        while (cut > 0 && (static_cast<unsigned char>(out.instructions[cut]) & 0xC0U) == 0x80U) {
            --cut;
        }
        out.instructions.resize(cut);
    }
}

/// initialize + notifications/initialized on `c`; the error message when it fails.
std::string initialize(Connection& c, const UpstreamOptions& o,
                       const std::vector<std::string>& versions, Handshake& out) {
    const std::string params = R"({"protocolVersion":)" + sdk::jsonQuote(versions.front()) +
                               R"(,"capabilities":)" + o.client_capabilities_json +
                               R"(,"clientInfo":{"name":)" + sdk::jsonQuote(o.client_name) +
                               R"(,"version":)" + sdk::jsonQuote(o.client_version) + "}}";
    const RpcOutcome r = c.request("initialize", params, o.initialize_timeout);
    if (!r.ok) {
        return "initialize failed: " + r.error_message;
    }
    rapidjson::Document doc;
    if (!parseServerMessage(r.result_json, doc).empty() || !doc.IsObject()) {
        return "initialize: the server's result is not a JSON object";
    }
    out.version = stringMember(doc, "protocolVersion");
    if (std::find(versions.begin(), versions.end(), out.version) == versions.end()) {
        std::string offered;
        for (const std::string& v : versions) {
            offered += (offered.empty() ? "" : ", ") + v;
        }
        return "the server answered protocol version " + sdk::jsonQuote(out.version.substr(0, 64)) +
               ", which is not one crank speaks (" + offered + ")";
    }
    readServer(doc, doc.HasMember("serverInfo") ? &doc["serverInfo"] : nullptr, out);
    c.setProtocolVersion(out.version);
    if (!c.notify("notifications/initialized", "")) {
        return "the server went away after initialize";
    }
    return {};
}

/// server/discover on `c`, switched to the 2026 era, bounded by `timeout`; the error message
/// when it fails.
std::string discover(Connection& c, const UpstreamOptions& o, std::chrono::milliseconds timeout,
                     Handshake& out) {
    if (!c.setModernVersion(std::string(kModernProtocolVersion))) {
        return "the " + c.transportName() + " transport does not speak the 2026-07-28 era";
    }
    RequestHooks hooks;
    hooks.client_capabilities_json = o.client_capabilities_json;
    const RpcOutcome r = c.request("server/discover", "", timeout, hooks);
    if (!r.ok) {
        return "server/discover failed: " + r.error_message;
    }
    rapidjson::Document doc;
    if (!parseServerMessage(r.result_json, doc).empty() || !doc.IsObject()) {
        return "server/discover: the server's result is not a JSON object";
    }
    const std::string version = c.modernVersion();
    bool listed = false;
    if (doc.HasMember("supportedVersions") && doc["supportedVersions"].IsArray()) {
        for (const rapidjson::Value& v : doc["supportedVersions"].GetArray()) {
            listed = listed || (v.IsString() &&
                                std::string_view(v.GetString(), v.GetStringLength()) == version);
        }
    }
    if (!listed) {
        return "server/discover: the server does not list " + version + " in supportedVersions";
    }
    out.version = version;
    const rapidjson::Value* info = nullptr;
    if (doc.HasMember("serverInfo")) {
        info = &doc["serverInfo"];  // the examples' place
    } else if (doc.HasMember("_meta") && doc["_meta"].IsObject() &&
               doc["_meta"].HasMember("io.modelcontextprotocol/serverInfo")) {
        info = &doc["_meta"]["io.modelcontextprotocol/serverInfo"];
    }
    readServer(doc, info, out);
    return {};
}

}  // namespace

std::string handshake(std::shared_ptr<Connection>& c, const UpstreamOptions& options,
                      Handshake& out, const Reopen& reopen) {
    const std::string& pinned = options.protocol_version;
    c->setClientInfo(options.client_name, options.client_version);
    if (pinned == kModernProtocolVersion) {
        return discover(*c, options, options.initialize_timeout, out);
    }
    if (pinned == "auto" && c->setModernVersion(std::string(kModernProtocolVersion))) {
        const std::string modern =
            discover(*c, options, std::min(options.initialize_timeout, kDiscoverProbe), out);
        if (modern.empty()) {
            return {};
        }
        c->setModernVersion("");
        out = Handshake{};
        if (!c->open()) {
            // The server exited on the method it did not know (some stdio servers do): a new
            // one is started for initialize.
            c->close();
            std::string error;
            c = reopen ? reopen(error) : nullptr;
            if (!c) {
                return "the server ended on server/discover (" + modern +
                       ") and could not be started again: " + error;
            }
        }
        const std::string legacy = initialize(*c, options, options.protocol_versions, out);
        return legacy.empty() ? legacy : legacy + " (and " + modern + ")";
    }
    if (pinned == "auto") {
        return initialize(*c, options, options.protocol_versions, out);
    }
    return initialize(*c, options, std::vector<std::string>{pinned}, out);
}

}  // namespace crank::mcpc
