#include "mcp/modern/modern_result.h"

#include <fmt/core.h>

#include "json/json_scanner.h"
#include "mcp/wire/json_rpc.h"
#include "mcp/wire/method_registry.h"
#include "mcp/wire/request_meta.h"
#include "util/json_string.h"

namespace crank::mcp {

bool isCacheableMethod(std::string_view method) {
    const MethodInfo* info = findMethod(method);
    return info != nullptr && info->cache != MethodCache::none;
}

namespace {

/// The members modernResult() adds, for a result that has none of them.
std::string addedMembers(std::string_view server_info_json, const std::optional<CacheHint>& hint) {
    std::string added = R"("resultType":"complete")";
    if (hint) {
        added += fmt::format(R"(,"ttlMs":{},"cacheScope":)", hint->ttl_ms < 0 ? 0 : hint->ttl_ms);
        added += jsonString(hint->scope);
    }
    // The key is the same for every result: quoted once.
    static const std::string kServerInfoKey = R"(,"_meta":{)" + jsonString(kMetaServerInfo) + ":";
    added.reserve(added.size() + kServerInfoKey.size() + server_info_json.size() + 1);
    added += kServerInfoKey;
    added += server_info_json;
    added += '}';
    return added;
}

/// `object_json` (read as `object`) with `key` in its _meta, as withMetaMember() says.
std::string metaWith(std::string_view object_json, const json::scan::RawEntry& object,
                     std::string_view key, std::string_view value_json) {
    const std::string member = jsonString(key) + ":" + std::string(value_json);
    std::string out(object_json);
    const json::scan::RawValue* meta = json::scan::findMember(object.members, "_meta");
    if (meta == nullptr) {
        out.insert(object.value.start + 1,
                   R"("_meta":{)" + member + (object.members.empty() ? "}" : "},"));
    } else if (meta->type == json::scan::ValueType::object) {
        auto metaObject =
            json::scan::readObject(object_json.substr(meta->start, meta->end - meta->start));
        if (metaObject && json::scan::findMember(metaObject->members, key) == nullptr) {
            out.insert(meta->start + 1, metaObject->members.empty() ? member : member + ",");
        }
    }
    return out;
}

/// Where the member whose value starts at `value_start` begins: its key's opening quote.
std::size_t keyStart(std::string_view text, std::size_t value_start) {
    std::size_t i = value_start;
    const auto skipBack = [&] {
        while (i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\r' ||
                         text[i - 1] == '\n')) {
            --i;
        }
    };
    skipBack();
    --i;  // the ':'
    skipBack();
    --i;  // the key's closing quote
    while (i > 0) {
        --i;
        if (text[i] != '"') {
            continue;
        }
        std::size_t backslashes = 0;
        while (backslashes < i && text[i - 1 - backslashes] == '\\') {
            ++backslashes;
        }
        if (backslashes % 2 == 0) {
            return i;
        }
    }
    return 0;
}

bool isWhitespace(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

}  // namespace

namespace {

/// Whether `result_json` may name one of the members crankd sets (however spelled).
bool mayNameModernMembers(std::string_view result_json) {
    return result_json.find("resultType") != std::string_view::npos ||
           result_json.find("ttlMs") != std::string_view::npos ||
           result_json.find("cacheScope") != std::string_view::npos ||
           result_json.find("\\u") != std::string_view::npos;
}

/// `result_json` (read as `object`) without crankd's members, as withoutModernMembers() says.
std::string strippedMembers(std::string_view result_json, const json::scan::RawEntry& object,
                            std::string_view method) {
    const json::scan::RawValue* type = json::scan::findMember(object.members, "resultType");
    const bool createdTask = method == "tools/call" && type != nullptr &&
                             type->type == json::scan::ValueType::string && type->text == "task";
    const bool taskOwnsTtl = createdTask || method.rfind("tasks/", 0) == 0;
    std::string out(result_json);
    for (auto m = object.members.rbegin(); m != object.members.rend(); ++m) {
        if ((m->name != "resultType" || createdTask) && (m->name != "ttlMs" || taskOwnsTtl) &&
            m->name != "cacheScope") {
            continue;
        }
        std::size_t from = keyStart(out, m->value.start);
        std::size_t to = m->value.end;
        std::size_t next = to;
        while (next < out.size() && isWhitespace(out[next])) {
            ++next;
        }
        if (next < out.size() && out[next] == ',') {
            to = next + 1;  // a member follows: take the comma after this one
        } else {
            std::size_t before = from;
            while (before > 0 && isWhitespace(out[before - 1])) {
                --before;
            }
            if (before > 0 && out[before - 1] == ',') {
                from = before - 1;  // the last member: take the comma before it
            }
        }
        out.erase(from, to - from);
    }
    return out;
}

}  // namespace

std::string withoutModernMembers(std::string_view result_json, std::string_view method) {
    if (!mayNameModernMembers(result_json)) {
        return std::string(result_json);  // none of them, however spelled
    }
    auto object = json::scan::readObject(result_json);
    if (!object) {
        return std::string(result_json);
    }
    return strippedMembers(result_json, *object, method);
}

Result<std::string> upstreamResult(std::string_view result_json, std::string_view method) {
    if (!mayNameModernMembers(result_json)) {
        return std::string(result_json);
    }
    auto object = json::scan::readObject(result_json);
    if (!object) {
        // Unread, it could keep members crankd sets (a duplicate key read one way here and
        // another way by a client): refused, not passed on.
        return Error{ErrorCode::invalid_argument,
                     "its answer is not a JSON object crankd can read: " + object.error().message};
    }
    const json::scan::RawValue* type = json::scan::findMember(object->members, "resultType");
    if (method != "tools/call" && type != nullptr && type->type == json::scan::ValueType::string &&
        type->text == "task") {
        return Error{ErrorCode::invalid_argument,
                     "it answered with a task, which only a tools/call may"};
    }
    return strippedMembers(result_json, *object, method);
}

namespace {

/// The common result names none of the members added (it is trusted JSON, written here or read
/// and checked from an upstream): they go in after its '{' without reading it again. What
/// follows its '{' (nullopt for any other result), and whether that is its closing '}' only.
struct CommonResult {
    std::string_view rest;
    bool empty = false;
};

std::optional<CommonResult> commonResult(std::string_view result_json) {
    const std::size_t first = result_json.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos || result_json[first] != '{' || result_json.back() != '}' ||
        result_json.find("\"_meta\"") != std::string_view::npos ||
        result_json.find("\"resultType\"") != std::string_view::npos ||
        result_json.find("\"ttlMs\"") != std::string_view::npos ||
        result_json.find("\"cacheScope\"") != std::string_view::npos) {
        return std::nullopt;
    }
    const std::string_view rest = result_json.substr(first + 1);
    const std::size_t next = rest.find_first_not_of(" \t\r\n");
    return CommonResult{rest, next != std::string_view::npos && rest[next] == '}'};
}

}  // namespace

std::string modernResultMessage(const RequestId& id, std::string_view result_json,
                                std::string_view server_info_json,
                                const std::optional<CacheHint>& hint) {
    if (const std::optional<CommonResult> common = commonResult(result_json)) {
        const std::string added = addedMembers(server_info_json, hint);
        return common->empty ? makeResult(id, {"{", added, "}"})
                             : makeResult(id, {"{", added, ",", common->rest});
    }
    return makeResult(id, modernResult(result_json, server_info_json, hint));
}

std::string modernResult(std::string_view result_json, std::string_view server_info_json,
                         const std::optional<CacheHint>& hint) {
    if (const std::optional<CommonResult> common = commonResult(result_json)) {
        const std::string added = addedMembers(server_info_json, hint);
        std::string out;
        out.reserve(result_json.size() + added.size() + 2);
        out += '{';
        out += added;
        if (!common->empty) {
            out += ',';
            out += common->rest;
        } else {
            out += '}';
        }
        return out;
    }
    auto object = json::scan::readObject(result_json);
    if (!object) {
        return std::string(result_json);
    }
    const auto& members = object->members;
    std::string added;
    const auto add = [&added](std::string_view member) {
        added += added.empty() ? "" : ",";
        added += member;
    };
    const json::scan::RawValue* type = json::scan::findMember(members, "resultType");
    if (type == nullptr) {
        add(R"("resultType":"complete")");
    }
    // Only complete results are cached: an input_required one never is (SEP-2322).
    const bool complete = type == nullptr ||
                          (type->type == json::scan::ValueType::string && type->text == "complete");
    if (hint && complete) {
        if (json::scan::findMember(members, "ttlMs") == nullptr) {
            add(fmt::format(R"("ttlMs":{})", hint->ttl_ms < 0 ? 0 : hint->ttl_ms));
        }
        if (json::scan::findMember(members, "cacheScope") == nullptr) {
            add(R"("cacheScope":)" + jsonString(hint->scope));
        }
    }
    // serverInfo into its _meta; then the rest just inside its '{' (which nothing before moved),
    // before members it now surely has.
    std::string out = metaWith(result_json, *object, kMetaServerInfo, server_info_json);
    if (!added.empty()) {
        out.insert(object->value.start + 1, added + ",");
    }
    return out;
}

std::string withMetaMember(std::string_view object_json, std::string_view key,
                           std::string_view value_json) {
    if (object_json.empty()) {
        return R"({"_meta":{)" + jsonString(key) + ":" + std::string(value_json) + "}}";
    }
    auto object = json::scan::readObject(object_json);
    if (!object) {
        return std::string(object_json);
    }
    return metaWith(object_json, *object, key, value_json);
}

}  // namespace crank::mcp
