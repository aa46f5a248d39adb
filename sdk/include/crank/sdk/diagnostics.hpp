// Crank SDK, C++ layer: where validate() reports the problems it finds in a config.
#pragma once

#include <string>
#include <string_view>

#include "crank/sdk/json.hpp"
#include "crank/sdk/types.hpp"
#include <crank/plugin.h>

namespace crank::sdk {

/// Collects the problems validate() finds. Each error() is reported at once to the host with
/// set_error(INVALID_ARGUMENT, message, {"path": path}); validate then returns CRANK_ERROR if any
/// was reported. Valid only during the validate() call; not thread-safe (one validate, one
/// thread).
class Diagnostics {
public:
    Diagnostics(const crank_host_api* api, crank_call* diagnostics) noexcept
        : api_(api), call_(diagnostics) {}

    /// One problem: `path` names the offending member of the config (path syntax of
    /// crank/sdk/path.hpp, e.g. "headers.accept"; "" for the config as a whole); `message` says
    /// what to fix ("must be a positive integer").
    void error(std::string_view path, std::string_view message) {
        failed_ = true;
        std::string details = "{\"path\":";
        appendJsonString(details, path);
        details.push_back('}');
        api_->set_error(call_, CRANK_ERR_INVALID_ARGUMENT, toCStr(message), toCStr(details));
    }

    /// True once error() has been called.
    bool failed() const noexcept { return failed_; }

    /// The raw handle (a crank_call* that only accepts set_error and log).
    crank_call* handle() const noexcept { return call_; }

private:
    const crank_host_api* api_;
    crank_call* call_;
    bool failed_ = false;
};

}  // namespace crank::sdk
