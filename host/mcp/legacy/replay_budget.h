#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <mutex>

namespace crank::mcp {

/// The bytes that every session's replay buffers hold together on this node, against one bound
/// (mcp.replay_budget_bytes): each session also has its own (mcp.replay_bytes), but ten thousand
/// sessions of a megabyte each would be ten gigabytes.
///
/// Sessions count what they keep (add/remove). When a session's append takes the total over the
/// bound, it calls trimIfOver() once its own lock is released; the trimmer, set by
/// SessionManager, then drops the oldest events of the whole node, session by session, until
/// the total is at most 90% of the bound.
/// THREADING: every function may be called from any thread.
class ReplayBudget {
public:
    explicit ReplayBudget(std::size_t max_bytes) : max_bytes_(max_bytes) {}

    void add(std::size_t bytes) { bytes_.fetch_add(bytes, std::memory_order_relaxed); }
    void remove(std::size_t bytes) { bytes_.fetch_sub(bytes, std::memory_order_relaxed); }
    std::size_t bytes() const { return bytes_.load(std::memory_order_relaxed); }
    std::size_t maxBytes() const { return max_bytes_; }
    /// What a trim brings the total down to.
    std::size_t trimTarget() const { return max_bytes_ / 10 * 9; }

    /// `trimmer(target)` frees the oldest bytes of the node until at most `target` are kept.
    /// Empty: no trimming (the manager is gone).
    void setTrimmer(std::function<void(std::size_t)> trimmer) {
        std::lock_guard lock(mutex_);
        trimmer_ = std::move(trimmer);
    }

    /// Runs the trimmer when the total is over the bound; a trim already running elsewhere makes
    /// this a no-op (it will bring the total down).
    void trimIfOver() {
        if (bytes() <= max_bytes_) {
            return;
        }
        std::unique_lock lock(mutex_, std::try_to_lock);
        if (lock.owns_lock() && trimmer_) {
            trimmer_(trimTarget());
        }
    }

private:
    const std::size_t max_bytes_;
    std::atomic<std::size_t> bytes_{0};
    std::mutex mutex_;
    std::function<void(std::size_t)> trimmer_;
};

}  // namespace crank::mcp
