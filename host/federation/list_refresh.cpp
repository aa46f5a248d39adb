#include "federation/list_refresh.h"

#include <algorithm>
#include <chrono>
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
                                                 const char* member, std::string& error,
                                                 std::optional<std::int64_t>& ttl_ms) {
    std::vector<std::string> items;
    std::string cursor;
    for (int pageNo = 0; pageNo < kMaxPages; ++pageNo) {
        const std::string params =
            cursor.empty() ? "{}" : R"({"cursor":)" + jsonString(cursor) + "}";
        const Answer a = link.request(method, params, nullptr);
        if (a.ttl_ms) {
            ttl_ms = std::min(ttl_ms.value_or(*a.ttl_ms), *a.ttl_ms);  // the least of its pages
        }
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
    const auto take = [&](const char* method, const char* member, const char* key,
                          int bit) -> std::optional<std::vector<Item>> {
        if (!out.error.empty()) {
            return std::nullopt;  // the upstream already failed this round
        }
        std::optional<std::int64_t> ttl;
        auto raw = fetchAll(link, method, member, out.error, ttl);
        if (ttl) {
            std::optional<std::int64_t>& kept = out.ttl_ms[ttlIndex(bit)];
            kept = std::min(kept.value_or(*ttl), *ttl);
        }
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
    out.fetched = which;
    if ((which & kTools) != 0) {
        out.tools = take("tools/list", "tools", "name", kTools);
    }
    if ((which & kResources) != 0) {
        out.resources = take("resources/list", "resources", "uri", kResources);
        out.templates =
            take("resources/templates/list", "resourceTemplates", "uriTemplate", kResources);
    }
    if ((which & kPrompts) != 0) {
        out.prompts = take("prompts/list", "prompts", "name", kPrompts);
    }
    if (out.tools) {
        // The era and capabilities of the connection the tools came from.
        link.withOpenHandle([&](crank_upstream* handle) {
            out.tasks_by_upstream = runsTasks(link.adapter->upstreamStatus(handle));
        });
    }
    return out;
}

bool runsTasks(std::string_view status_json) {
    json::Document status;
    if (!json::parseObject(status_json, status) || json::stringMember(status, "era") != "2026" ||
        !status.HasMember("capabilities") || !status["capabilities"].IsObject()) {
        return false;
    }
    const json::Value& capabilities = status["capabilities"];
    return capabilities.HasMember("extensions") && capabilities["extensions"].IsObject() &&
           capabilities["extensions"].HasMember("io.modelcontextprotocol/tasks");
}

std::size_t ttlIndex(int bit) {
    return bit == kTools ? 0 : bit == kResources ? 1 : 2;
}

void FetchedLists::apply(UpstreamLink& link) {
    if (tools) {
        link.lists.tools = std::move(*tools);
        link.tasks_by_upstream = tasks_by_upstream;
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
    // A list fetched now is kept until its ttlMs runs out (never less than the upstream's
    // min_list_refresh_ms), or until the upstream says it changed.
    const auto now = std::chrono::steady_clock::now();
    for (const int bit : {kTools, kResources, kPrompts}) {
        if ((fetched & bit) == 0) {
            continue;
        }
        const std::optional<std::int64_t>& ttl = ttl_ms[ttlIndex(bit)];
        link.stale_at[ttlIndex(bit)] =
            ttl ? std::optional(now + std::chrono::milliseconds(
                                          std::max(*ttl, link.config.min_list_refresh_ms)))
                : std::nullopt;
    }
}

int staleLists(UpstreamLink& link, std::chrono::steady_clock::time_point now,
               std::optional<std::chrono::steady_clock::time_point>& next) {
    int which = 0;
    for (const int bit : {kTools, kResources, kPrompts}) {
        std::optional<std::chrono::steady_clock::time_point>& at = link.stale_at[ttlIndex(bit)];
        if (!at) {
            continue;
        }
        if (*at <= now) {
            which |= bit;
            at.reset();
        } else if (!next || *at < *next) {
            next = *at;
        }
    }
    return which;
}

}  // namespace crank::federation
