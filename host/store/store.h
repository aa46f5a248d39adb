#pragma once

// The persistence interface of Crank: stream sessions, async jobs, operations with versions and
// the audit log. SqliteStore implements it today; a PostgreSQL implementation (several Crank nodes
// sharing sessions and jobs) must be able to implement it unchanged, so nothing here is specific
// to SQLite. Open one with openStore() (store/open_store.h).
//
// Conventions for every method:
// - THREADING: a Store is safe to call from many threads at once. Calls block on I/O, and may wait
//   up to StoreOptions::busy_timeout_ms for a connection or a lock.
// - ERRORS: nothing throws; failures come back as crank::Error. Codes: invalid_argument (bad
//   input: empty required field, limit < 1, text over kMaxShortTextBytes/kMaxLongTextBytes),
//   not_found (the row asked for does not exist), conflict (id or name already taken, deleted
//   operation), unavailable (locked for longer than busy_timeout_ms, no free connection), io (disk
//   or file problems), internal (anything else). Messages never contain stored values other than
//   ids and names.
// - An optimistic status change that finds another status is a normal result
//   (TransitionOutcome::status_mismatch), not an Error.
// - Timestamps are int64 Unix milliseconds (UTC). JSON is passed as text and not parsed here.
// - Limits: list and query calls return at most kMaxListLimit rows (store/store_limits.h).
// - OWNERSHIP: the Store must outlive every call made on it; results are plain values the caller
//   owns.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "store/agent_record.h"
#include "store/audit_event.h"
#include "store/audit_query.h"
#include "store/job_filter.h"
#include "store/job_record.h"
#include "store/job_status.h"
#include "store/job_transition.h"
#include "store/operation_filter.h"
#include "store/operation_record.h"
#include "store/operation_version.h"
#include "store/operation_version_draft.h"
#include "store/publish_result.h"
#include "store/session_filter.h"
#include "store/session_record.h"
#include "store/session_status.h"
#include "store/session_touch.h"
#include "store/session_transition.h"
#include "store/store_limits.h"
#include "store/transition_result.h"
#include "store/used_state.h"
#include "util/error.h"

namespace crank::store {

using SessionTransitionResult = TransitionResult<SessionStatus>;
using JobTransitionResult = TransitionResult<JobStatus>;

class Store {
public:
    virtual ~Store() = default;

    Store() = default;
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    /// Health check for /readyz: succeeds when the store is open and answers a trivial query.
    virtual Result<void> ping() = 0;

    // ----- stream sessions -------------------------------------------------------------------

    /// Inserts a session and returns it as stored (id and created_at filled in when they were
    /// empty/0). conflict when the id exists already.
    virtual Result<SessionRecord> createSession(SessionRecord session) = 0;
    /// not_found when there is no session with that id.
    virtual Result<SessionRecord> getSession(std::string_view id) = 0;
    virtual Result<std::vector<SessionRecord>> listSessions(const SessionFilter& filter) = 0;
    /// Number of sessions matching the filter (limit and order are ignored), e.g. the live
    /// sessions of one agent: {workspace, agent, statuses = {active, paused}}.
    virtual Result<std::int64_t> countSessions(const SessionFilter& filter) = 0;
    /// Compare-and-set: `UPDATE ... SET status = to, ... WHERE id = ? AND status = expected`.
    virtual Result<SessionTransitionResult> transitionSession(
        std::string_view id, SessionStatus expected, const SessionTransition& transition) = 0;
    /// Records a poll (cursor, state_json, last_poll_at, expires_at) only while the session's
    /// status is `expected`; the status itself does not change.
    virtual Result<SessionTransitionResult> touchSession(std::string_view id,
                                                         SessionStatus expected,
                                                         const SessionTouch& touch) = 0;
    /// Deletes up to `limit` (clamped to kMaxCleanupBatch, < 1 invalid) sessions whose status is
    /// terminal and whose expires_at < now_ms, oldest expiry first; returns how many went. Live
    /// sessions are never deleted: the runtime first moves overdue ones to expired
    /// (SessionFilter::expires_before finds them).
    virtual Result<std::int64_t> deleteExpiredSessions(std::int64_t now_ms, int limit) = 0;

    // ----- async jobs ------------------------------------------------------------------------

    /// Inserts a job and returns it as stored (id, created_at and updated_at filled in).
    /// conflict when the id exists already.
    virtual Result<JobRecord> createJob(JobRecord job) = 0;
    /// not_found when there is no job with that id.
    virtual Result<JobRecord> getJob(std::string_view id) = 0;
    virtual Result<std::vector<JobRecord>> listJobs(const JobFilter& filter) = 0;
    /// Number of jobs matching the filter (limit and order are ignored).
    virtual Result<std::int64_t> countJobs(const JobFilter& filter) = 0;
    /// Compare-and-set: `UPDATE ... SET status = to, ..., updated_at = now WHERE id = ? AND
    /// status = expected`.
    virtual Result<JobTransitionResult> transitionJob(std::string_view id, JobStatus expected,
                                                      const JobTransition& transition) = 0;
    /// Replaces progress_json (and updated_at) only while the job is running; a job in any other
    /// status gives status_mismatch.
    virtual Result<JobTransitionResult> updateJobProgress(std::string_view id,
                                                          std::string_view progress_json) = 0;
    /// Replaces cursor (and updated_at) only while the job is running; a job in any other status
    /// gives status_mismatch. invalid_argument when the cursor is over kMaxLongTextBytes.
    virtual Result<JobTransitionResult> setJobCursor(std::string_view id,
                                                     std::string_view cursor) = 0;
    /// Lease renewal: sets heartbeat_at = now_ms on every queued or running job whose owner_node
    /// is `owner_node` (updated_at is not changed). Returns how many jobs it touched.
    /// invalid_argument when owner_node is empty.
    virtual Result<std::int64_t> heartbeatJobs(std::string_view owner_node,
                                               std::int64_t now_ms) = 0;
    /// Compare-and-set of ownership: `UPDATE ... SET owner_node = new_owner, heartbeat_at = now,
    /// updated_at = now WHERE id = ? AND status IN (queued, running) AND owner_node IS expected`
    /// (an empty `expected_owner` matches a job without owner). True when this call took the job;
    /// false when the job does not exist, is terminal or has another owner (e.g. another node
    /// claimed it first). Of several callers with the same expected owner, exactly one wins.
    /// invalid_argument when new_owner is empty.
    virtual Result<bool> claimJob(std::string_view id,
                                  std::optional<std::string_view> expected_owner,
                                  std::string_view new_owner, std::int64_t now_ms) = 0;
    /// Start-up recovery of one node: every job still running whose owner_node is `owner_node`
    /// (its worker died with that node's previous process) becomes interrupted, with updated_at =
    /// finished_at = now_ms and, when it had none, an error_json saying so. Running jobs without
    /// an owner are included too: they predate owner ids (schema version 1) and were written by a
    /// single-node Crank. Jobs of other nodes and queued jobs are left alone. Returns how many
    /// jobs changed. invalid_argument when owner_node is empty.
    virtual Result<std::int64_t> markRunningJobsInterrupted(std::int64_t now_ms,
                                                            std::string_view owner_node) = 0;
    /// Same rule as deleteExpiredSessions(), for jobs in a terminal status.
    virtual Result<std::int64_t> deleteExpiredJobs(std::int64_t now_ms, int limit) = 0;

    // ----- operations and their versions ------------------------------------------------------

    /// Inserts an operation without versions. conflict when the workspace already has a live
    /// operation of that name, or the id exists.
    virtual Result<OperationRecord> createOperation(OperationRecord operation) = 0;
    /// Returns the operation, deleted or not. not_found when there is no such id.
    virtual Result<OperationRecord> getOperation(std::string_view id) = 0;
    virtual Result<std::vector<OperationRecord>> listOperations(const OperationFilter& filter) = 0;
    /// Soft delete: sets deleted_at; versions stay as history and the name becomes free.
    /// not_found when there is no such operation or it is deleted already.
    virtual Result<void> deleteOperation(std::string_view id) = 0;
    /// Appends a new draft version numbered one above the highest existing one. not_found when
    /// the operation does not exist, conflict when it is deleted or when
    /// draft.expected_latest is set and is not its highest version (nothing is added).
    virtual Result<OperationVersion> addOperationVersion(std::string_view operation_id,
                                                         const OperationVersionDraft& draft) = 0;
    /// not_found when the operation has no such version.
    virtual Result<OperationVersion> getOperationVersion(std::string_view operation_id,
                                                         std::int64_t version) = 0;
    /// The history, newest version first, at most `limit` (clamped to kMaxListLimit) versions.
    /// not_found when the operation does not exist.
    virtual Result<std::vector<OperationVersion>> listOperationVersions(
        std::string_view operation_id, int limit) = 0;
    /// The published version. not_found when the operation does not exist, is deleted or has
    /// nothing published.
    virtual Result<OperationVersion> getPublishedVersion(std::string_view operation_id) = 0;
    /// Optimistic publish: applies only if the operation's published version is
    /// `expected_published` (empty = nothing published yet). The previously published version
    /// becomes archived, `version` becomes published. Publishing the version that is already
    /// published (and expected) is applied and changes nothing.
    virtual Result<PublishResult> publishOperationVersion(
        std::string_view operation_id, std::int64_t version,
        std::optional<std::int64_t> expected_published) = 0;

    // ----- agents of the admin API and their keys (store/agent_record.h) -----------------------

    /// Inserts an agent. conflict when the id was ever used (deleted agents included).
    virtual Result<AgentRecord> createAgent(AgentRecord agent) = 0;
    /// The agent, deleted or not. not_found when there is no such id.
    virtual Result<AgentRecord> getAgent(std::string_view id) = 0;
    /// Agents ordered by id, those after `after_id` (a page's last; empty: from the first), at
    /// most `limit` (clamped to kMaxListLimit; < 1 invalid).
    virtual Result<std::vector<AgentRecord>> listAgents(bool include_deleted, int limit,
                                                        std::string_view after_id = {}) = 0;
    /// Replaces the agent's limits_json. not_found when it does not exist or is deleted.
    virtual Result<void> setAgentLimits(std::string_view id, std::string_view limits_json) = 0;
    /// Soft delete: sets deleted_at and revokes every key it holds, in one transaction.
    /// not_found when it does not exist or is deleted already.
    virtual Result<void> deleteAgent(std::string_view id) = 0;
    /// Adds a key to a live agent and returns it as stored (id, created_at filled in).
    /// not_found when the agent does not exist or is deleted; conflict when the digest is
    /// taken.
    virtual Result<AgentKeyRecord> addAgentKey(AgentKeyRecord key) = 0;
    /// Keys ordered by id: of one agent, or of every agent when `agent_id` is empty; revoked
    /// ones only when asked; those after `after_id` (a page's last; empty: from the first). At
    /// most `limit` (clamped to kMaxListLimit; < 1 invalid).
    virtual Result<std::vector<AgentKeyRecord>> listAgentKeys(std::string_view agent_id,
                                                              bool include_revoked, int limit,
                                                              std::string_view after_id = {}) = 0;
    /// Revokes key `key_id` of agent `agent_id` (revoking a revoked key changes nothing) and
    /// returns it. not_found when the agent holds no such key.
    virtual Result<AgentKeyRecord> revokeAgentKey(std::string_view agent_id,
                                                  std::string_view key_id) = 0;

    // ----- audit log -------------------------------------------------------------------------

    /// Appends an event and returns it with its id (and ts when it was 0).
    virtual Result<AuditEvent> appendAudit(AuditEvent event) = 0;
    /// Appends `events` in order, in one transaction, assigning each its id (and ts when it was
    /// 0). Each is checked first as appendAudit() checks it: when any is refused nothing is
    /// written and the error names its index. At most kMaxAuditBatch events (invalid_argument
    /// beyond); an empty batch writes nothing.
    virtual Result<void> appendAuditBatch(std::vector<AuditEvent>& events) = 0;
    /// Events matching the query, ordered by (ts, id) as the query says. invalid_argument when
    /// from_ts > to_ts.
    virtual Result<std::vector<AuditEvent>> queryAudit(const AuditQuery& query) = 0;
    /// Retention by age: deletes up to `limit` (clamped to kMaxCleanupBatch, < 1 invalid) events
    /// whose ts < before_ts, oldest (ts, id) first; returns how many went. Events are never
    /// changed: deleting the oldest is the only edit the log allows.
    virtual Result<std::int64_t> deleteAuditBefore(std::int64_t before_ts, int limit) = 0;
    /// Retention by size: when there are more than `keep` events, deletes the oldest (ts, id)
    /// ones beyond the newest `keep`, at most `limit` (clamped to kMaxCleanupBatch, < 1 invalid)
    /// per call, in one transaction; returns how many went. invalid_argument when keep < 0.
    virtual Result<std::int64_t> deleteAuditBeyond(std::int64_t keep, int limit) = 0;

    // ----- used request states (store/used_state.h) -------------------------------------------

    /// Records that the sealed request state `record.id` was opened: recorded the first time,
    /// used_before when any node recorded it earlier (of several callers at once exactly one
    /// gets recorded). Nothing is recorded, and agent_full or workspace_full comes back, when the
    /// record's agent (of its workspace) or its workspace already holds as many records that
    /// expire after now_ms as `limits` allow. invalid_argument when id or workspace is empty, or
    /// any of the three is over kMaxShortTextBytes.
    virtual Result<UsedStateOutcome> recordUsedState(const UsedStateRecord& record,
                                                     std::int64_t now_ms,
                                                     const UsedStateLimits& limits) = 0;
    /// Deletes up to `limit` (clamped to kMaxCleanupBatch, < 1 invalid) records whose expires_at
    /// <= now_ms, oldest expiry first; returns how many went.
    virtual Result<std::int64_t> deleteExpiredUsedStates(std::int64_t now_ms, int limit) = 0;
};

}  // namespace crank::store
