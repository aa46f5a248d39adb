#include "config/operation_config.h"

#include <algorithm>
#include <cctype>

namespace crank::config {

bool isToolName(std::string_view name) {
    return !name.empty() && name.size() <= kMaxToolNameLength &&
           std::all_of(name.begin(), name.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' ||
                      c == '.';
           });
}

std::string_view toString(ExecutionMode mode) {
    switch (mode) {
        case ExecutionMode::unary:
            return "unary";
        case ExecutionMode::window:
            return "window";
        case ExecutionMode::session:
            return "session";
        case ExecutionMode::async_job:
            return "async_job";
    }
    return "unary";
}

std::string_view toString(TransportBehavior behavior) {
    return behavior == TransportBehavior::server_stream ? "server_stream" : "request_response";
}

std::vector<std::string> OperationConfig::toolNames() const {
    const auto pick = [this](const std::string& configured, std::string_view suffix) {
        return configured.empty() ? name + std::string(suffix) : configured;
    };
    const ExecutionConfig& e = execution;
    switch (e.mode) {
        case ExecutionMode::unary:
        case ExecutionMode::window:
            return {name};
        case ExecutionMode::session:
            return {pick(e.start_tool_name, "_start"), pick(e.poll_tool_name, "_poll"),
                    pick(e.stop_tool_name, "_stop")};
        case ExecutionMode::async_job:
            return {pick(e.start_tool_name, "_start"), pick(e.status_tool_name, "_status"),
                    pick(e.result_tool_name, "_result"), pick(e.cancel_tool_name, "_cancel")};
    }
    return {name};
}

}  // namespace crank::config
