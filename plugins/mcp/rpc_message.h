#pragma once

// JSON-RPC messages as every transport of the mcp plugin reads and writes them: a request or a
// notification written, a message of the server classified, an answer turned into RpcOutcome.

#include <cstdint>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

#include "connection.h"

namespace crank::mcpc {

/// `{"jsonrpc":"2.0","id":ID,"method":..,"params":..}`; `params_json` empty: no params.
std::string requestText(std::int64_t id, std::string_view method, std::string_view params_json);
/// `{"jsonrpc":"2.0","method":..,"params":..}`; `params_json` empty: no params.
std::string notificationText(std::string_view method, std::string_view params_json);

/// What a JSON-RPC message of a server is, for routing.
struct Classified {
    enum class Kind { answer, message, invalid } kind = Kind::invalid;
    bool int_id = false;  ///< an answer whose id is an integer (ours always are)
    std::int64_t id = 0;
    bool null_id = false;  ///< an answer with id null (an error about a message it could not read)
};

Classified classify(const rapidjson::Value& message);

/// An answer's outcome: its result, or its error's code, message and data (a missing code is
/// -32603, a missing message says so).
RpcOutcome answerOutcome(const rapidjson::Value& answer);

}  // namespace crank::mcpc
