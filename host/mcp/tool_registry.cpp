#include "mcp/tool_registry.h"

#include <algorithm>

#include "mcp/rate_limits.h"
#include "util/json_string.h"

namespace crank::mcp {

ToolResult ToolResult::refusal(std::string_view text) {
    ToolResult r;
    r.content_json = R"([{"type":"text","text":)" + jsonString(text) + "}]";
    r.is_error = true;
    return r;
}

ToolResult ToolResult::inputRequired(InputNeed need) {
    ToolResult r;
    r.input = std::move(need);
    return r;
}

void FunctionToolRegistry::add(ToolDefinition definition, Function function) {
    std::vector<std::pair<ToolDefinition, Function>> one;
    one.emplace_back(std::move(definition), std::move(function));
    replace({}, std::move(one));
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

void FunctionToolRegistry::replace(const std::vector<std::string>& remove,
                                   std::vector<std::pair<ToolDefinition, Function>>&& add) {
    bool changed = false;
    {
        std::lock_guard lock(mutex_);
        for (const std::string& name : remove) {
            const auto it = std::find_if(tools_.begin(), tools_.end(),
                                         [&](const Entry& e) { return e.definition.name == name; });
            if (it != tools_.end()) {
                tools_.erase(it);
                changed = true;
            }
        }
        for (auto& [definition, function] : add) {
            auto it = std::lower_bound(
                tools_.begin(), tools_.end(), definition.name,
                [](const Entry& e, const std::string& name) { return e.definition.name < name; });
            definition.param_headers = compileParamHeaders(definition.input_schema_json);
            Entry entry{std::move(definition), std::make_shared<Function>(std::move(function))};
            if (it != tools_.end() && it->definition.name == entry.definition.name) {
                *it = std::move(entry);
            } else {
                tools_.insert(it, std::move(entry));
            }
            changed = true;
        }
    }
    if (changed) {
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
    if (!raw_json.empty()) {
        if (meta_json.empty() || raw_json.size() < 2 || raw_json.back() != '}') {
            return raw_json;
        }
        // A related-task _meta joins the upstream's object (replacing a _meta of its own would
        // lose what it said; an object with two _meta members is not valid: the upstream's
        // stays, and the host's is added only when it has none).
        if (raw_json.find(R"("_meta")") != std::string::npos) {
            return raw_json;
        }
        const bool empty = raw_json.find_first_not_of(" \t\r\n", 1) == raw_json.size() - 1;
        return raw_json.substr(0, raw_json.size() - 1) + (empty ? "" : ",") + R"("_meta":)" +
               std::string(meta_json) + "}";
    }
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
    std::string upstream;
    std::optional<config::RateLimit> rate;
    {
        std::lock_guard lock(mutex_);
        const auto it = std::find_if(tools_.begin(), tools_.end(),
                                     [&](const Entry& e) { return e.definition.name == name; });
        if (it == tools_.end()) {
            return Error{ErrorCode::not_found, "unknown tool: " + std::string(name)};
        }
        function = it->function;  // the call runs without the lock; a removal does not stop it
        upstream = it->definition.upstream;
        rate = it->definition.rate;
    }
    const auto started = std::chrono::steady_clock::now();
    std::unique_ptr<UpstreamSlots::Hold> slot;  // released however the call ends
    if (slots_ && !upstream.empty()) {
        std::string refusal;
        slot = slots_->hold(upstream, refusal);
        if (!slot) {
            // A limit, not a failure of the tool: the model reads it and may retry later.
            if (observer_) {
                observer_(name, "refused", std::chrono::steady_clock::now() - started);
            }
            return ToolResult::refusal(refusal);
        }
    }
    // Rates after the slot: a call the upstream's bound refuses spends no call of a rate.
    if (rates_) {
        if (std::optional<std::string> refusal = rates_->take(call.caller(), name, rate)) {
            // A limit, not a failure of the tool: the model reads when to retry.
            if (observer_) {
                observer_(name, "refused", std::chrono::steady_clock::now() - started);
            }
            return ToolResult::refusal(*refusal);
        }
    }
    if (!observer_) {
        return (*function)(arguments_json, call);
    }
    try {
        Result<ToolResult> result = (*function)(arguments_json, call);
        observer_(name, !result ? "refused" : (result->is_error ? "tool_error" : "ok"),
                  std::chrono::steady_clock::now() - started);
        return result;
    } catch (...) {
        observer_(name, "exception", std::chrono::steady_clock::now() - started);
        throw;
    }
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
