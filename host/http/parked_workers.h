#pragma once

// Workers parked on their keep-alive connection. After a response, a worker parks on the
// connection at once: it waits there until the client's next bytes (then it reads the next
// request, next_request.h), the connection's idle timeout, or a connection ready in the gate that
// finds every worker taken. (A timed wait before parking would add a wake-up, its timer's, to
// every request that comes later than the wait: about a tenth of the unary benchmark's
// throughput, bench/run-rest-unary-ab.sh.) The gate then wakes
// one parked worker (the one parked longest), which gives its connection back to the gate and
// takes the waiting one. So an idle keep-alive client costs a thread only while no other client
// needs it, and a client that pauses between requests (an MCP client thinking between tool calls)
// is served by the same worker, without a hand-off through the gate, when it goes on.

#include <chrono>
#include <cstddef>
#include <functional>
#include <mutex>

namespace crank::http {

class ParkedWorkers {
public:
    enum class Wake {
        readable,  ///< the connection has bytes, or a hang-up or an error
        wanted,    ///< wakeOne() chose this worker: another connection needs it
        timeout,   ///< the deadline passed first
        closed,    ///< close() was called (the server is stopping), or no wait could be set up
    };

    ParkedWorkers() = default;
    ~ParkedWorkers();
    ParkedWorkers(const ParkedWorkers&) = delete;
    ParkedWorkers& operator=(const ParkedWorkers&) = delete;

    /// Parks the calling thread on `fd` (a connection's socket) until one of Wake happens. Once
    /// the thread is listed, `wanted_now` is asked once: true (a connection began to wait before
    /// this worker was listed, so no wakeOne() will come for it) ends the park as `wanted`.
    Wake park(int fd, std::chrono::steady_clock::time_point deadline,
              const std::function<bool()>& wanted_now);

    /// Wakes the worker parked longest, which returns `wanted`; false when none is parked.
    bool wakeOne();

    /// Wakes every parked worker as `closed`, and every later park() returns `closed` at once.
    void close();

    /// Workers parked now.
    std::size_t parked() const;

private:
    struct Entry {
        int wake_fd = -1;  ///< the parked thread's own eventfd
        bool woken = false;
        Entry* prev = nullptr;
        Entry* next = nullptr;
    };
    void link(Entry& e);
    void unlink(Entry& e);

    mutable std::mutex mutex_;
    Entry* oldest_ = nullptr;  // a list from the oldest to the newest park, under mutex_
    Entry* newest_ = nullptr;
    std::size_t count_ = 0;
    bool closed_ = false;
};

}  // namespace crank::http
