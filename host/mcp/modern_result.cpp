#include "mcp/modern_result.h"

#include <fmt/core.h>

#include "mcp/json_scanner.h"
#include "mcp/request_meta.h"
#include "util/json_string.h"

namespace crank::mcp {

bool isCacheableMethod(std::string_view method) {
    return method == "server/discover" || method == "tools/list" || method == "prompts/list" ||
           method == "resources/list" || method == "resources/templates/list" ||
           method == "resources/read";
}

namespace {

/// The members modernResult() adds, for a result that has none of them.
std::string addedMembers(std::string_view server_info_json, const std::optional<CacheHint>& hint) {
    std::string added = R"("resultType":"complete")";
    if (hint) {
        added += fmt::format(R"(,"ttlMs":{},"cacheScope":)", hint->ttl_ms < 0 ? 0 : hint->ttl_ms);
        added += jsonString(hint->scope);
    }
    added +=
        R"(,"_meta":{)" + jsonString(kMetaServerInfo) + ":" + std::string(server_info_json) + "}";
    return added;
}

}  // namespace

std::string modernResult(std::string_view result_json, std::string_view server_info_json,
                         const std::optional<CacheHint>& hint) {
    // The common result names none of the members added (it is trusted JSON, written here or
    // read and checked from an upstream): they go in after its '{' without reading it again.
    const std::size_t first = result_json.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos && result_json[first] == '{' && result_json.back() == '}' &&
        result_json.find("\"_meta\"") == std::string_view::npos &&
        result_json.find("\"resultType\"") == std::string_view::npos &&
        result_json.find("\"ttlMs\"") == std::string_view::npos &&
        result_json.find("\"cacheScope\"") == std::string_view::npos) {
        const std::string added = addedMembers(server_info_json, hint);
        const std::size_t next = result_json.find_first_not_of(" \t\r\n", first + 1);
        const bool empty = next != std::string_view::npos && result_json[next] == '}';
        std::string out;
        out.reserve(result_json.size() + added.size() + 2);
        out += '{';
        out += added;
        if (!empty) {
            out += ',';
            out += result_json.substr(first + 1);
        } else {
            out += '}';
        }
        return out;
    }
    auto object = scan::readObject(result_json);
    if (!object) {
        return std::string(result_json);
    }
    const auto& members = object->members;
    const std::string serverInfo =
        jsonString(kMetaServerInfo) + ":" + std::string(server_info_json);
    std::string added;
    const auto add = [&added](std::string_view member) {
        if (!added.empty()) {
            added += ',';
        }
        added += member;
    };
    if (scan::findMember(members, "resultType") == nullptr) {
        add(R"("resultType":"complete")");
    }
    if (hint) {
        if (scan::findMember(members, "ttlMs") == nullptr) {
            add(fmt::format(R"("ttlMs":{})", hint->ttl_ms < 0 ? 0 : hint->ttl_ms));
        }
        if (scan::findMember(members, "cacheScope") == nullptr) {
            add(R"("cacheScope":)" + jsonString(hint->scope));
        }
    }
    // The result's body between its braces, with serverInfo put into a _meta it already has.
    const std::size_t open = object->value.start;
    const std::size_t close = object->value.end - 1;
    std::string body(result_json.substr(open + 1, close - open - 1));
    const scan::RawValue* meta = scan::findMember(members, "_meta");
    if (meta == nullptr) {
        add(R"("_meta":{)" + serverInfo + "}");
    } else if (meta->type == scan::ValueType::object) {
        auto metaObject =
            scan::readObject(result_json.substr(meta->start, meta->end - meta->start));
        if (metaObject && scan::findMember(metaObject->members, kMetaServerInfo) == nullptr) {
            const std::size_t at = meta->start + 1 - (open + 1);  // just inside its '{'
            body.insert(at, metaObject->members.empty() ? serverInfo : serverInfo + ",");
        }
    }
    std::string out;
    out.reserve(added.size() + body.size() + 3);
    out += '{';
    out += added;
    const bool hasBody = body.find_first_not_of(" \t\r\n") != std::string::npos;
    if (!added.empty() && hasBody) {
        out += ',';
    }
    out += body;
    out += '}';
    return out;
}

}  // namespace crank::mcp
