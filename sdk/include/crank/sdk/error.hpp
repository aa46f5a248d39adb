// Crank SDK, C++ layer: the exception plugin code throws to report a failure.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "crank/sdk/types.hpp"

namespace crank::sdk {

/// A failure with a code the host understands. Throw it from any plugin entry point of the C++
/// layer (validate, unaryCall, openStream, ThreadedStream::run, create, accept, snapshot,
/// register functions): the layer catches it at the C boundary and reports it with set_error()
/// (or set_init_error() during registration).
///
/// Any other std::exception is reported as ErrorCode::internal with its what(); anything else
/// thrown as ErrorCode::internal "unknown exception". Nothing ever crosses the C boundary.
class Error : public std::runtime_error {
public:
    /// `message` tells the operator what to fix; `details_json` is empty or a JSON object
    /// (e.g. {"path":"url"} or {"http_status":503}) passed to set_error() as is.
    Error(ErrorCode code, const std::string& message, std::string details_json = {})
        : std::runtime_error(message), code_(code), details_(std::move(details_json)) {}

    ErrorCode code() const noexcept { return code_; }
    /// The details JSON object, or empty.
    const std::string& details() const noexcept { return details_; }

private:
    ErrorCode code_;
    std::string details_;
};

}  // namespace crank::sdk
