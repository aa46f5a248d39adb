#pragma once

// Helpers shared by the json_rpc_*_test.cpp files: read a body that must give one message, one
// rejection or a fatal error, and say what it gave instead when it does not.

#include <string>
#include <string_view>
#include <variant>

#include <gtest/gtest.h>

#include "mcp/wire/json_rpc.h"

namespace crank::mcp::test {

/// One line per entry, for failure messages.
inline std::string summary(const ParsedBody& parsed) {
    std::string out = parsed.batch ? "batch" : "single";
    if (parsed.fatal) {
        out += " fatal " + makeError(*parsed.fatal);
    }
    for (const JsonRpcEntry& entry : parsed.entries) {
        if (const auto* rejection = std::get_if<JsonRpcRejection>(&entry)) {
            out += "\n  rejected " + makeError(*rejection);
        } else {
            const auto& m = std::get<JsonRpcMessage>(entry);
            out += "\n  " + std::string(jsonRpcKindName(m.kind)) +
                   " id=" + (m.id ? m.id->toString() : "(none)") + " method=" + m.method +
                   " params=" + m.params_json + " result=" + m.result_json;
        }
    }
    return out;
}

/// The single message of a body that must hold exactly one valid message.
inline JsonRpcMessage onlyMessage(std::string_view body, const JsonRpcLimits& limits = {}) {
    const ParsedBody parsed = parseJsonRpcBody(body, limits);
    if (parsed.fatal || parsed.batch || parsed.entries.size() != 1 ||
        !std::holds_alternative<JsonRpcMessage>(parsed.entries.front())) {
        ADD_FAILURE() << "expected one valid message, got " << summary(parsed);
        return {};
    }
    return std::get<JsonRpcMessage>(parsed.entries.front());
}

/// The rejection of a body that must hold exactly one invalid message.
inline JsonRpcRejection onlyRejection(std::string_view body) {
    const ParsedBody parsed = parseJsonRpcBody(body);
    if (parsed.fatal || parsed.batch || parsed.entries.size() != 1 ||
        !std::holds_alternative<JsonRpcRejection>(parsed.entries.front())) {
        ADD_FAILURE() << "expected one rejected message, got " << summary(parsed);
        return {};
    }
    return std::get<JsonRpcRejection>(parsed.entries.front());
}

/// The fatal error of a body that must be refused as a whole.
inline JsonRpcRejection fatalError(std::string_view body, const JsonRpcLimits& limits = {}) {
    const ParsedBody parsed = parseJsonRpcBody(body, limits);
    if (!parsed.fatal || !parsed.entries.empty()) {
        ADD_FAILURE() << "expected a fatal error, got " << summary(parsed);
        return {};
    }
    EXPECT_FALSE(parsed.fatal->id.has_value());
    return *parsed.fatal;
}

}  // namespace crank::mcp::test
