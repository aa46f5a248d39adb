#include "store/sqlite_store.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>

#include <Poco/Data/SQLite/Connector.h>
#include <Poco/Data/Session.h>
#include <Poco/Data/Statement.h>
#include <Poco/Exception.h>
#include <Poco/Nullable.h>

#include "log/log.h"
#include "store/sqlite_audit_insert.h"
#include "store/sqlite_connection_pool.h"
#include "store/sqlite_migrator.h"
#include "store/sqlite_rows.h"
#include "store/sqlite_sql.h"
#include "store/sqlite_store_impl.h"
#include "util/clock.h"
#include "util/random.h"

namespace crank::store {

using Poco::Data::Session;
using Poco::Data::Keywords::into;
using Poco::Data::Keywords::now;
using sqlite::clampLimit;
using sqlite::execute;
using sqlite::optionalOf;
using sqlite::queryInt;
using sqlite::queryText;
using sqlite::select;
using sqlite::SqlParams;
using sqlite::SqlValue;
using sqlite::sqlValue;

namespace {

constexpr int kMaxPoolSize = 64;
constexpr int kMaxBusyTimeoutMs = 600000;
constexpr int kMinCacheKib = 16;
constexpr int kMaxCacheKib = 1048576;
constexpr std::string_view kMemoryPath = ":memory:";

std::string inQuotes(std::string_view text) {
    return "'" + std::string(text) + "'";
}

// ----- input checks --------------------------------------------------------------------------

/// Collects the first problem with a record's fields; messages name the field ("job.agent_id").
class Checks {
public:
    explicit Checks(std::string_view entity) : entity_(entity) {}

    Checks& required(std::string_view field, const std::string& value) {
        if (value.empty()) {
            fail(field, "must not be empty");
        }
        return shortText(field, value);
    }
    Checks& required(std::string_view field, std::string_view value) {
        return required(field, std::string(value));
    }
    /// Unset is fine; set, it must be a non-empty short text.
    Checks& required(std::string_view field, const std::optional<std::string>& value) {
        return value ? required(field, *value) : *this;
    }
    Checks& shortText(std::string_view field, const std::string& value) {
        return size(field, value.size(), kMaxShortTextBytes);
    }
    Checks& shortText(std::string_view field, std::optional<std::string_view> value) {
        return value ? size(field, value->size(), kMaxShortTextBytes) : *this;
    }
    Checks& longText(std::string_view field, std::string_view value) {
        return size(field, value.size(), kMaxLongTextBytes);
    }
    Checks& longText(std::string_view field, const std::string& value) {
        return longText(field, std::string_view(value));
    }
    Checks& longText(std::string_view field, const std::optional<std::string>& value) {
        return value ? longText(field, *value) : *this;
    }
    Checks& positive(std::string_view field, std::int64_t value) {
        if (value <= 0) {
            fail(field, "must be a positive Unix time in milliseconds");
        }
        return *this;
    }

    Result<void> result() const {
        if (error_) {
            return *error_;
        }
        return {};
    }

private:
    Checks& size(std::string_view field, std::size_t bytes, std::size_t max) {
        if (bytes > max) {
            fail(field,
                 "is " + std::to_string(bytes) + " bytes; the limit is " + std::to_string(max));
        }
        return *this;
    }
    void fail(std::string_view field, const std::string& what) {
        if (!error_) {
            error_ = Error{ErrorCode::invalid_argument,
                           entity_ + "." + std::string(field) + ": " + what};
        }
    }

    std::string entity_;
    std::optional<Error> error_;
};

Result<std::string> freshId(std::string_view prefix) {
    try {
        return newId(prefix);
    } catch (const std::exception& e) {
        return Error{ErrorCode::internal,
                     std::string("store: cannot generate a random id: ") + e.what()};
    }
}

// ----- SQL building --------------------------------------------------------------------------

/// A WHERE clause built from optional filters, with its parameters in placeholder order.
class Where {
public:
    void add(std::string_view condition, SqlValue value) {
        conditions_.emplace_back(condition);
        params_.push_back(std::move(value));
    }
    void addIfSet(std::string_view condition, const std::optional<std::string>& value) {
        if (value) {
            add(condition, *value);
        }
    }
    void addIn(std::string_view column, const std::vector<std::string>& values) {
        if (values.empty()) {
            return;
        }
        std::string condition(column);
        condition += " IN (";
        for (std::size_t i = 0; i < values.size(); ++i) {
            condition += i == 0 ? "?" : ", ?";
            params_.emplace_back(values[i]);
        }
        condition += ")";
        conditions_.push_back(std::move(condition));
    }
    void addRaw(std::string_view condition) { conditions_.emplace_back(condition); }

    std::string sql() const {
        std::string out;
        for (std::size_t i = 0; i < conditions_.size(); ++i) {
            out += i == 0 ? " WHERE " : " AND ";
            out += conditions_[i];
        }
        return out;
    }
    const SqlParams& params() const { return params_; }

private:
    std::vector<std::string> conditions_;
    SqlParams params_;
};

/// A SET list for an UPDATE, with its parameters in placeholder order.
class Assignments {
public:
    void set(std::string_view column, SqlValue value) {
        sql_ += sql_.empty() ? "" : ", ";
        sql_ += column;
        sql_ += " = ?";
        params_.push_back(std::move(value));
    }
    template <typename T>
    void setIfSet(std::string_view column, const std::optional<T>& value) {
        if (value) {
            set(column, *value);
        }
    }
    const std::string& sql() const { return sql_; }
    const SqlParams& params() const { return params_; }

private:
    std::string sql_;
    SqlParams params_;
};

SqlParams concat(SqlParams first, const SqlParams& second) {
    first.insert(first.end(), second.begin(), second.end());
    return first;
}

template <typename Status, typename NameOf>
std::vector<std::string> statusNames(const std::vector<Status>& statuses, NameOf nameOf) {
    std::vector<std::string> names;
    names.reserve(statuses.size());
    for (Status status : statuses) {
        names.emplace_back(nameOf(status));
    }
    return names;
}

std::string orderBy(SortOrder order, std::string_view time_column) {
    const char* direction = order == SortOrder::newest_first ? " DESC" : " ASC";
    return " ORDER BY " + std::string(time_column) + direction + ", id" + direction;
}

Error unknownValue(std::string_view table, std::string_view column, std::string_view id,
                   std::string_view value) {
    return Error{ErrorCode::internal, "store: " + std::string(table) + " row " + inQuotes(id) +
                                          " has an unknown " + std::string(column) + " " +
                                          inQuotes(value) + " (written by a newer Crank?)"};
}

// ----- row mapping ---------------------------------------------------------------------------
// Each *Rows struct receives a query's columns, one vector per column, and turns them into
// records. Column order must match the matching k*Columns list.

constexpr std::string_view kSessionColumns =
    "id, workspace_id, agent_id, operation_id, protocol, mode, status, cursor, state_json, "
    "expires_at, last_poll_at, created_at, closed_at, owner_node";

struct SessionRows {
    std::vector<std::string> id, workspace_id, agent_id, operation_id, protocol, mode, status;
    std::vector<Poco::Nullable<std::string>> cursor;
    std::vector<std::string> state_json;
    std::vector<std::int64_t> expires_at;
    std::vector<Poco::Nullable<std::int64_t>> last_poll_at;
    std::vector<std::int64_t> created_at;
    std::vector<Poco::Nullable<std::int64_t>> closed_at;
    std::vector<Poco::Nullable<std::string>> owner_node;

    void attach(Poco::Data::Statement& statement) {
        statement.addExtract(into(id));
        statement.addExtract(into(workspace_id));
        statement.addExtract(into(agent_id));
        statement.addExtract(into(operation_id));
        statement.addExtract(into(protocol));
        statement.addExtract(into(mode));
        statement.addExtract(into(status));
        statement.addExtract(into(cursor));
        statement.addExtract(into(state_json));
        statement.addExtract(into(expires_at));
        statement.addExtract(into(last_poll_at));
        statement.addExtract(into(created_at));
        statement.addExtract(into(closed_at));
        statement.addExtract(into(owner_node));
    }

    Result<std::vector<SessionRecord>> records() const {
        std::vector<SessionRecord> out;
        out.reserve(id.size());
        for (std::size_t i = 0; i < id.size(); ++i) {
            const auto parsed = parseSessionStatus(status[i]);
            if (!parsed) {
                return unknownValue("stream_sessions", "status", id[i], status[i]);
            }
            out.push_back(SessionRecord{
                id[i], workspace_id[i], agent_id[i], operation_id[i], protocol[i], mode[i], *parsed,
                optionalOf(cursor[i]), state_json[i], expires_at[i], optionalOf(last_poll_at[i]),
                created_at[i], optionalOf(closed_at[i]), optionalOf(owner_node[i])});
        }
        return out;
    }
};

constexpr std::string_view kJobColumns =
    "id, workspace_id, agent_id, operation_id, status, progress_json, result_json, error_json, "
    "expires_at, created_at, updated_at, finished_at, owner_node, cursor, input_json, "
    "heartbeat_at, traceparent, tracestate";

struct JobRows {
    std::vector<std::string> id, workspace_id, agent_id, operation_id, status;
    std::vector<Poco::Nullable<std::string>> progress_json, result_json, error_json;
    std::vector<std::int64_t> expires_at, created_at, updated_at;
    std::vector<Poco::Nullable<std::int64_t>> finished_at;
    std::vector<Poco::Nullable<std::string>> owner_node, cursor;
    std::vector<std::string> input_json;
    std::vector<Poco::Nullable<std::int64_t>> heartbeat_at;
    std::vector<std::string> traceparent, tracestate;

    void attach(Poco::Data::Statement& statement) {
        statement.addExtract(into(id));
        statement.addExtract(into(workspace_id));
        statement.addExtract(into(agent_id));
        statement.addExtract(into(operation_id));
        statement.addExtract(into(status));
        statement.addExtract(into(progress_json));
        statement.addExtract(into(result_json));
        statement.addExtract(into(error_json));
        statement.addExtract(into(expires_at));
        statement.addExtract(into(created_at));
        statement.addExtract(into(updated_at));
        statement.addExtract(into(finished_at));
        statement.addExtract(into(owner_node));
        statement.addExtract(into(cursor));
        statement.addExtract(into(input_json));
        statement.addExtract(into(heartbeat_at));
        statement.addExtract(into(traceparent));
        statement.addExtract(into(tracestate));
    }

    Result<std::vector<JobRecord>> records() const {
        std::vector<JobRecord> out;
        out.reserve(id.size());
        for (std::size_t i = 0; i < id.size(); ++i) {
            const auto parsed = parseJobStatus(status[i]);
            if (!parsed) {
                return unknownValue("async_jobs", "status", id[i], status[i]);
            }
            out.push_back(JobRecord{id[i], workspace_id[i], agent_id[i], operation_id[i], *parsed,
                                    optionalOf(progress_json[i]), optionalOf(result_json[i]),
                                    optionalOf(error_json[i]), expires_at[i], created_at[i],
                                    updated_at[i], optionalOf(finished_at[i]),
                                    optionalOf(owner_node[i]), optionalOf(cursor[i]), input_json[i],
                                    optionalOf(heartbeat_at[i]), traceparent[i], tracestate[i]});
        }
        return out;
    }
};

constexpr std::string_view kOperationColumns =
    "id, workspace_id, name, created_at, published_version, deleted_at, kind";

struct OperationRows {
    std::vector<std::string> id, workspace_id, name, kind;
    std::vector<std::int64_t> created_at;
    std::vector<Poco::Nullable<std::int64_t>> published_version, deleted_at;

    void attach(Poco::Data::Statement& statement) {
        statement.addExtract(into(id));
        statement.addExtract(into(workspace_id));
        statement.addExtract(into(name));
        statement.addExtract(into(created_at));
        statement.addExtract(into(published_version));
        statement.addExtract(into(deleted_at));
        statement.addExtract(into(kind));
    }

    Result<std::vector<OperationRecord>> records() const {
        std::vector<OperationRecord> out;
        out.reserve(id.size());
        for (std::size_t i = 0; i < id.size(); ++i) {
            const std::optional<OperationKind> parsed = parseOperationKind(kind[i]);
            if (!parsed) {
                return Error{ErrorCode::internal, "store: operation " + inQuotes(id[i]) +
                                                      " has an unknown kind " + inQuotes(kind[i])};
            }
            out.push_back(OperationRecord{id[i], workspace_id[i], name[i], created_at[i],
                                          optionalOf(published_version[i]),
                                          optionalOf(deleted_at[i]), *parsed});
        }
        return out;
    }
};

constexpr std::string_view kVersionColumns =
    "operation_id, version, config_json, state, created_at, created_by, comment";

struct VersionRows {
    std::vector<std::string> operation_id;
    std::vector<std::int64_t> version;
    std::vector<std::string> config_json, state;
    std::vector<std::int64_t> created_at;
    std::vector<std::string> created_by, comment;

    void attach(Poco::Data::Statement& statement) {
        statement.addExtract(into(operation_id));
        statement.addExtract(into(version));
        statement.addExtract(into(config_json));
        statement.addExtract(into(state));
        statement.addExtract(into(created_at));
        statement.addExtract(into(created_by));
        statement.addExtract(into(comment));
    }

    Result<std::vector<OperationVersion>> records() const {
        std::vector<OperationVersion> out;
        out.reserve(operation_id.size());
        for (std::size_t i = 0; i < operation_id.size(); ++i) {
            const auto parsed = parseVersionState(state[i]);
            if (!parsed) {
                return unknownValue("operation_versions", "state",
                                    operation_id[i] + "#" + std::to_string(version[i]), state[i]);
            }
            out.push_back(OperationVersion{operation_id[i], version[i], config_json[i], *parsed,
                                           created_at[i], created_by[i], comment[i]});
        }
        return out;
    }
};

constexpr std::string_view kAuditColumns =
    "id, ts, workspace_id, agent_id, operation_id, action, outcome, detail_json";

struct AuditRows {
    std::vector<std::int64_t> id, ts;
    std::vector<std::string> workspace_id, agent_id, operation_id, action, outcome, detail_json;

    void attach(Poco::Data::Statement& statement) {
        statement.addExtract(into(id));
        statement.addExtract(into(ts));
        statement.addExtract(into(workspace_id));
        statement.addExtract(into(agent_id));
        statement.addExtract(into(operation_id));
        statement.addExtract(into(action));
        statement.addExtract(into(outcome));
        statement.addExtract(into(detail_json));
    }

    Result<std::vector<AuditEvent>> records() const {
        std::vector<AuditEvent> out;
        out.reserve(id.size());
        for (std::size_t i = 0; i < id.size(); ++i) {
            out.push_back(AuditEvent{id[i], ts[i], workspace_id[i], agent_id[i], operation_id[i],
                                     action[i], outcome[i], detail_json[i]});
        }
        return out;
    }
};

/// The single row a lookup by key found, or `missing` when there was none.
template <typename T>
Result<T> single(Result<std::vector<T>> rows, Error missing) {
    if (!rows) {
        return rows.error();
    }
    if (rows->empty()) {
        return missing;
    }
    return std::move(rows->front());
}

std::optional<OperationRecord> loadOperation(Session& session, std::string_view id) {
    auto rows = select<OperationRows>(
        session, "SELECT " + std::string(kOperationColumns) + " FROM operations WHERE id = ?",
        {std::string(id)});
    if (!rows || rows->empty()) {
        return std::nullopt;
    }
    return std::move(rows->front());
}

/// After a compare-and-set UPDATE changed `changed` rows: applied, or why not (read in the same
/// transaction, so the reported status is the one that made the UPDATE miss).
template <typename Status, typename Parse>
Result<TransitionResult<Status>> casOutcome(Session& session, std::string_view table,
                                            std::string_view id, std::size_t changed,
                                            Status now_status, Parse parse) {
    if (changed > 0) {
        return TransitionResult<Status>{TransitionOutcome::applied, now_status};
    }
    const auto found = queryText(
        session, "SELECT status FROM " + std::string(table) + " WHERE id = ?", {std::string(id)});
    if (!found) {
        return TransitionResult<Status>{TransitionOutcome::not_found, std::nullopt};
    }
    const std::optional<Status> current = parse(*found);
    if (!current) {
        return unknownValue(table, "status", id, *found);
    }
    return TransitionResult<Status>{TransitionOutcome::status_mismatch, current};
}

// ----- opening ---------------------------------------------------------------------------------

Result<void> checkOptions(const StoreOptions& options) {
    if (options.backend != "sqlite") {
        return Error{ErrorCode::invalid_argument,
                     "store.backend: SqliteStore cannot open backend " + inQuotes(options.backend)};
    }
    if (options.path.empty()) {
        return Error{ErrorCode::invalid_argument,
                     "store.path: must not be empty (use ':memory:' for a throw-away database)"};
    }
    if (options.pool_size < 1 || options.pool_size > kMaxPoolSize) {
        return Error{ErrorCode::invalid_argument, "store.pool_size: must be between 1 and " +
                                                      std::to_string(kMaxPoolSize) + ", got " +
                                                      std::to_string(options.pool_size)};
    }
    if (options.cache_kib < kMinCacheKib || options.cache_kib > kMaxCacheKib) {
        return Error{ErrorCode::invalid_argument, "store.cache_kib: must be between " +
                                                      std::to_string(kMinCacheKib) + " and " +
                                                      std::to_string(kMaxCacheKib) + ", got " +
                                                      std::to_string(options.cache_kib)};
    }
    if (options.busy_timeout_ms < 0 || options.busy_timeout_ms > kMaxBusyTimeoutMs) {
        return Error{ErrorCode::invalid_argument, "store.busy_timeout_ms: must be between 0 and " +
                                                      std::to_string(kMaxBusyTimeoutMs) + ", got " +
                                                      std::to_string(options.busy_timeout_ms)};
    }
    if (options.path == kMemoryPath) {
        return {};
    }
    // SQLite's own message for these is "unable to open database file"; say what is wrong.
    namespace fs = std::filesystem;
    const fs::path file(options.path);
    fs::path directory = file.parent_path();
    if (directory.empty()) {
        directory = ".";
    }
    std::error_code ec;
    if (!fs::is_directory(directory, ec)) {
        return Error{ErrorCode::io, "store: cannot open SQLite database " + inQuotes(options.path) +
                                        ": directory " + inQuotes(directory.string()) +
                                        " does not exist"};
    }
    if (fs::is_directory(file, ec)) {
        return Error{ErrorCode::io, "store: cannot open SQLite database " + inQuotes(options.path) +
                                        ": it is a directory"};
    }
    return {};
}

/// Opens one connection and sets its per-connection pragmas. Throws Poco::Exception.
std::unique_ptr<Session> openConnection(const StoreOptions& options) {
    static std::once_flag registered;
    std::call_once(registered, [] { Poco::Data::SQLite::Connector::registerConnector(); });
    // Login timeout 0: Poco retries a failing sqlite3_open_v2() until this many seconds have
    // passed (default 60), which would turn "missing directory" into a one-minute hang. It also
    // sets busy_timeout to the same number of seconds; the PRAGMA below replaces it.
    auto session = std::make_unique<Session>(Poco::Data::SQLite::Connector::KEY, options.path, 0);
    execute(*session, "PRAGMA busy_timeout = " + std::to_string(options.busy_timeout_ms));
    execute(*session, "PRAGMA foreign_keys = ON");
    // synchronous=NORMAL in WAL mode: a commit is in the WAL file (in the OS page cache) when
    // COMMIT returns, so it survives the process being killed at any point (kill -9, crash,
    // OOM killer); only an OS crash or power cut may lose the last commits, never corrupt the
    // file. FULL would add an fsync to every commit, which the 2-core target pays for on every
    // session poll, for protection against power loss only.
    execute(*session, "PRAGMA synchronous = NORMAL");
    // A negative cache_size is in KiB: the bound of this connection's page cache.
    execute(*session, "PRAGMA cache_size = -" + std::to_string(options.cache_kib));
    return session;
}

}  // namespace

SqliteStore::SqliteStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

SqliteStore::~SqliteStore() = default;

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(const StoreOptions& options) {
    return open(options, sqliteMigrations());
}

Result<std::unique_ptr<SqliteStore>> SqliteStore::open(
    const StoreOptions& options, const std::vector<SqliteMigration>& migrations) {
    if (auto checked = checkOptions(options); !checked) {
        return checked.error();
    }
    const bool memory = options.path == kMemoryPath;
    // Every connection to ":memory:" would be a database of its own, so it gets exactly one.
    const int connections = memory ? 1 : options.pool_size;
    const std::string context = "store: cannot open SQLite database " + inQuotes(options.path);

    std::vector<std::unique_ptr<Session>> sessions;
    std::string journal_mode;
    std::int64_t schema_version = 0;
    try {
        sessions.push_back(openConnection(options));
        Session& first = *sessions.front();
        // The first real read of the file: a file that is not a database fails here.
        first << "PRAGMA journal_mode = WAL", into(journal_mode), now;
        if (!memory && journal_mode != "wal") {
            log::warn(
                "store: SQLite kept journal mode '{}' for '{}' instead of WAL (file system "
                "without shared memory?); readers will block the writer",
                journal_mode, options.path);
        }
        auto migrated = sqlite::applyMigrations(first, options.path, migrations);
        if (!migrated) {
            return migrated.error();
        }
        schema_version = *migrated;
        while (sessions.size() < static_cast<std::size_t>(connections)) {
            sessions.push_back(openConnection(options));
        }
    } catch (const Poco::Exception& e) {
        Error error = sqlite::errorFromPoco(e, context);
        if (error.code == ErrorCode::internal) {
            error.code = ErrorCode::io;
        }
        return error;
    }
    log::info(
        "store: opened SQLite database '{}' (schema version {}, journal {}, synchronous normal, "
        "{} connection(s), busy timeout {} ms)",
        options.path, schema_version, journal_mode, connections, options.busy_timeout_ms);
    auto impl = std::make_unique<Impl>(options.path, std::move(sessions),
                                       std::chrono::milliseconds(options.busy_timeout_ms));
    return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(impl)));
}

Result<void> SqliteStore::ping() {
    return impl_->read("store: ping failed", [](Session& s) -> Result<void> {
        if (queryInt(s, "SELECT 1") != 1) {
            return Error{ErrorCode::unavailable, "store: ping failed: SELECT 1 did not return 1"};
        }
        return {};
    });
}

// ----- sessions ----------------------------------------------------------------------------------

namespace {

Where sessionWhere(const SessionFilter& filter) {
    Where where;
    where.addIfSet("workspace_id = ?", filter.workspace_id);
    where.addIfSet("agent_id = ?", filter.agent_id);
    where.addIfSet("operation_id = ?", filter.operation_id);
    where.addIn("status", statusNames(filter.statuses, sessionStatusName));
    if (filter.expires_before) {
        where.add("expires_at < ?", *filter.expires_before);
    }
    where.addIfSet("owner_node = ?", filter.owner_node);
    return where;
}

std::vector<std::string> terminalSessionStatuses() {
    std::vector<std::string> names;
    for (SessionStatus status : kSessionStatuses) {
        if (isTerminal(status)) {
            names.emplace_back(sessionStatusName(status));
        }
    }
    return names;
}

/// queued and running: the jobs that have (or wait for) a worker.
std::vector<std::string> liveJobStatuses() {
    std::vector<std::string> names;
    for (JobStatus status : kJobStatuses) {
        if (!isTerminal(status)) {
            names.emplace_back(jobStatusName(status));
        }
    }
    return names;
}

std::vector<std::string> terminalJobStatuses() {
    std::vector<std::string> names;
    for (JobStatus status : kJobStatuses) {
        if (isTerminal(status)) {
            names.emplace_back(jobStatusName(status));
        }
    }
    return names;
}

}  // namespace

Result<SessionRecord> SqliteStore::createSession(SessionRecord session) {
    if (session.id.empty()) {
        auto id = freshId("ses_");
        if (!id) {
            return id.error();
        }
        session.id = std::move(id).value();
    }
    if (session.created_at == 0) {
        session.created_at = nowUnixMs();
    }
    auto checked = Checks("session")
                       .required("id", session.id)
                       .required("workspace_id", session.workspace_id)
                       .required("agent_id", session.agent_id)
                       .required("operation_id", session.operation_id)
                       .required("protocol", session.protocol)
                       .required("mode", session.mode)
                       .longText("cursor", session.cursor)
                       .longText("state_json", session.state_json)
                       .positive("expires_at", session.expires_at)
                       .required("owner_node", session.owner_node)
                       .result();
    if (!checked) {
        return checked.error();
    }
    return impl_->write("store: cannot create session", [&](Session& s) -> Result<SessionRecord> {
        execute(s,
                "INSERT INTO stream_sessions (" + std::string(kSessionColumns) +
                    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {session.id, session.workspace_id, session.agent_id, session.operation_id,
                 session.protocol, session.mode, std::string(sessionStatusName(session.status)),
                 sqlValue(session.cursor), session.state_json, session.expires_at,
                 sqlValue(session.last_poll_at), session.created_at, sqlValue(session.closed_at),
                 sqlValue(session.owner_node)});
        return session;
    });
}

Result<SessionRecord> SqliteStore::getSession(std::string_view id) {
    return impl_->read("store: cannot read session", [&](Session& s) {
        return single(
            select<SessionRows>(
                s, "SELECT " + std::string(kSessionColumns) + " FROM stream_sessions WHERE id = ?",
                {std::string(id)}),
            Error{ErrorCode::not_found, "store: no session " + inQuotes(id)});
    });
}

Result<std::vector<SessionRecord>> SqliteStore::listSessions(const SessionFilter& filter) {
    auto limit = clampLimit(filter.limit, kMaxListLimit, "session filter limit");
    if (!limit) {
        return limit.error();
    }
    const Where where = sessionWhere(filter);
    return impl_->read("store: cannot list sessions", [&](Session& s) {
        return select<SessionRows>(s,
                                   "SELECT " + std::string(kSessionColumns) +
                                       " FROM stream_sessions" + where.sql() +
                                       orderBy(filter.order, "created_at") + " LIMIT ?",
                                   concat(where.params(), {std::int64_t{*limit}}));
    });
}

Result<std::int64_t> SqliteStore::countSessions(const SessionFilter& filter) {
    const Where where = sessionWhere(filter);
    return impl_->read("store: cannot count sessions", [&](Session& s) -> Result<std::int64_t> {
        return queryInt(s, "SELECT count(*) FROM stream_sessions" + where.sql(), where.params())
            .value_or(0);
    });
}

Result<SessionTransitionResult> SqliteStore::transitionSession(
    std::string_view id, SessionStatus expected, const SessionTransition& transition) {
    auto checked = Checks("session transition")
                       .longText("cursor", transition.cursor)
                       .longText("state_json", transition.state_json)
                       .result();
    if (!checked) {
        return checked.error();
    }
    Assignments set;
    set.set("status", std::string(sessionStatusName(transition.to)));
    set.setIfSet("cursor", transition.cursor);
    set.setIfSet("state_json", transition.state_json);
    set.setIfSet("closed_at", transition.closed_at);
    set.setIfSet("expires_at", transition.expires_at);
    return impl_->write("store: cannot change session status", [&](Session& s) {
        const std::size_t changed = execute(
            s, "UPDATE stream_sessions SET " + set.sql() + " WHERE id = ? AND status = ?",
            concat(set.params(), {std::string(id), std::string(sessionStatusName(expected))}));
        return casOutcome(s, "stream_sessions", id, changed, transition.to, parseSessionStatus);
    });
}

Result<SessionTransitionResult> SqliteStore::touchSession(std::string_view id,
                                                          SessionStatus expected,
                                                          const SessionTouch& touch) {
    auto checked = Checks("session touch")
                       .longText("cursor", touch.cursor)
                       .longText("state_json", touch.state_json)
                       .result();
    if (!checked) {
        return checked.error();
    }
    Assignments set;
    set.set("last_poll_at", touch.last_poll_at == 0 ? nowUnixMs() : touch.last_poll_at);
    set.setIfSet("cursor", touch.cursor);
    set.setIfSet("state_json", touch.state_json);
    set.setIfSet("expires_at", touch.expires_at);
    return impl_->write("store: cannot record session poll", [&](Session& s) {
        const std::size_t changed = execute(
            s, "UPDATE stream_sessions SET " + set.sql() + " WHERE id = ? AND status = ?",
            concat(set.params(), {std::string(id), std::string(sessionStatusName(expected))}));
        return casOutcome(s, "stream_sessions", id, changed, expected, parseSessionStatus);
    });
}

Result<std::int64_t> SqliteStore::deleteExpiredSessions(std::int64_t now_ms, int limit) {
    auto batch = clampLimit(limit, kMaxCleanupBatch, "session cleanup limit");
    if (!batch) {
        return batch.error();
    }
    Where where;
    where.addIn("status", terminalSessionStatuses());
    where.add("expires_at < ?", now_ms);
    return impl_->write("store: cannot delete expired sessions",
                        [&](Session& s) -> Result<std::int64_t> {
                            return static_cast<std::int64_t>(
                                execute(s,
                                        "DELETE FROM stream_sessions WHERE id IN (SELECT id FROM "
                                        "stream_sessions" +
                                            where.sql() + " ORDER BY expires_at LIMIT ?)",
                                        concat(where.params(), {std::int64_t{*batch}})));
                        });
}

// ----- jobs --------------------------------------------------------------------------------------

namespace {

Where jobWhere(const JobFilter& filter) {
    Where where;
    where.addIfSet("id = ?", filter.id);
    where.addIfSet("workspace_id = ?", filter.workspace_id);
    where.addIfSet("agent_id = ?", filter.agent_id);
    where.addIfSet("operation_id = ?", filter.operation_id);
    where.addIn("status", statusNames(filter.statuses, jobStatusName));
    if (filter.expires_before) {
        where.add("expires_at < ?", *filter.expires_before);
    }
    where.addIfSet("owner_node = ?", filter.owner_node);
    if (filter.heartbeat_before) {
        where.add("(heartbeat_at < ? OR heartbeat_at IS NULL)", *filter.heartbeat_before);
    }
    return where;
}

}  // namespace

Result<JobRecord> SqliteStore::createJob(JobRecord job) {
    if (job.id.empty()) {
        auto id = freshId("job_");
        if (!id) {
            return id.error();
        }
        job.id = std::move(id).value();
    }
    if (job.created_at == 0) {
        job.created_at = nowUnixMs();
    }
    job.updated_at = job.created_at;
    auto checked = Checks("job")
                       .required("id", job.id)
                       .required("workspace_id", job.workspace_id)
                       .required("agent_id", job.agent_id)
                       .required("operation_id", job.operation_id)
                       .longText("progress_json", job.progress_json)
                       .longText("result_json", job.result_json)
                       .longText("error_json", job.error_json)
                       .positive("expires_at", job.expires_at)
                       .required("owner_node", job.owner_node)
                       .longText("cursor", job.cursor)
                       .longText("input_json", job.input_json)
                       .longText("traceparent", job.traceparent)
                       .longText("tracestate", job.tracestate)
                       .result();
    if (!checked) {
        return checked.error();
    }
    return impl_->write("store: cannot create job", [&](Session& s) -> Result<JobRecord> {
        execute(s,
                "INSERT INTO async_jobs (" + std::string(kJobColumns) +
                    ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                {job.id, job.workspace_id, job.agent_id, job.operation_id,
                 std::string(jobStatusName(job.status)), sqlValue(job.progress_json),
                 sqlValue(job.result_json), sqlValue(job.error_json), job.expires_at,
                 job.created_at, job.updated_at, sqlValue(job.finished_at),
                 sqlValue(job.owner_node), sqlValue(job.cursor), job.input_json,
                 sqlValue(job.heartbeat_at), job.traceparent, job.tracestate});
        return job;
    });
}

Result<JobRecord> SqliteStore::getJob(std::string_view id) {
    return impl_->read("store: cannot read job", [&](Session& s) {
        return single(select<JobRows>(
                          s, "SELECT " + std::string(kJobColumns) + " FROM async_jobs WHERE id = ?",
                          {std::string(id)}),
                      Error{ErrorCode::not_found, "store: no job " + inQuotes(id)});
    });
}

Result<std::vector<JobRecord>> SqliteStore::listJobs(const JobFilter& filter) {
    auto limit = clampLimit(filter.limit, kMaxListLimit, "job filter limit");
    if (!limit) {
        return limit.error();
    }
    const Where where = jobWhere(filter);
    return impl_->read("store: cannot list jobs", [&](Session& s) {
        return select<JobRows>(s,
                               "SELECT " + std::string(kJobColumns) + " FROM async_jobs" +
                                   where.sql() + orderBy(filter.order, "created_at") + " LIMIT ?",
                               concat(where.params(), {std::int64_t{*limit}}));
    });
}

Result<std::int64_t> SqliteStore::countJobs(const JobFilter& filter) {
    const Where where = jobWhere(filter);
    return impl_->read("store: cannot count jobs", [&](Session& s) -> Result<std::int64_t> {
        return queryInt(s, "SELECT count(*) FROM async_jobs" + where.sql(), where.params())
            .value_or(0);
    });
}

Result<JobTransitionResult> SqliteStore::transitionJob(std::string_view id, JobStatus expected,
                                                       const JobTransition& transition) {
    auto checked = Checks("job transition")
                       .longText("progress_json", transition.progress_json)
                       .longText("result_json", transition.result_json)
                       .longText("error_json", transition.error_json)
                       .required("owner_node", transition.owner_node)
                       .longText("cursor", transition.cursor)
                       .result();
    if (!checked) {
        return checked.error();
    }
    Assignments set;
    set.set("status", std::string(jobStatusName(transition.to)));
    set.set("updated_at", nowUnixMs());
    set.setIfSet("progress_json", transition.progress_json);
    set.setIfSet("result_json", transition.result_json);
    set.setIfSet("error_json", transition.error_json);
    set.setIfSet("finished_at", transition.finished_at);
    set.setIfSet("expires_at", transition.expires_at);
    set.setIfSet("owner_node", transition.owner_node);
    set.setIfSet("cursor", transition.cursor);
    set.setIfSet("heartbeat_at", transition.heartbeat_at);
    return impl_->write("store: cannot change job status", [&](Session& s) {
        const std::size_t changed =
            execute(s, "UPDATE async_jobs SET " + set.sql() + " WHERE id = ? AND status = ?",
                    concat(set.params(), {std::string(id), std::string(jobStatusName(expected))}));
        return casOutcome(s, "async_jobs", id, changed, transition.to, parseJobStatus);
    });
}

Result<JobTransitionResult> SqliteStore::updateJobProgress(std::string_view id,
                                                           std::string_view progress_json) {
    auto checked = Checks("job").longText("progress_json", progress_json).result();
    if (!checked) {
        return checked.error();
    }
    return impl_->write("store: cannot update job progress", [&](Session& s) {
        const std::size_t changed = execute(
            s,
            "UPDATE async_jobs SET progress_json = ?, updated_at = ? WHERE id = ? AND status = ?",
            {std::string(progress_json), nowUnixMs(), std::string(id),
             std::string(jobStatusName(JobStatus::running))});
        return casOutcome(s, "async_jobs", id, changed, JobStatus::running, parseJobStatus);
    });
}

Result<JobTransitionResult> SqliteStore::setJobCursor(std::string_view id,
                                                      std::string_view cursor) {
    auto checked = Checks("job").longText("cursor", cursor).result();
    if (!checked) {
        return checked.error();
    }
    return impl_->write("store: cannot set job cursor", [&](Session& s) {
        const std::size_t changed = execute(
            s, "UPDATE async_jobs SET cursor = ?, updated_at = ? WHERE id = ? AND status = ?",
            {std::string(cursor), nowUnixMs(), std::string(id),
             std::string(jobStatusName(JobStatus::running))});
        return casOutcome(s, "async_jobs", id, changed, JobStatus::running, parseJobStatus);
    });
}

Result<std::int64_t> SqliteStore::heartbeatJobs(std::string_view owner_node, std::int64_t now_ms) {
    auto checked = Checks("job").required("owner_node", owner_node).result();
    if (!checked) {
        return checked.error();
    }
    Where where;
    where.add("owner_node = ?", std::string(owner_node));
    where.addIn("status", liveJobStatuses());
    return impl_->write("store: cannot record job heartbeat",
                        [&](Session& s) -> Result<std::int64_t> {
                            return static_cast<std::int64_t>(
                                execute(s, "UPDATE async_jobs SET heartbeat_at = ?" + where.sql(),
                                        concat({now_ms}, where.params())));
                        });
}

Result<bool> SqliteStore::claimJob(std::string_view id,
                                   std::optional<std::string_view> expected_owner,
                                   std::string_view new_owner, std::int64_t now_ms) {
    auto checked = Checks("job claim")
                       .required("new_owner", new_owner)
                       .shortText("expected_owner", expected_owner)
                       .result();
    if (!checked) {
        return checked.error();
    }
    Where where;
    where.add("id = ?", std::string(id));
    where.addIn("status", liveJobStatuses());
    // `IS` also matches NULL = NULL (PostgreSQL spells it IS NOT DISTINCT FROM).
    where.add("owner_node IS ?",
              expected_owner ? SqlValue(std::string(*expected_owner)) : SqlValue(nullptr));
    return impl_->write("store: cannot claim job", [&](Session& s) -> Result<bool> {
        const std::size_t changed = execute(
            s,
            "UPDATE async_jobs SET owner_node = ?, heartbeat_at = ?, updated_at = ?" + where.sql(),
            concat({std::string(new_owner), now_ms, now_ms}, where.params()));
        return changed > 0;
    });
}

Result<std::int64_t> SqliteStore::markRunningJobsInterrupted(std::int64_t now_ms,
                                                             std::string_view owner_node) {
    auto checked = Checks("job").required("owner_node", owner_node).result();
    if (!checked) {
        return checked.error();
    }
    return impl_->write(
        "store: cannot mark running jobs as interrupted", [&](Session& s) -> Result<std::int64_t> {
            // Rows without an owner predate owner ids (single-node Crank): every node may
            // recover them.
            return static_cast<std::int64_t>(execute(
                s,
                "UPDATE async_jobs SET status = ?, updated_at = ?, finished_at = ?,"
                " error_json = COALESCE(error_json, ?) WHERE status = ?"
                " AND (owner_node = ? OR owner_node IS NULL)",
                {std::string(jobStatusName(JobStatus::interrupted)), now_ms, now_ms,
                 std::string(R"({"code":"interrupted","message":"Crank stopped while the job )"
                             R"(was running; its outcome is unknown"})"),
                 std::string(jobStatusName(JobStatus::running)), std::string(owner_node)}));
        });
}

Result<std::int64_t> SqliteStore::deleteExpiredJobs(std::int64_t now_ms, int limit) {
    auto batch = clampLimit(limit, kMaxCleanupBatch, "job cleanup limit");
    if (!batch) {
        return batch.error();
    }
    Where where;
    where.addIn("status", terminalJobStatuses());
    where.add("expires_at < ?", now_ms);
    return impl_->write(
        "store: cannot delete expired jobs", [&](Session& s) -> Result<std::int64_t> {
            return static_cast<std::int64_t>(
                execute(s,
                        "DELETE FROM async_jobs WHERE id IN (SELECT id FROM async_jobs" +
                            where.sql() + " ORDER BY expires_at LIMIT ?)",
                        concat(where.params(), {std::int64_t{*batch}})));
        });
}

// ----- operations ----------------------------------------------------------------------------

Result<OperationRecord> SqliteStore::createOperation(OperationRecord operation) {
    if (operation.published_version || operation.deleted_at) {
        return Error{ErrorCode::invalid_argument,
                     "operation: a new operation cannot be published or deleted; leave "
                     "published_version and deleted_at empty"};
    }
    if (operation.id.empty()) {
        auto id = freshId(operation.kind == OperationKind::upstream ? "up_" : "op_");
        if (!id) {
            return id.error();
        }
        operation.id = std::move(id).value();
    }
    if (operation.created_at == 0) {
        operation.created_at = nowUnixMs();
    }
    auto checked = Checks("operation")
                       .required("id", operation.id)
                       .required("workspace_id", operation.workspace_id)
                       .required("name", operation.name)
                       .result();
    if (!checked) {
        return checked.error();
    }
    return impl_->write(
        "store: cannot create operation", [&](Session& s) -> Result<OperationRecord> {
            const bool upstream = operation.kind == OperationKind::upstream;
            const auto taken =
                upstream ? queryText(s,
                                     "SELECT id FROM operations WHERE kind = 'upstream' AND "
                                     "name = ? AND deleted_at IS NULL",
                                     {operation.name})
                         : queryText(s,
                                     "SELECT id FROM operations WHERE kind = 'operation' AND "
                                     "workspace_id = ? AND name = ? AND deleted_at IS NULL",
                                     {operation.workspace_id, operation.name});
            if (taken) {
                return Error{
                    ErrorCode::conflict,
                    upstream
                        ? "store: an upstream named " + inQuotes(operation.name) + " exists already"
                        : "store: workspace " + inQuotes(operation.workspace_id) +
                              " already has an operation named " + inQuotes(operation.name)};
            }
            execute(s,
                    "INSERT INTO operations (" + std::string(kOperationColumns) +
                        ") VALUES (?, ?, ?, ?, NULL, NULL, ?)",
                    {operation.id, operation.workspace_id, operation.name, operation.created_at,
                     std::string(operationKindName(operation.kind))});
            return operation;
        });
}

Result<OperationRecord> SqliteStore::getOperation(std::string_view id) {
    return impl_->read("store: cannot read operation", [&](Session& s) -> Result<OperationRecord> {
        auto operation = loadOperation(s, id);
        if (!operation) {
            return Error{ErrorCode::not_found, "store: no operation " + inQuotes(id)};
        }
        return std::move(*operation);
    });
}

Result<std::vector<OperationRecord>> SqliteStore::listOperations(const OperationFilter& filter) {
    auto limit = clampLimit(filter.limit, kMaxListLimit, "operation filter limit");
    if (!limit) {
        return limit.error();
    }
    Where where;
    where.addIfSet("kind = ?", std::optional<std::string>(operationKindName(filter.kind)));
    where.addIfSet("workspace_id = ?", filter.workspace_id);
    where.addIfSet("name = ?", filter.name);
    if (!filter.include_deleted) {
        where.addRaw("deleted_at IS NULL");
    }
    if (filter.published_only) {
        where.addRaw("published_version IS NOT NULL");
    }
    return impl_->read("store: cannot list operations", [&](Session& s) {
        return select<OperationRows>(s,
                                     "SELECT " + std::string(kOperationColumns) +
                                         " FROM operations" + where.sql() +
                                         " ORDER BY workspace_id, name, id LIMIT ?",
                                     concat(where.params(), {std::int64_t{*limit}}));
    });
}

Result<void> SqliteStore::deleteOperation(std::string_view id) {
    return impl_->write("store: cannot delete operation", [&](Session& s) -> Result<void> {
        const std::size_t changed =
            execute(s, "UPDATE operations SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL",
                    {nowUnixMs(), std::string(id)});
        if (changed == 0) {
            const bool exists = loadOperation(s, id).has_value();
            return Error{ErrorCode::not_found,
                         "store: operation " + inQuotes(id) +
                             (exists ? " is deleted already" : " does not exist")};
        }
        return {};
    });
}

Result<OperationVersion> SqliteStore::addOperationVersion(std::string_view operation_id,
                                                          const OperationVersionDraft& draft) {
    auto checked = Checks("operation version")
                       .longText("config_json", draft.config_json)
                       .shortText("created_by", draft.created_by)
                       .longText("comment", draft.comment)
                       .result();
    if (!checked) {
        return checked.error();
    }
    const std::int64_t created_at = draft.created_at == 0 ? nowUnixMs() : draft.created_at;
    return impl_->write(
        "store: cannot add operation version", [&](Session& s) -> Result<OperationVersion> {
            const auto operation = loadOperation(s, operation_id);
            if (!operation) {
                return Error{ErrorCode::not_found,
                             "store: operation " + inQuotes(operation_id) + " does not exist"};
            }
            if (operation->deleted()) {
                return Error{ErrorCode::conflict, "store: operation " + inQuotes(operation_id) +
                                                      " is deleted; it takes no new versions"};
            }
            const std::int64_t version =
                queryInt(s, "SELECT max(version) FROM operation_versions WHERE operation_id = ?",
                         {std::string(operation_id)})
                    .value_or(0) +
                1;
            if (draft.expected_latest && *draft.expected_latest != version - 1) {
                return Error{ErrorCode::conflict, "store: operation " + inQuotes(operation_id) +
                                                      " is at version " +
                                                      std::to_string(version - 1) + ", not " +
                                                      std::to_string(*draft.expected_latest)};
            }
            OperationVersion stored{std::string(operation_id),
                                    version,
                                    draft.config_json,
                                    VersionState::draft,
                                    created_at,
                                    draft.created_by,
                                    draft.comment};
            execute(s,
                    "INSERT INTO operation_versions (" + std::string(kVersionColumns) +
                        ") VALUES (?, ?, ?, ?, ?, ?, ?)",
                    {stored.operation_id, stored.version, stored.config_json,
                     std::string(versionStateName(stored.state)), stored.created_at,
                     stored.created_by, stored.comment});
            return stored;
        });
}

Result<OperationVersion> SqliteStore::getOperationVersion(std::string_view operation_id,
                                                          std::int64_t version) {
    return impl_->read("store: cannot read operation version", [&](Session& s) {
        return single(
            select<VersionRows>(s,
                                "SELECT " + std::string(kVersionColumns) +
                                    " FROM operation_versions WHERE operation_id = ? "
                                    "AND version = ?",
                                {std::string(operation_id), version}),
            Error{ErrorCode::not_found, "store: operation " + inQuotes(operation_id) +
                                            " has no version " + std::to_string(version)});
    });
}

Result<std::vector<OperationVersion>> SqliteStore::listOperationVersions(
    std::string_view operation_id, int limit) {
    auto clamped = clampLimit(limit, kMaxListLimit, "operation version limit");
    if (!clamped) {
        return clamped.error();
    }
    return impl_->read(
        "store: cannot list operation versions",
        [&](Session& s) -> Result<std::vector<OperationVersion>> {
            if (!loadOperation(s, operation_id)) {
                return Error{ErrorCode::not_found,
                             "store: operation " + inQuotes(operation_id) + " does not exist"};
            }
            return select<VersionRows>(s,
                                       "SELECT " + std::string(kVersionColumns) +
                                           " FROM operation_versions WHERE operation_id = ?"
                                           " ORDER BY version DESC LIMIT ?",
                                       {std::string(operation_id), std::int64_t{*clamped}});
        });
}

Result<OperationVersion> SqliteStore::getPublishedVersion(std::string_view operation_id) {
    return impl_->read(
        "store: cannot read published version", [&](Session& s) -> Result<OperationVersion> {
            auto found = select<VersionRows>(
                s,
                "SELECT v.operation_id, v.version, v.config_json, v.state, v.created_at,"
                " v.created_by, v.comment FROM operations o JOIN operation_versions v"
                " ON v.operation_id = o.id AND v.version = o.published_version"
                " WHERE o.id = ? AND o.deleted_at IS NULL",
                {std::string(operation_id)});
            if (!found) {
                return found.error();
            }
            if (!found->empty()) {
                return std::move(found->front());
            }
            const auto operation = loadOperation(s, operation_id);
            const char* why = !operation             ? " does not exist"
                              : operation->deleted() ? " is deleted"
                                                     : " has no published version";
            return Error{ErrorCode::not_found, "store: operation " + inQuotes(operation_id) + why};
        });
}

Result<PublishResult> SqliteStore::publishOperationVersion(
    std::string_view operation_id, std::int64_t version,
    std::optional<std::int64_t> expected_published) {
    return impl_->write(
        "store: cannot publish operation version", [&](Session& s) -> Result<PublishResult> {
            const auto operation = loadOperation(s, operation_id);
            const auto exists =
                queryInt(s,
                         "SELECT count(*) FROM operation_versions WHERE operation_id = ? AND "
                         "version = ?",
                         {std::string(operation_id), version});
            if (!operation || operation->deleted() || exists.value_or(0) == 0) {
                return PublishResult{PublishOutcome::not_found, std::nullopt};
            }
            // Compare-and-set on the operation row; `IS` also matches NULL = NULL (PostgreSQL
            // spells it IS NOT DISTINCT FROM).
            const std::size_t changed = execute(
                s,
                "UPDATE operations SET published_version = ? WHERE id = ? AND deleted_at IS NULL"
                " AND published_version IS ?",
                {version, std::string(operation_id), sqlValue(expected_published)});
            if (changed == 0) {
                return PublishResult{PublishOutcome::version_mismatch,
                                     operation->published_version};
            }
            if (expected_published && *expected_published != version) {
                execute(s,
                        "UPDATE operation_versions SET state = ? WHERE operation_id = ? AND "
                        "version = ?",
                        {std::string(versionStateName(VersionState::archived)),
                         std::string(operation_id), *expected_published});
            }
            execute(
                s, "UPDATE operation_versions SET state = ? WHERE operation_id = ? AND version = ?",
                {std::string(versionStateName(VersionState::published)), std::string(operation_id),
                 version});
            return PublishResult{PublishOutcome::applied, version};
        });
}

// ----- audit -------------------------------------------------------------------------------------

namespace {

/// Sets the event's ts when it is 0 and checks its fields; `entity` names it in an error
/// ("audit", "audit[3]").
Result<void> checkAudit(AuditEvent& event, const std::string& entity) {
    if (event.ts == 0) {
        event.ts = nowUnixMs();
    }
    return Checks(entity)
        .shortText("workspace_id", event.workspace_id)
        .shortText("agent_id", event.agent_id)
        .shortText("operation_id", event.operation_id)
        .required("action", event.action)
        .required("outcome", event.outcome)
        .longText("detail_json", event.detail_json)
        .result();
}

}  // namespace

Result<AuditEvent> SqliteStore::appendAudit(AuditEvent event) {
    if (auto checked = checkAudit(event, "audit"); !checked) {
        return checked.error();  // named "audit.<field>", not as a batch's member
    }
    std::vector<AuditEvent> one{std::move(event)};
    if (auto written = appendAuditBatch(one); !written) {
        return written.error();
    }
    return std::move(one.front());
}

Result<void> SqliteStore::appendAuditBatch(std::vector<AuditEvent>& events) {
    if (events.size() > kMaxAuditBatch) {
        return Error{ErrorCode::invalid_argument, "audit batch: " + std::to_string(events.size()) +
                                                      " events; the limit is " +
                                                      std::to_string(kMaxAuditBatch)};
    }
    if (events.empty()) {
        return {};
    }
    for (std::size_t i = 0; i < events.size(); ++i) {
        if (auto checked = checkAudit(events[i], "audit[" + std::to_string(i) + "]"); !checked) {
            return checked.error();
        }
    }
    return impl_->write("store: cannot append audit events", [&](Session& s) -> Result<void> {
        sqlite::insertAuditEvents(s, impl_->statements, events);
        return {};
    });
}

Result<std::vector<AuditEvent>> SqliteStore::queryAudit(const AuditQuery& query) {
    auto limit = clampLimit(query.limit, kMaxListLimit, "audit query limit");
    if (!limit) {
        return limit.error();
    }
    if (query.from_ts && query.to_ts && *query.from_ts > *query.to_ts) {
        return Error{ErrorCode::invalid_argument,
                     "audit query: from_ts (" + std::to_string(*query.from_ts) +
                         ") is after to_ts (" + std::to_string(*query.to_ts) + ")"};
    }
    Where where;
    where.addIfSet("workspace_id = ?", query.workspace_id);
    where.addIfSet("agent_id = ?", query.agent_id);
    where.addIfSet("operation_id = ?", query.operation_id);
    where.addIfSet("action = ?", query.action);
    if (query.from_ts) {
        where.add("ts >= ?", *query.from_ts);
    }
    if (query.to_ts) {
        where.add("ts < ?", *query.to_ts);
    }
    return impl_->read("store: cannot query audit events", [&](Session& s) {
        return select<AuditRows>(s,
                                 "SELECT " + std::string(kAuditColumns) + " FROM audit_events" +
                                     where.sql() + orderBy(query.order, "ts") + " LIMIT ?",
                                 concat(where.params(), {std::int64_t{*limit}}));
    });
}

// ----- diagnostics -------------------------------------------------------------------------------

Result<std::string> SqliteStore::journalMode() {
    return impl_->read("store: cannot read journal mode", [](Session& s) -> Result<std::string> {
        return queryText(s, "PRAGMA journal_mode").value_or("");
    });
}

Result<std::int64_t> SqliteStore::cacheKib() {
    return impl_->read("store: cannot read cache size", [](Session& s) -> Result<std::int64_t> {
        std::int64_t pages_or_kib = 0;
        s << "PRAGMA cache_size", into(pages_or_kib), now;
        return -pages_or_kib;  // negative: KiB (what openConnection set)
    });
}

Result<std::int64_t> SqliteStore::schemaVersion() {
    return impl_->read("store: cannot read schema version", [](Session& s) -> Result<std::int64_t> {
        return sqlite::currentSchemaVersion(s);
    });
}

Result<void> SqliteStore::integrityCheck() {
    return impl_->read("store: integrity check failed", [&](Session& s) -> Result<void> {
        std::vector<std::string> findings;
        s << "PRAGMA integrity_check", into(findings), now;
        if (findings.size() == 1 && findings.front() == "ok") {
            return {};
        }
        std::string message = "store: integrity check of " + inQuotes(impl_->path) + " failed:";
        for (std::size_t i = 0; i < findings.size() && i < 10; ++i) {
            message += " " + findings[i] + ";";
        }
        return Error{ErrorCode::io, message};
    });
}

const std::string& SqliteStore::path() const {
    return impl_->path;
}

std::size_t SqliteStore::connectionCount() const {
    return impl_->pool.size();
}

}  // namespace crank::store
