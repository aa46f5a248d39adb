#pragma once

// Shared by the store tests: temporary directories, a raw SQLite look at a database file that
// does not go through the store, and record builders.

#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>

#include <gtest/gtest.h>

#include "store/job_record.h"
#include "store/session_record.h"
#include "store/sqlite_store.h"
#include "store/store.h"
#include "store/store_options.h"
#include "temp_dir.h"

namespace crank::store::test {

using crank::testing::TempDir;

/// Options for a file database in `dir`.
StoreOptions fileOptions(const TempDir& dir, const std::string& name = "crank.db",
                         int pool_size = 4);
/// Options for ":memory:".
StoreOptions memoryOptions();

/// Opens a SqliteStore or fails the current test (ASSERT-style: check the pointer).
std::unique_ptr<SqliteStore> openOrFail(const StoreOptions& options);

/// Runs a query returning one integer on `path` through its own Poco session (not the store).
std::int64_t rawInt(const std::string& path, const std::string& sql);
/// Runs a statement on `path` through its own Poco session.
void rawExec(const std::string& path, const std::string& sql);

/// A valid session/job owned by (workspace, agent), expiring far in the future.
SessionRecord sampleSession(const std::string& workspace = "ws1",
                            const std::string& agent = "agent1");
JobRecord sampleJob(const std::string& workspace = "ws1", const std::string& agent = "agent1");

/// Far future expiry used by the samples (Unix ms, year 2100).
inline constexpr std::int64_t kFarFuture = 4102444800000;

/// Parameter of the suites that run against both kinds of database.
enum class Backing { memory, file };
std::string backingName(const ::testing::TestParamInfo<Backing>& info);
/// Lets gtest (and ctest's test names) print the parameter as "memory" / "file".
void PrintTo(Backing backing, std::ostream* out);

/// Fixture for suites that run against ":memory:" and against a file.
class StoreTest : public ::testing::TestWithParam<Backing> {
protected:
    void SetUp() override;

    TempDir dir_;
    std::unique_ptr<SqliteStore> sqlite_;
    Store* store_ = nullptr;  ///< tests go through the interface
};

}  // namespace crank::store::test
