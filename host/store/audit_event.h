#pragma once

#include <cstdint>
#include <string>

namespace crank::store {

/// One entry of the append-only audit log. Never put a secret in any field: the log is shown to
/// operators and exported as is.
struct AuditEvent {
    /// Assigned by Store::appendAudit(): positive, increasing in append order, never reused.
    std::int64_t id = 0;
    std::int64_t ts = 0;       ///< Unix ms (UTC); 0 on append means "now"
    std::string workspace_id;  ///< empty when not applicable
    std::string agent_id;      ///< empty when not applicable (e.g. admin actions)
    std::string operation_id;  ///< empty when not applicable
    std::string action;        ///< required, "<entity>.<verb>", e.g. "session.start", "job.cancel"
    std::string outcome;       ///< required, e.g. "ok", "denied", "error"
    std::string detail_json = "{}";
};

}  // namespace crank::store
