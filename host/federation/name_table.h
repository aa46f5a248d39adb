#pragma once

// What one workspace publishes from its upstreams' lists, in config order: each tool, resource,
// resource template and prompt under the name the operator asked for, once; a tool the
// upstream's `tools` policy leaves out is not published at all (and told to the link). A name that
// an operation or an earlier upstream already publishes is not published again; the collision is
// told to the link (shown in status and logged), never silently shadowed.
//
// THREADING: planWorkspace() is pure; run it under the owner's lock (it reads the links' lists).

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "federation/upstream_link.h"

namespace crank::federation {

/// A tool of an upstream as published here.
struct PublishedTool {
    std::string name;      ///< published name
    std::string original;  ///< the upstream's own
    UpstreamLink* link = nullptr;
    std::string json;  ///< the upstream's tool object, renamed
    std::string title;
    std::string description;
    std::string task_support;       ///< execution.taskSupport, "" when absent
    bool task_by_upstream = false;  ///< the upstream runs the Tasks extension (UpstreamLink)
};

/// A published tool as the next plan compares it: changed when its JSON, its upstream or the
/// upstream's own name for it changed (the registry's function then calls the new one).
struct PublishedEntry {
    std::string json;
    std::uint64_t owner = 0;  ///< the link's serial
    std::string original;
    bool task_by_upstream = false;
    bool operator==(const PublishedEntry&) const = default;
};

struct WorkspacePlan {
    /// Published name -> what was published: what `before` becomes.
    std::map<std::string, PublishedEntry> tools;
    /// Published name -> the upstream and its own name for it.
    std::map<std::string, std::pair<UpstreamLink*, std::string>> owners;
    /// The tools that are new or changed since `before`.
    std::vector<PublishedTool> added;
    /// The names of `before` no longer published.
    std::vector<std::string> removed;
    /// Resources, templates and prompts, keyed by what clients use.
    Lists lists;
    /// Per link (in the order given): why some of its entries are not published.
    std::vector<std::vector<std::string>> collisions;
    /// Per link (in the order given): its tools that its `tools` policy keeps out, and why.
    std::vector<std::vector<std::string>> filtered;
};

/// `links`: the workspace's upstreams in config order. `before`: the tools published last time.
/// `taken`: names of the workspace's own tools (operations), which always win.
WorkspacePlan planWorkspace(const std::vector<UpstreamLink*>& links,
                            const std::map<std::string, PublishedEntry>& before,
                            const std::set<std::string>& taken);

}  // namespace crank::federation
