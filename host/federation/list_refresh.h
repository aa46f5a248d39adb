#pragma once

// Fetching what an upstream lists (tools, resources, resource templates, prompts), page after
// page, bounded by the upstream's `max_list_items` and kMaxPages. The owner applies the result to
// its link under its lock (apply()).
//
// THREADING: fetchLists() makes requests and blocks; run it on the refresher's thread.

#include <optional>
#include <string>
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

    /// Replaces the lists of `link` that were fetched, and its last error (under the owner's
    /// lock).
    void apply(UpstreamLink& link);
};

/// Fetches the lists named by `which` (ListBits) of `link`. A method the upstream does not have
/// is an empty list; an entry without its key (name, uri, uriTemplate) is skipped and logged.
FetchedLists fetchLists(UpstreamLink& link, int which);

}  // namespace crank::federation
