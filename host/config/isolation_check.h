#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"

namespace crank::config {

/// The call slots each workspace reserves of server.max_concurrent_calls (G): its
/// `limits.reserved_calls` when given; otherwise, with W > 1 workspaces, max(1, G / (2W)) when
/// W <= G / 2 (half the slots reserved in equal shares, half shared by whoever calls), else 0.
/// With one workspace nothing needs reserving.
std::map<std::string, std::int64_t> reservedCalls(const Config& config);

/// What in the limits cannot keep workspaces apart, in words that name the keys to change: the
/// reservations adding up to more than there are slots, a workspace that reserves none while
/// others share the node. crankd --check prints them and crankd logs them at start-up; none is an
/// error.
std::vector<std::string> isolationWarnings(const Config& config);

}  // namespace crank::config
