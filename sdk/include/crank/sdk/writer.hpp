// Crank SDK, C++ layer: a host-owned, bounded output buffer.
#pragma once

#include <string_view>

#include "crank/sdk/types.hpp"
#include <crank/plugin.h>

namespace crank::sdk {

/// Wraps a crank_writer for Aggregate::snapshot(). Valid only during that call; one thread.
class Writer {
public:
    Writer(const crank_host_api* api, crank_writer* writer) noexcept : api_(api), writer_(writer) {}

    /// Appends UTF-8 text (the host copies it). Returns false once the host's bound is reached;
    /// everything after is refused too. Stop writing then: the layer reports
    /// ErrorCode::resource_exhausted when snapshot() returns.
    bool append(std::string_view text) noexcept {
        if (failed_) {
            return false;
        }
        if (api_->writer_append(writer_, toCStr(text)) != CRANK_OK) {
            failed_ = true;
        }
        return !failed_;
    }

    /// True once an append() was refused.
    bool failed() const noexcept { return failed_; }

    crank_writer* handle() const noexcept { return writer_; }

private:
    const crank_host_api* api_;
    crank_writer* writer_;
    bool failed_ = false;
};

}  // namespace crank::sdk
