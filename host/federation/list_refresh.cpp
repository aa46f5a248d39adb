#include "federation/list_refresh.h"

#include <cstdint>

#include <fmt/core.h>
#include <rapidjson/document.h>

#include "json/json_members.h"
#include "json/json_text.h"
#include "log/log.h"
#include "util/json_string.h"

namespace crank::federation {
namespace {

/// Every item of a paged list method of `link`; nullopt (and `error`) when it failed.
std::optional<std::vector<std::string>> fetchAll(UpstreamLink& link, const char* method,
                                                 const char* member, std::string& error) {
    std::vector<std::string> items;
    std::string cursor;
    for (int pageNo = 0; pageNo < kMaxPages; ++pageNo) {
        const std::string params =
            cursor.empty() ? "{}" : R"({"cursor":)" + jsonString(cursor) + "}";
        const Answer a = link.request(method, params, nullptr);
        json::Document doc;
        if (!a.ok) {
            if (json::parseObject(a.json, doc) && doc.HasMember("code") && doc["code"].IsInt64() &&
                doc["code"].GetInt64() == -32601) {
                return items;  // the upstream has no such list
            }
            // The host's own messages already say which upstream and method; the upstream's
            // (a JSON-RPC error of its own) do not.
            const std::string message = json::stringMember(doc, "message");
            const std::string context = "upstream " + link.config.name + ": ";
            error = message.rfind(context, 0) == 0
                        ? message
                        : fmt::format("{}{}: {}", context, method, message);
            return std::nullopt;
        }
        if (const Result<void> parsed = json::parseLenient(a.json, doc); !parsed) {
            error = fmt::format("upstream {}: {}: the answer cannot be read: {}", link.config.name,
                                method, parsed.error().message);
            return std::nullopt;
        }
        if (!doc.IsObject() || !doc.HasMember(member) || !doc[member].IsArray()) {
            error = fmt::format("upstream {}: {}: the answer has no {} array", link.config.name,
                                method, member);
            return std::nullopt;
        }
        for (const rapidjson::Value& item : doc[member].GetArray()) {
            if (static_cast<std::int64_t>(items.size()) >= link.config.max_list_items) {
                log::warn("upstream {}: {} has more than {} entries; the rest is not published",
                          link.config.name, method, link.config.max_list_items);
                return items;
            }
            items.push_back(json::toJsonText(item));
        }
        cursor = json::stringMember(doc, "nextCursor");
        if (cursor.empty()) {
            return items;
        }
    }
    log::warn("upstream {}: {} has more than {} pages; the rest is not published", link.config.name,
              method, kMaxPages);
    return items;
}

}  // namespace

FetchedLists fetchLists(UpstreamLink& link, int which) {
    FetchedLists out;
    const auto take = [&](const char* method, const char* member,
                          const char* key) -> std::optional<std::vector<Item>> {
        if (!out.error.empty()) {
            return std::nullopt;  // the upstream already failed this round
        }
        auto raw = fetchAll(link, method, member, out.error);
        if (!raw) {
            return std::nullopt;
        }
        std::vector<Item> items;
        for (std::string& text : *raw) {
            json::Document doc;
            std::string original;
            if (json::parseObject(text, doc)) {
                original = json::stringMember(doc, key);
            }
            if (original.empty()) {
                log::warn("upstream {}: an entry of {} has no {}; skipped", link.config.name,
                          method, key);
                continue;
            }
            items.push_back(Item{{}, std::move(original), std::move(text)});
        }
        return items;
    };
    if ((which & kTools) != 0) {
        out.tools = take("tools/list", "tools", "name");
    }
    if ((which & kResources) != 0) {
        out.resources = take("resources/list", "resources", "uri");
        out.templates = take("resources/templates/list", "resourceTemplates", "uriTemplate");
    }
    if ((which & kPrompts) != 0) {
        out.prompts = take("prompts/list", "prompts", "name");
    }
    return out;
}

void FetchedLists::apply(UpstreamLink& link) {
    if (tools) {
        link.lists.tools = std::move(*tools);
    }
    if (resources) {
        link.lists.resources = std::move(*resources);
    }
    if (templates) {
        link.lists.templates = std::move(*templates);
    }
    if (prompts) {
        link.lists.prompts = std::move(*prompts);
    }
    link.last_error = error;
}

}  // namespace crank::federation
