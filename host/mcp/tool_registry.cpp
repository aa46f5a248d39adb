#include "mcp/tool_registry.h"

#include <algorithm>

namespace crank::mcp {

void FunctionToolRegistry::add(ToolDefinition definition, Function function) {
    {
        std::lock_guard lock(mutex_);
        auto it = std::lower_bound(
            tools_.begin(), tools_.end(), definition.name,
            [](const Entry& e, const std::string& name) { return e.definition.name < name; });
        Entry entry{std::move(definition), std::make_shared<Function>(std::move(function))};
        if (it != tools_.end() && it->definition.name == entry.definition.name) {
            *it = std::move(entry);
        } else {
            tools_.insert(it, std::move(entry));
        }
    }
    notify();
}

void FunctionToolRegistry::remove(std::string_view name) {
    bool removed = false;
    {
        std::lock_guard lock(mutex_);
        const auto it = std::find_if(tools_.begin(), tools_.end(),
                                     [&](const Entry& e) { return e.definition.name == name; });
        if (it != tools_.end()) {
            tools_.erase(it);
            removed = true;
        }
    }
    if (removed) {
        notify();
    }
}

std::vector<ToolDefinition> FunctionToolRegistry::list() const {
    std::lock_guard lock(mutex_);
    std::vector<ToolDefinition> out;
    out.reserve(tools_.size());
    for (const Entry& e : tools_) {
        out.push_back(e.definition);
    }
    return out;
}

std::string ToolResult::toJson(std::string_view meta_json) const {
    std::string out = R"({"content":)" + content_json;
    if (!structured_json.empty()) {
        out += R"(,"structuredContent":)" + structured_json;
    }
    out += std::string(R"(,"isError":)") + (is_error ? "true" : "false");
    if (!meta_json.empty()) {
        out += R"(,"_meta":)" + std::string(meta_json);
    }
    return out + "}";
}

std::optional<ToolDefinition> FunctionToolRegistry::find(std::string_view name) const {
    std::lock_guard lock(mutex_);
    const auto it = std::find_if(tools_.begin(), tools_.end(),
                                 [&](const Entry& e) { return e.definition.name == name; });
    if (it == tools_.end()) {
        return std::nullopt;
    }
    return it->definition;
}

Result<ToolResult> FunctionToolRegistry::call(std::string_view name,
                                              std::string_view arguments_json, ToolCall& call) {
    std::shared_ptr<Function> function;
    {
        std::lock_guard lock(mutex_);
        const auto it = std::find_if(tools_.begin(), tools_.end(),
                                     [&](const Entry& e) { return e.definition.name == name; });
        if (it == tools_.end()) {
            return Error{ErrorCode::not_found, "unknown tool: " + std::string(name)};
        }
        function = it->function;  // the call runs without the lock; a removal does not stop it
    }
    return (*function)(arguments_json, call);
}

void FunctionToolRegistry::subscribe(Listener listener) {
    std::lock_guard lock(mutex_);
    listeners_.push_back(std::move(listener));
}

void FunctionToolRegistry::notify() {
    std::vector<Listener> listeners;
    {
        std::lock_guard lock(mutex_);
        listeners = listeners_;
    }
    for (const Listener& l : listeners) {
        l();
    }
}

}  // namespace crank::mcp
