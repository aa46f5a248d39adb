// Crank SDK, C++ layer: the host as one plugin library sees it.
#pragma once

#include <string_view>

#include "crank/sdk/types.hpp"
#include <crank/plugin.h>

namespace crank::sdk {

/// The host's callback table and handle, as handed to init(). A cheap value type: copy it into
/// the adapters and aggregators that need to log outside a call. Valid until the library's
/// shutdown (i.e. as long as any object the registration created).
///
/// Threading: every member may be called from any thread, concurrently.
class Host {
public:
    Host() = default;
    Host(const crank_host_api* api, crank_host* host) noexcept : api_(api), host_(host) {}

    /// True when a line of `level` would be written: skip building messages that would be
    /// dropped.
    bool logEnabled(LogLevel level) const noexcept {
        return api_ != nullptr && api_->log_enabled != nullptr &&
               api_->log_enabled(host_, toC(level)) != 0;
    }

    /// Writes a line to the host's log (never write to stdout/stderr yourself). The host copies
    /// `message`.
    void log(LogLevel level, std::string_view message) const noexcept {
        if (api_ != nullptr && api_->log != nullptr) {
            api_->log(host_, nullptr, toC(level), toCStr(message));
        }
    }

    /// The raw C table, for what the C++ layer does not wrap.
    const crank_host_api* api() const noexcept { return api_; }
    /// The raw C handle.
    crank_host* handle() const noexcept { return host_; }

private:
    const crank_host_api* api_ = nullptr;
    crank_host* host_ = nullptr;
};

}  // namespace crank::sdk
