#pragma once

// The federated upstreams as the admin API sees and controls them (docs/admin-api.md,
// "Upstreams"): implemented over federation::Federation in crankd (app/federation_directory.h),
// so that the admin API does not depend on the federation's library, and its resources can be
// tested over a directory of their own.
//
// THREADING: every member may be called from any worker thread, concurrently.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.h"
#include "config/config_error.h"
#include "util/error.h"

namespace crank::admin {

class UpstreamDirectory {
public:
    virtual ~UpstreamDirectory() = default;

    /// A JSON array, one status object per upstream.
    virtual std::string statusJson() const = 0;
    /// The status object of `name`; nullopt when there is none of that name.
    virtual std::optional<std::string> statusJson(std::string_view name) const = 0;
    /// A test connection to the upstream `name`, its own, kept for no longer than `timeout_ms`:
    /// `{"name", "ok", "detail", "open_ms", "ping_ms", "connection"}`; nullopt: none of that name.
    virtual std::optional<std::string> test(std::string_view name,
                                            std::int64_t timeout_ms) const = 0;
    /// A page of the upstream `name`'s list `which` ("tools", "resources",
    /// "resource_templates", "prompts") as it lists them: `{"<which>": [entry...], "total",
    /// "next_offset"}` (Federation::listOf); nullopt: none of that name.
    virtual std::optional<std::string> list(std::string_view name, std::string_view which,
                                            std::size_t offset, std::size_t limit) const = 0;
    /// The operator's ad-hoc call of the upstream `name`'s tool `tool` (its own name) with
    /// `arguments_json` (an object), bounded by `timeout_ms`: `{"ok", "elapsed_ms", "result"}`
    /// or `{"ok": false, "elapsed_ms", "error"}` (Federation::callTool).
    virtual Result<std::string> call(std::string_view name, std::string_view tool,
                                     std::string_view arguments_json,
                                     std::int64_t timeout_ms) const = 0;
    /// Stops the upstream `name`, its calls in flight given `grace` (Federation::stopUpstream).
    virtual Result<void> stop(std::string_view name, std::chrono::milliseconds grace) = 0;
    /// Opens the stopped upstream `name` again (Federation::startUpstream).
    virtual Result<void> start(std::string_view name) = 0;

    // The admin API's own upstreams (admin::UpstreamCatalog): checked, added, replaced and
    // removed while crankd runs.

    /// Whether the upstream `name` runs and came from the config file; nullopt: none of that
    /// name.
    virtual std::optional<bool> fromConfig(std::string_view name) const = 0;
    /// What would refuse `upstream` (no adapter federates its protocol, the adapter refuses its
    /// `config`), with paths from the upstream object ("config.command").
    virtual std::vector<config::ConfigError> check(
        const config::UpstreamConfig& upstream) const = 0;
    /// A test connection of `upstream`, not running (Federation::test), its requests bounded by
    /// `timeout_ms`: as test().
    virtual std::string test(const config::UpstreamConfig& upstream,
                             std::int64_t timeout_ms) const = 0;
    /// Adds and opens `upstream` as the admin API's (Federation::addUpstream).
    virtual Result<void> add(const config::UpstreamConfig& upstream) = 0;
    /// Puts `upstream` in the place of the one of its name, without a gap; the old one's calls
    /// in flight run on, for `grace` at most (Federation::replaceUpstream, in the background).
    virtual Result<void> replace(const config::UpstreamConfig& upstream,
                                 std::chrono::milliseconds grace) = 0;
    /// Removes the upstream `name`; its calls in flight get `grace`. `wait`: returns once they
    /// ended; else they end in the background (Federation::removeUpstream).
    virtual Result<void> remove(std::string_view name, std::chrono::milliseconds grace,
                                bool wait) = 0;
};

}  // namespace crank::admin
