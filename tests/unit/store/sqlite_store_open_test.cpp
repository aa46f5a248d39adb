#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <Poco/Data/SQLite/Connector.h>
#include <Poco/Data/Session.h>
#include <gtest/gtest.h>

#include "store/open_store.h"
#include "store/sqlite_migration.h"
#include "store_test_support.h"

namespace crank::store::test {
namespace {

std::int64_t latestVersion() {
    return sqliteMigrations().back().version;
}

TEST(SqliteStoreOpenTest, FreshFileGetsTheLatestSchemaAndWal) {
    TempDir dir;
    auto store = openOrFail(fileOptions(dir));
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(*store->schemaVersion(), latestVersion());
    EXPECT_EQ(*store->journalMode(), "wal");
    EXPECT_EQ(store->connectionCount(), 4U);
    EXPECT_TRUE(store->ping().ok());
    EXPECT_TRUE(store->integrityCheck().ok());

    const std::string path = store->path();
    // Checked through a separate connection, not through the store.
    EXPECT_EQ(rawInt(path, "SELECT count(*) FROM schema_migrations"),
              static_cast<std::int64_t>(sqliteMigrations().size()));
    EXPECT_EQ(rawInt(path, "SELECT min(version) FROM schema_migrations"), 1);
    EXPECT_EQ(rawInt(path, "SELECT max(version) FROM schema_migrations"), latestVersion());
    for (const char* table :
         {"stream_sessions", "async_jobs", "operations", "operation_versions", "audit_events"}) {
        EXPECT_EQ(rawInt(path, std::string("SELECT count(*) FROM sqlite_master WHERE type = "
                                           "'table' AND name = '") +
                                   table + "'"),
                  1)
            << table;
    }
    EXPECT_GE(rawInt(path,
                     "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name "
                     "LIKE 'audit_events_%'"),
              1);
}

TEST(SqliteStoreOpenTest, MemoryDatabaseUsesOneConnection) {
    StoreOptions options = memoryOptions();
    options.pool_size = 8;
    auto store = openOrFail(options);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(store->connectionCount(), 1U);
    EXPECT_EQ(*store->journalMode(), "memory");
    EXPECT_EQ(*store->schemaVersion(), latestVersion());
}

TEST(SqliteStoreOpenTest, ConnectionsGetTheConfiguredCacheBound) {
    TempDir dir;
    StoreOptions options = fileOptions(dir, "cache.db", 3);
    auto defaults = openOrFail(options);
    ASSERT_NE(defaults, nullptr);
    EXPECT_EQ(*defaults->cacheKib(), 2000);
    defaults.reset();

    options.cache_kib = 256;
    auto store = openOrFail(options);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(*store->cacheKib(), 256);
}

TEST(SqliteStoreOpenTest, ReopeningDoesNotReapplyMigrationsAndKeepsData) {
    TempDir dir;
    const StoreOptions options = fileOptions(dir);
    std::string session_id;
    std::string job_id;
    std::string operation_id;
    {
        auto store = openOrFail(options);
        ASSERT_NE(store, nullptr);
        auto session = store->createSession(sampleSession());
        auto job = store->createJob(sampleJob());
        OperationRecord op;
        op.workspace_id = "ws1";
        op.name = "weather";
        auto operation = store->createOperation(op);
        ASSERT_TRUE(session.ok() && job.ok() && operation.ok());
        OperationVersionDraft draft;
        draft.config_json = R"({"url":"http://127.0.0.1"})";
        ASSERT_TRUE(store->addOperationVersion(operation->id, draft).ok());
        AuditEvent event;
        event.action = "session.start";
        event.outcome = "ok";
        ASSERT_TRUE(store->appendAudit(event).ok());
        session_id = session->id;
        job_id = job->id;
        operation_id = operation->id;
    }
    const std::int64_t applied_at =
        rawInt(options.path, "SELECT applied_at FROM schema_migrations WHERE version = 1");

    auto store = openOrFail(options);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(rawInt(options.path, "SELECT count(*) FROM schema_migrations"),
              static_cast<std::int64_t>(sqliteMigrations().size()));
    EXPECT_EQ(rawInt(options.path, "SELECT applied_at FROM schema_migrations WHERE version = 1"),
              applied_at);
    EXPECT_TRUE(store->getSession(session_id).ok());
    EXPECT_TRUE(store->getJob(job_id).ok());
    auto version = store->getOperationVersion(operation_id, 1);
    ASSERT_TRUE(version.ok());
    EXPECT_EQ(version->config_json, R"({"url":"http://127.0.0.1"})");
    EXPECT_EQ(store->queryAudit({})->size(), 1U);
}

TEST(SqliteStoreOpenTest, MigrationFromVersionOneKeepsRowsAndAddsOwnership) {
    TempDir dir;
    const StoreOptions options = fileOptions(dir);
    {
        // A database as a version-1 Crank left it.
        const std::vector<SqliteMigration> v1 = {sqliteMigrations().front()};
        auto old = SqliteStore::open(options, v1);
        ASSERT_TRUE(old.ok()) << old.error().message;
        EXPECT_EQ(*old.value()->schemaVersion(), 1);
    }
    rawExec(options.path,
            "INSERT INTO async_jobs (id, workspace_id, agent_id, operation_id, status,"
            " progress_json, result_json, error_json, expires_at, created_at, updated_at,"
            " finished_at) VALUES ('job_old', 'ws1', 'agent1', 'op_export', 'running',"
            " '{\"done\":5}', NULL, NULL, 4102444800000, 1000, 1001, NULL)");
    rawExec(options.path,
            "INSERT INTO stream_sessions (id, workspace_id, agent_id, operation_id, protocol,"
            " mode, status, cursor, state_json, expires_at, last_poll_at, created_at, closed_at)"
            " VALUES ('ses_old', 'ws1', 'agent1', 'op_tail', 'http_sse', 'session', 'active',"
            " 'c-1', '{}', 4102444800000, NULL, 1000, NULL)");

    auto store = openOrFail(options);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(*store->schemaVersion(), latestVersion());
    EXPECT_GE(latestVersion(), 2);
    EXPECT_EQ(rawInt(options.path, "SELECT count(*) FROM schema_migrations"),
              static_cast<std::int64_t>(sqliteMigrations().size()));
    EXPECT_TRUE(store->integrityCheck().ok());
    for (const char* index :
         {"async_jobs_owner", "async_jobs_status_heartbeat", "stream_sessions_owner"}) {
        EXPECT_EQ(rawInt(options.path, std::string("SELECT count(*) FROM sqlite_master WHERE "
                                                   "type = 'index' AND name = '") +
                                           index + "'"),
                  1)
            << index;
    }

    auto job = store->getJob("job_old");
    ASSERT_TRUE(job.ok()) << job.error().message;
    EXPECT_EQ(job->status, JobStatus::running);
    EXPECT_EQ(job->progress_json, std::optional<std::string>(R"({"done":5})"));
    EXPECT_EQ(job->created_at, 1000);
    EXPECT_EQ(job->updated_at, 1001);
    EXPECT_FALSE(job->owner_node.has_value());
    EXPECT_FALSE(job->cursor.has_value());
    EXPECT_EQ(job->input_json, "{}");
    EXPECT_FALSE(job->heartbeat_at.has_value());

    auto session = store->getSession("ses_old");
    ASSERT_TRUE(session.ok()) << session.error().message;
    EXPECT_EQ(session->cursor, std::optional<std::string>("c-1"));
    EXPECT_FALSE(session->owner_node.has_value());

    // The old row is usable with the new calls: a node takes it over.
    auto claimed = store->claimJob("job_old", std::nullopt, "node-a", 2000);
    ASSERT_TRUE(claimed.ok()) << claimed.error().message;
    EXPECT_TRUE(*claimed);
    EXPECT_EQ(store->getJob("job_old")->owner_node, std::optional<std::string>("node-a"));
}

TEST(SqliteStoreOpenTest, OnlyPendingMigrationsAreApplied) {
    TempDir dir;
    const StoreOptions options = fileOptions(dir);
    std::vector<SqliteMigration> migrations = sqliteMigrations();
    {
        auto store = SqliteStore::open(options, migrations);
        ASSERT_TRUE(store.ok()) << store.error().message;
    }
    const std::int64_t next = latestVersion() + 1;
    migrations.push_back(
        {static_cast<int>(next),
         "add a test table",
         {"CREATE TABLE test_extra (x INTEGER)", "INSERT INTO test_extra (x) VALUES (1)"}});
    auto upgraded = SqliteStore::open(options, migrations);
    ASSERT_TRUE(upgraded.ok()) << upgraded.error().message;
    EXPECT_EQ(*upgraded.value()->schemaVersion(), next);
    // Had step 1 run again, CREATE TABLE would have failed; the extra step ran exactly once.
    EXPECT_EQ(rawInt(options.path, "SELECT count(*) FROM test_extra"), 1);
    EXPECT_EQ(rawInt(options.path,
                     "SELECT description = 'add a test table' FROM "
                     "schema_migrations WHERE version = " +
                         std::to_string(next)),
              1);
}

TEST(SqliteStoreOpenTest, FailingMigrationRollsBackAndNamesTheStep) {
    TempDir dir;
    const StoreOptions options = fileOptions(dir);
    { ASSERT_NE(openOrFail(options), nullptr); }
    std::vector<SqliteMigration> migrations = sqliteMigrations();
    const std::int64_t next = latestVersion() + 1;
    migrations.push_back({static_cast<int>(next),
                          "broken step",
                          {"CREATE TABLE half_done (x INTEGER)", "THIS IS NOT SQL"}});

    auto failed = SqliteStore::open(options, migrations);
    ASSERT_FALSE(failed.ok());
    const std::string& message = failed.error().message;
    EXPECT_NE(message.find("migration " + std::to_string(next)), std::string::npos) << message;
    EXPECT_NE(message.find("broken step"), std::string::npos) << message;
    EXPECT_NE(message.find(options.path), std::string::npos) << message;
    EXPECT_NE(message.find("rolled back"), std::string::npos) << message;

    EXPECT_EQ(rawInt(options.path, "SELECT count(*) FROM sqlite_master WHERE name = 'half_done'"),
              0)
        << "the first statement of the failed step was rolled back";
    EXPECT_EQ(rawInt(options.path, "SELECT max(version) FROM schema_migrations"), latestVersion());
    EXPECT_NE(openOrFail(options), nullptr) << "the database still opens with the good list";
}

TEST(SqliteStoreOpenTest, NewerSchemaIsRefused) {
    TempDir dir;
    const StoreOptions options = fileOptions(dir);
    { ASSERT_NE(openOrFail(options), nullptr); }
    rawExec(options.path,
            "INSERT INTO schema_migrations (version, description, applied_at) VALUES (999, "
            "'from the future', 0)");

    auto refused = openStore(options);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().code, ErrorCode::conflict);
    const std::string& message = refused.error().message;
    EXPECT_NE(message.find("999"), std::string::npos) << message;
    EXPECT_NE(message.find(options.path), std::string::npos) << message;
    EXPECT_NE(message.find("refusing"), std::string::npos) << message;
    EXPECT_EQ(rawInt(options.path, "SELECT count(*) FROM schema_migrations WHERE version = 999"), 1)
        << "nothing was downgraded";
}

TEST(SqliteStoreOpenTest, MissingDirectoryIsAClearError) {
    TempDir dir;
    StoreOptions options;
    options.path = dir.file("no/such/dir/crank.db");
    auto failed = openStore(options);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().code, ErrorCode::io);
    EXPECT_NE(failed.error().message.find(options.path), std::string::npos)
        << failed.error().message;
    EXPECT_NE(failed.error().message.find("does not exist"), std::string::npos);
}

TEST(SqliteStoreOpenTest, GarbageFileIsAClearErrorAndIsLeftAlone) {
    TempDir dir;
    const std::string path = dir.file("not-a-db.db");
    const std::string garbage(8192, 'x');
    {
        std::ofstream out(path, std::ios::binary);
        out << garbage;
    }
    StoreOptions options;
    options.path = path;
    auto failed = openStore(options);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().code, ErrorCode::io);
    EXPECT_NE(failed.error().message.find(path), std::string::npos) << failed.error().message;
    EXPECT_NE(failed.error().message.find("not a database"), std::string::npos)
        << failed.error().message;

    ASSERT_EQ(std::filesystem::file_size(path), garbage.size());
    std::string after(garbage.size(), '\0');
    std::ifstream in(path, std::ios::binary);
    in.read(after.data(), static_cast<std::streamsize>(after.size()));
    EXPECT_EQ(after, garbage) << "the file was not modified";
}

TEST(SqliteStoreOpenTest, DirectoryAsPathIsAClearError) {
    TempDir dir;
    StoreOptions options;
    options.path = dir.path();
    auto failed = openStore(options);
    ASSERT_FALSE(failed.ok());
    EXPECT_EQ(failed.error().code, ErrorCode::io);
    EXPECT_NE(failed.error().message.find("directory"), std::string::npos);
}

TEST(SqliteStoreOpenTest, BadOptionsAreRejectedWithTheOptionName) {
    StoreOptions backend = memoryOptions();
    backend.backend = "postgres";
    auto r1 = openStore(backend);
    ASSERT_FALSE(r1.ok());
    EXPECT_EQ(r1.error().code, ErrorCode::invalid_argument);
    EXPECT_NE(r1.error().message.find("store.backend"), std::string::npos);
    EXPECT_NE(r1.error().message.find("postgres"), std::string::npos);

    StoreOptions pool = memoryOptions();
    pool.pool_size = 0;
    auto r2 = openStore(pool);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.error().message.find("store.pool_size"), std::string::npos);

    StoreOptions busy = memoryOptions();
    busy.busy_timeout_ms = -1;
    auto r3 = openStore(busy);
    ASSERT_FALSE(r3.ok());
    EXPECT_NE(r3.error().message.find("store.busy_timeout_ms"), std::string::npos);

    StoreOptions cache = memoryOptions();
    cache.cache_kib = 15;
    auto r5 = openStore(cache);
    ASSERT_FALSE(r5.ok());
    EXPECT_NE(r5.error().message.find("store.cache_kib: must be between 16 and 1048576, got 15"),
              std::string::npos)
        << r5.error().message;

    StoreOptions empty;
    empty.path.clear();
    auto r4 = openStore(empty);
    ASSERT_FALSE(r4.ok());
    EXPECT_NE(r4.error().message.find("store.path"), std::string::npos);
}

TEST(SqliteStoreOpenTest, FactoryOpensSqliteByDefault) {
    TempDir dir;
    StoreOptions options;
    options.path = dir.file("default.db");
    auto opened = openStore(options);
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    EXPECT_TRUE(opened.value()->ping().ok());
    EXPECT_TRUE(std::filesystem::exists(options.path));
}

TEST(SqliteStoreOpenTest, LockHeldLongerThanBusyTimeoutIsUnavailable) {
    TempDir dir;
    StoreOptions options = fileOptions(dir, "locked.db", 2);
    options.busy_timeout_ms = 200;
    auto store = openOrFail(options);
    ASSERT_NE(store, nullptr);
    // A second process (here: a second raw connection) holds the write lock.
    Poco::Data::Session holder(Poco::Data::SQLite::Connector::KEY, options.path, 0);
    holder << "BEGIN IMMEDIATE", Poco::Data::Keywords::now;
    auto blocked = store->appendAudit(AuditEvent{0, 0, "", "", "", "job.start", "ok", "{}"});
    holder << "ROLLBACK", Poco::Data::Keywords::now;
    ASSERT_FALSE(blocked.ok());
    EXPECT_EQ(blocked.error().code, ErrorCode::unavailable) << blocked.error().message;
    EXPECT_NE(blocked.error().message.find("locked"), std::string::npos) << blocked.error().message;
    EXPECT_TRUE(store->appendAudit(AuditEvent{0, 0, "", "", "", "job.start", "ok", "{}"}).ok())
        << "the connection is usable again after the failed transaction";
}

}  // namespace
}  // namespace crank::store::test
