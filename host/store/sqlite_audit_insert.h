#pragma once

// The INSERT of audit events, on SQLite's own API: the busiest write of the store (every tool call
// appends one), so it skips what Poco::Data costs per statement.

#include <vector>

#include <Poco/Data/Session.h>

#include "store/audit_event.h"
#include "store/sqlite_statement_cache.h"

namespace crank::store::sqlite {

/// Inserts `events` (already checked, ts set) into audit_events on `session`, within the caller's
/// transaction, and sets each event's id to its row's. One statement, prepared once per connection
/// in `cache`, is stepped once per event: single-row INSERTs need no statement journal, and nothing
/// is parsed or allocated per event or per batch. Throws what Poco's SQLite statements throw for
/// the same error (Poco::Data::SQLite::Utility::throwException), so the caller's error mapping
/// holds.
void insertAuditEvents(Poco::Data::Session& session, StatementCache& cache,
                       std::vector<AuditEvent>& events);

}  // namespace crank::store::sqlite
