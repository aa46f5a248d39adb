#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/sqlite_migration.h"
#include "store/store.h"
#include "store/store_options.h"
#include "util/error.h"

namespace crank::store {

/// The embedded Store: one SQLite file, reached through Poco::Data::SQLite.
///
/// Every connection runs with WAL journaling, synchronous=NORMAL, foreign_keys=ON and
/// busy_timeout=StoreOptions::busy_timeout_ms, and a page cache of StoreOptions::cache_kib. Write
/// calls run in BEGIN IMMEDIATE transactions (the write lock is taken up front, so two writers
/// never deadlock upgrading a read lock); single-statement reads run in autocommit mode and see the
/// last committed state. See host/store/README.md for why.
///
/// THREADING: as Store. A pool of StoreOptions::pool_size connections (exactly one for
/// ":memory:") is lent to callers one thread at a time.
class SqliteStore final : public Store {
public:
    /// Opens (creating when missing) the database at options.path and applies the pending
    /// migrations of sqliteMigrations(). Errors as openStore().
    static Result<std::unique_ptr<SqliteStore>> open(const StoreOptions& options);
    /// Same with another migration list; for tests of the migration machinery.
    static Result<std::unique_ptr<SqliteStore>> open(
        const StoreOptions& options, const std::vector<SqliteMigration>& migrations);

    ~SqliteStore() override;

    Result<void> ping() override;

    Result<SessionRecord> createSession(SessionRecord session) override;
    Result<SessionRecord> getSession(std::string_view id) override;
    Result<std::vector<SessionRecord>> listSessions(const SessionFilter& filter) override;
    Result<std::int64_t> countSessions(const SessionFilter& filter) override;
    Result<SessionTransitionResult> transitionSession(std::string_view id, SessionStatus expected,
                                                      const SessionTransition& transition) override;
    Result<SessionTransitionResult> touchSession(std::string_view id, SessionStatus expected,
                                                 const SessionTouch& touch) override;
    Result<std::int64_t> deleteExpiredSessions(std::int64_t now_ms, int limit) override;

    Result<JobRecord> createJob(JobRecord job) override;
    Result<JobRecord> getJob(std::string_view id) override;
    Result<std::vector<JobRecord>> listJobs(const JobFilter& filter) override;
    Result<std::int64_t> countJobs(const JobFilter& filter) override;
    Result<JobTransitionResult> transitionJob(std::string_view id, JobStatus expected,
                                              const JobTransition& transition) override;
    Result<JobTransitionResult> updateJobProgress(std::string_view id,
                                                  std::string_view progress_json) override;
    Result<JobTransitionResult> setJobCursor(std::string_view id, std::string_view cursor) override;
    Result<std::int64_t> heartbeatJobs(std::string_view owner_node, std::int64_t now_ms) override;
    Result<bool> claimJob(std::string_view id, std::optional<std::string_view> expected_owner,
                          std::string_view new_owner, std::int64_t now_ms) override;
    Result<std::int64_t> markRunningJobsInterrupted(std::int64_t now_ms,
                                                    std::string_view owner_node) override;
    Result<std::int64_t> deleteExpiredJobs(std::int64_t now_ms, int limit) override;

    Result<OperationRecord> createOperation(OperationRecord operation) override;
    Result<OperationRecord> getOperation(std::string_view id) override;
    Result<std::vector<OperationRecord>> listOperations(const OperationFilter& filter) override;
    Result<void> deleteOperation(std::string_view id) override;
    Result<OperationVersion> addOperationVersion(std::string_view operation_id,
                                                 const OperationVersionDraft& draft) override;
    Result<OperationVersion> getOperationVersion(std::string_view operation_id,
                                                 std::int64_t version) override;
    Result<std::vector<OperationVersion>> listOperationVersions(std::string_view operation_id,
                                                                int limit) override;
    Result<OperationVersion> getPublishedVersion(std::string_view operation_id) override;
    Result<PublishResult> publishOperationVersion(
        std::string_view operation_id, std::int64_t version,
        std::optional<std::int64_t> expected_published) override;

    // sqlite_agents.cpp
    Result<AgentRecord> createAgent(AgentRecord agent) override;
    Result<AgentRecord> getAgent(std::string_view id) override;
    Result<std::vector<AgentRecord>> listAgents(bool include_deleted, int limit,
                                                std::string_view after_id) override;
    Result<void> setAgentLimits(std::string_view id, std::string_view limits_json) override;
    Result<void> deleteAgent(std::string_view id) override;
    Result<AgentKeyRecord> addAgentKey(AgentKeyRecord key) override;
    Result<std::vector<AgentKeyRecord>> listAgentKeys(std::string_view agent_id,
                                                      bool include_revoked, int limit,
                                                      std::string_view after_id) override;
    Result<AgentKeyRecord> revokeAgentKey(std::string_view agent_id,
                                          std::string_view key_id) override;

    Result<AuditEvent> appendAudit(AuditEvent event) override;
    Result<void> appendAuditBatch(std::vector<AuditEvent>& events) override;
    Result<std::vector<AuditEvent>> queryAudit(const AuditQuery& query) override;
    Result<std::int64_t> deleteAuditBefore(std::int64_t before_ts, int limit) override;
    Result<std::int64_t> deleteAuditBeyond(std::int64_t keep, int limit) override;

    Result<UsedStateOutcome> recordUsedState(const UsedStateRecord& record, std::int64_t now_ms,
                                             const UsedStateLimits& limits) override;
    Result<std::int64_t> deleteExpiredUsedStates(std::int64_t now_ms, int limit) override;

    // ----- diagnostics (SQLite only) ---------------------------------------------------------

    /// PRAGMA journal_mode: "wal" for a file database, "memory" for ":memory:".
    Result<std::string> journalMode();
    /// The page cache bound of a pooled connection, KiB (StoreOptions::cache_kib).
    Result<std::int64_t> cacheKib();
    /// Highest version recorded in schema_migrations.
    Result<std::int64_t> schemaVersion();
    /// PRAGMA integrity_check; ErrorCode::io with SQLite's findings when it is not "ok".
    Result<void> integrityCheck();
    /// The database path as given in the options.
    const std::string& path() const;
    /// Number of pooled connections.
    std::size_t connectionCount() const;

private:
    struct Impl;
    explicit SqliteStore(std::unique_ptr<Impl> impl);

    std::unique_ptr<Impl> impl_;
};

}  // namespace crank::store
