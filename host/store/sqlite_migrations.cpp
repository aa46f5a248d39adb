#include <vector>

#include "store/sqlite_migration.h"

namespace crank::store {

// Column types are INTEGER and TEXT only, which map one to one onto PostgreSQL's BIGINT and TEXT.
// Status columns hold the lower-case names of the enums in session_status.h, job_status.h and
// version_state.h; there is no CHECK on them so that adding a status does not need a table
// rebuild (SQLite cannot alter a CHECK constraint in place).
const std::vector<SqliteMigration>& sqliteMigrations() {
    static const std::vector<SqliteMigration> migrations = {
        {1,
         "stream_sessions, async_jobs, operations, operation_versions, audit_events",
         {
             R"sql(CREATE TABLE stream_sessions (
                 id TEXT PRIMARY KEY,
                 workspace_id TEXT NOT NULL,
                 agent_id TEXT NOT NULL,
                 operation_id TEXT NOT NULL,
                 protocol TEXT NOT NULL,
                 mode TEXT NOT NULL,
                 status TEXT NOT NULL,
                 cursor TEXT,
                 state_json TEXT NOT NULL,
                 expires_at INTEGER NOT NULL,
                 last_poll_at INTEGER,
                 created_at INTEGER NOT NULL,
                 closed_at INTEGER))sql",
             // Counting per workspace/agent/status (limits), cleanup by status and expiry, and
             // listing by creation time.
             R"sql(CREATE INDEX stream_sessions_scope
                 ON stream_sessions (workspace_id, agent_id, status))sql",
             R"sql(CREATE INDEX stream_sessions_status_expiry
                 ON stream_sessions (status, expires_at))sql",
             R"sql(CREATE INDEX stream_sessions_created ON stream_sessions (created_at, id))sql",

             R"sql(CREATE TABLE async_jobs (
                 id TEXT PRIMARY KEY,
                 workspace_id TEXT NOT NULL,
                 agent_id TEXT NOT NULL,
                 operation_id TEXT NOT NULL,
                 status TEXT NOT NULL,
                 progress_json TEXT,
                 result_json TEXT,
                 error_json TEXT,
                 expires_at INTEGER NOT NULL,
                 created_at INTEGER NOT NULL,
                 updated_at INTEGER NOT NULL,
                 finished_at INTEGER))sql",
             R"sql(CREATE INDEX async_jobs_scope ON async_jobs (workspace_id, agent_id, status))sql",
             R"sql(CREATE INDEX async_jobs_status_expiry ON async_jobs (status, expires_at))sql",
             R"sql(CREATE INDEX async_jobs_created ON async_jobs (created_at, id))sql",

             R"sql(CREATE TABLE operations (
                 id TEXT PRIMARY KEY,
                 workspace_id TEXT NOT NULL,
                 name TEXT NOT NULL,
                 created_at INTEGER NOT NULL,
                 published_version INTEGER,
                 deleted_at INTEGER))sql",
             // A name is unique among live operations only, so a deleted name can be reused.
             R"sql(CREATE UNIQUE INDEX operations_live_name
                 ON operations (workspace_id, name) WHERE deleted_at IS NULL)sql",

             R"sql(CREATE TABLE operation_versions (
                 operation_id TEXT NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
                 version INTEGER NOT NULL CHECK (version >= 1),
                 config_json TEXT NOT NULL,
                 state TEXT NOT NULL,
                 created_at INTEGER NOT NULL,
                 created_by TEXT NOT NULL,
                 comment TEXT NOT NULL,
                 PRIMARY KEY (operation_id, version)))sql",

             // AUTOINCREMENT: ids only grow and are never reused, even after a future retention
             // job removes old rows, so the order of appends stays visible.
             R"sql(CREATE TABLE audit_events (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 ts INTEGER NOT NULL,
                 workspace_id TEXT NOT NULL,
                 agent_id TEXT NOT NULL,
                 operation_id TEXT NOT NULL,
                 action TEXT NOT NULL,
                 outcome TEXT NOT NULL,
                 detail_json TEXT NOT NULL))sql",
             R"sql(CREATE INDEX audit_events_ts ON audit_events (ts, id))sql",
             R"sql(CREATE INDEX audit_events_workspace ON audit_events (workspace_id, ts, id))sql",
             R"sql(CREATE INDEX audit_events_agent ON audit_events (agent_id, ts, id))sql",
             R"sql(CREATE INDEX audit_events_operation ON audit_events (operation_id, ts, id))sql",
             // Append-only: an edited audit log is worthless.
             R"sql(CREATE TRIGGER audit_events_append_only BEFORE UPDATE ON audit_events
                 BEGIN SELECT RAISE(ABORT, 'audit_events is append-only'); END)sql",
         }},
        // Several crankd nodes on one database: every live job and session names the node that
        // holds it; jobs keep their input and a resume cursor, and a heartbeat that tells other
        // nodes whether the owner is still alive. Existing rows get NULL owner (single-node Crank).
        {2,
         "owner_node, cursor, input_json and heartbeat_at for jobs; owner_node for sessions",
         {
             R"sql(ALTER TABLE async_jobs ADD COLUMN owner_node TEXT)sql",
             R"sql(ALTER TABLE async_jobs ADD COLUMN cursor TEXT)sql",
             R"sql(ALTER TABLE async_jobs ADD COLUMN input_json TEXT NOT NULL DEFAULT '{}')sql",
             R"sql(ALTER TABLE async_jobs ADD COLUMN heartbeat_at INTEGER)sql",
             // heartbeatJobs, markRunningJobsInterrupted and listing one node's jobs.
             R"sql(CREATE INDEX async_jobs_owner ON async_jobs (owner_node, status))sql",
             // Finding live jobs whose owner stopped heartbeating (claim candidates).
             R"sql(CREATE INDEX async_jobs_status_heartbeat
                 ON async_jobs (status, heartbeat_at))sql",
             R"sql(ALTER TABLE stream_sessions ADD COLUMN owner_node TEXT)sql",
             R"sql(CREATE INDEX stream_sessions_owner ON stream_sessions (owner_node, status))sql",
         }},
        // MCP 2026-07-28 input_required results: a sealed requestState opens once in the whole
        // deployment (Store::recordUsedState). Counted per caller (their shares) and deleted by
        // expiry.
        {3,
         "used_request_states",
         {
             R"sql(CREATE TABLE used_request_states (
                 id TEXT PRIMARY KEY,
                 workspace_id TEXT NOT NULL,
                 agent_id TEXT NOT NULL,
                 expires_at INTEGER NOT NULL))sql",
             R"sql(CREATE INDEX used_request_states_owner
                 ON used_request_states (workspace_id, agent_id, expires_at))sql",
             R"sql(CREATE INDEX used_request_states_expiry
                 ON used_request_states (expires_at))sql",
         }},
        // A job's runs carry the W3C trace context of the request that started it, also when
        // another node takes the job over.
        {4,
         "traceparent and tracestate for jobs",
         {
             R"sql(ALTER TABLE async_jobs ADD COLUMN traceparent TEXT NOT NULL DEFAULT '')sql",
             R"sql(ALTER TABLE async_jobs ADD COLUMN tracestate TEXT NOT NULL DEFAULT '')sql",
         }},
        // The admin API's upstreams are versioned, published and rolled back as operations are
        // (store/operation_kind.h): a row says what it defines. An operation's name is unique in
        // its workspace among operations; an upstream's among all upstreams.
        {5,
         "kind for operations (operation or upstream)",
         {
             R"sql(ALTER TABLE operations ADD COLUMN kind TEXT NOT NULL DEFAULT 'operation')sql",
             R"sql(DROP INDEX operations_live_name)sql",
             R"sql(CREATE UNIQUE INDEX operations_live_name
                 ON operations (workspace_id, name) WHERE deleted_at IS NULL AND kind = 'operation')sql",
             R"sql(CREATE UNIQUE INDEX upstreams_live_name
                 ON operations (name) WHERE deleted_at IS NULL AND kind = 'upstream')sql",
         }},
        // Agents and their keys managed through the admin API; keys as their SHA-256 digests.
        {6,
         "agents, agent_keys",
         {
             R"sql(CREATE TABLE agents (
                 id TEXT PRIMARY KEY,
                 workspace_id TEXT NOT NULL,
                 limits_json TEXT NOT NULL,
                 created_at INTEGER NOT NULL,
                 deleted_at INTEGER))sql",
             R"sql(CREATE TABLE agent_keys (
                 id TEXT PRIMARY KEY,
                 agent_id TEXT NOT NULL REFERENCES agents (id) ON DELETE CASCADE,
                 digest TEXT NOT NULL UNIQUE,
                 prefix TEXT NOT NULL,
                 created_at INTEGER NOT NULL,
                 revoked_at INTEGER))sql",
             R"sql(CREATE INDEX agent_keys_agent ON agent_keys (agent_id, id))sql",
         }},
    };
    return migrations;
}

}  // namespace crank::store
