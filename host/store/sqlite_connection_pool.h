#pragma once

// Internal to the SQLite implementation. A Poco::Data::Session is not thread-safe, so each one is
// lent to one thread at a time.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "util/error.h"

namespace Poco::Data {  // NOLINT(readability-identifier-naming): Poco's name
class Session;
}  // namespace Poco::Data

namespace crank::store::sqlite {

/// A fixed set of open connections lent out one thread at a time.
/// THREADING: acquire() and Lease destruction may be called from any thread.
/// OWNERSHIP: the pool owns the sessions; every Lease must be gone before the pool is destroyed.
class SqliteConnectionPool {
public:
    /// A borrowed connection, given back when the Lease is destroyed.
    class Lease {
    public:
        Lease(Lease&& other) noexcept;
        Lease& operator=(Lease&&) = delete;
        Lease(const Lease&) = delete;
        Lease& operator=(const Lease&) = delete;
        ~Lease();

        Poco::Data::Session& session() const;

    private:
        friend class SqliteConnectionPool;
        Lease(SqliteConnectionPool* pool, std::size_t index) : pool_(pool), index_(index) {}

        SqliteConnectionPool* pool_;
        std::size_t index_;
    };

    /// `sessions` must not be empty; acquire() waits at most `max_wait` for a free one.
    SqliteConnectionPool(std::vector<std::unique_ptr<Poco::Data::Session>> sessions,
                         std::chrono::milliseconds max_wait);
    ~SqliteConnectionPool();

    SqliteConnectionPool(const SqliteConnectionPool&) = delete;
    SqliteConnectionPool& operator=(const SqliteConnectionPool&) = delete;

    /// A free connection, or ErrorCode::unavailable when none came free within max_wait.
    Result<Lease> acquire();

    std::size_t size() const { return sessions_.size(); }

private:
    void release(std::size_t index);

    std::vector<std::unique_ptr<Poco::Data::Session>> sessions_;
    std::chrono::milliseconds max_wait_;
    std::mutex mutex_;
    std::condition_variable available_;
    std::vector<std::size_t> free_;  // indexes into sessions_, guarded by mutex_
};

}  // namespace crank::store::sqlite
