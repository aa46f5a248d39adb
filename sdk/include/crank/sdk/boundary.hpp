// Crank SDK, C++ layer: how an exception becomes an error report at the C boundary.
// Used by the layer's trampolines; plugin authors do not need it.
#pragma once

#include <exception>
#include <string_view>

#include "crank/sdk/error.hpp"
#include "crank/sdk/types.hpp"
#include <crank/plugin.h>

namespace crank::sdk::detail {

/// Inside a catch block: calls `report(code, message, details_json)` for the exception being
/// handled: Error → its code, message and details; std::exception → internal and what(); anything
/// else → internal "unknown exception". Never throws, never allocates.
template <typename Report>
void reportCurrentException(Report&& report) noexcept {
    try {
        try {
            throw;
        } catch (const Error& e) {
            report(e.code(), std::string_view(e.what()), std::string_view(e.details()));
        } catch (const std::exception& e) {
            report(ErrorCode::internal, std::string_view(e.what()), std::string_view());
        } catch (...) {
            report(ErrorCode::internal, std::string_view("unknown exception"), std::string_view());
        }
    } catch (...) {  // NOLINT(bugprone-empty-catch): the reporter itself failed; nothing is left
    }
}

/// Inside a catch block: reports the exception being handled with set_error() on `call`.
inline void setErrorFromCurrentException(const crank_host_api* api, crank_call* call) noexcept {
    reportCurrentException(
        [&](ErrorCode code, std::string_view message, std::string_view details) noexcept {
            if (api != nullptr && call != nullptr && api->set_error != nullptr) {
                api->set_error(call, toC(code), toCStr(message), toCStr(details));
            }
        });
}

}  // namespace crank::sdk::detail
