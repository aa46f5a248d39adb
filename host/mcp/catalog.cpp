#include "mcp/catalog.h"

namespace crank::mcp {

std::string capabilitiesJson(const CatalogCapabilities& c) {
    std::string out;
    const auto add = [&out](std::string_view member) {
        out += out.empty() ? "" : ",";
        out += member;
    };
    if (c.resources) {
        std::string flags;
        if (c.resources_subscribe) {
            flags += R"("subscribe":true)";
        }
        if (c.resources_list_changed) {
            flags += flags.empty() ? "" : ",";
            flags += R"("listChanged":true)";
        }
        add(R"("resources":{)" + flags + "}");
    }
    if (c.prompts) {
        add(c.prompts_list_changed ? R"("prompts":{"listChanged":true})" : R"("prompts":{})");
    }
    if (c.completions) {
        add(R"("completions":{})");
    }
    return out;
}

}  // namespace crank::mcp
