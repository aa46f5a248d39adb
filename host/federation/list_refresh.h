#pragma once

// Fetching what an upstream lists (tools, resources, resource templates, prompts), page after
// page, bounded by the upstream's `max_list_items` and kMaxPages. The owner applies the result to
// its link under its lock (apply()).
//
// THREADING: fetchLists() makes requests and blocks; run it on the refresher's thread.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "federation/upstream_link.h"

namespace crank::federation {

/// Pages followed through nextCursor for one list.
constexpr int kMaxPages = 100;

/// The lists fetched in one round: those asked for, unless the upstream failed first.
struct FetchedLists {
    std::optional<std::vector<Item>> tools;
    std::optional<std::vector<Item>> resources;
    std::optional<std::vector<Item>> templates;
    std::optional<std::vector<Item>> prompts;
    std::string error;  ///< the first failure, naming the upstream and method; "" when none
    int fetched = 0;    ///< the ListBits asked for
    /// The least `ttlMs` of each list's pages (ttlIndex order), when a 2026 upstream gave one.
    std::array<std::optional<std::int64_t>, 3> ttl_ms;
    /// With the tools: the upstream runs the Tasks extension (runsTasks of its status).
    bool tasks_by_upstream = false;

    /// Replaces the lists of `link` that were fetched, and its last error, and notes when each
    /// is to be fetched again (under the owner's lock).
    void apply(UpstreamLink& link);
};

/// True when an upstream's status (the adapter's JSON: `era`, `capabilities`) says it speaks
/// 2026-07-28 and offers the Tasks extension (`capabilities.extensions`).
bool runsTasks(std::string_view status_json);

/// The index of a ListBits list in UpstreamLink::stale_at and FetchedLists::ttl_ms.
std::size_t ttlIndex(int bit);

/// The lists of `link` (ListBits) whose ttlMs ran out by `now`, no longer noted as stale; `next`
/// is lowered to the earliest one still to come. Under the owner's lock.
int staleLists(UpstreamLink& link, std::chrono::steady_clock::time_point now,
               std::optional<std::chrono::steady_clock::time_point>& next);

/// Fetches the lists named by `which` (ListBits) of `link`. A method the upstream does not have
/// is an empty list; an entry without its key (name, uri, uriTemplate) is skipped and logged.
FetchedLists fetchLists(UpstreamLink& link, int which);

}  // namespace crank::federation
