#include "http_test_support.h"

#include <algorithm>

namespace crank::http::test {

StreamReactor::OnClosed ClosedLog::callback() {
    return [this](StreamId id, CloseReason reason) { record(id, reason); };
}

void ClosedLog::record(StreamId id, CloseReason reason) {
    {
        std::lock_guard lock(mutex_);
        calls_.emplace_back(id, reason);
    }
    changed_.notify_all();
}

std::optional<CloseReason> ClosedLog::waitFor(StreamId id, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    std::optional<CloseReason> found;
    changed_.wait_for(lock, timeout, [&] {
        for (const auto& [called, reason] : calls_) {
            if (called == id) {
                found = reason;
                return true;
            }
        }
        return false;
    });
    return found;
}

bool ClosedLog::waitForCount(std::size_t count, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return calls_.size() >= count; });
}

std::size_t ClosedLog::countFor(StreamId id) const {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(std::count_if(
        calls_.begin(), calls_.end(), [id](const auto& call) { return call.first == id; }));
}

std::vector<std::pair<StreamId, CloseReason>> ClosedLog::all() const {
    std::lock_guard lock(mutex_);
    return calls_;
}

}  // namespace crank::http::test
