#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace crank::http {

/// Counts the open client connections of an HttpServer, in all and per client address, and
/// refuses those beyond the bounds (server.max_connections, server.max_connections_per_address).
///
/// A connection is counted from admit() until its Slot is destroyed, wherever that happens: on
/// the gate thread, on a worker, or when a stream handoff lets the last reference go.
/// THREADING: every function may be called from any thread.
class ConnectionCounter {
public:
    ConnectionCounter(std::size_t max_connections, std::size_t max_per_address);

    /// One admitted connection; destroying it gives its place back.
    class Slot {
    public:
        Slot(std::shared_ptr<ConnectionCounter> counter, std::string address);
        ~Slot();
        Slot(const Slot&) = delete;
        Slot& operator=(const Slot&) = delete;

    private:
        std::shared_ptr<ConnectionCounter> counter_;
        std::string address_;
    };

    /// Why admit() refused.
    enum class Refusal { none, too_many, too_many_from_address };

    /// Counts a new connection from `address` (an IP address as text), or says why not.
    static std::unique_ptr<Slot> admit(const std::shared_ptr<ConnectionCounter>& counter,
                                       const std::string& address, Refusal& refusal);

    std::size_t open() const;
    std::size_t openFrom(const std::string& address) const;
    std::size_t maxConnections() const { return max_connections_; }
    std::size_t maxPerAddress() const { return max_per_address_; }

private:
    void release(const std::string& address);

    const std::size_t max_connections_;
    const std::size_t max_per_address_;
    mutable std::mutex mutex_;
    std::size_t open_ = 0;
    std::unordered_map<std::string, std::size_t> per_address_;
};

}  // namespace crank::http
