#include "store_test_support.h"

#include <stdlib.h>

#include <mutex>
#include <system_error>
#include <vector>

#include <Poco/Data/SQLite/Connector.h>
#include <Poco/Data/Session.h>

namespace crank::store::test {

using Poco::Data::Keywords::into;
using Poco::Data::Keywords::now;

StoreOptions fileOptions(const TempDir& dir, const std::string& name, int pool_size) {
    StoreOptions options;
    options.path = dir.file(name);
    options.pool_size = pool_size;
    return options;
}

StoreOptions memoryOptions() {
    StoreOptions options;
    options.path = ":memory:";
    return options;
}

std::unique_ptr<SqliteStore> openOrFail(const StoreOptions& options) {
    auto opened = SqliteStore::open(options);
    if (!opened) {
        ADD_FAILURE() << "cannot open " << options.path << ": " << opened.error().message;
        return nullptr;
    }
    return std::move(opened).value();
}

namespace {

Poco::Data::Session rawSession(const std::string& path) {
    static std::once_flag registered;
    std::call_once(registered, [] { Poco::Data::SQLite::Connector::registerConnector(); });
    Poco::Data::Session session(Poco::Data::SQLite::Connector::KEY, path, 0);
    session << "PRAGMA busy_timeout = 5000", now;
    return session;
}

}  // namespace

std::int64_t rawInt(const std::string& path, const std::string& sql) {
    Poco::Data::Session session = rawSession(path);
    std::int64_t value = -1;
    session << sql, into(value), now;
    return value;
}

void rawExec(const std::string& path, const std::string& sql) {
    Poco::Data::Session session = rawSession(path);
    session << sql, now;
}

SessionRecord sampleSession(const std::string& workspace, const std::string& agent) {
    SessionRecord session;
    session.workspace_id = workspace;
    session.agent_id = agent;
    session.operation_id = "op_tail";
    session.protocol = "http_sse";
    session.mode = "session";
    session.state_json = R"({"buffered":0})";
    session.expires_at = kFarFuture;
    return session;
}

JobRecord sampleJob(const std::string& workspace, const std::string& agent) {
    JobRecord job;
    job.workspace_id = workspace;
    job.agent_id = agent;
    job.operation_id = "op_export";
    job.expires_at = kFarFuture;
    return job;
}

std::string backingName(const ::testing::TestParamInfo<Backing>& info) {
    return info.param == Backing::memory ? "memory" : "file";
}

void PrintTo(Backing backing, std::ostream* out) {
    *out << (backing == Backing::memory ? "memory" : "file");
}

void StoreTest::SetUp() {
    sqlite_ = openOrFail(GetParam() == Backing::memory ? memoryOptions() : fileOptions(dir_));
    ASSERT_NE(sqlite_, nullptr);
    store_ = sqlite_.get();
}

}  // namespace crank::store::test
