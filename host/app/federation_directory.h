#pragma once

// The admin API's view of the federated upstreams (admin::UpstreamDirectory) over the
// federation itself.
//
// THREADING: as Federation: every member from any thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "admin/upstream_directory.h"
#include "federation/federation.h"

namespace crank::app {

class FederationDirectory final : public admin::UpstreamDirectory {
public:
    FederationDirectory(federation::Federation& federation, const plugins::PluginRegistry& registry)
        : federation_(federation), registry_(registry) {}

    std::string statusJson() const override { return federation_.statusJson(); }
    std::optional<std::string> statusJson(std::string_view name) const override {
        return federation_.statusJson(name);
    }
    std::optional<std::string> test(std::string_view name, std::int64_t timeout_ms) const override {
        auto result = federation_.testConfigured(name, timeout_ms);
        return result ? std::optional<std::string>(result->toJson()) : std::nullopt;
    }
    std::optional<std::string> list(std::string_view name, std::string_view which,
                                    std::size_t offset, std::size_t limit) const override {
        const auto page = federation_.listOf(name, which, offset, limit);
        if (!page) {
            return std::nullopt;
        }
        const std::size_t next = offset + limit;
        return "{\"" + std::string(which) + "\":" + page->items_json +
               ",\"total\":" + std::to_string(page->total) + ",\"next_offset\":" +
               (next < page->total ? std::to_string(next) : std::string("null")) + "}";
    }
    Result<std::string> call(std::string_view name, std::string_view tool,
                             std::string_view arguments_json,
                             std::int64_t timeout_ms) const override {
        auto done = federation_.callTool(name, tool, arguments_json, timeout_ms);
        if (!done) {
            return done.error();
        }
        return std::string(R"({"ok":)") + (done->ok ? "true" : "false") + R"(,"elapsed_ms":)" +
               std::to_string(done->elapsed_ms) + (done->ok ? R"(,"result":)" : R"(,"error":)") +
               done->json + "}";
    }
    Result<void> stop(std::string_view name, std::chrono::milliseconds grace) override {
        return federation_.stopUpstream(name, grace);
    }
    Result<void> start(std::string_view name) override { return federation_.startUpstream(name); }

    std::optional<bool> fromConfig(std::string_view name) const override {
        return federation_.fromConfig(name);
    }
    std::vector<config::ConfigError> check(const config::UpstreamConfig& upstream) const override {
        return federation::Federation::check(upstream, registry_, "");
    }
    std::string test(const config::UpstreamConfig& upstream,
                     std::int64_t timeout_ms) const override {
        return federation::Federation::testOne(upstream, registry_, timeout_ms).toJson();
    }
    Result<void> add(const config::UpstreamConfig& upstream) override {
        return federation_.addUpstream(upstream, false);
    }
    Result<void> replace(const config::UpstreamConfig& upstream,
                         std::chrono::milliseconds grace) override {
        return federation_.replaceUpstream(upstream, grace,
                                           federation::Federation::Drain::background);
    }
    Result<void> remove(std::string_view name, std::chrono::milliseconds grace,
                        bool wait) override {
        return federation_.removeUpstream(
            name, grace,
            wait ? federation::Federation::Drain::wait : federation::Federation::Drain::background);
    }

private:
    federation::Federation& federation_;
    const plugins::PluginRegistry& registry_;
};

}  // namespace crank::app
