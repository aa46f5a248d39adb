#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "mcp/wire/request_id.h"

namespace crank::mcp {

/// What a method handler answers one request with, before its transport writes it as a
/// JSON-RPC message (each era decorates results its own way: resultType, cache hints, _meta).
struct MethodAnswer {
    enum class Kind {
        result,  ///< `json` is the result object
        error,   ///< `json` is the error object ({"code":..,"message":..,"data":..})
        none,    ///< no answer at all: the client cancelled the request (MCP cancellation)
    };
    Kind kind = Kind::result;
    std::string json;
    /// An error's JSON-RPC code (kept, so that nobody reads it back from `json`); 0 otherwise.
    std::int64_t code = 0;

    static MethodAnswer result(std::string json) { return {Kind::result, std::move(json), 0}; }
    /// An error object with `code` and `message` (escaped here) and `data_json` when not empty.
    static MethodAnswer error(std::int64_t code, std::string_view message,
                              std::string_view data_json = {});
    /// An error object as it is (an upstream's, passed on); its code is read once, here (0 when
    /// the object has no integer code).
    static MethodAnswer rawError(std::string json);
    static MethodAnswer none() { return {Kind::none, {}, 0}; }

    bool isResult() const { return kind == Kind::result; }
    bool isError() const { return kind == Kind::error; }
    bool isNone() const { return kind == Kind::none; }
    /// What /metrics counts it as: "ok", "cancelled", or the error's name (errorName()).
    std::string_view outcome() const;
};

/// The JSON-RPC message of `answer` to request `id`, as the 2025 era writes it ("" for none).
std::string toMessage(const RequestId& id, const MethodAnswer& answer);

}  // namespace crank::mcp
