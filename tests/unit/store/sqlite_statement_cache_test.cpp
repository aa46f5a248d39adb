#include "store/sqlite_statement_cache.h"

#include <string>

#include <Poco/Data/SQLite/Connector.h>
#include <Poco/Data/SQLite/SQLiteException.h>
#include <Poco/Data/Session.h>
#include <gtest/gtest.h>

#include "store_test_support.h"

namespace crank::store::test {
namespace {

using sqlite::handleOf;
using sqlite::runCached;
using sqlite::StatementCache;

class StatementCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        Poco::Data::SQLite::Connector::registerConnector();
        path_ = dir_.file("cache.db");
        rawExec(path_, "CREATE TABLE t (x INTEGER PRIMARY KEY)");
    }
    std::string path_;

private:
    TempDir dir_;
};

TEST_F(StatementCacheTest, AStatementIsPreparedOncePerConnectionAndRunsAgainAndAgain) {
    Poco::Data::Session a("SQLite", path_);
    Poco::Data::Session b("SQLite", path_);
    StatementCache cache;  // after the sessions: finalized before they close
    const std::string insert = "INSERT INTO t (x) VALUES (NULL)";
    auto* first = cache.get(handleOf(a), insert);
    EXPECT_EQ(cache.get(handleOf(a), insert), first);
    EXPECT_NE(cache.get(handleOf(b), insert), first);
    EXPECT_NE(cache.get(handleOf(a), "DELETE FROM t"), first);

    for (int i = 0; i < 3; ++i) {
        runCached(cache, a, insert);
    }
    runCached(cache, b, insert);
    EXPECT_EQ(rawInt(path_, "SELECT count(*) FROM t"), 4);
}

TEST_F(StatementCacheTest, ATransactionBracketFromTheCacheCommitsAndRollsBack) {
    Poco::Data::Session a("SQLite", path_);
    StatementCache cache;
    runCached(cache, a, "BEGIN IMMEDIATE");
    runCached(cache, a, "INSERT INTO t (x) VALUES (1)");
    runCached(cache, a, "COMMIT");
    runCached(cache, a, "BEGIN IMMEDIATE");
    runCached(cache, a, "INSERT INTO t (x) VALUES (2)");
    runCached(cache, a, "ROLLBACK");
    EXPECT_EQ(rawInt(path_, "SELECT count(*) FROM t"), 1);
    EXPECT_TRUE(a.getFeature("autoCommit"));  // what the pool checks when a lease ends
}

TEST_F(StatementCacheTest, ABadStatementThrowsSqlitesMessageAndIsNotKept) {
    Poco::Data::Session a("SQLite", path_);
    StatementCache cache;
    for (int attempt = 0; attempt < 2; ++attempt) {
        try {
            cache.get(handleOf(a), "INSERT INTO nowhere VALUES (1)");
            FAIL() << "a statement on a missing table prepared";
        } catch (const Poco::Data::SQLite::SQLiteException& e) {
            EXPECT_NE(e.displayText().find("no such table: nowhere"), std::string::npos)
                << e.displayText();
        }
    }
}

TEST_F(StatementCacheTest, AFailedStepSaysWhyAndLeavesTheStatementReadyForItsNextUse) {
    Poco::Data::Session a("SQLite", path_);
    StatementCache cache;
    const std::string insert = "INSERT INTO t (x) VALUES (7)";
    runCached(cache, a, insert);
    EXPECT_THROW(runCached(cache, a, insert), Poco::Data::SQLite::ConstraintViolationException);
    try {
        runCached(cache, a, "COMMIT");
        FAIL() << "COMMIT outside a transaction succeeded";
    } catch (const Poco::Data::SQLite::SQLiteException& e) {
        EXPECT_NE(e.displayText().find("no transaction is active"), std::string::npos)
            << e.displayText();
    }
    rawExec(path_, "DELETE FROM t");
    runCached(cache, a, insert);  // reset after its failure: it runs again
    EXPECT_EQ(rawInt(path_, "SELECT count(*) FROM t WHERE x = 7"), 1);
}

}  // namespace
}  // namespace crank::store::test
