#include "modern_tools.h"

#include <utility>

#include <rapidjson/document.h>

#include "http_wire.h"
#include "json_text.h"

namespace crank::mcpc {

std::string ModernTools::filterList(const std::string& result_json, bool first_page) {
    rapidjson::Document doc;
    if (!parseServerMessage(result_json, doc).empty() || !doc.IsObject() ||
        !doc.HasMember("tools") || !doc["tools"].IsArray()) {
        return result_json;
    }
    rapidjson::Value& tools = doc["tools"];
    std::vector<RefusedTool> refused;
    std::vector<std::pair<std::string, std::shared_ptr<const std::vector<MirroredParam>>>> kept;
    rapidjson::Value valid(rapidjson::kArrayType);
    for (rapidjson::Value& tool : tools.GetArray()) {
        const std::string name = stringMember(tool, "name");
        std::string why;
        std::optional<std::vector<MirroredParam>> params;
        if (tool.IsObject() && tool.HasMember("inputSchema")) {
            params = readMirroredParams(tool["inputSchema"], why);
        } else {
            params.emplace();
        }
        if (!params) {
            refused.push_back(RefusedTool{excerpt(name, 128), excerpt(why, 300)});
            continue;
        }
        if (!params->empty()) {
            kept.emplace_back(
                name, std::make_shared<const std::vector<MirroredParam>>(std::move(*params)));
        }
        valid.PushBack(std::move(tool), doc.GetAllocator());
    }
    {
        const std::lock_guard lock(mutex_);
        if (first_page) {
            tools_.clear();
            refused_.clear();
            bytes_ = 0;
        }
        for (auto& [name, params] : kept) {
            std::size_t bytes = name.size();
            for (const MirroredParam& p : *params) {
                bytes += p.header.size();
                for (const std::string& segment : p.path) {
                    bytes += segment.size();
                }
            }
            if ((tools_.size() < kMaxTools && bytes_ + bytes <= kMaxBytes) ||
                tools_.count(name) > 0) {
                bytes_ += bytes;
                tools_[name] = std::move(params);
            }
        }
        for (RefusedTool& r : refused) {
            if (refused_.size() < kMaxRefused) {
                refused_.push_back(std::move(r));
            }
        }
    }
    if (valid.Size() == tools.Size()) {
        return result_json;
    }
    tools = std::move(valid);
    return jsonText(doc);
}

std::shared_ptr<const std::vector<MirroredParam>> ModernTools::headersOf(
    std::string_view name) const {
    const std::lock_guard lock(mutex_);
    const auto it = tools_.find(name);
    return it == tools_.end() ? nullptr : it->second;
}

void ModernTools::clear() {
    const std::lock_guard lock(mutex_);
    tools_.clear();
    refused_.clear();
    bytes_ = 0;
}

std::vector<RefusedTool> ModernTools::refused() const {
    const std::lock_guard lock(mutex_);
    return refused_;
}

}  // namespace crank::mcpc
