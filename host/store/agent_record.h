#pragma once

// Agents managed through the admin API (docs/admin-api.md, "Agents"), and their keys. The config
// file's agents are not here: they live in the file. A key is kept as its SHA-256 digest only;
// the key itself is shown once, to whoever created it.

#include <cstdint>
#include <optional>
#include <string>

namespace crank::store {

/// One row of agents. An id is never reused, even after a delete: the audit trail names it.
struct AgentRecord {
    std::string id;            ///< required; 1..64 of A-Z a-z 0-9 _ - . (checked by the caller)
    std::string workspace_id;  ///< required
    /// The agent's `limits` object as the config file writes it (JSON text, "{}": defaults).
    std::string limits_json = "{}";
    std::int64_t created_at = 0;  ///< 0 on create means "now"
    std::optional<std::int64_t> deleted_at;
    bool deleted() const { return deleted_at.has_value(); }
};

/// One key of an agent. An agent may hold several at once (a rotation: the new one is added,
/// clients move to it, the old one is revoked).
struct AgentKeyRecord {
    std::string id;        ///< left empty, Store::addAgentKey() assigns crank::newId("key_")
    std::string agent_id;  ///< required
    std::string digest;    ///< required: lower-case hex SHA-256 of the key; unique
    /// The key's first characters, to tell keys apart in a list; never enough to use it.
    std::string prefix;
    std::int64_t created_at = 0;  ///< 0 on create means "now"
    std::optional<std::int64_t> revoked_at;
    bool revoked() const { return revoked_at.has_value(); }
};

}  // namespace crank::store
