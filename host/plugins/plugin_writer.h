#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <crank/plugin.h>

namespace crank::plugins {

/// A host-owned, bounded text buffer that an aggregator's snapshot() appends its JSON to
/// (`crank_writer`). Past `limit` bytes it refuses the append and every later one.
class PluginWriter {
public:
    explicit PluginWriter(std::size_t limit) : limit_(limit) {}

    /// Appends `text` unless that would pass the limit; false (and overflowed()) when refused.
    bool append(std::string_view text) {
        if (overflowed_ || text.size() > limit_ - text_.size()) {
            overflowed_ = true;
            return false;
        }
        text_.append(text);
        return true;
    }
    bool overflowed() const { return overflowed_; }
    const std::string& text() const { return text_; }
    std::size_t limit() const { return limit_; }

    crank_writer* handle() noexcept { return reinterpret_cast<crank_writer*>(this); }
    static PluginWriter* fromHandle(crank_writer* writer) noexcept {
        return reinterpret_cast<PluginWriter*>(writer);
    }

private:
    std::string text_;
    std::size_t limit_;
    bool overflowed_ = false;
};

}  // namespace crank::plugins
