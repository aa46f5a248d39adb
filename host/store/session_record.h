#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "store/session_status.h"

namespace crank::store {

/// One row of stream_sessions: a long-lived upstream stream that an agent polls.
/// Timestamps are Unix milliseconds (UTC). JSON columns hold JSON text; the store does not parse
/// them.
struct SessionRecord {
    /// Unique id. Left empty, Store::createSession() assigns crank::newId("ses_") (128 random
    /// bits); a caller that passes its own id must make it just as unguessable.
    std::string id;
    std::string workspace_id;  ///< required
    std::string agent_id;      ///< required
    std::string operation_id;  ///< required; not a foreign key (operations may come from config)
    std::string protocol;      ///< required; plugin name, e.g. "http_sse"
    std::string mode;          ///< required; execution mode, e.g. "session"
    SessionStatus status = SessionStatus::active;
    std::optional<std::string> cursor;  ///< opaque upstream cursor, empty until the first poll
    std::string state_json = "{}";      ///< runtime state (JSON text)
    /// Required (> 0). For a live session, when it expires; for a terminal one, when its row may
    /// be deleted (see Store::deleteExpiredSessions()).
    std::int64_t expires_at = 0;
    std::optional<std::int64_t> last_poll_at;
    std::int64_t created_at = 0;  ///< 0 on create means "now"
    std::optional<std::int64_t> closed_at;
    /// Id of the crankd node that holds the session's upstream stream (short text, not empty
    /// when set). Empty (NULL) for rows written before schema version 2.
    std::optional<std::string> owner_node;
};

}  // namespace crank::store
