#include "federation/name_table.h"

#include <algorithm>
#include <string_view>

#include <rapidjson/document.h>

#include "json/json_members.h"

namespace crank::federation {

namespace {

/// A name a tool can be published under: 1 to 128 bytes (what MCP asks tool names to keep to),
/// no control byte (a NUL would make a name mean two things).
bool publishableName(std::string_view name) {
    return !name.empty() && name.size() <= 128 &&
           std::none_of(name.begin(), name.end(), [](char c) {
               const auto byte = static_cast<unsigned char>(c);
               return byte < 0x20U || byte == 0x7fU;
           });
}

}  // namespace

WorkspacePlan planWorkspace(const std::vector<UpstreamLink*>& links,
                            const std::map<std::string, PublishedEntry>& before,
                            const std::set<std::string>& taken) {
    WorkspacePlan plan;
    std::set<std::string> uris;
    std::set<std::string> templates;
    std::set<std::string> prompts;
    for (UpstreamLink* link : links) {
        std::vector<std::string>& collisions = plan.collisions.emplace_back();
        std::vector<std::string>& filtered = plan.filtered.emplace_back();
        for (const Item& item : link->lists.tools) {
            if (!publishableName(item.original)) {
                collisions.push_back("a tool is not published: its name (" +
                                     std::to_string(item.original.size()) +
                                     " bytes) is not 1 to 128 bytes without control characters");
                continue;
            }
            if (std::string why = link->config.toolFiltered(item.original); !why.empty()) {
                filtered.push_back(std::move(why));  // neither listed nor callable
                continue;
            }
            const std::string name = link->config.publishedToolName(item.original);
            if (taken.count(name) != 0 || plan.tools.count(name) != 0) {
                collisions.push_back("tool \"" + item.original +
                                     "\" is not published: the name \"" + name +
                                     "\" is taken (by an operation or an earlier upstream)");
                continue;
            }
            json::Document doc;
            json::parseObject(item.json, doc);
            PublishedEntry entry{json::withStringMember(doc, "name", name), link->serial,
                                 item.original, link->tasks_by_upstream};
            plan.owners[name] = {link, item.original};
            const auto old = before.find(name);
            if (old == before.end() || !(old->second == entry)) {
                PublishedTool tool;
                tool.name = name;
                tool.original = item.original;
                tool.link = link;
                tool.json = entry.json;
                tool.title = json::stringMember(doc, "title");
                tool.description = json::stringMember(doc, "description");
                if (doc.HasMember("execution") && doc["execution"].IsObject()) {
                    // Only what lets a task run: "forbidden" (or anything else) is none.
                    std::string support = json::stringMember(doc["execution"], "taskSupport");
                    if (support == "optional" || support == "required") {
                        tool.task_support = std::move(support);
                    }
                }
                tool.task_by_upstream = link->tasks_by_upstream;
                plan.added.push_back(std::move(tool));
            }
            plan.tools[name] = std::move(entry);
        }
        for (const Item& item : link->lists.resources) {
            if (!uris.insert(item.original).second) {
                collisions.push_back("resource " + item.original +
                                     " is listed by an earlier upstream");
                continue;
            }
            plan.lists.resources.push_back(Item{item.original, item.original, item.json});
        }
        for (const Item& item : link->lists.templates) {
            if (!templates.insert(item.original).second) {
                collisions.push_back("resource template " + item.original +
                                     " is listed by an earlier upstream");
                continue;
            }
            plan.lists.templates.push_back(Item{item.original, item.original, item.json});
        }
        for (const Item& item : link->lists.prompts) {
            const std::string name = link->config.publishedName(item.original);
            if (!prompts.insert(name).second) {
                collisions.push_back("prompt \"" + item.original +
                                     "\" is not published: the name \"" + name +
                                     "\" is taken by an earlier upstream");
                continue;
            }
            json::Document doc;
            json::parseObject(item.json, doc);
            plan.lists.prompts.push_back(
                Item{name, item.original, json::withStringMember(doc, "name", name)});
        }
    }
    for (const auto& [name, text] : before) {
        if (plan.tools.count(name) == 0) {
            plan.removed.push_back(name);
        }
    }
    return plan;
}

}  // namespace crank::federation
