#include "store/sqlite_connection_pool.h"

#include <string>
#include <utility>

#include <Poco/Data/Session.h>
#include <Poco/Exception.h>

#include "log/log.h"

namespace crank::store::sqlite {

SqliteConnectionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), index_(other.index_) {}

SqliteConnectionPool::Lease::~Lease() {
    if (pool_ != nullptr) {
        pool_->release(index_);
    }
}

Poco::Data::Session& SqliteConnectionPool::Lease::session() const {
    return *pool_->sessions_[index_];
}

SqliteConnectionPool::SqliteConnectionPool(
    std::vector<std::unique_ptr<Poco::Data::Session>> sessions, std::chrono::milliseconds max_wait)
    : sessions_(std::move(sessions)), max_wait_(max_wait) {
    free_.reserve(sessions_.size());
    for (std::size_t i = sessions_.size(); i > 0; --i) {
        free_.push_back(i - 1);
    }
}

SqliteConnectionPool::~SqliteConnectionPool() = default;

Result<SqliteConnectionPool::Lease> SqliteConnectionPool::acquire() {
    std::unique_lock lock(mutex_);
    if (!available_.wait_for(lock, max_wait_, [this] { return !free_.empty(); })) {
        return Error{ErrorCode::unavailable,
                     "store: all " + std::to_string(sessions_.size()) +
                         " database connections stayed busy for " +
                         std::to_string(max_wait_.count()) +
                         " ms (store.busy_timeout_ms); the store is overloaded"};
    }
    const std::size_t index = free_.back();
    free_.pop_back();
    return Lease(this, index);
}

void SqliteConnectionPool::release(std::size_t index) {
    // Callers roll back their own transactions; this is the safety net for a rollback that threw,
    // so that the next borrower does not find itself inside someone else's transaction.
    Poco::Data::Session& session = *sessions_[index];
    try {
        if (!session.getFeature("autoCommit")) {
            session << "ROLLBACK", Poco::Data::Keywords::now;
        }
    } catch (const Poco::Exception& e) {
        log::warn("store: could not roll back a leftover transaction: {}", e.displayText());
    }
    {
        std::lock_guard lock(mutex_);
        free_.push_back(index);
    }
    available_.notify_one();
}

}  // namespace crank::store::sqlite
