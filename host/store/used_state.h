#pragma once

// The register of opened MRTR request states (Store::recordUsedState): a sealed requestState
// (mcp/request_state_seal.h) opens once in the whole deployment, because every node records its
// id here before it acts on it, and every node sees the others' records.

#include <cstdint>
#include <string>

namespace crank::store {

/// One opened state: its id (the seal's nonce), whose it was, and when it would have expired
/// anyway (after which the record is of no use and is deleted).
struct UsedStateRecord {
    std::string id;
    std::string workspace;
    std::string agent;
    std::int64_t expires_at = 0;  ///< Unix milliseconds
};

/// How many unexpired records one caller may hold at once, so that no caller can fill the
/// register for the others (a negative bound is no bound).
struct UsedStateLimits {
    std::int64_t per_agent = -1;      ///< of one agent of one workspace
    std::int64_t per_workspace = -1;  ///< of all agents of one workspace together
};

enum class UsedStateOutcome {
    recorded,        ///< the first time: the state may be acted on
    used_before,     ///< recorded earlier, here or on another node: a replay
    agent_full,      ///< nothing recorded: the agent holds UsedStateLimits::per_agent already
    workspace_full,  ///< nothing recorded: the workspace holds per_workspace already
};

}  // namespace crank::store
